package plot

import (
	"slices"
	"strconv"

	"gab/internal/chart"
	"gab/report"
)

// This file draws the catalog's figures whose report.SweepUse asks for a
// panel: one panel per figure against each thing the sweep varied
// (concurrency, size, --param's values), a line per series as the fixed
// panels draw them, so that a new catalog figure reaches gab sweep's and gab
// plot's charts (SVG, HTML, gnuplot) with no code here.

// sweepAxis is one thing a sweep varied, as its charts draw it: the x
// axis's name, label, data column, tics and scale, a point's place on it,
// and the series (a line per target, and per size, concurrency or --param
// value where the axis is not that and the sweep varied it).
type sweepAxis struct {
	name, xLabel, column string
	tics                 []chart.Tic
	logX                 bool
	x                    func(*report.SweepPoint) float64
	series               []sweepSeries
}

// concurrencyAxis is the axis of concurrency; sizes: the sweep varied the
// size too (a line per target and size).
func concurrencyAxis(d *report.SweepDocument, sizes bool) sweepAxis {
	byTarget := func(p *report.SweepPoint) string {
		l := p.Label
		if sizes && p.Size != nil {
			l += " " + p.Size.Text
		}
		if p.ParamValue != "" {
			l += " " + d.Settings.Param.Name + "=" + p.ParamValue
		}
		return l
	}
	var tics []chart.Tic
	for _, c := range d.Settings.Concurrency {
		tics = append(tics, chart.Tic{Label: strconv.Itoa(c), At: float64(c)})
	}
	return sweepAxis{name: "concurrency", xLabel: "concurrency (-c)", column: "concurrency", tics: tics, logX: len(d.Settings.Concurrency) > 2,
		x: concurrencyOf, series: groupPoints(d.Points, byTarget, concurrencyOf)}
}

// sizeAxis is the axis of size (log scale; a size of 0 bytes is drawn at 1).
func sizeAxis(d *report.SweepDocument) sweepAxis {
	byConc := func(p *report.SweepPoint) string {
		l := p.Label
		if len(d.Settings.Concurrency) > 1 {
			l += " c=" + strconv.Itoa(p.Concurrency)
		}
		if p.ParamValue != "" {
			l += " " + d.Settings.Param.Name + "=" + p.ParamValue
		}
		return l
	}
	var tics []chart.Tic
	for _, s := range d.Settings.Sizes {
		tics = append(tics, chart.Tic{Label: s.Text, At: float64(max(s.Bytes, 1))})
	}
	return sweepAxis{name: "size", xLabel: "size (" + d.Settings.SizeOption + ", bytes)", column: "size_bytes", tics: tics, logX: true,
		x: func(p *report.SweepPoint) float64 { return max(sizeOf(p), 1) }, series: groupPoints(d.Points, byConc, sizeOf)}
}

// paramAxis is the axis of --param's values, in their order, one tic each.
func paramAxis(d *report.SweepDocument) sweepAxis {
	q := d.Settings.Param
	at := map[string]float64{}
	var tics []chart.Tic
	for i, v := range q.Values {
		at[v] = float64(i + 1)
		tics = append(tics, chart.Tic{Label: v, At: float64(i + 1)})
	}
	key := func(p *report.SweepPoint) string {
		l := p.Label
		if p.Size != nil && len(d.Settings.Sizes) > 1 {
			l += " " + p.Size.Text
		}
		if len(d.Settings.Concurrency) > 1 {
			l += " c=" + strconv.Itoa(p.Concurrency)
		}
		return l
	}
	x := func(p *report.SweepPoint) float64 { return at[p.ParamValue] }
	return sweepAxis{name: q.Name, xLabel: q.Name + " (--param)", column: "param_number", tics: tics, x: x, series: groupPoints(d.Points, key, x)}
}

// catalogPanels are the panels against ax of the catalog's figures whose
// SweepUse asks for one: a line per series where its points have the
// figure (a figure in ms, a latency, where they recorded requests), the
// points' verdicts marked; none for a figure no point has.
func catalogPanels(d *report.SweepDocument, ax *sweepAxis) []chart.Panel {
	var out []chart.Panel
	for _, fig := range report.Catalog {
		if !fig.Sweep.Panel {
			continue
		}
		at := func(p *report.SweepPoint) (float64, float64, bool) {
			v, ok := p.Figure(fig.Key)
			return ax.x(p), v, ok && (fig.Unit != "ms" || latencyCounted(p))
		}
		y := fig.Title
		if fig.Unit != "" {
			y += " (" + fig.Unit + ")"
		}
		pn := chart.Panel{Title: fig.Title + " against " + ax.name + " (each point's runs together, as its table and --json give it)",
			XLabel: ax.xLabel, YLabel: y, LogX: ax.logX, XTics: slices.Clone(ax.tics), YFromZero: true}
		for k, s := range ax.series {
			l := chart.Line{Title: s.label, Style: chart.Lines, Color: k + 1, Columns: []string{ax.column, fig.CSV}, Note: fig.Title + " of " + s.label}
			for i := range s.points {
				if x, v, ok := at(&s.points[i]); ok {
					l.Rows = append(l.Rows, []float64{x, v})
				}
			}
			pn.Lines = appendDrawn(pn.Lines, l)
		}
		if len(pn.Lines) == 0 {
			continue
		}
		addFlags(&pn, d.Points, at)
		pn.TicRange()
		out = append(out, pn)
	}
	return out
}
