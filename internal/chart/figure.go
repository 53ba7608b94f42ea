package chart

import (
	"fmt"
	"strconv"
)

// PercentileTics label the percentile axis, which is 1/(1−p) on a log scale
// (HdrHistogram's percentile-distribution plot).
var PercentileTics = []Tic{{"0%", 1}, {"90%", 10}, {"99%", 100}, {"99.9%", 1000}, {"99.99%", 10000}, {"max", 1e5}}

// PercentileX is where percent p lies on the percentile axis: 1/(1−p/100).
func PercentileX(p float64) float64 {
	if p >= 100 {
		return 1e5 // the maximum: one decade past p99.99
	}
	return 1 / (1 - p/100)
}

// TicRange fixes p's x range to its tics with a margin: half a unit on a
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
		p.XMin, p.XMax = lo-0.5, hi+0.5
	}
}

// RunFigure is the figure of one or more runs (overlaid, labelled): latency
// of every request over time, the latency percentile distribution, and
// requests and failures per second. A panel none of the runs has data for
// is left out.
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

	lat := Panel{XLabel: "time since the start of the run (s)", YLabel: "latency (ms)", XFromZero: true, YFromZero: true}
	var notes []string
	for _, d := range runs {
		if d.Latency == nil {
			continue
		}
		l := Line{Title: label(d, ""), Style: Points, Columns: []string{"start_s", "latency_ms"}}
		l.Note = latencyNote(d)
		for _, p := range d.Latency {
			l.Rows = append(l.Rows, []float64{p.StartS, float64(p.LatencyUs) / 1000})
		}
		notes = append(notes, l.Note)
		lat.Lines = append(lat.Lines, l)
	}
	if len(lat.Lines) > 0 {
		lat.Title = "Latency of each request over time"
		if len(notes) == 1 {
			lat.Title += ": " + notes[0]
		} else {
			lat.Title += " (sampling per data set in the .dat file)"
		}
		f.Panels = append(f.Panels, lat)
	}

	pct := Panel{XLabel: "percentile", YLabel: "latency (ms)", LogX: true, XTics: PercentileTics, YFromZero: true}
	precision := ""
	for _, d := range runs {
		if len(d.Curve) == 0 {
			continue
		}
		l := Line{Title: label(d, ""), Style: Lines, Columns: []string{"x_1/(1-p)", "latency_ms", "percent"},
			Note: "total latency by percentile, " + d.CurvePrecision + "; the last row is the maximum"}
		for _, c := range d.Curve {
			l.Rows = append(l.Rows, []float64{PercentileX(c.Percent), float64(c.Us) / 1000, c.Percent})
		}
		precision = d.CurvePrecision
		pct.Lines = append(pct.Lines, l)
	}
	if len(pct.Lines) > 0 {
		pct.Title = "Latency percentile distribution (right end: maximum)"
		if len(runs) == 1 {
			pct.Title += ", " + precision
		}
		f.Panels = append(f.Panels, pct)
	}

	if p, ok := intervalLatencyPanel(runs, label); ok {
		f.Panels = append(f.Panels, p)
	}
	if p, ok := intervalRatePanel(runs, label); ok {
		f.Panels = append(f.Panels, p)
		return f
	}
	rps := Panel{XLabel: "second of the run", YLabel: "per second", XFromZero: true, YFromZero: true}
	short := false
	for _, d := range runs {
		if d.PerSecond != nil && len(d.PerSecond) == 0 {
			short = true // not one whole second
		}
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
	if len(rps.Lines) > 0 {
		rps.Title = "Requests per second"
		for _, d := range runs {
			if d.FailuresPerSecond != nil {
				rps.Title = "Requests and failures per second"
			}
		}
		f.Panels = append(f.Panels, rps)
	} else if short {
		f.Title += " (under 1 s: no per-second chart)"
	}
	return f
}

// intervalLatencyPanel draws each interval's p50, p99 and maximum latency
// from the runs' timelines.
func intervalLatencyPanel(runs []*Data, label func(*Data, string) string) (Panel, bool) {
	p := Panel{Title: "Latency per interval of the timeline: p50 (solid), p99 (dashed), maximum (dots)",
		XLabel: "time since the start of the run (s)", YLabel: "latency (ms)", XFromZero: true, YFromZero: true}
	for k, d := range runs {
		if len(d.Intervals) == 0 {
			continue
		}
		p50 := Line{Title: label(d, "p50"), Style: Lines, Color: k + 1, Columns: []string{"interval_mid_s", "p50_ms"},
			Note: "latency percentiles of the requests recorded in each interval (HDR histogram, 3 significant digits)"}
		p99 := Line{Title: label(d, "p99"), Style: Lines, Color: k + 1, Dashed: true, Columns: []string{"interval_mid_s", "p99_ms"}}
		mx := Line{Title: label(d, "max"), Style: Points, Color: k + 1, Columns: []string{"interval_mid_s", "max_ms"}}
		for _, iv := range d.Intervals {
			if iv.Requests == 0 {
				continue
			}
			x := iv.StartS + iv.LengthS/2
			p50.Rows = append(p50.Rows, []float64{x, float64(iv.P50Us) / 1000})
			p99.Rows = append(p99.Rows, []float64{x, float64(iv.P99Us) / 1000})
			mx.Rows = append(mx.Rows, []float64{x, float64(iv.MaxUs) / 1000})
		}
		p.Lines = append(p.Lines, p50, p99, mx)
	}
	return p, len(p.Lines) > 0
}

// intervalRatePanel draws each interval's requests and failures per second
// from the runs' timelines.
func intervalRatePanel(runs []*Data, label func(*Data, string) string) (Panel, bool) {
	p := Panel{Title: "Requests and failures per second, per interval of the timeline", XLabel: "time since the start of the run (s)",
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
	}
	return p, len(p.Lines) > 0
}

func latencyNote(d *Data) string {
	var s string
	switch {
	case d.Stride > 1:
		s = fmt.Sprintf("1 in %d of %s requests, evenly by latency rank, and the slowest", d.Stride, count(d.Stored))
	default:
		s = "all " + count(d.Stored) + " requests"
	}
	if d.Stored < d.Recorded {
		s += fmt.Sprintf(" (the exact store kept %s of %s)", count(d.Stored), count(d.Recorded))
	}
	return s + ", µs precision"
}

// count formats n with thousands separators.
func count(n int) string {
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
}

// Panel is one chart of a Figure.
type Panel struct {
	Title          string // says what is drawn, including any sampling
	XLabel, YLabel string // axis labels, each with its unit
	// LogX draws x on a log scale; XTics, when set, replaces gnuplot's tics
	// (pairs of label and position, as gnuplot's set xtics (...) takes them).
	LogX  bool
	XTics []Tic
	// XFromZero and YFromZero anchor an axis at 0 (counts, rates, time).
	XFromZero, YFromZero bool
	// XMin and XMax, when XMax > XMin, fix the x range.
	XMin, XMax float64
	Lines      []Line
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
}

// ColorOf is the 1-based palette colour of the i-th line of a panel.
func (l *Line) ColorOf(i int) int {
	if l.Color > 0 {
		return l.Color
	}
	return i + 1
}
