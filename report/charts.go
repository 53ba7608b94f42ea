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
// histogram plots use (10 points a decade), appended to dst.
func appendCurvePercents(dst []float64, count int) []float64 {
	for i := 0; i <= 40; i++ {
		x := math.Pow(10, float64(i)/10) // 1/(1−p)
		if i > 0 && x > float64(count) {
			break // fewer requests than the percentile needs: the rest is the maximum
		}
		dst = append(dst, 100*(1-1/x))
	}
	return dst
}

// maxCurvePoints is the most points a run's percentile curve has.
const maxCurvePoints = 42

// chartCurve computes the run's percentile curve and table for its charts,
// from every recorded request, into the record (no allocation).
func (r *Run) chartCurve(t *tables) {
	ct := r.Report.ConnectionTimes
	if t.n == 0 || ct == nil {
		return
	}
	var buf [maxCurvePoints]float64
	c := &r.local.curve
	for _, p := range appendCurvePercents(buf[:0], t.n) {
		c.curve[c.n] = chart.CurvePoint{Percent: p, Us: t.percentile(totalColumn, p)}
		c.n++
	}
	c.curve[c.n] = chart.CurvePoint{Percent: 100, Us: ct.Total.MaxUs}
	c.n++
	for i, p := range chart.TablePercents[:min(len(chart.TablePercents), len(c.table))] {
		us := ct.Total.MaxUs
		if p < 100 {
			us = t.percentile(totalColumn, p)
		}
		c.table[i] = chart.CurvePoint{Percent: p, Us: us}
		c.tableN = i + 1
	}
}

// runCurve is a run's percentile curve and table (chartCurve).
type runCurve struct {
	curve     [maxCurvePoints]chart.CurvePoint
	table     [8]chart.CurvePoint
	n, tableN int
}

// RunChartData gathers a finished run's chart data from its record (which
// must come from Summarize(res, ...)), with at most limit latency points.
func RunChartData(r *Run, res *client.Result, limit int) *chart.Data {
	rp := r.Report
	c := &r.local.curve
	d := &chart.Data{Recorded: r.local.count, ElapsedS: rp.TimeTakenS, Stride: 1}
	if c.n > 0 {
		d.Curve = append([]chart.CurvePoint(nil), c.curve[:c.n]...)
		d.Table = append([]chart.CurvePoint(nil), c.table[:c.tableN]...)
		d.CurvePrecision = "exact (µs)"
		if rp.StatisticsFromHistogram {
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
	if r.Extended != nil {
		d.PerSecond = wholeSeconds(r.Extended.Throughput.PerSecond, rp.TimeTakenS)
	}
	d.Intervals = chartIntervals(r.Timeline)
	return d
}

// chartIntervals are the timeline's intervals for the charts.
func chartIntervals(tl *timelineSection) []chart.Interval {
	if tl == nil {
		return nil
	}
	var out []chart.Interval
	for i := range tl.Intervals {
		iv := &tl.Intervals[i]
		start, length := tl.span(i)
		out = append(out, chart.Interval{StartS: start, LengthS: length,
			Requests: iv.Requests, Failures: iv.Failures, P50Us: iv.P50Us, P99Us: iv.P99Us, MaxUs: iv.MaxUs})
	}
	return out
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
func DocumentChartData(d *Run) (*chart.Data, error) {
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
			for _, p := range appendCurvePercents(nil, n) {
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
	out.Intervals = chartIntervals(d.Timeline)
	return out, nil
}
