package report

import (
	"errors"
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/client"
	"gab/internal/chart"
	"gab/internal/samples"
)

// This file gathers what gab's charts of a run are drawn from (--plot, --html):
// each request's latency over time, the latency percentile curve, and the
// requests of each second (chart.Data).

// Curve percentiles: 0 to 99.99, evenly spaced on the 1/(1−p) axis that HDR
// histogram plots use (10 points a decade).
func curvePercents(count int) []float64 {
	var ps []float64
	for i := 0; i <= 40; i++ {
		x := math.Pow(10, float64(i)/10) // 1/(1−p)
		if i > 0 && x > float64(count) {
			break // fewer requests than the percentile needs: the rest is the maximum
		}
		ps = append(ps, 100*(1-1/x))
	}
	return ps
}

// RunChartData gathers a finished run's chart data from its summary (which
// must come from Summarize(res, ...)), with at most limit latency points.
func RunChartData(s *Summary, res *client.Result, limit int) *chart.Data {
	d := &chart.Data{Recorded: s.Count, ElapsedS: s.Seconds, Stride: 1}
	if s.Count > 0 {
		for _, p := range curvePercents(s.Count) {
			d.Curve = append(d.Curve, chart.CurvePoint{Percent: p, Us: s.Percentile(TotalColumn, p)})
		}
		d.Curve = append(d.Curve, chart.CurvePoint{Percent: 100, Us: s.Total.MaxUs})
		for _, p := range chart.TablePercents {
			us := s.Total.MaxUs
			if p < 100 {
				us = s.Percentile(TotalColumn, p)
			}
			d.Table = append(d.Table, chart.CurvePoint{Percent: p, Us: us})
		}
		d.CurvePrecision = "exact (µs)"
		if s.FromHistograms {
			d.CurvePrecision = "1 ms buckets past the exact store"
		}
	}
	// In exact mode Summarize left the store sorted by total time (a stride
	// keeps the distribution); past it, the exact store holds the first
	// requests in recording order.
	var smp []samples.Sample
	if res.Samples != nil {
		smp = res.Samples.Exact()
	}
	d.Stored = len(smp)
	if limit > 0 && len(smp) > limit {
		d.Stride = (len(smp) + limit - 1) / limit
	}
	for i := 0; i < len(smp); i += d.Stride {
		d.Latency = append(d.Latency, latencyPoint(smp[i]))
	}
	if d.Stride > 1 && (len(smp)-1)%d.Stride != 0 {
		d.Latency = append(d.Latency, latencyPoint(smp[len(smp)-1]))
	}
	if s.Extended != nil {
		d.PerSecond = wholeSeconds(s.Extended.PerSecond, s.Seconds)
	}
	if tl := s.Timeline; tl != nil {
		for _, iv := range tl.Intervals {
			d.Intervals = append(d.Intervals, chart.Interval{StartS: iv.Start.Seconds(), LengthS: iv.Length.Seconds(),
				Requests: iv.Requests, Failures: iv.Failures, P50Us: iv.Latency.P50Us, P99Us: iv.Latency.P99Us, MaxUs: iv.Latency.MaxUs})
		}
	}
	return d
}

func latencyPoint(s samples.Sample) chart.LatencyPoint {
	return chart.LatencyPoint{StartS: float64(s.Start) / 1000, LatencyUs: s.Total}
}

// wholeSeconds drops a series' last, partial second.
func wholeSeconds(perSecond []int64, elapsedS float64) []int64 {
	whole := int(elapsedS)
	if whole < len(perSecond) {
		return perSecond[:whole]
	}
	return perSecond
}

// DocumentChartData gathers a saved run's chart data from its JSON document:
// the percentile curve and table from the latency histogram (HDR, 3
// significant digits; the maximum exact), the requests of each whole second.
// A document has no per-request times, so Latency is nil. Without the
// extended figures the curve is ab's percentage table.
func DocumentChartData(d *Document) (*chart.Data, error) {
	if d.Report == nil {
		return nil, errors.New("the run did not start: nothing to draw")
	}
	r := d.Report
	out := &chart.Data{Recorded: r.CompleteRequests, ElapsedS: r.TimeTakenS, Stride: 1}
	var maxUs int64
	if r.ConnectionTimes != nil {
		maxUs = r.ConnectionTimes.Total.MaxUs
	}
	x := d.Extended
	if x != nil && x.LatencyHistogram.Data != "" {
		h, err := hdrhistogram.Decode([]byte(x.LatencyHistogram.Data))
		if err != nil {
			return nil, fmt.Errorf("latency_histogram: %w", err)
		}
		n := int(h.TotalCount())
		if n > 0 {
			if maxUs == 0 {
				maxUs = h.Max()
			}
			at := func(p float64) int64 {
				if p >= 100 {
					return maxUs
				}
				return min(h.ValueAtQuantile(p), maxUs)
			}
			for _, p := range curvePercents(n) {
				out.Curve = append(out.Curve, chart.CurvePoint{Percent: p, Us: at(p)})
			}
			out.Curve = append(out.Curve, chart.CurvePoint{Percent: 100, Us: maxUs})
			for _, p := range chart.TablePercents {
				out.Table = append(out.Table, chart.CurvePoint{Percent: p, Us: at(p)})
			}
			out.CurvePrecision = "HDR histogram, 3 significant digits; maximum exact"
		}
		out.PerSecond = wholeSeconds(x.Throughput.PerSecond, r.TimeTakenS)
	} else if len(r.PercentageServed) > 0 {
		for _, p := range r.PercentageServed {
			c := chart.CurvePoint{Percent: p.Percent, Us: p.TotalUs}
			out.Curve = append(out.Curve, c)
			out.Table = append(out.Table, c)
		}
		out.CurvePrecision = "ab's percentile table only (no extended figures in the document)"
	}
	if tl := d.Timeline; tl != nil {
		for _, iv := range tl.Intervals {
			out.Intervals = append(out.Intervals, chart.Interval{StartS: float64(iv.StartUs) / 1e6, LengthS: float64(iv.LengthUs) / 1e6,
				Requests: iv.Requests, Failures: iv.Failures, P50Us: iv.P50Us, P99Us: iv.P99Us, MaxUs: iv.MaxUs})
		}
	}
	return out, nil
}
