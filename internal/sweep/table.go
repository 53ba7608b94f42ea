package sweep

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// This file is the readable table (WriteTable): one row per point, its
// columns the point's own (label, size, runs, the spread of req/s, the
// flags, the deviation by --deviation) and catalog figures read through the
// point's Group (figureColumn: any catalog key is a column), then the
// rankings, ratios, changes and notes.

// tableColumn is a column of the table: its head and a point's cell.
type tableColumn struct {
	head string
	cell func(p *PointResult) string
}

// figureColumn is the column of the catalog figure of that key, with prec
// decimals: the point's value by the figure's Pool rule (PointResult.Value),
// "-" where no run has it, or, for a latency, where no request was
// recorded.
func figureColumn(head, key string, prec int, latency bool) tableColumn {
	return tableColumn{head, func(p *PointResult) string {
		v, ok := p.Value(key)
		if !ok || latency && p.LatencyCount == 0 {
			return "-"
		}
		return f(v, prec)
	}}
}

// dash is v with prec decimals, "-" where not ok.
func dash(v float64, ok bool, prec int) string {
	if !ok {
		return "-"
	}
	return f(v, prec)
}

// tableColumns are the table's columns for these points: --post-sizes
// adds what was sent, --server-pid the server's CPU, a host whose
// /proc/stat was read its CPU.
func tableColumns(s *Settings, points []*PointResult) (cols []tableColumn, anyHost bool) {
	anyServer := false
	for _, p := range points {
		_, srv := p.Value("server_cpu_us_per_request")
		anyServer = anyServer || srv
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
		tableColumn{"req/s", func(p *PointResult) string { return f(p.RPS.Mean, 1) }},
		tableColumn{"±95%", func(p *PointResult) string { return dash(p.RPS.CI95, multi(p), 1) }},
		tableColumn{"sd", func(p *PointResult) string { return dash(p.RPS.SD, multi(p), 1) }},
		tableColumn{"cv%", func(p *PointResult) string { return dash(p.RPS.CV*100, multi(p), 1) }},
		tableColumn{"", func(p *PointResult) string { return strings.TrimSpace(markIf(p.RPS.Unstable)) }},
		tableColumn{"flags", func(p *PointResult) string { return FlagCodes(p.Verdicts) }},
		figureColumn("lat ms", "mean", 3, true),
		tableColumn{"sd ms", func(p *PointResult) string { return dash(p.DeviationMs, p.LatencyCount > 0, 3) }},
		figureColumn("min ms", "min", 3, true), figureColumn("p50 ms", "p50", 3, true), figureColumn("p99 ms", "p99", 3, true),
		figureColumn("failed", "failed", 0, false),
		tableColumn{"err", func(p *PointResult) string { return strconv.Itoa(p.ErrorRuns) }},
		figureColumn("rx Mbit/s", "received_mbit_per_s", 2, false))
	if s.SizeOption == "--post-sizes" {
		cols = append(cols, figureColumn("tx Mbit/s", "sent_mbit_per_s", 2, false))
	}
	cols = append(cols, figureColumn("cli us/req", "client_cpu_us_per_request", 1, false), figureColumn("cli cpu%", "client_cpu_percent", 1, false))
	if anyServer {
		cols = append(cols, figureColumn("srv us/req", "server_cpu_us_per_request", 1, false), figureColumn("srv cpu%", "server_cpu_percent", 1, false))
	}
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
