package plot

import (
	"fmt"
	"gab/report"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gab/internal/chart"
	"gab/internal/sweep"
)

// sweepSeries is one line of a sweep chart: a target (and size) across the
// concurrency levels, or across the sizes.
type sweepSeries struct {
	label  string
	points []report.SweepPoint
}

// groupPoints groups the points by key, in the order keys first appear, each
// group sorted by x.
func groupPoints(points []report.SweepPoint, key func(*report.SweepPoint) string, x func(*report.SweepPoint) float64) []sweepSeries {
	var out []sweepSeries
	idx := map[string]int{}
	for _, p := range points {
		k := key(&p)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, sweepSeries{label: k})
		}
		out[i].points = append(out[i].points, p)
	}
	for _, s := range out {
		sort.SliceStable(s.points, func(a, b int) bool { return x(&s.points[a]) < x(&s.points[b]) })
	}
	return out
}

func concurrencyOf(p *report.SweepPoint) float64 { return float64(p.Concurrency) }

func sizeOf(p *report.SweepPoint) float64 {
	if p.Size == nil {
		return 0
	}
	return float64(p.Size.Bytes)
}

// maxBarGroups is the most sizes (times --param values) that get bar
// charts of their own; past it the charts against size compare the targets.
const maxBarGroups = 4

// SweepFigure is a sweep's charts, chosen from what it varied: with several
// targets and at most maxBarGroups sizes (times --param values), per size
// (and --param value) the targets side by side as bars of
// requests per second with their 95 % whiskers and of latency deviation, one
// bar per concurrency (the server studies' figures); against concurrency,
// requests per second with its interval and p50/p99 latency, and the
// server's CPU per request; against size, bandwidth in the direction that
// grows (sent for --post-sizes, whiskers: its 95 % interval), min and p50
// latency and CPU per request (client, server, whole host); against
// --param's values, requests per second, p50 latency, bandwidth (with
// whiskers) and CPU per request; against each, the catalog figures that ask
// for a panel (catalogPanels).
func SweepFigure(d *report.SweepDocument) *chart.Figure {
	f := &chart.Figure{Title: sweepTitle(d)}
	sizes := len(d.Settings.Sizes) > 1
	groups := max(len(d.Settings.Sizes), 1)
	if q := d.Settings.Param; q != nil {
		groups *= max(len(q.Values), 1)
	}
	if len(d.Settings.Targets) > 1 && groups <= maxBarGroups {
		f.Panels = append(f.Panels, barPanels(d)...)
	}
	if len(d.Settings.Concurrency) > 1 {
		ax := concurrencyAxis(d, sizes)
		f.Panels = append(f.Panels, concurrencyPanels(d, &ax)...)
		f.Panels = append(f.Panels, catalogPanels(d, &ax)...)
	}
	if sizes {
		ax := sizeAxis(d)
		f.Panels = append(f.Panels, sizePanels(d, &ax)...)
		f.Panels = append(f.Panels, catalogPanels(d, &ax)...)
	}
	if d.Settings.Param != nil && len(d.Settings.Param.Values) > 1 {
		ax := paramAxis(d)
		f.Panels = append(f.Panels, paramPanels(d, &ax)...)
		f.Panels = append(f.Panels, catalogPanels(d, &ax)...)
	}
	if len(f.Panels) == 0 {
		// One target, concurrency and size: the point alone.
		f.Panels = append(f.Panels, targetPanel(d))
	}
	// No panel draws more than chart.MaxSeries series (sweeps plotted
	// together, many targets), and no legend covers data.
	f.Panels = chart.SplitPanels(f.Panels, chart.MaxSeries)
	return f
}

// maxTitleTargets is how many target labels a sweep figure's title names.
const maxTitleTargets = 6

// sweepTitle is a sweep figure's title: what was swept, short enough to fit
// above the charts (the command line is in the data file's first line and
// the HTML report).
func sweepTitle(d *report.SweepDocument) string {
	var labels []string
	for i, t := range d.Settings.Targets {
		if i == maxTitleTargets {
			labels = append(labels, fmt.Sprintf("+%d more", len(d.Settings.Targets)-i))
			break
		}
		labels = append(labels, t.Label)
	}
	parts := []string{"gab sweep of " + strings.Join(labels, ", ")}
	if n := len(d.Settings.Sizes); n > 0 {
		parts = append(parts, fmt.Sprintf("%s %s..%s", d.Settings.SizeOption, d.Settings.Sizes[0].Text, d.Settings.Sizes[n-1].Text))
	}
	if q := d.Settings.Param; q != nil && len(q.Values) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s..%s", q.Name, q.Values[0], q.Values[len(q.Values)-1]))
	}
	var cs []string
	for _, c := range d.Settings.Concurrency {
		cs = append(cs, strconv.Itoa(c))
	}
	parts = append(parts, "c="+strings.Join(cs, ","), fmt.Sprintf("%d runs per point", d.Settings.Repeat))
	return strings.Join(parts, "; ")
}

// sweepDataNote is the first data set's note: the sweep's command line.
func sweepDataNote(d *report.SweepDocument) string {
	return "command line: " + strings.Join(d.CommandLine, " ")
}

// barPanels are the server studies' figures: per size and --param value,
// the targets side by side, one bar per concurrency, of requests per second
// (whiskers: its 95 % interval) and of latency deviation (by the sweep's
// estimator; whiskers: the 95 % interval of the runs' own sds). Whiskers
// below zero stop at zero.
func barPanels(d *report.SweepDocument) []chart.Panel {
	type key struct{ size, param string }
	var keys []key
	groups := map[key][]report.SweepPoint{}
	for _, p := range d.Points {
		k := key{param: p.ParamValue}
		if p.Size != nil {
			k.size = p.Size.Text
		}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], p)
	}
	target := map[string]int{}
	var tics []chart.Tic
	for i, t := range d.Settings.Targets {
		target[t.Label] = i
		tics = append(tics, chart.Tic{Label: t.Label, At: float64(i + 1)})
	}
	conc := map[int]int{}
	for i, c := range d.Settings.Concurrency {
		conc[c] = i
	}
	nc := len(d.Settings.Concurrency)
	width := 0.8 / float64(nc)
	deviation := d.Settings.Deviation
	if deviation == "" {
		deviation = sweep.DeviationPooled
	}
	var out []chart.Panel
	for _, k := range keys {
		where := ""
		if k.size != "" {
			where += " at size " + k.size
		}
		if k.param != "" {
			where += " at " + d.Settings.Param.Name + "=" + k.param
		}
		rps := chart.Panel{Title: "Requests per second per target" + where + fmt.Sprintf(" (mean of %d runs; whiskers: 95 %% interval)", d.Settings.Repeat),
			XLabel: "target", YLabel: "requests per second", XTics: tics, YFromZero: true}
		dev := chart.Panel{Title: "Latency deviation per target" + where + " (" + deviation + "; whiskers: 95 % interval of the runs' sds)",
			XLabel: "target", YLabel: "latency deviation (ms)", XTics: tics, YFromZero: true}
		bars := make([]chart.Line, nc)
		devBars := make([]chart.Line, nc)
		for i, c := range d.Settings.Concurrency {
			title := "c=" + strconv.Itoa(c)
			bars[i] = chart.Line{Title: title, Style: chart.Bars, Color: i + 1, Columns: []string{"target_number", "rps_mean", "bar_width"}}
			devBars[i] = chart.Line{Title: title, Style: chart.Bars, Color: i + 1, Columns: []string{"target_number", "deviation_ms", "bar_width"}}
		}
		var whiskers, devWhiskers []chart.Line
		for _, p := range groups[k] {
			i := conc[p.Concurrency]
			x := float64(target[p.Label]+1) - 0.4 + width*(float64(i)+0.5)
			bars[i].Rows = append(bars[i].Rows, []float64{x, rpsMean(&p), width})
			whiskers = append(whiskers, chart.Line{Style: chart.ErrorBars, Color: i + 1, Columns: []string{"target_number", "rps_mean", "ci95_low", "ci95_high"},
				Rows: [][]float64{rpsRow(x, &p)}})
			if latencyCounted(&p) {
				iv := sweep.IntervalOf(p.Latency.Floats("run_sds_ms"))
				slo, shi, shift := iv.Lo, iv.Hi, deviationMs(&p)-iv.Mean
				devBars[i].Rows = append(devBars[i].Rows, []float64{x, deviationMs(&p), width})
				if len(p.Latency.Floats("run_sds_ms")) > 1 {
					devWhiskers = append(devWhiskers, chart.Line{Style: chart.ErrorBars, Color: i + 1, Columns: []string{"target_number", "deviation_ms", "ci95_low", "ci95_high"},
						Rows: [][]float64{{x, deviationMs(&p), max(slo+shift, 0), shi + shift}}})
				}
			}
		}
		rps.Lines = append(bars, whiskers...)
		dev.Lines = append(devBars, devWhiskers...)
		barX := func(p *report.SweepPoint) float64 {
			return float64(target[p.Label]+1) - 0.4 + width*(float64(conc[p.Concurrency])+0.5)
		}
		addFlags(&rps, groups[k], func(p *report.SweepPoint) (float64, float64, bool) { return barX(p), rpsMean(p), true })
		addFlags(&dev, groups[k], func(p *report.SweepPoint) (float64, float64, bool) {
			return barX(p), deviationMs(p), latencyCounted(p)
		})
		rps.TicRange()
		dev.TicRange()
		out = append(out, rps, dev)
	}
	if len(out) > 0 && len(out[0].Lines) > 0 {
		out[0].Lines[0].Note = sweepDataNote(d)
	}
	return out
}

// concurrencyPanels are the charts against concurrency, a line per target
// (and size, with several): requests per second with its confidence
// interval, p50 and p99 latency, and the server's CPU per request where
// measured.
func concurrencyPanels(d *report.SweepDocument, ax *sweepAxis) []chart.Panel {
	concTics := func() []chart.Tic { return slices.Clone(ax.tics) }
	logConc, series := ax.logX, ax.series
	rps := chart.Panel{Title: fmt.Sprintf("Requests per second against concurrency (mean of %d runs; bars: 95 %% confidence interval)", d.Settings.Repeat),
		XLabel: "concurrency (-c)", YLabel: "requests per second", LogX: logConc, XTics: concTics(), YFromZero: true}
	lat := chart.Panel{Title: "Latency against concurrency (p50: solid, p99: dashed in the same colour; every request of every run)",
		XLabel: "concurrency (-c)", YLabel: "latency (ms)", LogX: logConc, XTics: concTics(), YFromZero: true}
	cpu := chart.Panel{Title: "Server CPU per request against concurrency (--server-pid, 10 ms ticks)",
		XLabel: "concurrency (-c)", YLabel: "server CPU per request (µs)", LogX: logConc, XTics: concTics(), YFromZero: true}
	for k, s := range series {
		l := chart.Line{Title: s.label, Style: chart.ErrorBars, Columns: []string{"concurrency", "rps_mean", "ci95_low", "ci95_high"},
			Note: "requests per second across the repetitions: mean and its 95 % confidence interval (whiskers below zero stop at zero)"}
		p50 := chart.Line{Title: s.label, Style: chart.Lines, Columns: []string{"concurrency", "p50_ms"}, Color: k + 1, Note: "p50 of " + s.label}
		p99 := chart.Line{Style: chart.Lines, Columns: []string{"concurrency", "p99_ms"}, Color: k + 1, Dashed: true, Note: "p99 of " + s.label}
		c := chart.Line{Title: s.label, Style: chart.Lines, Columns: []string{"concurrency", "server_cpu_us_per_request"}}
		for _, p := range s.points {
			x := float64(p.Concurrency)
			l.Rows = append(l.Rows, rpsRow(x, &p))
			if latencyCounted(&p) {
				p50.Rows = append(p50.Rows, []float64{x, figure(&p, "p50")})
				p99.Rows = append(p99.Rows, []float64{x, figure(&p, "p99")})
			}
			if v, ok := p.Figure("server_cpu_us_per_request"); ok {
				c.Rows = append(c.Rows, []float64{x, v})
			}
		}
		rps.Lines = append(rps.Lines, l)
		lat.Lines = append(lat.Lines, p50, p99)
		if len(c.Rows) > 0 {
			cpu.Lines = append(cpu.Lines, c)
		}
	}
	addFlags(&rps, d.Points, func(p *report.SweepPoint) (float64, float64, bool) { return concurrencyOf(p), rpsMean(p), true })
	addFlags(&lat, d.Points, func(p *report.SweepPoint) (float64, float64, bool) {
		return concurrencyOf(p), figure(p, "p50"), latencyCounted(p)
	})
	if len(cpu.Lines) > 0 {
		addFlags(&cpu, d.Points, func(p *report.SweepPoint) (float64, float64, bool) {
			v, ok := p.Figure("server_cpu_us_per_request")
			return concurrencyOf(p), v, ok
		})
	}
	rps.TicRange()
	lat.TicRange()
	cpu.TicRange()
	lat.LogIfDecades()
	cpu.LogIfDecades()
	if len(cpu.Lines) > 0 {
		return []chart.Panel{rps, lat, cpu}
	}
	return []chart.Panel{rps, lat}
}

// targetPanel is the chart of a sweep of one target, concurrency and size:
// its requests per second, with its confidence interval.
func targetPanel(d *report.SweepDocument) chart.Panel {
	rps := chart.Panel{Title: fmt.Sprintf("Requests per second per target (mean of %d runs; bars: 95 %% confidence interval)", d.Settings.Repeat),
		XLabel: "target", YLabel: "requests per second", YFromZero: true}
	l := chart.Line{Style: chart.ErrorBars, Columns: []string{"target_number", "rps_mean", "ci95_low", "ci95_high"}}
	for i, p := range d.Points {
		rps.XTics = append(rps.XTics, chart.Tic{Label: p.Label, At: float64(i + 1)})
		l.Rows = append(l.Rows, rpsRow(float64(i+1), &p))
	}
	rps.Lines = append(rps.Lines, l)
	at := map[*report.SweepPoint]float64{}
	for i := range d.Points {
		at[&d.Points[i]] = float64(i + 1)
	}
	addFlags(&rps, d.Points, func(p *report.SweepPoint) (float64, float64, bool) { return at[p], rpsMean(p), true })
	rps.TicRange()
	return rps
}

// flagColor is the palette colour of the verdicts' marks (black).
const flagColor = 11

// addFlags marks the points' verdicts on a panel: for each verdict any
// point has, a Flagged line (its code beside a ring, its legend "flag C:
// client-bound") where at draws the point (ok false: the panel does not
// draw it). Each code has its place beside the ring in the panel, in the
// table's order, so a point's codes read as its flags column does.
func addFlags(pn *chart.Panel, points []report.SweepPoint, at func(*report.SweepPoint) (x, y float64, ok bool)) {
	all := append([]sweep.Flag(nil), sweep.Flags...)
	for i := range points { // kinds without a code (a document of another gab), in their order
		for _, k := range points[i].Verdicts {
			if !slices.ContainsFunc(all, func(f sweep.Flag) bool { return f.Kind == k }) {
				all = append(all, sweep.FlagOf(k))
			}
		}
	}
	cols := []string{"x", "y"}
	if len(pn.Lines) > 0 && len(pn.Lines[0].Columns) >= 2 {
		cols = pn.Lines[0].Columns[:2]
	}
	slot := 0
	for _, f := range all {
		l := chart.Line{Title: "flag " + f.Code + ": " + f.Name, Style: chart.Flagged, Color: flagColor, Mark: f.Code, MarkSlot: slot,
			Columns: cols, Note: "points whose runs found the verdict " + f.Kind + " (the table's flags column: " + f.Code + ")"}
		for i := range points {
			p := &points[i]
			if !slices.Contains(p.Verdicts, f.Kind) {
				continue
			}
			if x, y, ok := at(p); ok {
				l.Rows = append(l.Rows, []float64{x, y})
			}
		}
		if len(l.Rows) > 0 {
			pn.Lines = append(pn.Lines, l)
			slot += len(f.Code)
		}
	}
}
