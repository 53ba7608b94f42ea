package sweep

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"gab/report"
)

// This file is the readable table (WriteTable): one row per point, its
// columns the point's own (label, size, runs, the spread of req/s, the
// flags, the deviation by --deviation) and the catalog figures whose
// report.SweepUse has a column head, read through the point's Group
// (figureColumn), then the rankings, ratios, changes and notes.

// tableColumn is a column of the table: its head and a point's cell.
type tableColumn struct {
	head string
	cell func(p *PointResult) string
}

// figureColumn is the table's column of c: its head, and c's cell of
// the point (FigureColumn.Cell).
func figureColumn(c FigureColumn) tableColumn {
	return tableColumn{c.Head, func(p *PointResult) string { return c.Cell(p.figures()) }}
}

// figures is what the figure columns read of the point.
func (p *PointResult) figures() PointFigures {
	return PointFigures{Figure: p.Value, LatencyCounted: p.LatencyCount > 0, DeviationMs: p.DeviationMs, ErrorRuns: p.ErrorRuns}
}

// dash is v with prec decimals, "-" where not ok.
func dash(v float64, ok bool, prec int) string {
	if !ok {
		return "-"
	}
	return f(v, prec)
}

// RPSDecimals are the digits after the point of a point's req/s (its mean,
// 95 % interval, sd and cv in %) wherever a sweep writes it: this table,
// the maxima over --param, the rankings, and the HTML page (internal/plot),
// so that the figure reads the same in each.
const RPSDecimals = 1

// RPSCell is a req/s cell: v with RPSDecimals, "-" where the spread of
// the runs has no value (ok false: fewer than two runs).
func RPSCell(v float64, ok bool) string { return dash(v, ok, RPSDecimals) }

// tableColumns are the table's columns for these points: the point's own
// (label, size, --param's value, c, runs, req/s's spread, flags), then the
// catalog's figures that have a column (report.SweepUse: its head, digits,
// place and when it is shown), the point's latency deviation and errored
// runs at their places among them, then the host's CPU where /proc/stat was
// read.
func tableColumns(s *Settings, points []*PointResult) (cols []tableColumn, anyHost bool) {
	for _, p := range points {
		anyHost = anyHost || p.HostCPU.Known
	}
	multi := func(p *PointResult) bool { return len(p.Runs) > 1 }
	cols = []tableColumn{{"label", func(p *PointResult) string { return p.Label }}, {"size", func(p *PointResult) string { return sizeText(p.Size) }}}
	if s.Param != nil {
		cols = append(cols, tableColumn{s.Param.Name, func(p *PointResult) string { return p.ParamValue }})
	}
	cols = append(cols,
		tableColumn{"c", func(p *PointResult) string { return strconv.Itoa(p.Concurrency) }},
		tableColumn{"runs", func(p *PointResult) string {
			if !p.Done() {
				return strconv.Itoa(len(p.Runs)) + "*"
			}
			return strconv.Itoa(len(p.Runs))
		}},
		tableColumn{"req/s", func(p *PointResult) string { return RPSCell(p.RPS.Mean, true) }},
		tableColumn{"±95%", func(p *PointResult) string { return RPSCell(p.RPS.CI95, multi(p)) }},
		tableColumn{"sd", func(p *PointResult) string { return RPSCell(p.RPS.SD, multi(p)) }},
		tableColumn{"cv%", func(p *PointResult) string { return RPSCell(p.RPS.CV*100, multi(p)) }},
		tableColumn{"", func(p *PointResult) string { return strings.TrimSpace(markIf(p.RPS.Unstable)) }},
		tableColumn{"flags", func(p *PointResult) string { return FlagCodes(p.Verdicts) }})
	cols = append(cols, figureColumns(s, points)...)
	if anyHost {
		for _, c := range []struct {
			head string
			v    func(h *HostCPU) float64
		}{
			{"host us/req", func(h *HostCPU) float64 { return h.BusyUsPerReq }}, {"host usr%", func(h *HostCPU) float64 { return h.UserPct }},
			{"sys%", func(h *HostCPU) float64 { return h.SystemPct }}, {"softirq%", func(h *HostCPU) float64 { return h.SoftIRQPct }},
			{"steal%", func(h *HostCPU) float64 { return h.StealPct }},
		} {
			cols = append(cols, tableColumn{c.head, func(p *PointResult) string { return dash(c.v(&p.HostCPU), p.HostCPU.Known, 1) }})
		}
	}
	return cols, anyHost
}

// FigureColumn is one of the points' figure columns, the same in the
// table and in the sweep's HTML page (internal/plot): a catalog figure
// whose report.SweepUse has a head (Key), or one of the point's own
// statistics placed among them (Key "": the latency deviation, the errored
// runs).
type FigureColumn struct {
	Head, Key string
	// Decimals are the cell's digits after the point; Latency: a figure in
	// ms, "-" at a point that recorded no request.
	Decimals int
	Latency  bool
	own      ownStat
	place    int
}

// ownStat is which statistic of the point's own a FigureColumn without a
// Key holds.
type ownStat int

const (
	ownNone ownStat = iota
	ownDeviation
	ownErrorRuns
)

// PointFigures is what the figure columns read of a point.
type PointFigures struct {
	// Figure is the point's catalog figure of that key (ok false: no run
	// has it).
	Figure func(key string) (float64, bool)
	// LatencyCounted says whether the point recorded a request's latency;
	// DeviationMs is its latency deviation by the sweep's estimator,
	// ErrorRuns its runs that ended with an error.
	LatencyCounted bool
	DeviationMs    float64
	ErrorRuns      int
}

// Cell is the column's text at point p: the figure with the column's
// decimals, "-" where no run has it or, for a latency, where no request was
// recorded.
func (c *FigureColumn) Cell(p PointFigures) string {
	switch c.own {
	case ownDeviation:
		return dash(p.DeviationMs, p.LatencyCounted, c.Decimals)
	case ownErrorRuns:
		return strconv.Itoa(p.ErrorRuns)
	}
	v, ok := p.Figure(c.Key)
	if !ok || c.Latency && !p.LatencyCounted {
		return "-"
	}
	return f(v, c.Decimals)
}

// Places of the point's own columns among the catalog's (report.SweepUse's
// Place): the latency deviation after the mean, the errored runs after the
// failed requests.
const (
	deviationPlace = 20
	errRunsPlace   = 70
)

// FigureColumns are the points' figure columns: the catalog's figures that
// have a column (report.SweepUse: shown always, where some point has the
// figure (measured), or in a --post-sizes sweep (sizeOption)), with the
// point's latency deviation and errored runs, in the order of their places
// (the catalog's order among equal places).
func FigureColumns(sizeOption string, measured func(fig *report.Figure) bool) []FigureColumn {
	cols := []FigureColumn{
		{Head: "sd ms", Decimals: 3, own: ownDeviation, place: deviationPlace},
		{Head: "err", own: ownErrorRuns, place: errRunsPlace},
	}
	for i := range report.Catalog {
		fig := &report.Catalog[i]
		u := fig.Sweep
		if u.Head == "" || !columnShown(sizeOption, measured, fig) {
			continue
		}
		cols = append(cols, FigureColumn{Head: u.Head, Key: fig.Key, Decimals: u.Decimals, Latency: fig.Unit == "ms", place: u.Place})
	}
	sort.SliceStable(cols, func(i, j int) bool { return cols[i].place < cols[j].place })
	return cols
}

// figureColumns are the table's figure columns for these points
// (FigureColumns).
func figureColumns(s *Settings, points []*PointResult) []tableColumn {
	measured := func(fig *report.Figure) bool {
		for _, p := range points {
			if _, ok := p.Figure(fig); ok {
				return true
			}
		}
		return false
	}
	var out []tableColumn
	for _, c := range FigureColumns(s.SizeOption, measured) {
		out = append(out, figureColumn(c))
	}
	return out
}

// columnShown says whether the figure's column is in the table (report.Shown).
func columnShown(sizeOption string, measured func(fig *report.Figure) bool, fig *report.Figure) bool {
	switch fig.Sweep.Shown {
	case report.ShownIfPostSizes:
		return sizeOption == "--post-sizes"
	case report.ShownIfMeasured:
		return measured(fig)
	}
	return true
}

// WriteTable writes the readable table: one row per point, then the
// rankings when there are several targets, the ratios to --baseline, the
// change from the first concurrency (or size) to the last, then the notes.
func WriteTable(w io.Writer, s *Settings, points []*PointResult, complete bool) error {
	cols, anyHost := tableColumns(s, points)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := make([]string, len(cols))
	for i, c := range cols {
		row[i] = c.head
	}
	fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	for _, p := range points {
		for i, c := range cols {
			row[i] = c.cell(p)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeParamMaxima(w, s, points); err != nil {
		return err
	}
	if err := writeRankings(w, s, points); err != nil {
		return err
	}
	if s.Baseline != "" {
		if err := writeComparisons(w, s, "Ratios to "+s.Baseline+" (--baseline) at the same point, with 95 % intervals (delta method, log scale):",
			BaselineRatios(points, s.Baseline), false); err != nil {
			return err
		}
	}
	if ch := Changes(s, points); len(ch) > 0 {
		what := fmt.Sprintf("c=%d to c=%d", s.Concurrency[0], s.Concurrency[len(s.Concurrency)-1])
		if len(s.Concurrency) == 1 {
			what = fmt.Sprintf("size %s to %s", s.Sizes[0].Text, s.Sizes[len(s.Sizes)-1].Text)
		}
		if err := writeComparisons(w, s, "Change of each target from "+what+" (ratio last/first, with 95 % intervals, delta method, log scale):", ch, true); err != nil {
			return err
		}
	}
	return writeTableNotes(w, s, points, complete, anyHost)
}

// writeTableNotes writes the notes under the table: what each column is.
func writeTableNotes(w io.Writer, s *Settings, points []*PointResult, complete, anyHost bool) error {
	fmt.Fprintf(w, "\nreq/s: mean of ab's Requests per second over the runs; ±95%%: half-width of the confidence interval (%s); sd: sample sd;\n", CIMethod)
	fmt.Fprintf(w, "%s: cv above %.0f%%, the runs disagree (not trustworthy). Latency: start to last byte over all runs' requests (min exact, p50/p99 from merged HDR histograms, 3 digits).\n", Mark, s.MaxCV*100)
	fmt.Fprintf(w, "sd ms: latency deviation, %s.\n", deviationText(s.Deviation))
	if legend := flagLegend(points); legend != "" {
		fmt.Fprintf(w, "flags: the points' verdicts (each found by a run or more; stderr and --json have the evidence): %s.\n", legend)
	}
	fmt.Fprintln(w, "failed: failed requests over the runs (ab's, and requests still unanswered at the stop that count as failed); err: runs that ended with an error (listed below). rx/tx Mbit/s: bytes received/sent (heads included) per second, mean over the runs.")
	fmt.Fprintln(w, "cli: gab's own CPU per complete request (of every run's) and % of one core (mean over runs of 1 s or more); srv: the same for the --server-pid processes (/proc, 10 ms ticks).")
	fmt.Fprintln(w, "Every figure is the catalog's of the point's runs together (gab compare and --json \"figures\" give the same).")
	if anyHost {
		fmt.Fprintln(w, "host: the whole host's busy CPU (/proc/stat: user, system, irq, softirq) per complete request, and each kind as % of all cores' time over the runs.")
	}
	if !complete {
		fmt.Fprintln(w, "INCOMPLETE: the sweep was interrupted; * marks points with fewer runs than planned or an interrupted run.")
	}
	_, err := fmt.Fprint(w)
	return err
}
