package chart

import (
	"math"
	"strconv"
	"strings"
)

// PercentileTics label the percentile axis, which is 1/(1−p) on a log scale
// (HdrHistogram's percentile-distribution plot), up to p99.99 and the maximum
// a decade further (PercentileTicsTo gives them to another resolution).
var PercentileTics = PercentileTicsTo(1e4)

// PercentileTicsTo are the percentile axis's tics up to 1/(1−p) = top (a
// power of ten), with the maximum a decade further.
func PercentileTicsTo(top float64) []Tic {
	tics := []Tic{{"0%", 1}}
	for x, nines := 10.0, 1; x <= top*1.0001; x, nines = x*10, nines+1 {
		label := "90"
		switch {
		case nines == 2:
			label = "99"
		case nines > 2:
			label = "99." + strings.Repeat("9", nines-2)
		}
		tics = append(tics, Tic{label + "%", x})
	}
	return append(tics, Tic{"max", maxX(top)})
}

func maxX(top float64) float64 { return top * 10 }

// percentileX is where percent p lies on the percentile axis: 1/(1−p/100),
// the maximum (p = 100) a decade past top.
func percentileX(p, top float64) float64 {
	if p >= 100 {
		return maxX(top)
	}
	return 1 / (1 - p/100)
}

// TicRange fixes p's x range to its tics with a margin, so that no point
// sits on the frame: half a unit or 5 % of the span, whichever is more, on a
// linear axis, a factor of 1.5 on a log one.
func (p *Panel) TicRange() {
	if len(p.XTics) == 0 {
		return
	}
	lo, hi := p.XTics[0].At, p.XTics[0].At
	for _, t := range p.XTics {
		lo, hi = min(lo, t.At), max(hi, t.At)
	}
	if p.LogX {
		p.XMin, p.XMax = lo/1.5, hi*1.5
	} else {
		m := max(0.5, (hi-lo)*0.05)
		p.XMin, p.XMax = lo-m, hi+m
	}
}

// Panel IDs: each panel of a run figure is named, and the HTML report gives
// its chart that element id.
const (
	PanelRate        = "rate-over-time"
	PanelStatus      = "status-over-time"
	PanelLatencyTime = "latency-over-time"
	PanelPhases      = "phases-over-time"
	PanelScatter     = "latency-scatter"
	PanelPercentiles = "percentiles"
	PanelRanges      = "ranges"
	PanelKnee        = "latency-vs-throughput"
	PanelPerSecond   = "per-second"
)

// RunFigure is the figure of one or more runs (overlaid, labelled): over
// one shared time axis the requests and failures per interval, the latency
// percentiles per interval, the phases' means per interval and every
// request's latency; then the percentile spectrum with the --fail-if
// objectives, the response-time ranges and the latency against the
// throughput of the intervals. A panel none of the runs has data for is
// left out. Runs overlaid are split as splitRuns says: no panel draws more
// than MaxSeries series, and every legend stands outside its plot.
func RunFigure(title string, runs []*Data) *Figure {
	f := &Figure{Title: title}
	label := func(d *Data, what string) string {
		if len(runs) == 1 {
			return what
		}
		if what == "" {
			return d.Label
		}
		return d.Label + " " + what
	}
	end := 0.0
	for _, d := range runs {
		end = max(end, d.ElapsedS)
		for _, iv := range d.Intervals {
			end = max(end, iv.StartS+iv.LengthS)
		}
	}
	timeAxis := func(p *Panel) {
		if end > 0 {
			p.XMin, p.XMax = 0, end
		}
	}
	note := ""
	if len(runs) == 1 && runs[0].IntervalNote != "" {
		note = " (" + runs[0].IntervalNote + ")"
	}
	top := percentileTop(runs)
	builders := []runPanel{
		func(rs []*Data) (Panel, bool) {
			p, ok := intervalRatePanel(rs, label)
			p.Title += note
			timeAxis(&p)
			return p, ok
		},
		func(rs []*Data) (Panel, bool) { p, ok := statusPanel(rs); timeAxis(&p); return p, ok },
		func(rs []*Data) (Panel, bool) { p, ok := intervalLatencyPanel(rs, label); timeAxis(&p); return p, ok },
		func(rs []*Data) (Panel, bool) { p, ok := phasePanel(rs, label); timeAxis(&p); return p, ok },
		func(rs []*Data) (Panel, bool) {
			p, ok := scatterPanel(rs, label, len(runs) == 1)
			timeAxis(&p)
			p.LogIfDecades()
			return p, ok
		},
		func(rs []*Data) (Panel, bool) { return percentilePanel(rs, label, top, len(runs) == 1) },
		func(rs []*Data) (Panel, bool) { return rangesPanel(rs, label) },
		func(rs []*Data) (Panel, bool) { return kneePanel(rs, label) },
	}
	for _, b := range builders {
		f.Panels = append(f.Panels, splitRuns(runs, b, MaxSeries)...)
	}
	if len(f.Panels) > 0 && strings.HasPrefix(f.Panels[0].ID, PanelRate) {
		return f // the rates per interval: no per-second counts
	}
	if ps := splitRuns(runs, func(rs []*Data) (Panel, bool) { return perSecondPanel(rs, label) }, MaxSeries); len(ps) > 0 {
		f.Panels = append(f.Panels, ps...)
	} else if shortRun(runs) {
		f.Title += " (under 1 s: no per-second chart)"
	}
	return f
}

// runPanel draws one panel of a run figure from some of its runs (ok false:
// none of them has data for it).
type runPanel func(runs []*Data) (p Panel, ok bool)

// splitRuns is the panel build draws of runs. Of one run it is that panel
// as drawn. Of runs overlaid it is that panel with its legend outside its
// plot (LegendOutside), where it has at most max series (Panel.Series);
// else as few panels of consecutive runs as it takes, none of more than max
// series (as even as it goes), so that every line of a run stays with the
// run's others (its p50 beside its p99). Each part keeps the whole panel's
// title (with "part k of n" added), axes and scales, so that the parts read
// alike; its lines take the colours of a figure of its runs alone. A run
// that alone has more than max series is a part by itself.
func splitRuns(runs []*Data, build runPanel, max int) []Panel {
	whole, ok := build(runs)
	switch {
	case !ok:
		return nil
	case len(runs) == 1:
		return []Panel{whole}
	}
	whole.LegendOutside = true
	if whole.Series() <= max {
		return []Panel{whole}
	}
	var out []Panel
	for _, chunk := range runChunks(runs, build, max) {
		p, ok := build(chunk)
		if !ok {
			continue // none of these runs has data for the panel
		}
		p.ID, p.Title = whole.ID, whole.Title
		p.LogX, p.XTics, p.LogY, p.XFromZero, p.YFromZero, p.XMin, p.XMax = whole.LogX, whole.XTics, whole.LogY, whole.XFromZero, whole.YFromZero, whole.XMin, whole.XMax
		p.LegendOutside = true
		out = append(out, p)
	}
	for k := range out {
		out[k].Title += " (part " + strconv.Itoa(k+1) + " of " + strconv.Itoa(len(out)) + ")"
		if out[k].ID != "" {
			out[k].ID += "-" + strconv.Itoa(k+1)
		}
	}
	return out
}

// runChunks cuts runs into consecutive chunks whose panels (build) have at
// most max series each: as many as filling each chunk in turn takes, then,
// where chunks of equal size (to one run) hold too, those.
func runChunks(runs []*Data, build runPanel, max int) [][]*Data {
	fits := func(rs []*Data) bool {
		p, ok := build(rs)
		return !ok || p.Series() <= max
	}
	var greedy [][]*Data
	for start := 0; start < len(runs); {
		end := start + 1
		for end < len(runs) && fits(runs[start:end+1]) {
			end++
		}
		greedy = append(greedy, runs[start:end])
		start = end
	}
	n := len(greedy)
	var even [][]*Data
	for k := range n {
		chunk := runs[(k*len(runs)+n-1)/n : ((k+1)*len(runs)+n-1)/n]
		if !fits(chunk) {
			return greedy
		}
		even = append(even, chunk)
	}
	return even
}

// Series is how many series p draws: its data sets' colour numbers (a run's
// p50 and its dashed p99 are one; Flagged marks are none).
func (p *Panel) Series() int {
	seen := map[int]bool{}
	for i, l := range p.Lines {
		if l.Style != Flagged {
			seen[l.ColorOf(i)] = true
		}
	}
	return len(seen)
}

// scatterPanel draws every request's latency over time (the runs that have
// per-request times).
func scatterPanel(runs []*Data, label func(*Data, string) string, one bool) (Panel, bool) {
	lat := Panel{ID: PanelScatter, XLabel: "time since the start of the run (s)", YLabel: "latency (ms)", XFromZero: true, YFromZero: true}
	var notes []string
	for k, d := range runs {
		if d.Latency == nil {
			continue
		}
		l := Line{Title: label(d, ""), Style: Points, Color: k + 1, Columns: []string{"start_s", "latency_ms"}}
		l.Note = d.LatencyNote
		for _, p := range d.Latency {
			l.Rows = append(l.Rows, []float64{p.StartS, float64(p.LatencyUs) / 1000})
		}
		notes = append(notes, l.Note)
		lat.Lines = append(lat.Lines, l)
	}
	if len(lat.Lines) == 0 {
		return lat, false
	}
	lat.Title = "Latency of each request over time"
	switch {
	case one && runs[0].LatencyTitle != "":
		lat.Title += ": " + runs[0].LatencyTitle
	case len(notes) > 1:
		lat.Title += " (sampling per data set in the .dat file)"
	}
	return lat, true
}

// perSecondPanel counts the requests (and failures, where known) in each
// whole second of the runs: the rates of runs without a timeline.
func perSecondPanel(runs []*Data, label func(*Data, string) string) (Panel, bool) {
	rps := Panel{ID: PanelPerSecond, XLabel: "second of the run", YLabel: "per second", XFromZero: true, YFromZero: true}
	for _, d := range runs {
		if len(d.PerSecond) == 0 {
			continue
		}
		l := Line{Title: label(d, "requests"), Style: Bars, Columns: []string{"second_mid", "requests"},
			Note: "requests recorded in each whole second (the partial last second is left out)"}
		for i, n := range d.PerSecond {
			l.Rows = append(l.Rows, []float64{float64(i) + 0.5, float64(n)})
		}
		rps.Lines = append(rps.Lines, l)
		if d.FailuresPerSecond != nil {
			l := Line{Title: label(d, "failures"), Style: Bars, Columns: []string{"second_mid", "failures"},
				Note: "failed requests in each whole second"}
			for i, n := range d.FailuresPerSecond {
				l.Rows = append(l.Rows, []float64{float64(i) + 0.5, float64(n)})
			}
			rps.Lines = append(rps.Lines, l)
		}
	}
	if len(rps.Lines) == 0 {
		return rps, false
	}
	rps.Title = "Requests per second"
	for _, d := range runs {
		if d.FailuresPerSecond != nil {
			rps.Title = "Requests and failures per second"
		}
	}
	return rps, true
}

// shortRun says a run lasted under one whole second (it has no per-second
// counts).
func shortRun(runs []*Data) bool {
	for _, d := range runs {
		if d.PerSecond != nil && len(d.PerSecond) == 0 {
			return true
		}
	}
	return false
}

// percentileTop is where the percentile axis ends (before the maximum): at
// p99.99, or at the finest percentile any run resolves (a power of ten of
// 1/(1−p)).
func percentileTop(runs []*Data) float64 {
	top := 1e4
	for _, d := range runs {
		for _, c := range d.Curve {
			if c.Percent < 100 {
				top = max(top, math.Pow(10, math.Ceil(math.Log10(1/(1-c.Percent/100))-1e-9)))
			}
		}
	}
	return top
}

// percentilePanel is the latency percentile spectrum on the 1/(1−p) axis, to
// top (percentileTop), with the --fail-if objectives on latency figures drawn
// over it: met and missed apart; one says the figure is of one run.
func percentilePanel(runs []*Data, label func(*Data, string) string, top float64, one bool) (Panel, bool) {
	pct := Panel{ID: PanelPercentiles, XLabel: "percentile", YLabel: "latency (ms)", LogX: true, XTics: PercentileTicsTo(top), YFromZero: true}
	precision := ""
	met := Line{Title: "objective met", Style: Marks, Color: 2, Columns: []string{"x_1/(1-p)", "bound_ms", "percent"},
		Note: "--fail-if bounds on latency figures that the run met (the mean at 1/(1-p) = 2)"}
	missed := Line{Title: "objective missed", Style: Marks, Color: 4, Columns: met.Columns,
		Note: "--fail-if bounds on latency figures that the run missed"}
	for k, d := range runs {
		if len(d.Curve) == 0 {
			continue
		}
		l := Line{Title: label(d, ""), Style: Lines, Color: k + 1, Columns: []string{"x_1/(1-p)", "latency_ms", "percent"},
			Note: "total latency by percentile, " + d.CurvePrecision + "; the last row is the maximum"}
		for _, c := range d.Curve {
			l.Rows = append(l.Rows, []float64{percentileX(c.Percent, top), float64(c.Us) / 1000, c.Percent})
		}
		precision = d.CurvePrecision
		pct.Lines = append(pct.Lines, l)
		for _, o := range d.Objectives {
			x := 2.0 // the mean: drawn at the median's place
			if o.Percent >= 0 {
				x = percentileX(o.Percent, top)
			}
			row := []float64{x, o.Us / 1000, o.Percent}
			if o.Passed {
				met.Rows = append(met.Rows, row)
			} else {
				missed.Rows = append(missed.Rows, row)
			}
		}
	}
	if len(pct.Lines) == 0 {
		return pct, false
	}
	for _, l := range []Line{met, missed} {
		if len(l.Rows) > 0 {
			pct.Lines = append(pct.Lines, l)
		}
	}
	pct.Title = "Latency percentile distribution (right end: maximum)"
	if one {
		pct.Title += ", " + precision
	}
	if len(met.Rows)+len(missed.Rows) > 0 {
		pct.Title += "; --fail-if objectives as dots"
	}
	pct.LogIfDecades()
	return pct, true
}

// rangesPanel counts the requests in each response-time range, and the
// failed requests.
func rangesPanel(runs []*Data, label func(*Data, string) string) (Panel, bool) {
	p := Panel{ID: PanelRanges, Title: "Response-time ranges (requests by total time) and failed requests",
		XLabel: "range", YLabel: "requests", YFromZero: true}
	n := 0
	for _, d := range runs {
		if len(d.Ranges) > 0 {
			n++
		}
	}
	if n == 0 {
		return p, false
	}
	w := 0.8 / float64(n)
	k := 0
	for i, d := range runs {
		if len(d.Ranges) == 0 {
			continue
		}
		if len(p.XTics) == 0 {
			for j, name := range RangeNames(d.RangeEdgesMs) {
				p.XTics = append(p.XTics, Tic{name, float64(j)})
			}
			p.XTics = append(p.XTics, Tic{"failed", float64(len(d.Ranges))})
		}
		l := Line{Title: label(d, ""), Style: Bars, Color: i + 1, Columns: []string{"range", "requests", "bar_width"}, Note: d.RangesNote}
		off := -0.4 + w*(float64(k)+0.5)
		for j, c := range d.Ranges {
			l.Rows = append(l.Rows, []float64{float64(j) + off, float64(c), w})
		}
		l.Rows = append(l.Rows, []float64{float64(len(d.Ranges)) + off, float64(d.Failed), w})
		p.Lines = append(p.Lines, l)
		k++
	}
	p.TicRange()
	return p, true
}

// RangeNames name the response-time ranges below, between and above the
// edges (ms): "t ≤ 800 ms", "800 ms < t ≤ 1200 ms", "1200 ms < t".
func RangeNames(edgesMs []float64) []string {
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + " ms" }
	if len(edgesMs) == 0 {
		return []string{"all"}
	}
	var out []string
	for j := range len(edgesMs) + 1 {
		switch {
		case j == 0:
			out = append(out, "t ≤ "+ms(edgesMs[0]))
		case j == len(edgesMs):
			out = append(out, ms(edgesMs[j-1])+" < t")
		default:
			out = append(out, ms(edgesMs[j-1])+" < t ≤ "+ms(edgesMs[j]))
		}
	}
	return out
}

// kneePanel draws each interval's latency against its throughput: where a
// server saturates, latency climbs while throughput stays.
func kneePanel(runs []*Data, label func(*Data, string) string) (Panel, bool) {
	p := Panel{ID: PanelKnee, Title: "Latency against throughput, one dot per interval of the timeline",
		XLabel: "requests per second in the interval", YLabel: "latency (ms)", YFromZero: true}
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, d := range runs {
		p50 := Line{Title: label(d, "p50"), Style: Marks, Color: k + 1, Columns: []string{"requests_per_s", "p50_ms"},
			Note: "each interval's requests over its length, and its latency percentiles"}
		p99 := Line{Title: label(d, "p99"), Style: Marks, Color: len(runs) + k + 1, Columns: []string{"requests_per_s", "p99_ms"}}
		for _, iv := range d.Intervals {
			if iv.Requests == 0 || iv.LengthS <= 0 {
				continue
			}
			x := float64(iv.Requests) / iv.LengthS
			lo, hi = min(lo, x), max(hi, x)
			p50.Rows = append(p50.Rows, []float64{x, float64(iv.P50Us) / 1000})
			p99.Rows = append(p99.Rows, []float64{x, float64(iv.P99Us) / 1000})
		}
		if len(p50.Rows) > 0 {
			p.Lines = append(p.Lines, p50, p99)
		}
	}
	if m := max((hi-lo)*0.05, hi*0.01); m > 0 {
		p.XMin, p.XMax = max(lo-m, 0), hi+m // every dot inside the frame
	}
	p.LogIfDecades()
	return p, len(p.Lines) > 0
}

// phasePanel draws each interval's mean time per phase (k6's Timings).
func phasePanel(runs []*Data, label func(*Data, string) string) (Panel, bool) {
	p := Panel{ID: PanelPhases, Title: "Mean time per phase, per interval (connect: TCP and TLS; waiting: to the first byte; rest: sending and receiving)",
		XLabel: "time since the start of the run (s)", YLabel: "mean (ms)", XFromZero: true, YFromZero: true}
	color := 0
	for _, d := range runs {
		if !d.HasPhases {
			continue
		}
		names := []string{"connect", "waiting", "rest"}
		if d.HasTLS {
			names = []string{"connect", "TLS", "waiting", "rest"}
			p.Title = "Mean time per phase, per interval (connect: TCP; TLS: the handshake; waiting: to the first byte; rest: sending and receiving)"
		}
		ls := make([]Line, len(names))
		for j := range ls {
			ls[j] = Line{Title: label(d, names[j]), Style: Lines, Color: color + j + 1, Columns: []string{"interval_mid_s", strings.ToLower(names[j]) + "_ms"}}
		}
		ls[0].Note = "mean phase times of the requests that ended in each interval (exact µs)"
		if d.HasTLS {
			ls[1].Note = "TLS handshake time per request of the interval, from the timeline (a request on a kept-alive connection counts 0)"
		}
		for _, iv := range d.Intervals {
			if iv.Requests == 0 {
				continue
			}
			x := iv.StartS + iv.LengthS/2
			vs := []float64{iv.ConnectUs, iv.WaitUs, iv.RestUs}
			if d.HasTLS {
				vs = []float64{iv.ConnectUs, iv.TLSUs, iv.WaitUs, iv.RestUs}
			}
			for j, v := range vs {
				ls[j].Rows = append(ls[j].Rows, []float64{x, v / 1000})
			}
		}
		if len(ls[0].Rows) > 0 {
			p.Lines = append(p.Lines, ls...)
			color += len(ls)
		}
	}
	return p, len(p.Lines) > 0
}

// intervalLatencyPanel draws each interval's p50, p90, p99 and maximum
// latency from the runs' timelines (and rate mode's corrected p99), on a log
// axis when they span more than two decades.
func intervalLatencyPanel(runs []*Data, label func(*Data, string) string) (Panel, bool) {
	p := Panel{ID: PanelLatencyTime, Title: "Latency per interval of the timeline: p50, p90 (dashed), p99, maximum (dots)",
		XLabel: "time since the start of the run (s)", YLabel: "latency (ms)", XFromZero: true, YFromZero: true}
	corrected := false
	for k, d := range runs {
		if len(d.Intervals) == 0 {
			continue
		}
		c := 4 * k
		p50 := Line{Title: label(d, "p50"), Style: Lines, Color: c + 1, Columns: []string{"interval_mid_s", "p50_ms"},
			Note: "latency percentiles of the requests recorded in each interval (HDR histogram, 3 significant digits)"}
		p90 := Line{Title: label(d, "p90"), Style: Lines, Color: c + 2, Dashed: true, Columns: []string{"interval_mid_s", "p90_ms"}}
		p99 := Line{Title: label(d, "p99"), Style: Lines, Color: c + 3, Columns: []string{"interval_mid_s", "p99_ms"}}
		mx := Line{Title: label(d, "max"), Style: Points, Color: c + 4, Columns: []string{"interval_mid_s", "max_ms"}}
		cp99 := Line{Title: label(d, "corrected p99"), Style: Lines, Color: c + 3, Dashed: true, Columns: []string{"interval_mid_s", "corrected_p99_ms"},
			Note: "p99 of the latency from each request's intended send time (--rate)"}
		for _, iv := range d.Intervals {
			if iv.Requests == 0 {
				continue
			}
			x := iv.StartS + iv.LengthS/2
			p50.Rows = append(p50.Rows, []float64{x, float64(iv.P50Us) / 1000})
			p90.Rows = append(p90.Rows, []float64{x, float64(iv.P90Us) / 1000})
			p99.Rows = append(p99.Rows, []float64{x, float64(iv.P99Us) / 1000})
			mx.Rows = append(mx.Rows, []float64{x, float64(iv.MaxUs) / 1000})
			if iv.CorrectedP99Us > 0 {
				cp99.Rows = append(cp99.Rows, []float64{x, float64(iv.CorrectedP99Us) / 1000})
			}
		}
		p.Lines = append(p.Lines, p50, p90, p99, mx)
		if len(cp99.Rows) > 0 {
			p.Lines = append(p.Lines, cp99)
			corrected = true
		}
	}
	if corrected {
		p.Title += "; corrected p99 (dashed, from the intended send times)"
	}
	p.LogIfDecades()
	return p, len(p.Lines) > 0
}

// targetLine is rate mode's target over the run, dashed: each interval's own
// (a step per interval) where the timeline has them, else the run's.
func targetLine(d *Data) (Line, bool) {
	l := Line{Style: Lines, Dashed: true, Columns: []string{"time_s", "target_per_s"},
		Note: "rate mode's target rate in each interval (--rate)"}
	for _, iv := range d.Intervals {
		if iv.TargetPerS > 0 {
			l.Rows = append(l.Rows, []float64{iv.StartS, iv.TargetPerS}, []float64{iv.StartS + iv.LengthS, iv.TargetPerS})
		}
	}
	if len(l.Rows) > 0 {
		return l, true
	}
	if d.TargetPerS <= 0 || len(d.Intervals) == 0 {
		return l, false
	}
	last := d.Intervals[len(d.Intervals)-1]
	l.Note = "rate mode's target rate (--rate; a schedule's mean over the run)"
	l.Rows = [][]float64{{0, d.TargetPerS}, {last.StartS + last.LengthS, d.TargetPerS}}
	return l, true
}

// LogIfDecades puts the panel's y axis on a log scale when its positive
// values span more than two decades, and says so in its title.
func (p *Panel) LogIfDecades() {
	lo, hi := math.Inf(1), 0.0
	for _, l := range p.Lines {
		for _, r := range l.Rows {
			if len(r) >= 2 && r[1] > 0 && !math.IsInf(r[1], 0) {
				lo, hi = min(lo, r[1]), max(hi, r[1])
			}
		}
	}
	if hi/lo > 100 {
		p.LogY, p.YFromZero = true, false
		p.Title += "; log scale"
	}
}

// statusPanel stacks one run's responses per second by status class, per
// interval (JMeter's codes per second); with several runs it is left out.
func statusPanel(runs []*Data) (Panel, bool) {
	p := Panel{ID: PanelStatus, Title: "Responses per second by status class, per interval (stacked)",
		XLabel: "time since the start of the run (s)", YLabel: "per second", XFromZero: true, YFromZero: true}
	if len(runs) != 1 || len(runs[0].Intervals) == 0 || !runs[0].Intervals[0].HasStatus {
		return p, false
	}
	names := [6]string{"no status", "1xx", "2xx", "3xx", "4xx", "5xx"}
	colors := [6]int{8, 5, 3, 1, 2, 4} // grey, purple, green, blue, orange, red
	var seen [6]bool
	for _, iv := range runs[0].Intervals {
		for c, n := range iv.Status {
			seen[c] = seen[c] || n > 0
		}
	}
	order := []int{2, 3, 1, 4, 5, 0} // bottom to top: 2xx, 3xx, 1xx, 4xx, 5xx, none
	for _, c := range order {
		if !seen[c] {
			continue
		}
		l := Line{Title: names[c], Style: Stacked, Color: colors[c], Columns: []string{"interval_mid_s", "top_per_s", "interval_s", "base_per_s"},
			Note: names[c] + " responses per second in each interval, stacked on the classes before it"}
		for _, iv := range runs[0].Intervals {
			if iv.LengthS <= 0 {
				continue
			}
			base := 0.0
			for _, b := range order {
				if b == c {
					break
				}
				base += float64(iv.Status[b])
			}
			l.Rows = append(l.Rows, []float64{iv.StartS + iv.LengthS/2, (base + float64(iv.Status[c])) / iv.LengthS, iv.LengthS, base / iv.LengthS})
		}
		p.Lines = append(p.Lines, l)
	}
	return p, len(p.Lines) > 0
}

// intervalRatePanel draws each interval's requests and failures per second
// from the runs' timelines.
func intervalRatePanel(runs []*Data, label func(*Data, string) string) (Panel, bool) {
	p := Panel{ID: PanelRate, Title: "Requests and failures per second per interval", XLabel: "time since the start of the run (s)",
		YLabel: "per second", XFromZero: true, YFromZero: true}
	for k, d := range runs {
		if len(d.Intervals) == 0 {
			continue
		}
		req := Line{Title: label(d, "requests"), Style: Bars, Color: 2*k + 1, Columns: []string{"interval_mid_s", "requests_per_s", "interval_s"},
			Note: "requests recorded in each interval over its length (the last interval may be shorter)"}
		fail := Line{Title: label(d, "failures"), Style: Bars, Color: 2*k + 2, Columns: []string{"interval_mid_s", "failures_per_s", "interval_s"},
			Note: "failed requests (ab's Failed requests, connect failures included) that ended in each interval, over its length"}
		for _, iv := range d.Intervals {
			if iv.LengthS <= 0 {
				continue
			}
			x := iv.StartS + iv.LengthS/2
			req.Rows = append(req.Rows, []float64{x, float64(iv.Requests) / iv.LengthS, iv.LengthS})
			fail.Rows = append(fail.Rows, []float64{x, float64(iv.Failures) / iv.LengthS, iv.LengthS})
		}
		p.Lines = append(p.Lines, req, fail)
		if target, ok := targetLine(d); ok && len(req.Rows) > 0 {
			target.Title, target.Color = label(d, "target"), 11+len(Colors)*k // black, then black in another dash
			p.Lines = append(p.Lines, target)
			p.Title = "Requests per second (target dashed) and failures per interval"
		}
	}
	return p, len(p.Lines) > 0
}

// Count formats n with thousands separators.
func Count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Figure is one image: panels stacked vertically, each with its own axes.
type Figure struct {
	Title  string // the image's heading (the command line, the runs' labels)
	Panels []Panel
	// Columns is how many panels stand side by side, row after row (0 or 1:
	// one panel per row).
	Columns int
}

// Cols is the figure's panels per row (at least 1).
func (f *Figure) Cols() int { return max(f.Columns, 1) }

// Panel is one chart of a Figure.
type Panel struct {
	ID             string // names the panel (the Panel constants of a run figure)
	Title          string // says what is drawn, including any sampling
	XLabel, YLabel string // axis labels, each with its unit
	// LogX draws x on a log scale; XTics, when set, replaces gnuplot's tics
	// (pairs of label and position, as gnuplot's set xtics (...) takes them).
	LogX  bool
	XTics []Tic
	// LogY draws y on a log scale (values that span decades).
	LogY bool
	// XFromZero and YFromZero anchor an axis at 0 (counts, rates, time).
	XFromZero, YFromZero bool
	// XMin and XMax, when XMax > XMin, fix the x range.
	XMin, XMax float64
	Lines      []Line
	// LegendOutside puts the legend outside the plot however short it is
	// (right of it, or under it on a narrow SVG image).
	LegendOutside bool
}

// Tic is a labelled tic mark on an axis.
type Tic struct {
	Label string
	At    float64
}

// Style is how a Line is drawn.
type Style int

const (
	Points    Style = iota // one dot per row (x y)
	Lines                  // a polyline (x y)
	Bars                   // a translucent bar one x unit wide centred on each x (x y)
	ErrorBars              // a polyline with vertical error bars (x y low high)
	Marks                  // a large dot per row, for a few points that must stand out (x y)
	Stacked                // a bar from a base to a top, as wide as its third column (x top width base)
	// Flagged rings each row's point and writes the line's Mark beside it,
	// below and to the right, MarkSlot characters further right (so that
	// several flags of one point read as one word): a point's verdicts on
	// a sweep chart (x y).
	Flagged
)

// Line is one data set of a panel: a block of the data file.
type Line struct {
	Title string // legend entry ("" for none)
	Style Style
	// Columns names the columns of Rows, each with its unit, for the data
	// file's comment line.
	Columns []string
	Rows    [][]float64
	// Note is written as a comment above the block (where the data came from).
	Note string
	// Color is the line's colour, 1-based in the palette (0: by position);
	// Dashed draws it dashed (p99 beside a solid p50 of the same colour).
	Color  int
	Dashed bool
	// Mark and MarkSlot are a Flagged line's text and its place (0 first).
	Mark     string
	MarkSlot int
}

// ColorOf is the 1-based palette colour of the i-th line of a panel.
func (l *Line) ColorOf(i int) int {
	if l.Color > 0 {
		return l.Color
	}
	return i + 1
}
