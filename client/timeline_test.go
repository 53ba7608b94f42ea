package client

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/internal/samples"
)

// histIndex and histCountsLen must be hdrhistogram-go's own, or the interval
// histograms would decode with every count in the wrong bucket.
func TestHistIndexMatchesLibrary(t *testing.T) {
	h := samples.NewHist()
	if got := len(h.Export().Counts); got != histCountsLen {
		t.Fatalf("histCountsLen %d, the library's counts array has %d", histCountsLen, got)
	}
	values := []int64{0, 1, 2, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 1e6, 2e6 + 1, samples.HistHighestUS - 1, samples.HistHighestUS}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		values = append(values, rng.Int64N(1<<uint(rng.IntN(37))))
	}
	mine := make([]int64, histCountsLen)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatalf("library refused %d: %v", v, err)
		}
		mine[histIndex(v)]++
	}
	for i, c := range h.Export().Counts {
		if mine[i] != c {
			t.Fatalf("index %d: histIndex counted %d values, the library %d", i, mine[i], c)
		}
	}
	for i := range histCountsLen {
		if v := histValue(i); histIndex(v) != i || (v > 0 && histIndex(v-1) == i) {
			t.Fatalf("histValue(%d) = %d is not the lowest value at that index", i, v)
		}
	}
}

func BenchmarkTimelineInterval(b *testing.B) {
	tl, _, _ := bareTimeline()
	defer tl.result(0)
	buf := newTLBuf(true)
	for i := int64(0); i < 300; i++ {
		buf.record(&tlRecord{us: 1000 + i*37, cor: 2000 + i*37, tls: -1, bytes: 100, class: 2, recorded: true})
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = tl.interval(buf)
	}
}

// scriptedEnds is a fake-transport script whose k-th request ends at ends[k]
// (ns since the start) after lasting lat[k], failing when fail[k], with the
// status scriptedStatus(k).
func scriptedEnds(ends, lat []int64, fail []bool) scriptFunc {
	return func(r *run, k int64, sent int64) outcome {
		o := scriptedOutcome(ends[k]-lat[k], ends[k])
		o.Status = scriptedStatus(k)
		if fail[k] {
			o.Class, o.Err = failException, errors.New("scripted")
		}
		return o
	}
}

// scriptedStatus is 200, every fifth 404 and every seventh 503.
func scriptedStatus(k int64) int {
	switch {
	case k%7 == 6:
		return 503
	case k%5 == 4:
		return 404
	}
	return 200
}

// TestTimelineExactIntervals checks the attribution rule on made-up times:
// one request every 20 ms, none from 1.0 s to 3.0 s but one that took the
// whole 2 s stall, every tenth request an exception, statuses 200, 404 and
// 503. Each interval's counts, status classes and percentiles must equal what
// a direct count of the outcomes gives. The times are made up (the run itself
// is instant), so intervals past the first two go through the collector's
// slow path and the run's final merge.
func TestTimelineExactIntervals(t *testing.T) {
	const d = 250 * time.Millisecond
	var ends, lat []int64
	var fail []bool
	for at := 20 * time.Millisecond; at < 4*time.Second; at += 20 * time.Millisecond {
		if at >= time.Second && at < 3*time.Second {
			continue
		}
		ends = append(ends, int64(at))
		l := int64(time.Millisecond) + int64(len(lat)%7)*int64(100*time.Microsecond)
		if at == 3*time.Second {
			l = int64(2*time.Second + 5*time.Millisecond) // the stalled request
		}
		lat = append(lat, l)
		fail = append(fail, len(fail)%10 == 3)
	}
	n := len(ends)
	res := runScript(t, Config{Requests: n, Concurrency: 1, Interval: d}, scriptedEnds(ends, lat, fail))
	tl := res.Timeline
	if tl == nil {
		t.Fatal("no timeline with Config.Interval set")
	}
	wantIntervals := int((res.Elapsed + d - 1) / d)
	if len(tl.Intervals) != wantIntervals {
		t.Fatalf("%d intervals for a %v run, want %d", len(tl.Intervals), res.Elapsed, wantIntervals)
	}
	var sum int64
	for i, iv := range tl.Intervals {
		var want, wantFail int64
		var wantStatus [6]int64
		dist := samples.NewDist()
		for k := range ends {
			if ends[k]/int64(d) == int64(i) {
				want++
				wantStatus[scriptedStatus(int64(k))/100]++
				dist.Add(lat[k] / 1000)
				if fail[k] {
					wantFail++
				}
			}
		}
		if iv.Start != time.Duration(i)*d {
			t.Errorf("interval %d starts at %v", i, iv.Start)
		}
		if iv.Status != wantStatus {
			t.Errorf("interval %d: status classes %v, want %v", i, iv.Status, wantStatus)
		}
		if iv.Requests != want || iv.Failures != wantFail || iv.Latency.count != want {
			t.Errorf("interval %d: %d requests, %d failures, histogram of %d; want %d, %d", i, iv.Requests, iv.Failures, iv.Latency.count, want, wantFail)
		}
		stalled := i >= 4 && i < 12
		if stalled != (want == 0) {
			t.Fatalf("test bug: interval %d has %d requests", i, want)
		}
		if want > 0 {
			got := [...]int64{iv.Latency.MinUs, iv.Latency.P50Us, iv.Latency.P90Us, iv.Latency.P99Us, iv.Latency.P999Us, iv.Latency.MaxUs}
			exp := [...]int64{dist.Min, dist.Percentile(50), dist.Percentile(90), dist.Percentile(99), dist.Percentile(99.9), dist.Max}
			if got != exp {
				t.Errorf("interval %d: min/p50/p90/p99/p99.9/max %v, want %v", i, got, exp)
			}
		}
		h, err := hdrhistogram.Decode([]byte(iv.Latency.Histogram))
		if err != nil || h.TotalCount() != want {
			t.Errorf("interval %d: histogram decodes to %v values (%v), want %d", i, h, err, want)
		}
		sum += iv.Requests
	}
	if sum != int64(res.Complete) {
		t.Errorf("intervals sum to %d requests, Complete is %d", sum, res.Complete)
	}
	// The stalled request is the only one over 2 s, in interval 12 (3.0 s).
	if mx := tl.Intervals[12].Latency.MaxUs; mx != 2_005_000 {
		t.Errorf("interval 12's max %d µs, want the stalled request's 2005000", mx)
	}
	if last := tl.Intervals[len(tl.Intervals)-1]; last.Start+last.Length != res.Elapsed {
		t.Errorf("last interval ends at %v, the run at %v", last.Start+last.Length, res.Elapsed)
	}
}

// TestTimelineLateRecording: a request recorded long after its interval was
// harvested is still counted in its own interval (the collector's late path).
func TestTimelineLateRecording(t *testing.T) {
	const d = 20 * time.Millisecond
	script := func(r *run, k int64, sent int64) outcome {
		end := int64(5*time.Millisecond) + k*int64(time.Millisecond)
		if k == 3 {
			// Wait until interval 0 has surely been harvested, then end in it.
			for r.tl.harvestedCount() < 2 {
				time.Sleep(time.Millisecond)
			}
		}
		return outcome{Start: end - int64(time.Millisecond), End: end, Status: 200}
	}
	res := runScript(t, Config{Requests: 5, Concurrency: 1, Interval: d}, script)
	iv := res.Timeline.Intervals
	if len(iv) != 1 || iv[0].Requests != 5 || iv[0].Latency.count != 5 || iv[0].Latency.MaxUs != 1000 {
		t.Fatalf("intervals %+v, want one of 5 requests of 1 ms", iv)
	}
}

func (tl *timeline) harvestedCount() int64 {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.harvested
}

// TestTimelineStallLoopback: a loopback server that answers in about 3 ms
// stalls one response for 2 s, 0.7 s into the run. The intervals the stall
// covers completely have no completions and no bytes, the stalled request
// shows in the interval of its end (and nowhere else is anything that slow),
// every interval's count agrees with the recorded samples' end times, and
// the counts sum to Complete. An interval outside the stall may be empty
// too: a loaded machine can leave the run without a CPU for half a second
// (seen: the first interval, the run's start); the samples then say so.
// (Rate mode's test below takes the goroutine path.)
func TestTimelineStallLoopback(t *testing.T) {
	{
		const d = 500 * time.Millisecond
		resp := respond100(true)
		var first time.Time
		stalled := false
		srv := newFaultServer(t, func(fc *faultConn) {
			for {
				if _, ok := fc.readRequest(); !ok {
					return
				}
				if first.IsZero() {
					first = time.Now()
				}
				if !stalled && time.Since(first) >= 700*time.Millisecond {
					stalled = true
					time.Sleep(2 * time.Second)
				} else {
					time.Sleep(3 * time.Millisecond)
				}
				fc.write(resp)
			}
		})
		cfg := h1Config(srv.port(), 100000, 1, true)
		cfg.TimeLimit = 3500 * time.Millisecond
		cfg.Interval = d
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ivs := res.Timeline.Intervals
		if want := int((res.Elapsed + d - 1) / d); len(ivs) != want {
			t.Fatalf("%d intervals in a %v run, want %d", len(ivs), res.Elapsed, want)
		}
		// The stall as the client saw it: the one sample over 2 s.
		var stallFrom, stallTo int64 // µs since the start, ±1 ms
		var sum int64
		samples := res.Samples.Exact()
		for _, s := range samples {
			if s.Total >= 2_000_000 {
				stallFrom, stallTo = int64(s.Start)*1000, int64(s.Start)*1000+int64(s.Total)
			}
		}
		if stallTo == 0 {
			t.Fatal("no request took 2 s")
		}
		const slack = 2000 // µs: Sample.Start is whole wall-clock ms
		for i, iv := range ivs {
			from, to := int64(iv.Start/time.Microsecond), int64((iv.Start+iv.Length)/time.Microsecond)
			var want, unsure int64
			for _, s := range samples {
				end := int64(s.Start)*1000 + int64(s.Total)
				switch {
				case end > from+slack && end < to-slack:
					want++
				case end > from-slack && end < to+slack:
					unsure++
				}
			}
			if iv.Requests < want || iv.Requests > want+unsure {
				t.Errorf("interval %d: %d requests, the samples say %d (+%d near its edges)", i, iv.Requests, want, unsure)
			}
			if iv.Bytes != iv.Requests*int64(len(resp)) {
				t.Errorf("interval %d: %d bytes for %d responses of %d", i, iv.Bytes, iv.Requests, len(resp))
			}
			inside := from > stallFrom+slack && to < stallTo-slack
			if inside && iv.Requests != 0 {
				t.Errorf("interval %d lies inside the stall (%d–%d µs) but has %d requests", i, stallFrom, stallTo, iv.Requests)
			}
			holdsEnd := stallTo >= from && stallTo < to
			if slow := iv.Latency.MaxUs >= 2_000_000; slow != holdsEnd && stallTo > from+slack && stallTo < to-slack {
				t.Errorf("interval %d: max %d µs; the stalled request ended at %d µs", i, iv.Latency.MaxUs, stallTo)
			}
			sum += iv.Requests
		}
		if sum != int64(res.Complete) {
			t.Errorf("intervals sum to %d, Complete is %d", sum, res.Complete)
		}
		t.Logf("stall %d–%d µs; requests per interval: %v", stallFrom, stallTo, func() (n []int64) {
			for _, iv := range ivs {
				n = append(n, iv.Requests)
			}
			return
		}())
	}
}

// TestTimelineRateCorrected: in rate mode each interval also has the
// corrected latencies (from the intended send time). One connection, 200
// requests/s (request k due at k × 5 ms), and the 20th response (k = 19, due
// at 95 ms) held 150 ms: it ends at 245 ms at the earliest, and the 20
// requests due from 100 to 195 ms, sent after it, have corrected latencies of
// at least 50 ms although each takes well under a millisecond from its send.
func TestTimelineRateCorrected(t *testing.T) {
	resp := respond100(true)
	n := 0
	srv := newFaultServer(t, func(fc *faultConn) {
		for {
			if _, ok := fc.readRequest(); !ok {
				return
			}
			if n++; n == 20 {
				time.Sleep(150 * time.Millisecond)
			}
			fc.write(resp)
		}
	})
	cfg := h1Config(srv.port(), 120, 1, true)
	cfg.Rate = 200
	cfg.Interval = 100 * time.Millisecond
	res, err := h1Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tl := res.Timeline
	if !tl.Corrected {
		t.Fatal("rate mode's timeline has no corrected latencies")
	}
	var sum int64
	seen := false
	measured, corrected := samples.NewDist(), samples.NewDist()
	merge := func(into *samples.Dist, l IntervalLatency, i int) {
		h, err := hdrhistogram.Decode([]byte(l.Histogram))
		if err != nil || h.TotalCount() != l.count {
			t.Fatalf("interval %d: histogram decodes to %v (%v), want %d values", i, h, err, l.count)
		}
		into.Hist.Merge(h)
		if l.count > 0 {
			if into.Count == 0 || l.MinUs < into.Min {
				into.Min = l.MinUs
			}
			into.Max = max(into.Max, l.MaxUs)
		}
		into.Count += l.count
	}
	for i, iv := range tl.Intervals {
		sum += iv.Requests
		// A request's corrected latency is never below its measured one, and
		// both count in the interval of its end: every figure of an
		// interval's corrected distribution is at least the measured one.
		c, m := iv.Corrected, iv.Latency
		if c.count != iv.Requests || c.MinUs < m.MinUs || c.P50Us < m.P50Us || c.P90Us < m.P90Us ||
			c.P99Us < m.P99Us || c.P999Us < m.P999Us || c.MaxUs < m.MaxUs {
			t.Errorf("interval %d of %d requests: corrected %+v below measured %+v", i, iv.Requests, c, m)
		}
		// The interval of the held response's end starts with it and the
		// requests due during the hold, in order: at least 21 of its at most
		// 101 values, or all of them, are ≥ 50 ms, so its corrected p90 is.
		if c.P90Us >= 50_000 {
			seen = true
		}
		merge(&measured, m, i)
		merge(&corrected, c, i)
	}
	if sum != int64(res.Complete) {
		t.Errorf("intervals sum to %d, Complete is %d", sum, res.Complete)
	}
	if !seen {
		t.Errorf("no interval shows the hold in its corrected p90: %+v", tl.Intervals)
	}
	// Over the whole run the intervals hold exactly the run's distributions.
	if !corrected.Hist.Equals(res.Extra.Rate.Corrected.Hist) || !measured.Hist.Equals(res.Extra.Phases[PhaseTotal].Hist) {
		t.Errorf("the intervals' histograms do not add up to the run's corrected and measured ones")
	}
	// The run's p90 (rank 108 of 120, the 12th slowest) is ≥ 50 ms corrected
	// by construction (21 values are); measured, only the held request is
	// that slow, and 11 of the other 119 taking 50 ms would take a machine
	// that stalls one request in ten. A timeline recording the measured
	// latency as the corrected one would show both under 50 ms.
	c90, m90 := corrected.Percentile(90), measured.Percentile(90)
	t.Logf("run p90: corrected %d µs, measured %d µs", c90, m90)
	if c90 < 50_000 || m90 >= 50_000 {
		t.Errorf("run p90: corrected %d µs (want ≥ 50 ms), measured %d µs (want < 50 ms)", c90, m90)
	}
}

// Recording allocates nothing: neither a recording into a live buffer nor a
// failure count (the keep-alive benchmarks show the same end to end).
func TestTimelineRecordingDoesNotAllocate(t *testing.T) {
	tl, tally, o := bareTimeline()
	defer tl.result(0)
	allocs := testing.AllocsPerRun(1000, func() {
		tally.TotalRead += 150
		tl.observe(tally, o)
		o.End += 1000
		tally.Failed.Connect++
		tl.failure(tally, o.End)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per recording", allocs)
	}
}

// BenchmarkKeepAlive100BTimeline is BenchmarkKeepAlive100B with the timeline
// on (1 s intervals): compare the two for the recording's cost per request.
func BenchmarkKeepAlive100BTimeline(b *testing.B) {
	for _, c := range []int{1, 8} {
		b.Run(fmt.Sprintf("c%d", c), func(b *testing.B) {
			benchmarkRunWith(b, true, c, false, func(cfg *Config) { cfg.Interval = time.Second })
		})
	}
}

// BenchmarkTimelineObserve is the recording's own cost per request, rate
// mode's second histogram included.
func BenchmarkTimelineObserve(b *testing.B) {
	tl, tally, o := bareTimeline()
	defer tl.result(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tally.TotalRead += 150
		o.End = 2_000_000 + int64(i&1023)*100
		tl.observe(tally, o)
	}
}

// bareTimeline is a rate-mode timeline of 1-minute intervals on a clock
// that stays at 0, a worker's tally and an outcome in interval 0.
func bareTimeline() (*timeline, *tally, *outcome) {
	tl := newTimeline(time.Minute, true, 1, func() int64 { return 0 })
	return tl, &tally{}, &outcome{Start: 1000, TCPDone: 1500, Connect: 3000, End: 2_000_000, Intended: 500, Status: 200}
}

// TestTimelineTLSHandshakes: the timeline counts each request that opened a
// connection with a TLS handshake, in the interval of its end, with the
// handshake's time: the intervals' sum is the extended report's TLS phase
// to the µs, on every path (HTTP/1 and HTTP/2, event loops and goroutines);
// a kept-alive connection's later requests and a plain run count none.
func TestTimelineTLSHandshakes(t *testing.T) {
	sum := func(t *testing.T, res *Result) (n, us int64) {
		t.Helper()
		if res.Timeline == nil {
			t.Fatal("no timeline")
		}
		for _, iv := range res.Timeline.Intervals {
			if iv.TLSHandshakes > iv.Requests || iv.TLSHandshakes == 0 && iv.TLSUs != 0 {
				t.Errorf("interval at %v: %d handshakes, %d µs, %d requests", iv.Start, iv.TLSHandshakes, iv.TLSUs, iv.Requests)
			}
			n += iv.TLSHandshakes
			us += iv.TLSUs
		}
		if phase := res.Extra.Phases[PhaseTLS].Sum; us != phase {
			t.Errorf("timeline's TLS time %d µs, the TLS phase's %d µs", us, phase)
		}
		return n, us
	}
	run := func(t *testing.T, cfg Config) *Result {
		t.Helper()
		cfg.Interval, cfg.Extended = MinInterval, true
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		wantCounts(t, res, cfg.Requests, Failures{})
		return res
	}
	h1Paths(t, func(t *testing.T) {
		srv := newTLSTestServer(t, nil)
		cfg := tlsConfigFor(srv.port(), 30, false, TLSOptions{ServerName: "127.0.0.1"})
		cfg.Concurrency = 2
		if n, us := sum(t, run(t, cfg)); n != 30 || us <= 0 {
			t.Errorf("a run without keep-alive: %d handshakes of %d µs, want 30 of some time", n, us)
		}
		if n, us := sum(t, run(t, tlsConfigFor(srv.port(), 20, true, TLSOptions{ServerName: "127.0.0.1"}))); n != 1 || us <= 0 {
			t.Errorf("a kept-alive connection: %d handshakes of %d µs, want 1", n, us)
		}
		plain := newBenchServer(t, false)
		if n, us := sum(t, run(t, h1Config(plain.port(), 20, 2, false))); n != 0 || us != 0 {
			t.Errorf("a plain run: %d handshakes of %d µs", n, us)
		}
	})
	h2Paths(t, func(t *testing.T) {
		ts := startGoH2(t, newH2Counter(0, []byte("x")), true)
		cfg := h2TestConfig(t, ts.URL+"/doc", 40, 2, 5)
		cfg.Interval, cfg.Extended = MinInterval, true
		res, err := runH2(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if n, us := sum(t, res); n != 2 || us <= 0 {
			t.Errorf("HTTP/2 over 2 connections: %d handshakes of %d µs, want 2", n, us)
		}
	})
}

// TestTimelineOnInterval: Config.OnInterval receives every interval of the
// run's timeline once, in order, never two calls at once; those the run's
// end closes come before Run returns.
func TestTimelineOnInterval(t *testing.T) {
	const d = 250 * time.Millisecond
	var ends, lat []int64
	var fail []bool
	for at := 20 * time.Millisecond; at < 2*time.Second; at += 20 * time.Millisecond {
		ends, lat, fail = append(ends, int64(at)), append(lat, int64(time.Millisecond)), append(fail, false)
	}
	var (
		mu     sync.Mutex
		got    []Interval
		inside atomic.Bool
	)
	on := func(iv Interval) {
		if !inside.CompareAndSwap(false, true) {
			t.Error("two OnInterval calls at once")
		}
		mu.Lock()
		got = append(got, iv)
		mu.Unlock()
		inside.Store(false)
	}
	res := runScript(t, Config{Requests: len(ends), Concurrency: 1, Interval: d, OnInterval: on}, scriptedEnds(ends, lat, fail))
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(res.Timeline.Intervals) || len(got) == 0 {
		t.Fatalf("%d intervals handed on, the timeline has %d", len(got), len(res.Timeline.Intervals))
	}
	var sum int64
	for i, iv := range got {
		if iv.Start != time.Duration(i)*d {
			t.Errorf("interval %d handed on starts at %v", i, iv.Start)
		}
		sum += iv.Requests
	}
	if sum > int64(res.Complete) || sum == 0 {
		t.Errorf("the intervals handed on hold %d requests of %d", sum, res.Complete)
	}
}
