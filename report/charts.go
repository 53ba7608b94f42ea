package report

import (
	"math"

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
