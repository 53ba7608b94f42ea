package report

import (
	"fmt"
	"math"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/client"
	"gab/internal/chart"
	"gab/internal/samples"
)

// This file is the record of a run in progress (gab --dashboard): built from
// the timeline's intervals as each one finishes, it gives the HTML report's
// page with what is known so far. An interval carries its counts, its status
// classes and the HDR histogram of its requests' total times, so the page
// shows ab's counts so far, the percentile curve and table and the
// response-time ranges (from the intervals' histograms merged: 3 significant
// digits), and every chart over time. What the intervals do not carry waits
// for the run's end, when the page becomes the --html report: each request's
// dot (the live latency chart draws each interval's histogram buckets
// instead), the phases' means, the failures' classes, the status codes and
// the verdicts.
//
// Memory and work stay bounded however long the run: the intervals are kept
// in at most maxLiveGroups groups of 1, 2, 4 ... consecutive intervals, each
// with its histogram as the list of its non-empty buckets; past that number,
// neighbouring groups merge.

// maxLiveGroups is the most groups of intervals a Live keeps (the charts over
// time draw one bar or point per group).
const maxLiveGroups = 200

// Live is a run in progress, from its finished intervals. Not safe for
// concurrent use.
type Live struct {
	opts       Options
	start      time.Time
	interval   time.Duration
	targetPerS float64

	intervals                 int // intervals added
	end                       time.Duration
	requests, failures, bytes int64
	sent                      int64 // request bytes written (Interval.Sent)
	lo, hi                    int64 // exact min and max of every request so far
	all                       *hdrhistogram.Histogram
	groups                    []liveGroup
	per                       int // intervals per group
	scratch                   *hdrhistogram.Histogram
	corrected                 bool
}

// bucket is one non-empty bucket of an HDR histogram: its lowest and highest
// values and its count.
type bucket struct{ from, to, n int64 }

// liveGroup is consecutive intervals merged.
type liveGroup struct {
	start, length      time.Duration
	requests, failures int64
	status             [6]int64
	due                float64
	lat, cor           []bucket // ascending
	latLo, latHi       int64
	corLo, corHi       int64
}

// LiveOptions are the settings of a Live.
type LiveOptions struct {
	// Report are the command line's report settings (Summarize's).
	Report Options
	// Start is the run's start, Interval the timeline's.
	Start    time.Time
	Interval time.Duration
	// TargetPerS is rate mode's constant target rate (0: none, or a schedule
	// whose intervals say their own).
	TargetPerS float64
}

// NewLive starts the record of a run in progress.
func NewLive(o LiveOptions) *Live {
	return &Live{opts: o.Report, start: o.Start, interval: o.Interval, targetPerS: o.TargetPerS,
		lo: math.MaxInt64, all: samples.NewHist(), scratch: samples.NewHist(), per: 1}
}

// Intervals is the number of intervals added; Complete and Failed are ab's
// counts over them.
func (l *Live) Intervals() int { return l.intervals }

// Complete is the number of requests recorded in the intervals added.
func (l *Live) Complete() int64 { return l.requests }

// Failed is the number of failures (ab's Failed requests) in the intervals added.
func (l *Live) Failed() int64 { return l.failures }

// Elapsed is the end of the last interval added.
func (l *Live) Elapsed() time.Duration { return l.end }

// Add adds the next finished interval of the timeline. Its histogram is
// checked as a document's (bounded decoder, a count that matches its
// requests); an interval refused leaves the record as it was.
func (l *Live) Add(iv client.Interval) error {
	lat, err := liveBuckets(iv.Latency, iv.Requests)
	if err != nil {
		return fmt.Errorf("interval %d: %w", l.intervals, err)
	}
	var cor []bucket
	if iv.Requests > 0 && iv.Corrected.Histogram != "" {
		if cor, err = liveBuckets(iv.Corrected, iv.Requests); err != nil {
			return fmt.Errorf("interval %d corrected: %w", l.intervals, err)
		}
		l.corrected = true
	}
	for _, b := range lat {
		_ = l.all.RecordValues(b.from, b.n) // in range: it was counted there
	}
	if iv.Requests > 0 {
		l.lo, l.hi = min(l.lo, iv.Latency.MinUs), max(l.hi, iv.Latency.MaxUs)
	}
	g := liveGroup{start: iv.Start, length: iv.Length, requests: iv.Requests, failures: iv.Failures, status: iv.Status,
		due: iv.Due, lat: lat, cor: cor, latLo: iv.Latency.MinUs, latHi: iv.Latency.MaxUs,
		corLo: iv.Corrected.MinUs, corHi: iv.Corrected.MaxUs}
	if l.intervals%l.per == 0 {
		l.groups = append(l.groups, g)
	} else {
		l.groups[len(l.groups)-1].merge(&g)
	}
	l.intervals++
	l.requests += iv.Requests
	l.failures += iv.Failures
	l.bytes += iv.Bytes
	l.sent += iv.Sent
	l.end = max(l.end, iv.Start+iv.Length)
	if len(l.groups) > maxLiveGroups {
		// Pairs merge: the groups stay aligned on multiples of per.
		out := l.groups[:0]
		for i := 0; i < len(l.groups); i += 2 {
			m := l.groups[i]
			if i+1 < len(l.groups) {
				m.merge(&l.groups[i+1])
			}
			out = append(out, m)
		}
		clear(l.groups[len(out):])
		l.groups = out
		l.per *= 2
	}
	return nil
}

// liveBuckets decodes an interval's histogram into its non-empty buckets.
func liveBuckets(lat client.IntervalLatency, count int64) ([]bucket, error) {
	if count == 0 {
		return nil, nil
	}
	h, err := samples.DecodeHist(lat.Histogram)
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	if h.TotalCount() != count {
		return nil, fmt.Errorf("histogram holds %d values for %d requests", h.TotalCount(), count)
	}
	var out []bucket
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out = append(out, bucket{b.From, b.To, b.Count})
		}
	}
	return out, nil
}

// merge adds o, the group that follows g, into g.
func (g *liveGroup) merge(o *liveGroup) {
	if g.requests == 0 {
		g.latLo, g.latHi, g.corLo, g.corHi = o.latLo, o.latHi, o.corLo, o.corHi
	} else if o.requests > 0 {
		g.latLo, g.latHi = min(g.latLo, o.latLo), max(g.latHi, o.latHi)
		g.corLo, g.corHi = min(g.corLo, o.corLo), max(g.corHi, o.corHi)
	}
	g.length = o.start + o.length - g.start
	g.requests += o.requests
	g.failures += o.failures
	for i := range g.status {
		g.status[i] += o.status[i]
	}
	g.due += o.due
	g.lat, g.cor = mergeBuckets(g.lat, o.lat), mergeBuckets(g.cor, o.cor)
}

// mergeBuckets merges two ascending bucket lists.
func mergeBuckets(a, b []bucket) []bucket {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]bucket, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i].from < b[j].from:
			out = append(out, a[i])
			i++
		case a[i].from > b[j].from:
			out = append(out, b[j])
			j++
		default:
			out = append(out, bucket{a[i].from, a[i].to, a[i].n + b[j].n})
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// dist is the distribution of buckets in the scratch histogram (which it
// resets), with the exact min and max.
func (l *Live) dist(bs []bucket, count, lo, hi int64) samples.Dist {
	l.scratch.Reset()
	for _, b := range bs {
		_ = l.scratch.RecordValues(b.from, b.n)
	}
	return samples.Dist{Hist: l.scratch, Count: count, Min: lo, Max: hi}
}

// endRunning is the Ending of a run in progress.
const endRunning = "running"

// record is the run's record so far: ab's counts and rates over the
// intervals added.
func (l *Live) record() *Run {
	o := &l.opts
	r := newRun(&Run{}, o.CommandLine, l.start)
	r.Environment = o.Environment
	r.Ending = endRunning
	r.local = local{elapsed: l.end, keepAlive: o.KeepAlive, bodySent: o.BodySent, htmlAttrs: o.HTML, live: true}
	r.Report = &abReport{ServerHostname: o.Host, ServerPort: int(port16(o.Port)), DocumentPath: o.Path,
		VariableLength: o.VariableLength, ConcurrencyLevel: o.Concurrency,
		counters: counters{CompleteRequests: int(l.requests), FailedRequests: int(l.failures), TotalTransferredBytes: l.bytes,
			TotalBodySentBytes: l.sent}}
	r.derive(&tables{}, nil)
	return r
}

// chartData is the run's chart data so far.
func (l *Live) chartData(co ChartOptions) *chart.Data {
	d := &chart.Data{Recorded: int(l.requests), ElapsedS: l.end.Seconds(), Failed: int(l.failures), TargetPerS: l.targetPerS}
	if l.requests > 0 {
		all := samples.Dist{Hist: l.all, Count: l.requests, Min: l.lo, Max: l.hi}
		histogramCurve(d, &all)
		d.CurvePrecision = "HDR histogram, 3 significant digits; maximum exact"
		histogramRanges(d, l.all, cmpOr(co.RangeEdgesMs, DefaultRangeEdgesMs))
		d.RangesNote = "every recorded request by its total time (HDR histogram, 3 significant digits)"
	}
	target, due := 0.0, 0.0
	for i := range l.groups {
		g := &l.groups[i]
		iv := chart.Interval{StartS: g.start.Seconds(), LengthS: g.length.Seconds(), Requests: g.requests, Failures: g.failures,
			Status: g.status, HasStatus: true}
		if g.requests > 0 {
			lat := l.dist(g.lat, g.requests, g.latLo, g.latHi)
			iv.P50Us, iv.P90Us, iv.P99Us, iv.MaxUs = lat.Percentile(50), lat.Percentile(90), lat.Percentile(99), g.latHi
			if len(g.cor) > 0 {
				cor := l.dist(g.cor, g.requests, g.corLo, g.corHi)
				iv.CorrectedP99Us = cor.Percentile(99)
			}
		}
		if g.due > 0 && g.length > 0 {
			iv.TargetPerS = g.due / g.length.Seconds()
			target, due = target+g.length.Seconds(), due+g.due
		}
		d.Intervals = append(d.Intervals, iv)
	}
	if d.TargetPerS == 0 && target > 0 {
		d.TargetPerS = due / target
	}
	d.IntervalNote = l.interval.String() + " intervals"
	if l.per > 1 {
		d.IntervalNote = fmt.Sprintf("%v intervals (%d × %v)", time.Duration(l.per)*l.interval, l.per, l.interval)
	}
	d.IntervalNote += ", live"
	l.bucketDots(d)
	return d
}

// livePointLimit is about the most dots the live latency chart draws.
const livePointLimit = 8_000

// bucketDots fills d.Latency with each group's non-empty histogram buckets
// (each at its highest value, capped by the group's exact maximum) at the
// group's middle: past livePointLimit over all groups, each group keeps
// buckets evenly spaced in rank, its slowest always.
func (l *Live) bucketDots(d *chart.Data) {
	per := max(8, livePointLimit/max(len(l.groups), 1))
	n := 0
	for i := range l.groups {
		g := &l.groups[i]
		if len(g.lat) == 0 {
			continue
		}
		x := (g.start + g.length/2).Seconds()
		step := max(1, (len(g.lat)+per-1)/per)
		for j := len(g.lat) - 1; j >= 0; j -= step {
			us := min(g.lat[j].to, g.latHi)
			d.Latency = append(d.Latency, chart.LatencyPoint{StartS: x, LatencyUs: uint32(min(us, math.MaxUint32))})
			n++
		}
	}
	slices.SortStableFunc(d.Latency, func(a, b chart.LatencyPoint) int {
		if a.StartS < b.StartS {
			return -1
		}
		if a.StartS > b.StartS {
			return 1
		}
		return 0
	})
	d.Stored = d.Recorded
	d.LatencyNote = fmt.Sprintf("live: %s dots, each a histogram bucket (3 significant digits) holding requests of an interval, at the interval's middle; each request is drawn when the run ends",
		chart.Count(n))
	d.LatencyTitle = "live, one dot per histogram bucket holding requests, at its interval's middle (each request when the run ends)"
}

// Page is the HTML report of the run so far (WriteHTMLPage): title and
// figureTitle as --html's, co its chart options. The phases chart, which
// needs each request's phases, is a frame that says it is drawn at the end.
func (l *Live) Page(title, figureTitle string, co ChartOptions) *Page {
	d := l.chartData(co)
	fig := chart.RunFigure(figureTitle, []*chart.Data{d})
	placeholder := chart.Panel{ID: chart.PanelPhases, Title: "Mean time per phase, per interval: drawn when the run ends (the phases are read from each request)",
		XLabel: "time since the start of the run (s)", YLabel: "mean (ms)", XFromZero: true, YFromZero: true, XMin: 0, XMax: max(d.ElapsedS, 1)}
	at := len(fig.Panels)
	for i, p := range fig.Panels {
		if p.ID == chart.PanelScatter || p.ID == chart.PanelPercentiles {
			at = i
			break
		}
	}
	fig.Panels = slices.Insert(fig.Panels, at, placeholder)
	return &Page{Title: title, Runs: []PageRun{{Doc: l.record(), Chart: d}}, Figure: fig}
}

// histogramCurve sets d's percentile curve and table from a distribution
// (the maximum exact).
func histogramCurve(d *chart.Data, h *samples.Dist) {
	at := func(p float64) int64 {
		if p >= 100 {
			return h.Max
		}
		return min(h.Hist.ValueAtQuantile(p), h.Max)
	}
	for _, p := range appendCurvePercents(nil, int(h.Count)) {
		d.Curve = append(d.Curve, chart.CurvePoint{Percent: p, Us: at(p)})
	}
	d.Curve = append(d.Curve, chart.CurvePoint{Percent: 100, Us: h.Max})
	for _, p := range chart.TablePercents {
		d.Table = append(d.Table, chart.CurvePoint{Percent: p, Us: at(p)})
	}
}

// histogramRanges counts h's values in the response-time ranges of edges
// (ms), each bucket in the range of its lowest value.
func histogramRanges(d *chart.Data, h *hdrhistogram.Histogram, edgesMs []float64) {
	d.RangeEdgesMs = edgesMs
	d.Ranges = make([]int64, len(edgesMs)+1)
	for _, b := range h.Distribution() {
		i := 0
		for i < len(edgesMs) && float64(b.From) > edgesMs[i]*1000 {
			i++
		}
		d.Ranges[i] += b.Count
	}
}
