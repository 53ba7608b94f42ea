package report

import (
	"gab/internal/samples"

	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gab/client"
)

var updateExtended = flag.Bool("update-extended", false, "rewrite report/testdata/ext-*.golden from the current output")

// extFixture is tenSamples with everything the extended report and rate mode
// show: phases, statuses, failures with first errors, per-second counts, a
// corrected distribution and a dispatch lag.
func extFixture(percentiles ...float64) (*client.Result, *Run) {
	res := tenSamples()
	res.Start = time.Date(2026, 11, 30, 1, 2, 3, 456789000, time.UTC)
	res.Elapsed = 2500 * time.Millisecond
	res.Ending = client.EndCompleted
	res.Failed = client.Failures{Total: 4, Connect: 1, Receive: 2, Exceptions: 0, Length: 0}
	res.Non2xx = 3
	res.WriteErrors = 1
	res.TotalRead = 125_000
	res.BodyRead = 100_000
	res.TotalSent = 25_000
	res.DocLength = 10_000
	res.ServerSoftware = "fixture/1.0"
	res.StatusCounts = map[int]int{200: 7, 404: 1, 503: 2}
	res.FirstError = map[string]string{
		"connect": "dial tcp 127.0.0.1:1: connect: connection refused",
		"receive": "read tcp 127.0.0.1:5->127.0.0.1:6: read:\nconnection reset by peer",
		"write":   "write: broken pipe",
	}
	x := &client.ExtraResult{DNS: 1234567 * time.Nanosecond, DNSLookups: 1, PerSecond: []int64{4, 5, 1}}
	for p := range x.Phases {
		x.Phases[p] = samples.NewDist()
	}
	for i := int64(0); i < 10; i++ {
		x.Phases[client.PhaseTCP].Add(100 * i)
		x.Phases[client.PhaseTLS].Add(0)
		x.Phases[client.PhaseWrite].Add(12)
		x.Phases[client.PhaseWait].Add(500 + 10*i)
		x.Phases[client.PhaseBody].Add(400 + i)
		x.Phases[client.PhaseTotal].Add(1000*(i+1) + i)
	}
	rr := &client.RateResult{Target: 4, Sent: 10, OnSchedule: 9, BehindAtEnd: 0, Corrected: samples.NewDist(), Lag: samples.NewDist()}
	for i := int64(0); i < 10; i++ {
		rr.Corrected.Add(1000*(i+1) + i + 250_000*(i/8)) // the last two waited 250 ms for a connection
		rr.Lag.Add(100 + 250_000*(i/8))
	}
	x.Rate = rr
	res.Extra = x
	res.Timeline = fixtureTimeline()
	s := Summarize(res, Options{Host: "127.0.0.1", Port: 8080, Path: "/x", Concurrency: 2,
		Percentiles: percentiles, CPU: fixtureCPU(), CommandLine: fixtureCommandLine})
	return res, s
}

// fixtureTimeline is extFixture's run by 1-second intervals: requests i of
// 4, 5 and 1 per interval, with extFixture's totals and corrected times.
func fixtureTimeline() *client.Timeline {
	tl := &client.Timeline{Interval: time.Second, Corrected: true}
	i := int64(0)
	for k, n := range []int64{4, 5, 1} {
		var total, corrected []int64
		for range n {
			total = append(total, 1000*(i+1)+i)
			corrected = append(corrected, 1000*(i+1)+i+250_000*(i/8))
			i++
		}
		tl.Intervals = append(tl.Intervals, client.Interval{
			Start: time.Duration(k) * time.Second, Length: time.Second,
			Requests: n, Failures: int64(k), Bytes: 12_500 * n, Sent: 2_500 * n,
			Latency: latencyOfValues(total), Corrected: latencyOfValues(corrected),
		})
	}
	tl.Intervals[2].Length = 500 * time.Millisecond
	return tl
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateExtended {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update-extended to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func fixtureCPU() CPUUsage {
	return CPUUsage{User: 1500 * time.Millisecond, Sys: 500 * time.Millisecond, Known: true}
}

func TestWriteExtendedGolden(t *testing.T) {
	_, s := extFixture()
	var b bytes.Buffer
	if err := writeExtended(&b, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "ext-extended.golden", b.Bytes())
	out := b.String()
	// Figures checked by hand, beside the golden file.
	for _, want := range []string{
		"DNS resolution:         1.234 [ms] (1 name, once before the run)\n",
		"  200: 7\n  404: 1\n  503: 2\n",
		"  connect:    1  dial tcp 127.0.0.1:1: connect: connection refused\n",
		"  receive:    2  read tcp 127.0.0.1:5->127.0.0.1:6: read: connection reset by peer\n",
		"  write:      1  write: broken pipe\n",
		"  (1 more failed requests have no class",
		// PerSecond 4, 5 over the two whole seconds: mean 4.5, sd √0.5.
		"Throughput:             4.50 [#/sec] mean, sd 0.71 (over 2 whole 1-second intervals)\n",
		// 125000 B × 8 / 2.5 s = 0.4 Mbit/s; 25000 B → 0.08.
		"Bandwidth:              0.400 [Mbit/s] received, 0.080 [Mbit/s] sent (10^6 bits)\n",
		// 2 s of CPU over 2.5 s.
		"Client CPU:             1.500 [s] user, 0.500 [s] sys, 80.0% of one core, 0.80 cores busy\n",
		"Sample store:           exact (all 10 requests stored to the µs)\n",
		// TCP connect 0, 100, … 900 µs: mean 450, sd 302.765; nearest ranks
		// (1-based) 5 for the median, 9 for p90, 10 for p99.
		"TCP connect:         0.000     0.450     0.303     0.400     0.800     0.900     0.900     0.900\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("extended report lacks %q", want)
		}
	}
	// Response time: the phase table's Total row (exact mean 5504.5 µs, sd
	// around it), rounded once, as that row is.
	var ss float64
	for i := 0; i < 10; i++ {
		d := float64(1000*(i+1)+i) - 5504.5
		ss += d * d
	}
	want := "Response time:          " + ms3(5504.5) + " [ms] mean, sd " + strings.TrimSpace(ms3(math.Sqrt(ss/9))) + " (the phase table's Total)\n"
	if !strings.Contains(out, want) {
		t.Errorf("extended report lacks %q", want)
	}
	row := regexp.MustCompile(`\nTotal:\s+\S+\s+(\S+)`).FindStringSubmatch(out)
	if row == nil || !strings.Contains(want, " "+row[1]+" [ms] mean") {
		t.Errorf("the phase table's Total mean %v and the Response time line differ:\n%s", row, out)
	}
}

func TestThroughputOf(t *testing.T) {
	cases := []struct {
		per      []int64
		elapsed  time.Duration
		n        int
		mean, sd float64
	}{
		{[]int64{10, 10, 10, 3}, 3200 * time.Millisecond, 3, 10, 0},
		{[]int64{2, 4}, 2 * time.Second, 2, 3, math.Sqrt2},
		{[]int64{5}, 900 * time.Millisecond, 0, 0, 0},
		// Seconds with no completion at the end of the run count as zeros.
		{[]int64{6}, 3 * time.Second, 3, 2, math.Sqrt(12)},
	}
	for _, c := range cases {
		got := throughputOf(c.per, c.elapsed)
		if got.Intervals != c.n || math.Abs(got.MeanPerS-c.mean) > 1e-9 || math.Abs(got.SDPerS-c.sd) > 1e-9 {
			t.Errorf("ThroughputOf(%v, %v) = %+v, want %d intervals, mean %v, sd %v", c.per, c.elapsed, got, c.n, c.mean, c.sd)
		}
	}
}

func TestWriteCorrectedGolden(t *testing.T) {
	_, s := extFixture(99.9)
	var b bytes.Buffer
	if err := writeCorrected(&b, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "ext-corrected.golden", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"Target rate:            4.00 [#/sec]\n",
		"Achieved rate:          4.00 [#/sec] (mean)\n", // 10 requests in 2.5 s
		"Requests sent:          10, 9 on schedule (within 1.000 [ms] of the intended time), 0 due but never sent\n",
		// Corrected totals: 1000 … 8007, then 259008 and 260009 µs; nearest
		// ranks 5 (5004), 9 (259008's bucket top) and 10.
		"  50%      5\n",
		"  90%    259\n",
		"99.9%    260\n",
		" 100%    260 (longest request)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("corrected section lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "WARNING") {
		t.Errorf("a run at its target rate warns:\n%s", out)
	}
	// Achieved far below the target: a warning after the achieved rate.
	res, _ := extFixture()
	res.Extra.Rate.Target = 200000
	b.Reset()
	if err := writeCorrected(&b, Summarize(res, Options{Concurrency: 2})); err != nil ||
		!strings.Contains(b.String(), "Achieved rate:          4.00 [#/sec] (mean)\nWARNING: the achieved rate is 0.0% of the target: the client (or its -c connections) did not keep up\n") {
		t.Errorf("no shortfall warning:\n%s", b.String())
	}
	// Outside rate mode there is nothing to write.
	res, _ = extFixture()
	res.Extra.Rate = nil
	b.Reset()
	if err := writeCorrected(&b, Summarize(res, Options{Concurrency: 2})); err != nil || b.Len() != 0 {
		t.Errorf("wrote %q outside rate mode", b.String())
	}
}

func TestCPUUsage(t *testing.T) {
	before := ProcessCPU()
	x := 0
	for i := 0; i < 1_000_000; i++ {
		x += i % 7
	}
	after := ProcessCPU()
	if !after.Known {
		t.Skip("no getrusage here")
	}
	d := after.Sub(before)
	if d.User < 0 || d.Sys < 0 || !d.Known || x == 0 {
		t.Fatalf("CPU used %+v", d)
	}
}
