package plot

import (
	"fmt"
	"strconv"
	"strings"

	"gab/internal/sweep"
	"gab/report"
)

// SweepPage is a sweep's HTML report: its charts, the points table, each
// configuration's maximum over --param's values, the rankings, the ratios
// to --baseline and the changes.
func SweepPage(d *report.SweepDocument) *report.Page {
	page := &report.Page{
		Title:   "gab sweep",
		Command: d.CommandLine,
		Environment: []report.PageRow{
			{Name: "Started", Value: d.StartTime}, {Name: "Ended", Value: d.EndTime},
			{Name: "Complete", Value: strconv.FormatBool(d.Complete)},
			{Name: "CPUs", Value: strconv.Itoa(d.Machine.CPUs)},
			{Name: "Repetitions", Value: strconv.Itoa(d.Settings.Repeat)},
			{Name: "Confidence interval", Value: d.Settings.CIMethod},
		},
		Figure: SweepFigure(d),
	}
	deviation := d.Settings.Deviation
	if deviation == "" {
		deviation = sweep.DeviationPooled
	}
	page.Tables = append(page.Tables, pointsTable(d, deviation))
	if t, ok := paramMaxTable(d); ok {
		page.Tables = append(page.Tables, t)
	}
	page.Tables = append(page.Tables, rankingTables(d, deviation)...)
	page.Tables = append(page.Tables, comparisonTables(d, deviation)...)
	return page
}

// pointsTable is a row per point: its own columns (identity, runs, the
// spread of req/s, flags), the figure columns of the sweep's table
// (sweep.FigureColumns: the catalog's figures with a column head, in the
// table's order, units and digits) and the host's CPU, with the flags'
// legend in the note.
func pointsTable(d *report.SweepDocument, deviation string) report.PageTable {
	measured := func(fig *report.Figure) bool {
		for i := range d.Points {
			if _, ok := d.Points[i].Figure(fig.Key); ok {
				return true
			}
		}
		return false
	}
	figs := sweep.FigureColumns(d.Settings.SizeOption, measured)
	head := []string{"target", "size"}
	if d.Settings.Param != nil {
		head = append(head, d.Settings.Param.Name)
	}
	head = append(head, "-c", "runs", "req/s mean", "± 95 % CI", "cv %", "flags")
	for _, c := range figs {
		head = append(head, c.Head)
	}
	head = append(head, "host CPU µs/req")
	pts := [][]string{head}
	for i := range d.Points {
		pts = append(pts, pointRow(d, &d.Points[i], figs))
	}
	var kinds [][]string
	for _, p := range d.Points {
		kinds = append(kinds, p.Verdicts)
	}
	flags := ""
	if legend := sweep.FlagLegend(kinds); legend != "" {
		flags = " Flags: the points' verdicts (each found by a run or more; the JSON has the evidence, the charts ring the points): " + legend + "."
	}
	return report.PageTable{Title: "Points", Rows: pts, Compact: true,
		Note: "Requests per second across the repetitions (cv: sd / mean, in %); latency over every request of every run (HDR histogram, 3 significant digits; min exact); " +
			"sd ms: latency deviation, " + deviation + "; failed: failed requests over the runs (ab's, and requests still unanswered at the stop); err: runs that ended with an error; " +
			"rx/tx Mbit/s: bytes received/sent per second; cli, srv: gab's and the --server-pid processes' CPU per request and % of one core; " +
			"host CPU: the whole host's busy time (/proc/stat) per request. Every figure is the catalog's, as gab sweep's table has it." + flags}
}

// pointRow is the point's row of the points table, its figure columns figs.
func pointRow(d *report.SweepDocument, p *report.SweepPoint, figs []sweep.FigureColumn) []string {
	multi := p.Repeats > 1 // the runs' spread has a value (as the text table's)
	size, cv := "", sweep.RPSCell(rpsCV(p)*100, multi)
	if p.Size != nil {
		size = p.Size.Text
	}
	if unstable, _ := p.RPS["cv_above_max"].(bool); unstable {
		cv += " (unstable)"
	}
	row := []string{p.Label, size}
	if d.Settings.Param != nil {
		row = append(row, p.ParamValue)
	}
	row = append(row, strconv.Itoa(p.Concurrency), fmt.Sprintf("%d/%d", p.Repeats, p.Planned),
		sweep.RPSCell(rpsMean(p), true), sweep.RPSCell(rpsCI95(p), multi), cv, sweep.FlagCodes(p.Verdicts))
	pf := sweep.PointFigures{Figure: p.Figure, LatencyCounted: latencyCounted(p), DeviationMs: deviationMs(p), ErrorRuns: p.RunsWithError}
	for i := range figs {
		row = append(row, figs[i].Cell(pf))
	}
	host := ""
	if v, ok := hostBusy(p); ok {
		host = strconv.FormatFloat(v, 'f', 1, 64)
	}
	return append(row, host)
}

// paramMaxTable is each configuration's maximum req/s over --param's values
// (ok false: the sweep has no --param of several values).
func paramMaxTable(d *report.SweepDocument) (report.PageTable, bool) {
	q := d.Settings.Param
	if q == nil || len(q.Values) <= 1 {
		return report.PageTable{}, false
	}
	var in []sweep.ParamRow
	for i := range d.Points {
		p := &d.Points[i]
		if p.Repeats > 0 {
			mean, ci95 := rpsOf(p)
			in = append(in, sweep.ParamRow{Configuration: d.ConfigurationName(p), Value: p.ParamValue, MeanPerS: mean, CI95PerS: ci95})
		}
	}
	rows := [][]string{{"configuration", "max req/s", "± 95 % CI", "at " + q.Name, "within"}}
	for _, m := range sweep.ParamMaxima(in) {
		rows = append(rows, []string{m.Configuration, sweep.RPSCell(m.MeanPerS, true), sweep.RPSCell(m.CI95PerS, true), m.At, strings.Join(m.Within, ", ")})
	}
	return report.PageTable{Title: "Maximum req/s per configuration over " + q.Name, Rows: rows,
		Note: "Mean over the runs; within: the values of " + q.Name + " whose 95 % interval reaches the maximum's (the runs cannot tell them from it)."}, true
}

// rankingTables are the sweep's rankings, one table per point (concurrency,
// size, --param value): by req/s and by latency deviation side by side.
func rankingTables(d *report.SweepDocument, deviation string) []report.PageTable {
	var out []report.PageTable
	for _, r := range d.Rankings {
		title := "Ranking at -c " + strconv.Itoa(r.Concurrency)
		if r.Size != nil {
			title += ", size " + r.Size.Text
		}
		if r.ParamValue != "" {
			title += ", " + d.Settings.Param.Name + "=" + r.ParamValue
		}
		rows := [][]string{{"rank by req/s", "target", "req/s mean", "rank by deviation", "target", "deviation (ms)"}}
		for i := range max(len(r.ByThroughput), len(r.ByDeviation)) {
			row := make([]string, 6)
			if i < len(r.ByThroughput) {
				t := r.ByThroughput[i]
				row[0], row[1], row[2] = t.RankText()+GroupSuffix(t.Group), t.Label, sweep.RPSCell(t.RPSMeanPerS, true)
			}
			if i < len(r.ByDeviation) {
				t := r.ByDeviation[i]
				dev := t.DeviationMs
				if d.Settings.Deviation == "" { // a document of an earlier gab
					dev = t.LatencySDMs
				}
				row[3], row[4], row[5] = t.RankText()+GroupSuffix(t.Group), t.Label, fmt.Sprintf("%.3f", dev)
			}
			rows = append(rows, row)
		}
		note := "Deviation: " + deviation + ". " + d.Settings.TieRule
		if line := disturbedRanking(d, &r); line != "" {
			note += ". " + line + "."
		}
		out = append(out, report.PageTable{Title: title, Rows: rows, Note: note})
	}
	return out
}

// disturbedRanking is sweep.DisturbedRanking of r, each target's verdicts
// its point's in the document.
func disturbedRanking(d *report.SweepDocument, r *report.SweepRanking) string {
	var labels []string
	var verdicts [][]string
	for _, t := range r.ByThroughput {
		for i := range d.Points {
			p := &d.Points[i]
			if p.Label == t.Label && p.Concurrency == r.Concurrency && p.ParamValue == r.ParamValue &&
				(p.Size == nil) == (r.Size == nil) && (p.Size == nil || p.Size.Text == r.Size.Text) {
				labels, verdicts = append(labels, t.Label), append(verdicts, p.Verdicts)
				break
			}
		}
	}
	return sweep.DisturbedRanking("here", labels, verdicts)
}

// comparisonTables are the sweep's ratios to --baseline and its changes from
// the first concurrency (or size) to the last, as the table text has them
// (none where the document has none).
func comparisonTables(d *report.SweepDocument, deviation string) []report.PageTable {
	ratio := func(r *report.SweepRatio) string {
		switch {
		case r == nil:
			return ""
		case r.Lo == r.Hi:
			return strconv.FormatFloat(r.Ratio, 'f', 3, 64)
		}
		return fmt.Sprintf("%.3f [%.3f, %.3f]", r.Ratio, r.Lo, r.Hi)
	}
	size := func(s *report.SweepSize) string {
		if s == nil {
			return ""
		}
		return s.Text
	}
	point := func(param string, c int) string {
		if q := d.Settings.Param; q != nil && param != "" {
			return q.Name + "=" + param + " c=" + strconv.Itoa(c)
		}
		return "c=" + strconv.Itoa(c)
	}
	table := func(title string, cs []report.SweepComparison, change bool) report.PageTable {
		rows := [][]string{{"target", "size", "point", "req/s ×", "deviation (" + deviation + ") ×", "mean latency ×", "p99 ×"}}
		for _, c := range cs {
			sz, pt := size(c.Size), point(c.ParamValue, c.Concurrency)
			if change {
				if from := size(c.BaseSize); from != sz {
					sz = from + " → " + sz
				}
				if from := point(c.ParamValue, c.BaseConc); from != pt {
					pt = from + " → " + pt
				}
			}
			rows = append(rows, []string{c.Label, sz, pt, ratio(c.Throughput), ratio(c.Deviation), ratio(c.MeanLatency), ratio(c.P99)})
		}
		return report.PageTable{Title: title, Rows: rows,
			Note: "Ratios with their 95 % intervals (delta method, log scale); the mean and p99 latency are of every request together, without an interval, as is any ratio without repetitions on both sides."}
	}
	var out []report.PageTable
	if len(d.BaselineRatios) > 0 {
		out = append(out, table("Ratios to "+d.Settings.Baseline+" (--baseline) at the same point", d.BaselineRatios, false))
	}
	if len(d.Changes) > 0 {
		what := "the first concurrency to the last"
		if cs := d.Settings.Concurrency; len(cs) > 1 {
			what = fmt.Sprintf("c=%d to c=%d", cs[0], cs[len(cs)-1])
		} else if ss := d.Settings.Sizes; len(ss) > 1 {
			what = "size " + ss[0].Text + " to " + ss[len(ss)-1].Text
		}
		out = append(out, table("Change of each target from "+what+" (ratio last/first)", d.Changes, true))
	}
	return out
}

// GroupSuffix is a ranked target's lettered tie groups after its rank:
// " (ab)"; empty in documents from before them.
func GroupSuffix(group string) string {
	if group == "" {
		return ""
	}
	return " (" + group + ")"
}
