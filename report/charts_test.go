package report

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/internal/samples"
)

// TestRunChartDataLTTB: past the limit, an LTTB downsampling in time order
// that keeps every request slower than p99.9; the ranges count every request;
// the curve ends at the maximum; the partial last second is left out of the
// per-second counts.
func TestRunChartDataLTTB(t *testing.T) {
	const n = 1001
	s := samples.New(n, 0)
	for i := 0; i < n; i++ {
		s.Put(i, samples.Sample{Start: uint32(i), Total: uint32(1000 + (i*7919)%n)}, nil)
	}
	res := &client.Result{Complete: n, Elapsed: 2500 * time.Millisecond, Samples: s,
		Extra: &client.ExtraResult{PerSecond: []int64{400, 400, 201}}}
	sum := Summarize(res, Options{Concurrency: 1})
	d := RunChartData(sum, res, ChartOptions{MaxPoints: 100, RangeEdgesMs: []float64{1.25, 1.5}})
	if d.Stored != n || d.Recorded != n || len(d.Latency) != 100 {
		t.Fatalf("stored %d recorded %d, %d points", d.Stored, d.Recorded, len(d.Latency))
	}
	slowest := 0
	for i, p := range d.Latency {
		if i > 0 && p.StartS < d.Latency[i-1].StartS {
			t.Fatalf("point %d at %v s after %v s", i, p.StartS, d.Latency[i-1].StartS)
		}
		if p.LatencyUs == 1000+n-1 {
			slowest++
		}
	}
	if slowest != 1 || !strings.Contains(d.LatencyNote, "largest-triangle-three-buckets") {
		t.Errorf("slowest kept %d times; note %q", slowest, d.LatencyNote)
	}
	// 1000…1250 µs, 1251…1500, 1501…2000.
	if want := []int64{251, 250, 500}; !slices.Equal(d.Ranges, want) {
		t.Errorf("ranges %v, want %v", d.Ranges, want)
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

// TestDocumentChartDataRanges: a saved document's response-time ranges come
// from its latency histogram and count every recorded request; its curve and
// objectives are there too.
func TestDocumentChartDataRanges(t *testing.T) {
	_, s := extFixture()
	var b bytes.Buffer
	if err := WriteJSON(&b, s); err != nil {
		t.Fatal(err)
	}
	doc, err := DecodeDocument("x.json", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	d, err := DocumentChartData(doc)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range d.Ranges {
		n += c
	}
	if len(d.Ranges) != 3 || n != int64(doc.Report.CompleteRequests) || d.Failed != doc.Report.FailedRequests || !strings.Contains(d.RangesNote, "HDR") {
		t.Errorf("ranges %v (%s), failed %d; want 3 ranges adding up to %d", d.Ranges, d.RangesNote, d.Failed, doc.Report.CompleteRequests)
	}
}

// TestChartIntervalsAdapt: 200 intervals of 100 ms chosen for the pictures
// become 100 of 200 ms (two each), their counts summed and their
// percentiles those of the merged histograms; given with --interval they
// stay as they are.
func TestChartIntervalsAdapt(t *testing.T) {
	raw, vals := randomTimeline(200, 100*time.Millisecond, 3)
	tl := raw.record()
	ivs, note := chartIntervals(tl, true)
	if len(ivs) != 100 || note != "200ms intervals (2 × 100ms), chosen from the run's length" {
		t.Fatalf("%d intervals, note %q", len(ivs), note)
	}
	for i, iv := range ivs {
		d := samples.NewDist()
		for _, v := range append(append([]int64(nil), vals[2*i]...), vals[2*i+1]...) {
			d.Add(v)
		}
		if iv.Requests != d.Count || iv.P99Us != d.Percentile(99) || iv.MaxUs != d.Max || math.Abs(iv.StartS-float64(i)*0.2) > 1e-9 || math.Abs(iv.LengthS-0.2) > 1e-9 {
			t.Fatalf("interval %d: %+v; want %d requests, p99 %d, max %d", i, iv, d.Count, d.Percentile(99), d.Max)
		}
	}
	if ivs, note := chartIntervals(tl, false); len(ivs) != 200 || note != "100ms intervals" {
		t.Errorf("given: %d intervals, note %q", len(ivs), note)
	}
}
