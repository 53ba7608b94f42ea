package report

import (
	"testing"
	"time"

	"gab/client"
	"gab/internal/samples"
)

// TestRunChartDataSamplesEvenly: past the limit, every Stride-th request in
// latency order and the slowest; the curve ends at the maximum; the partial
// last second is left out of the per-second counts.
func TestRunChartDataSamplesEvenly(t *testing.T) {
	const n = 1001
	s := samples.New(n, 0)
	for i := 0; i < n; i++ {
		s.Put(i, samples.Sample{Start: uint32(i), Total: uint32(1000 + (i*7919)%n)}, nil)
	}
	res := &client.Result{Complete: n, Elapsed: 2500 * time.Millisecond, Samples: s,
		Extra: &client.ExtraResult{PerSecond: []int64{400, 400, 201}}}
	sum := Summarize(res, Options{Concurrency: 1})
	d := RunChartData(sum, res, 100)
	if d.Stride != 11 || d.Stored != n || d.Recorded != n {
		t.Fatalf("stride %d stored %d recorded %d", d.Stride, d.Stored, d.Recorded)
	}
	if len(d.Latency) != 92 { // ranks 0, 11, ..., 990 and the slowest (1000)
		t.Fatalf("%d points", len(d.Latency))
	}
	for i, p := range d.Latency[:91] {
		if want := uint32(1000 + 11*i); p.LatencyUs != want {
			t.Fatalf("point %d: %d µs, want %d", i, p.LatencyUs, want)
		}
	}
	if last := d.Latency[91]; last.LatencyUs != 1000+n-1 {
		t.Errorf("last point %d µs, want the slowest", last.LatencyUs)
	}
	c := d.Curve
	if c[0].Percent != 0 || c[0].Us != 1000 || c[len(c)-1].Percent != 100 || c[len(c)-1].Us != 1000+n-1 {
		t.Errorf("curve from %+v to %+v", c[0], c[len(c)-1])
	}
	if p := c[len(c)-2].Percent; p < 99.8 || p >= 99.91 {
		t.Errorf("curve's last percentile %v: 1001 requests resolve p99.9, not more", p)
	}
	if len(d.PerSecond) != 2 {
		t.Errorf("per second %v, want the two whole seconds", d.PerSecond)
	}
}
