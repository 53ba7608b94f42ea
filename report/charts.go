package report

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gab/client"
	"gab/internal/chart"
	"gab/internal/samples"
)

// This file gathers what gab's charts of a run are drawn from (--plot, --html):
// each request's latency over time, the latency percentile curve, and the
// requests of each second (chart.Data).

// Curve percentiles: 0 to 99.9999, evenly spaced on the 1/(1−p) axis that
// HDR histogram plots use (10 points a decade), as far as count requests
// resolve them, appended to dst.
func appendCurvePercents(dst []float64, count int) []float64 {
	for i := 0; i <= 60; i++ {
		x := math.Pow(10, float64(i)/10) // 1/(1−p)
		if i > 0 && x > float64(count) {
			break // fewer requests than the percentile needs: the rest is the maximum
		}
		dst = append(dst, 100*(1-1/x))
	}
	return dst
}

// maxCurvePoints is the most points a run's percentile curve has.
const maxCurvePoints = 62

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
		c.curve[c.n] = chart.CurvePoint{Percent: p, Us: t.finePercentile(totalColumn, p)}
		c.n++
	}
	c.curve[c.n] = chart.CurvePoint{Percent: 100, Us: ct.Total.MaxUs}
	c.n++
	for i, p := range chart.TablePercents[:min(len(chart.TablePercents), len(c.table))] {
		us := ct.Total.MaxUs
		if p < 100 {
			us = t.finePercentile(totalColumn, p)
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

// ChartOptions are the settings of a run's charts.
type ChartOptions struct {
	// MaxPoints is the most requests the latency scatter draws (LTTB past it).
	MaxPoints int
	// AdaptIntervals merges consecutive intervals of the timeline into about
	// chartIntervalsWanted of them (the interval was not given).
	AdaptIntervals bool
	// RangeEdgesMs are the upper edges of the response-time ranges
	// (DefaultRangeEdgesMs when nil).
	RangeEdgesMs []float64
}

// DefaultRangeEdgesMs are Gatling's response-time ranges: under 800 ms,
// 800 to 1200 ms, over 1200 ms.
var DefaultRangeEdgesMs = []float64{800, 1200}

// chartIntervalsWanted is about how many intervals the charts of a run draw
// when the interval was chosen for them.
const chartIntervalsWanted = 100

// RunChartData gathers a finished run's chart data from its record (which
// must come from Summarize(res, ...)).
func RunChartData(r *Run, res *client.Result, o ChartOptions) *chart.Data {
	rp := r.Report
	c := &r.local.curve
	d := &chart.Data{Recorded: r.local.count, ElapsedS: rp.TimeTakenS, Failed: rp.FailedRequests}
	if c.n > 0 {
		d.Curve = append([]chart.CurvePoint(nil), c.curve[:c.n]...)
		d.Table = append([]chart.CurvePoint(nil), c.table[:c.tableN]...)
		d.CurvePrecision = "exact (µs)"
		catalogTable(d, r)
		switch {
		case r.local.hdrPercentiles:
			d.CurvePrecision = "HDR histogram (3 significant digits) past the exact store"
		case rp.StatisticsFromHistogram:
			d.CurvePrecision = "1 ms buckets past the exact store"
		}
	}
	var smp []samples.Sample
	if res.Samples != nil {
		smp = res.Samples.Exact()
	}
	d.Stored = len(smp)
	totals := sortedTotals(smp)
	latencyScatter(d, smp, totals, o.MaxPoints)
	edges := cmpOr(o.RangeEdgesMs, DefaultRangeEdgesMs)
	if len(totals) > 0 && d.Stored == d.Recorded {
		d.RangeEdgesMs = edges
		for i := range len(edges) + 1 {
			hi := len(totals)
			if i < len(edges) {
				hi = upperIndex(totals, edges[i]*1000)
			}
			lo := 0
			if i > 0 {
				lo = upperIndex(totals, edges[i-1]*1000)
			}
			d.Ranges = append(d.Ranges, int64(hi-lo))
		}
		d.RangesNote = "every recorded request by its total time (exact)"
	}
	if r.Extended != nil {
		d.PerSecond = wholeSeconds(r.Extended.Throughput.PerSecond, rp.TimeTakenS)
	}
	d.Intervals, d.IntervalNote = chartIntervals(r.Timeline, o.AdaptIntervals)
	if d.Stored == d.Recorded && len(d.Intervals) > 0 {
		d.HasTLS = r.Timeline.hasTLS()
		intervalPhases(d.Intervals, smp, d.HasTLS)
		d.HasPhases = true
	}
	d.Objectives = objectives(r)
	if r.Rate != nil {
		d.TargetPerS = r.Rate.TargetPerS
	}
	return d
}

// sortedTotals is the samples' total times (µs), sorted.
func sortedTotals(smp []samples.Sample) []uint32 {
	t := make([]uint32, len(smp))
	for i := range smp {
		t[i] = smp[i].Total
	}
	slices.Sort(t)
	return t
}

// upperIndex is the number of values in sorted that are at most us.
func upperIndex(sorted []uint32, us float64) int {
	i, _ := slices.BinarySearchFunc(sorted, us, func(v uint32, t float64) int {
		if float64(v) <= t {
			return -1
		}
		return 1
	})
	return i
}

func cmpOr[T any](a, b []T) []T {
	if len(a) > 0 {
		return a
	}
	return b
}

// latencyScatter fills d.Latency: every stored request in time order, or
// past limit an LTTB downsampling over time of those up to p99.9 with every
// slower one kept.
func latencyScatter(d *chart.Data, smp []samples.Sample, totals []uint32, limit int) {
	if len(smp) == 0 {
		return
	}
	pts := make([]chart.XY, 0, len(smp))
	for _, s := range smp {
		pts = append(pts, chart.XY{X: float64(s.Start) / 1000, Y: float64(s.Total)})
	}
	slices.SortStableFunc(pts, func(a, b chart.XY) int { return cmp.Compare(a.X, b.X) })
	d.LatencyNote = "all " + chart.Count(len(smp)) + " requests"
	d.LatencyTitle = d.LatencyNote
	if limit > 0 && len(pts) > limit {
		// The slowest 0.1 % (at least one request) are kept whole.
		cut := totals[min(len(totals)-1, len(totals)-max(1, len(totals)/1000))]
		var keep, rest []chart.XY
		for _, p := range pts {
			if p.Y > float64(cut) || p.Y == float64(cut) && len(keep) == 0 && p.Y == float64(totals[len(totals)-1]) {
				keep = append(keep, p)
			} else {
				rest = append(rest, p)
			}
		}
		if len(keep) > limit/2 {
			keep = chart.LTTB(keep, limit/2)
		}
		down := chart.LTTB(rest, limit-len(keep))
		pts = append(down, keep...)
		slices.SortStableFunc(pts, func(a, b chart.XY) int { return cmp.Compare(a.X, b.X) })
		d.LatencyNote = fmt.Sprintf("%s of %s requests: largest-triangle-three-buckets over time, with all %s slower than p99.9",
			chart.Count(len(pts)), chart.Count(len(smp)), chart.Count(len(keep)))
		d.LatencyTitle = fmt.Sprintf("%s of %s (LTTB; all %s above p99.9 kept)", chart.Count(len(pts)), chart.Count(len(smp)), chart.Count(len(keep)))
	}
	if d.Stored < d.Recorded {
		d.LatencyNote += fmt.Sprintf(" (the exact store kept the first %s of %s)", chart.Count(d.Stored), chart.Count(d.Recorded))
		d.LatencyTitle += " of the first " + chart.Count(d.Stored) + " of " + chart.Count(d.Recorded)
	}
	d.LatencyNote += ", µs precision"
	d.Latency = make([]chart.LatencyPoint, len(pts))
	for i, p := range pts {
		d.Latency[i] = chart.LatencyPoint{StartS: p.X, LatencyUs: uint32(p.Y)}
	}
}

// intervalPhases sets each interval's phase means from the samples, each in
// the interval of its end time. With tls, the intervals' TLSUs (from the
// timeline: a sample has no TLS time) is taken out of the connect time,
// leaving the TCP connect. The timeline puts a request in the interval of
// its end to the ns, a sample to the ms (its start is kept in ms), so at an
// interval's boundary the two may differ by a request: TLSUs is capped by
// the samples' connect mean, and the four phases make their mean total.
func intervalPhases(ivs []chart.Interval, smp []samples.Sample, tls bool) {
	type acc struct{ n, connect, wait, rest float64 }
	a := make([]acc, len(ivs))
	for _, s := range smp {
		end := float64(s.Start)/1000 + float64(s.Total)/1e6
		i, _ := slices.BinarySearchFunc(ivs, end, func(iv chart.Interval, t float64) int {
			if iv.StartS+iv.LengthS <= t {
				return -1
			}
			return 1
		})
		i = min(i, len(ivs)-1)
		a[i].n++
		a[i].connect += float64(s.Connect)
		a[i].wait += float64(s.Wait)
		a[i].rest += float64(s.Total) - float64(s.Connect) - float64(s.Wait)
	}
	for i := range ivs {
		if a[i].n > 0 {
			ivs[i].ConnectUs, ivs[i].WaitUs, ivs[i].RestUs = a[i].connect/a[i].n, a[i].wait/a[i].n, max(a[i].rest/a[i].n, 0)
		}
		if tls {
			ivs[i].TLSUs = min(ivs[i].TLSUs, ivs[i].ConnectUs)
			ivs[i].ConnectUs -= ivs[i].TLSUs
		}
	}
}

// objectives are the run's --fail-if thresholds on its latency distribution.
func objectives(r *Run) []chart.Objective {
	if r.Thresholds == nil {
		return nil
	}
	var out []chart.Objective
	for _, c := range r.Thresholds.Checks {
		if c.Unit != "us" {
			continue
		}
		o := chart.Objective{Label: c.Expression, Us: c.Bound, Passed: c.Passed}
		switch {
		case c.Metric == "max":
			o.Percent = 100
		case c.Metric == "mean":
			o.Percent = -1
		case c.Metric == "min":
			o.Percent = 0
		case strings.HasPrefix(c.Metric, "p"):
			p, err := strconv.ParseFloat(c.Metric[1:], 64)
			if err != nil {
				continue
			}
			o.Percent = p
		default:
			continue
		}
		out = append(out, o)
	}
	return out
}

// chartIntervals are the timeline's intervals for the charts: with adapt,
// consecutive intervals merged into about chartIntervalsWanted.
func chartIntervals(tl *timelineSection, adapt bool) ([]chart.Interval, string) {
	if tl == nil || len(tl.Intervals) == 0 {
		return nil, ""
	}
	k := 1
	if adapt {
		k = max(1, (len(tl.Intervals)+chartIntervalsWanted/2)/chartIntervalsWanted)
	}
	groups, err := tl.grouped(k)
	if err != nil {
		return nil, ""
	}
	var out []chart.Interval
	for g := range groups {
		iv := &groups[g]
		i := g * k
		j := min(i+k, len(tl.Intervals))
		start, _ := tl.span(i)
		ls, ll := tl.span(j - 1)
		ci := chart.Interval{StartS: start, LengthS: ls + ll - start, Requests: iv.Requests, Failures: iv.Failures,
			P50Us: iv.P50Us, P90Us: iv.P90Us, P99Us: iv.P99Us, MaxUs: iv.MaxUs}
		if iv.Corrected != nil {
			ci.CorrectedP99Us = iv.Corrected.P99Us
		}
		ci.TargetPerS = iv.TargetPerS
		ci.TLSUs = iv.tlsPerRequestUs()
		if iv.Status != nil {
			ci.Status, ci.HasStatus = iv.Status.counts(), true
		}
		out = append(out, ci)
	}
	note := tl.length().String() + " intervals"
	if k > 1 {
		note = fmt.Sprintf("%v intervals (%d × %v)", time.Duration(k)*tl.length(), k, tl.length())
	}
	if adapt {
		note += ", chosen from the run's length"
	}
	return out, note
}

// wholeSeconds drops a series' last, partial second.
func wholeSeconds(perSecond []int64, elapsedS float64) []int64 {
	whole := int(elapsedS)
	if whole < len(perSecond) {
		return perSecond[:whole]
	}
	return perSecond
}

// catalogTable sets the percentile table to the catalog's figures of the
// run (percentileMs: one value for --fail-if, the JSON document's figures,
// gab compare and the page), the last row the longest request; the table
// is left as it was where the run has no histogram of its total times.
func catalogTable(d *chart.Data, r *Run) {
	maxMs, ok := extremeMs(r, true)
	if !ok {
		return
	}
	table := make([]chart.CurvePoint, 0, len(chart.TablePercents))
	for _, p := range chart.TablePercents {
		us := int64(math.Round(maxMs * 1000))
		if p < 100 {
			ms, ok := percentileMs(p)(r)
			if !ok {
				return
			}
			us = int64(math.Round(ms * 1000))
		}
		table = append(table, chart.CurvePoint{Percent: p, Us: us})
	}
	d.Table, d.TablePrecision = table, "the figures' rule: nearest rank in an HDR histogram of every request, 3 significant digits, bucket tops"
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
	out := &chart.Data{Recorded: r.CompleteRequests, ElapsedS: r.TimeTakenS, Failed: r.FailedRequests}
	var maxUs int64
	if r.ConnectionTimes != nil {
		maxUs = r.ConnectionTimes.Total.MaxUs
	}
	x := d.Extended
	if x != nil && x.Phases.Total.Histogram != nil && x.Phases.Total.Histogram.Data != "" {
		h, err := samples.DecodeHist(x.Phases.Total.Histogram.Data)
		if err != nil {
			return nil, fmt.Errorf("extended.phases.total.histogram: %w", err)
		}
		n := int(h.TotalCount())
		if n > 0 {
			if maxUs == 0 {
				maxUs = h.Max()
			}
			histogramCurve(out, &samples.Dist{Hist: h, Count: int64(n), Max: maxUs})
			out.CurvePrecision = "HDR histogram, 3 significant digits; maximum exact"
			histogramRanges(out, h, DefaultRangeEdgesMs)
			out.RangesNote = "every recorded request by its total time (HDR histogram, 3 significant digits)"
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
	if len(out.Table) > 0 {
		catalogTable(out, d)
	}
	out.Intervals, out.IntervalNote = chartIntervals(d.Timeline, false)
	out.Objectives = objectives(d)
	if d.Rate != nil {
		out.TargetPerS = d.Rate.TargetPerS
	}
	return out, nil
}
