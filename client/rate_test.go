package client

import (
	"sync"
	"testing"
	"time"
)

// instant answers at once: every phase takes no time, the response ends when sent.
func instant(r *run, k int64, sent int64) Outcome {
	return Outcome{Start: sent, TCPDone: sent, Connect: sent, WriteEnd: sent, FirstByte: sent, End: sent, Status: 200}
}

func TestRateFollowsSchedule(t *testing.T) {
	var mu sync.Mutex
	var sends []int64
	script := func(r *run, k int64, sent int64) Outcome {
		mu.Lock()
		sends = append(sends, sent)
		mu.Unlock()
		return instant(r, k, sent)
	}
	res := runScript(t, Config{Requests: 60, Concurrency: 3, Rate: 200}, script)
	if res.Complete != 60 {
		t.Fatalf("complete %d, want 60", res.Complete)
	}
	// The 60th request is due at 59/200 s: the run cannot end before it.
	if res.Elapsed < 295*time.Millisecond {
		t.Fatalf("60 requests at 200/s took %v, want ≥ 295ms", res.Elapsed)
	}
	rr := res.Extra.Rate
	if rr == nil || rr.Target != 200 || rr.Sent != 60 || rr.BehindAtEnd != 0 {
		t.Fatalf("rate result %+v", rr)
	}
	if rr.Lag.Count != 60 || rr.Corrected.Count != 60 {
		t.Fatalf("lag %d and corrected %d values, want 60 each", rr.Lag.Count, rr.Corrected.Count)
	}
	// No request may leave before its slot: sort the send times and check the
	// i-th is at or after i/200 s.
	mu.Lock()
	defer mu.Unlock()
	sortInt64(sends)
	for i, s := range sends {
		if due := int64(i) * int64(5*time.Millisecond); s < due {
			t.Fatalf("request %d sent at %v, before its slot at %v", i, time.Duration(s), time.Duration(due))
		}
	}
}

func sortInt64(a []int64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// TestRateCoordinatedOmission is the classic demonstration on the fake
// transport: from 200 ms to 400 ms into the run the "server" holds every
// response until 400 ms. A closed loop only notices the few requests in flight;
// the schedule knows that 200 more were due meanwhile.
func TestRateCoordinatedOmission(t *testing.T) {
	const holdFrom, holdTo = 200 * time.Millisecond, 400 * time.Millisecond
	script := func(r *run, k int64, sent int64) Outcome {
		o := instant(r, k, sent)
		if sent >= int64(holdFrom) && sent < int64(holdTo) {
			time.Sleep(time.Duration(int64(holdTo) - sent))
			o.FirstByte, o.End = r.clock(), r.clock()
		}
		return o
	}
	res := runScript(t, Config{Requests: 600, Concurrency: 2, Rate: 1000}, script)
	rr := res.Extra.Rate
	corrected99 := rr.Corrected.Percentile(99)
	uncorrected99 := res.Extra.Phases[PhaseTotal].Percentile(99)
	corrected50 := rr.Corrected.Percentile(50)
	t.Logf("p50 corrected %d µs; p99 corrected %d µs, uncorrected %d µs; lag max %d µs", corrected50, corrected99, uncorrected99, rr.Lag.Max)
	if corrected99 < 100_000 {
		t.Errorf("corrected p99 %d µs, want ≥ 100 ms", corrected99)
	}
	if uncorrected99 >= corrected99 {
		t.Errorf("uncorrected p99 %d µs not below corrected %d µs", uncorrected99, corrected99)
	}
	if corrected50 > 50_000 {
		t.Errorf("corrected p50 %d µs, want low", corrected50)
	}
	if rr.Lag.Max < 100_000 {
		t.Errorf("max lag %d µs: the schedule fell ~200 ms behind", rr.Lag.Max)
	}
}

// On a kept-alive connection the transport starts a request when the previous
// response ended; in rate mode the wait for the slot must not count.
func TestRateStartIsSendTime(t *testing.T) {
	var mu sync.Mutex
	prevEnd := map[*run]int64{}
	script := func(r *run, k int64, sent int64) Outcome {
		mu.Lock()
		start := prevEnd[r]
		prevEnd[r] = sent + int64(time.Millisecond)
		mu.Unlock()
		return Outcome{Start: start, TCPDone: start, Connect: start, WriteEnd: sent, FirstByte: sent + int64(time.Millisecond), End: sent + int64(time.Millisecond), Status: 200, KeptAlive: true}
	}
	res := runScript(t, Config{Requests: 10, Concurrency: 1, Rate: 50}, script)
	for i, s := range res.Samples.Exact() {
		// 20 ms between slots; the request itself takes 1 ms (+ timer lateness).
		if s.Total > 15_000 {
			t.Errorf("request %d: total %d µs includes the wait for its slot", i, s.Total)
		}
	}
}

func TestRateStopsWhileWaiting(t *testing.T) {
	// One request per second for 10 requests, but a 300 ms time limit: the run
	// must end at the limit, not after the schedule.
	begin := time.Now()
	res := runScript(t, Config{Requests: 10, Concurrency: 2, Rate: 1, TimeLimit: 300 * time.Millisecond}, instant)
	if took := time.Since(begin); took > 3*time.Second {
		t.Fatalf("run took %v after a 300ms limit", took)
	}
	if res.Ending != EndTimeLimit || res.Complete != 1 {
		t.Fatalf("ending %v with %d complete, want the time limit after 1", res.Ending, res.Complete)
	}
	if rr := res.Extra.Rate; rr.Sent != 1 || rr.BehindAtEnd != 0 {
		t.Fatalf("sent %d, behind %d; want 1 and 0", rr.Sent, rr.BehindAtEnd)
	}
}

func TestRateSlowerThanIdleTimeout(t *testing.T) {
	// 4 requests/s with -s 0.1 s: waiting for a slot is not idleness.
	res := runScript(t, Config{Requests: 3, Concurrency: 1, Rate: 4, Timeout: 100 * time.Millisecond}, instant)
	if res.Complete != 3 || res.Fatal != nil {
		t.Fatalf("complete %d, fatal %v", res.Complete, res.Fatal)
	}
}

func TestRateBehindAtEnd(t *testing.T) {
	// Each request takes 50 ms on one connection but 100/s are asked for, for
	// 300 ms: about 30 are due, about 6 sent.
	script := func(r *run, k int64, sent int64) Outcome {
		time.Sleep(50 * time.Millisecond)
		o := instant(r, k, sent)
		o.End = r.clock()
		return o
	}
	res := runScript(t, Config{Requests: 1000, Concurrency: 1, Rate: 100, TimeLimit: 300 * time.Millisecond}, script)
	rr := res.Extra.Rate
	if rr.BehindAtEnd < 10 {
		t.Fatalf("behind %d at the end after sending %d", rr.BehindAtEnd, rr.Sent)
	}
	if rr.Corrected.Max <= res.Extra.Phases[PhaseTotal].Max {
		t.Fatalf("corrected max %d µs not above uncorrected %d µs", rr.Corrected.Max, res.Extra.Phases[PhaseTotal].Max)
	}
}
