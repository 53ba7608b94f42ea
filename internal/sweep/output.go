package sweep

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gab/internal/printable"
	"gab/report"
)

func docRatio(r Ratio) *report.SweepRatio {
	if !r.Known {
		return nil
	}
	return &report.SweepRatio{Ratio: r.Value, Lo: r.Lo, Hi: r.Hi}
}

func docComparisons(cs []Comparison) []report.SweepComparison {
	var out []report.SweepComparison
	for _, c := range cs {
		out = append(out, report.SweepComparison{Label: c.Point.Label, Size: docSize(c.Point.Size), ParamValue: c.Point.ParamValue,
			Concurrency: c.Point.Concurrency, BaseLabel: c.Base.Label, BaseSize: docSize(c.Base.Size), BaseConc: c.Base.Concurrency,
			Throughput: docRatio(c.Throughput), Deviation: docRatio(c.Deviation), MeanLatency: docRatio(c.MeanLatency), P99: docRatio(c.P99)})
	}
	return out
}

// Meta is what the document needs beyond the results.
type Meta struct {
	CommandLine []string
	Start, End  time.Time
	Complete    bool
	Machine     report.SweepMachine
}

func docSize(s *Size) *report.SweepSize {
	if s == nil {
		return nil
	}
	return &report.SweepSize{Text: s.Text, Bytes: s.Bytes}
}

func optional(v float64, known bool) *float64 {
	if !known {
		return nil
	}
	return &v
}

// NewDocument builds the sweep document.
func NewDocument(s *Settings, points []*PointResult, m Meta) *report.SweepDocument {
	d := &report.SweepDocument{
		Schema: "gab-sweep", SchemaVersion: report.SweepSchemaVersion, Tool: "gab",
		CommandLine: m.CommandLine,
		StartTime:   m.Start.UTC().Format(time.RFC3339Nano),
		EndTime:     m.End.UTC().Format(time.RFC3339Nano),
		Complete:    m.Complete,
		Machine:     m.Machine,
		Settings: report.SweepSettings{
			Concurrency: s.Concurrency, SizeOption: s.SizeOption, Sizes: []report.SweepSize{},
			Repeat: s.Repeat, RepeatAuto: s.Auto, CI: s.CI, PauseS: s.Pause.Seconds(), MaxCV: s.MaxCV, CIMethod: CIMethod,
			Before: s.Before, Order: s.Order, Seed: s.Seed, RequestsPerConn: s.RequestsPerConn, RampS: s.Ramp.Seconds(),
			Deviation: s.Deviation, TieRule: TieRule, Baseline: s.Baseline,
		},
		Points:   []report.SweepPoint{},
		Rankings: []report.SweepRanking{},
	}
	if d.CommandLine == nil {
		d.CommandLine = []string{}
	}
	for _, t := range s.Targets {
		d.Settings.Targets = append(d.Settings.Targets, report.SweepTarget{Label: t.Label, URL: t.URL, ServerPIDs: s.ServerPIDs[t.Label]})
	}
	if s.Param != nil {
		d.Settings.Param = &report.SweepParam{Name: s.Param.Name, Values: s.Param.Values}
	}
	for i := range s.Sizes {
		d.Settings.Sizes = append(d.Settings.Sizes, *docSize(&s.Sizes[i]))
	}
	for _, p := range points {
		d.Points = append(d.Points, docPoint(p))
	}
	for _, r := range Rankings(points) {
		dr := report.SweepRanking{Size: docSize(r.Size), ParamValue: r.ParamValue, Concurrency: r.Concurrency}
		for _, p := range r.ByThroughput {
			dr.ByThroughput = append(dr.ByThroughput, rankedPoint(p))
		}
		for _, p := range r.ByDeviation {
			dr.ByDeviation = append(dr.ByDeviation, rankedPoint(p))
		}
		d.Rankings = append(d.Rankings, dr)
	}
	if s.Baseline != "" {
		d.BaselineRatios = docComparisons(BaselineRatios(points, s.Baseline))
	}
	d.Changes = docComparisons(Changes(s, points))
	return d
}

// docPoint is a point of the document: its identity, its figures, the
// fixed figure fields schema version 2 still writes, and every run.
func docPoint(p *PointResult) report.SweepPoint {
	// The fixed figure fields (written for schema version 2 only), each
	// the same value as its catalog figure in "figures".
	dp := report.SweepPoint{
		Label: p.Label, URL: p.URL, Size: docSize(p.Size), ParamValue: p.ParamValue, Concurrency: p.Concurrency,
		Repeats: len(p.Runs), Planned: p.Planned, Complete: p.Done(),
		RPS:               fixedObject(p, report.SweepRPS),
		Latency:           fixedObject(p, report.SweepLatency),
		HostCPU:           fixedObject(p, report.SweepHostCPU),
		RequestsComplete:  p.Complete, // ab's counts, as the fixed fields are written
		RequestsFailed:    p.Failed,
		RunsWithError:     p.ErrorRuns,
		MbitPerS:          fixedFloat(p, "received_mbit_per_s"),
		SentMbitPerS:      fixedFloat(p, "sent_mbit_per_s"),
		ClientCPUPercent:  fixedOptional(p, "client_cpu_percent_of_one_core"),
		ClientCPUUsPerReq: fixedOptional(p, "client_cpu_us_per_request"),
		ServerCPUUsPerReq: fixedOptional(p, "server_cpu_us_per_request"),
		ServerCPUPercent:  fixedOptional(p, "server_cpu_percent_of_one_core"),
		Figures:           pointFigures(p),
		Verdicts:          p.Verdicts,
		StoppedAtMax:      p.StoppedAtMax,
		Runs:              []report.SweepRun{},
	}
	for _, r := range p.Runs {
		dp.Runs = append(dp.Runs, report.SweepRun{
			Repetition: r.Rep + 1, Order: r.Order + 1, URL: r.URL, Ending: r.Ending, Error: r.Error,
			RequestsPerSecond: r.RPS,
			ClientCPUMs:       optional(float64(r.ClientCPU.Microseconds())/1000, r.ClientCPUKnown),
			ServerCPUMs:       optional(float64(r.ServerCPU.Microseconds())/1000, r.ServerCPUKnown),
			Document:          r.Document,
		})
	}
	return dp
}

func rankedPoint(r Ranked) report.SweepRankedPoint {
	sd, _ := r.Value("sd")
	return report.SweepRankedPoint{Rank: r.Rank, RankRange: []int{r.Rank, r.RankHi}, RankRangeLoose: r.Loose, Tied: r.Tied, Group: r.Group, DeviationMs: r.DeviationMs, Label: r.Label, RPSMeanPerS: r.RPS.Mean,
		LatencySDMs: sd, RequestsCounted: r.LatencyCount}
}

// WriteJSON writes the document, indented, with a final newline.
func WriteJSON(w io.Writer, d *report.SweepDocument) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}

// csvLayout are the --csv columns of the first sweep versions, in their
// order: a point's own (pointColumns) and the catalog's figures by their CSV
// name. The catalog's other figures follow them (CSVHeader).
var csvLayout = []string{"label", "url", "size", "size_bytes", "concurrency", "repeats", "complete_point",
	"rps_mean", "rps_sd", "rps_min", "rps_max", "rps_ci95", "rps_cv", "cv_above_max",
	"latency_mean_ms", "latency_sd_ms", "p50_ms", "p99_ms", "complete", "failed", "error_runs", "mbit_s", "sent_mbit_s",
	"client_cpu_pct", "client_cpu_us_per_req", "server_cpu_us_per_req", "server_cpu_pct"}

// csvExtra are the point's columns after csvLayout's, before the catalog's
// other figures: the
// --param value, the latency deviation by the sweep's estimator, and the
// whole host's CPU (empty where not measured).
var csvExtra = []string{"param", "deviation_ms", "host_busy_us_per_req", "host_user_pct", "host_system_pct", "host_softirq_pct", "host_steal_pct"}

// csvVerdicts are the point's verdicts, after csvExtra: their codes as the
// table's flags column has them, and their kinds (the JSON's "verdicts"),
// space-separated.
var csvVerdicts = []string{"flags", "verdicts"}

// hostColumn is a host CPU column: empty where /proc/stat was not read.
func hostColumn(v func(*HostCPU) float64) func(p *PointResult) string {
	return func(p *PointResult) string {
		if !p.HostCPU.Known {
			return ""
		}
		return f(v(&p.HostCPU), 1)
	}
}

// pointColumns are the CSV columns that are not figures of a run: the
// point's settings and the spread of requests per second across its runs
// (empty for fewer than two runs, where it has none).
var pointColumns = map[string]func(p *PointResult) string{
	"label": func(p *PointResult) string { return p.Label },
	"url":   func(p *PointResult) string { return p.URL },
	"size": func(p *PointResult) string {
		if p.Size == nil {
			return ""
		}
		return p.Size.Text
	},
	"size_bytes": func(p *PointResult) string {
		if p.Size == nil {
			return ""
		}
		return strconv.FormatInt(p.Size.Bytes, 10)
	},
	"concurrency":    func(p *PointResult) string { return strconv.Itoa(p.Concurrency) },
	"repeats":        func(p *PointResult) string { return strconv.Itoa(len(p.Runs)) },
	"complete_point": func(p *PointResult) string { return strconv.FormatBool(p.Done()) },
	// rps_mean is the mean the other rps_ columns describe (p.RPS: every
	// run, one that measured nothing at 0 req/s, as the table's req/s).
	"rps_mean":     func(p *PointResult) string { return f(p.RPS.Mean, 2) },
	"rps_sd":       func(p *PointResult) string { return multi(p, p.RPS.SD, 2) },
	"rps_min":      func(p *PointResult) string { return f(p.RPS.Min, 2) },
	"rps_max":      func(p *PointResult) string { return f(p.RPS.Max, 2) },
	"rps_ci95":     func(p *PointResult) string { return multi(p, p.RPS.CI95, 2) },
	"rps_cv":       func(p *PointResult) string { return multi(p, p.RPS.CV, 4) },
	"cv_above_max": func(p *PointResult) string { return strconv.FormatBool(p.RPS.Unstable) },
	"error_runs":   func(p *PointResult) string { return strconv.Itoa(p.ErrorRuns) },
	"param":        func(p *PointResult) string { return p.ParamValue },
	"flags":        func(p *PointResult) string { return FlagCodes(p.Verdicts) },
	"verdicts":     func(p *PointResult) string { return strings.Join(p.Verdicts, " ") },
	"deviation_ms": func(p *PointResult) string {
		if p.LatencyCount == 0 {
			return ""
		}
		return f(p.DeviationMs, 3)
	},
	"host_busy_us_per_req": hostColumn(func(h *HostCPU) float64 { return h.BusyUsPerReq }),
	"host_user_pct":        hostColumn(func(h *HostCPU) float64 { return h.UserPct }),
	"host_system_pct":      hostColumn(func(h *HostCPU) float64 { return h.SystemPct }),
	"host_softirq_pct":     hostColumn(func(h *HostCPU) float64 { return h.SoftIRQPct }),
	"host_steal_pct":       hostColumn(func(h *HostCPU) float64 { return h.StealPct }),
}

// multi is a spread statistic, empty for fewer than two runs.
func multi(p *PointResult, v float64, prec int) string {
	if len(p.Runs) < 2 {
		return ""
	}
	return f(v, prec)
}

// CSVHeader are the --csv columns: csvLayout, csvExtra, csvVerdicts,
// csvRank, then the catalog's other figures by their CSV name.
func CSVHeader() []string {
	out := append(append(append(append([]string(nil), csvLayout...), csvExtra...), csvVerdicts...), csvRank...)
	for _, fig := range report.Catalog {
		if !slices.Contains(csvLayout, fig.CSV) {
			out = append(out, fig.CSV)
		}
	}
	return out
}

// csvRank are a point's places in its size's, --param value's and
// concurrency's rankings (TieRule), after csvExtra: the rank, the top of its
// rank range and its lettered groups, by req/s and by deviation; empty for
// a point ranked with no other target.
var csvRank = []string{"rank_rps", "rank_rps_hi", "rank_rps_group", "rank_deviation", "rank_deviation_hi", "rank_deviation_group"}

// rankColumns are csvRank's values of each ranked point.
func rankColumns(points []*PointResult) map[*PointResult][]string {
	out := map[*PointResult][]string{}
	for _, r := range Rankings(points) {
		for _, p := range r.ByThroughput {
			out[p.PointResult] = append(make([]string, 0, len(csvRank)), strconv.Itoa(p.Rank), strconv.Itoa(p.RankHi), p.Group)
		}
		for _, p := range r.ByDeviation {
			out[p.PointResult] = append(out[p.PointResult], strconv.Itoa(p.Rank), strconv.Itoa(p.RankHi), p.Group)
		}
	}
	return out
}

// csvFigure is the catalog's figure of that CSV name.
func csvFigure(name string) *report.Figure {
	for i := range report.Catalog {
		if report.Catalog[i].CSV == name {
			return &report.Catalog[i]
		}
	}
	return nil
}

// WriteCSV writes one row per point; a figure that was not measured is empty.
func WriteCSV(w io.Writer, points []*PointResult) error {
	cw := csv.NewWriter(w)
	header := CSVHeader()
	if err := cw.Write(header); err != nil {
		return err
	}
	ranks := rankColumns(points)
	for _, p := range points {
		row := make([]string, len(header))
		for i, name := range header {
			if k := slices.Index(csvRank, name); k >= 0 {
				if r := ranks[p]; r != nil {
					row[i] = r[k]
				}
			} else if col := pointColumns[name]; col != nil {
				row[i] = col(p)
			} else if fig := csvFigure(name); fig != nil {
				if v, ok := p.Figure(fig); ok {
					row[i] = fig.Format(v)
				}
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// pointFigures are the point's catalog figures (report.SweepPoint's "figures").
func pointFigures(p *PointResult) report.FigureValues {
	if p.Group == nil {
		return nil
	}
	return p.Group.Figures()
}

func f(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// Mark is the table's sign for a point whose CV is above the threshold.
const Mark = "!"

// sizeText is a size column's text ("-" without a size list).
func sizeText(s *Size) string {
	if s == nil {
		return "-"
	}
	return s.Text
}

// PointLine is the one-line summary printed on stderr as a point finishes.
func PointLine(p *PointResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s size=%s c=%d: %.1f req/s", p.Label, sizeText(p.Size), p.Concurrency, p.RPS.Mean)
	if len(p.Runs) > 1 {
		fmt.Fprintf(&b, " ±%.1f (95%% CI, n=%d, cv %.1f%%%s)", p.RPS.CI95, len(p.Runs), p.RPS.CV*100, markIf(p.RPS.Unstable))
	}
	if p.LatencyCount > 0 {
		// sd: the deviation by the sweep's estimator, as the table prints it
		mean, _ := p.Value("mean")
		p99, _ := p.Value("p99")
		fmt.Fprintf(&b, ", latency %.3f ms sd %.3f p99 %.3f", mean, p.DeviationMs, p99)
	}
	failed, ok := p.Value("failed") // the table's: ab's, and the unanswered that count as failed
	if !ok {
		failed = float64(p.Failed)
	}
	fmt.Fprintf(&b, ", %.0f failed", failed)
	if p.ErrorRuns > 0 {
		fmt.Fprintf(&b, ", %d of %d runs ended with an error", p.ErrorRuns, len(p.Runs))
	}
	if v, ok := p.Value("server_cpu_us_per_request"); ok {
		fmt.Fprintf(&b, ", server %.1f us/req", v)
	}
	for _, r := range p.Runs {
		if r.Error != "" {
			fmt.Fprintf(&b, " [%s]", r.Error)
			break
		}
	}
	return b.String()
}

func markIf(b bool) string {
	if b {
		return " " + Mark
	}
	return ""
}

// flagLegend is the legend of the points' flags ("" when none has one).
func flagLegend(points []*PointResult) string {
	var kinds [][]string
	for _, p := range points {
		kinds = append(kinds, p.Verdicts)
	}
	return FlagLegend(kinds)
}

// deviationText names the deviation estimator.
func deviationText(estimator string) string {
	if estimator == DeviationMeanOfRuns {
		return "mean-of-runs (the mean of the runs' own latency sds, JMeter's)"
	}
	return "pooled (the sd of every request of every run together)"
}

// pointName is a ranking's or comparison's point: its size, --param value
// and concurrency.
func pointName(s *Settings, size *Size, param string, c int) (string, string) {
	q := ""
	if s.Param != nil {
		q = s.Param.Name + "=" + param + " "
	}
	return sizeText(size), q + "c=" + strconv.Itoa(c)
}

func writeRankings(w io.Writer, s *Settings, points []*PointResult) error {
	rs := Rankings(points)
	if len(rs) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nRanking (1 = best): by mean req/s (highest first) and by latency deviation, %s (lowest first);\n%s\n", s.Deviation, TieRule)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tpoint\trank\tgroup\tby req/s\treq/s\trank\tgroup\tby deviation\tsd ms\t")
	for _, r := range rs {
		for i := range r.ByThroughput {
			size, pt := "", ""
			if i == 0 {
				size, pt = pointName(s, r.Size, r.ParamValue, r.Concurrency)
			}
			a, b := r.ByThroughput[i], r.ByDeviation[i]
			sd := "-"
			if b.LatencyCount > 0 {
				sd = f(b.DeviationMs, 3)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", size, pt, RankText(a.Rank, a.RankHi, a.Tied)+LooseMark(a.Loose), a.Group, a.Label, RPSCell(a.RPS.Mean, true),
				RankText(b.Rank, b.RankHi, b.Tied)+LooseMark(b.Loose), b.Group, b.Label, sd)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rs {
		if line := disturbedRanking(s, r); line != "" {
			fmt.Fprintln(w, line)
		}
	}
	return nil
}

// disturbingFlags are the verdicts that say a point's runs were disturbed
// (by the machine, the client or each other): a rank among such points says
// what this machine measured, not what the targets are.
var disturbingFlags = []string{"busy_machine", "client_bound", "kernel_drops", VerdictWideInterval}

// disturbedRanking is the line that says a ranking cannot be trusted
// because targets in it carry disturbing flags ("": none does).
func disturbedRanking(s *Settings, r Ranking) string {
	labels, verdicts := make([]string, len(r.ByThroughput)), make([][]string, len(r.ByThroughput))
	for i, p := range r.ByThroughput {
		labels[i], verdicts[i] = p.Label, p.Verdicts
	}
	size, pt := pointName(s, r.Size, r.ParamValue, r.Concurrency)
	if size != "-" {
		pt = size + " " + pt
	}
	return DisturbedRanking("at "+pt, labels, verdicts)
}

// DisturbedRanking says that a ranking (where: "at c=2") cannot be trusted,
// naming the targets (labels, each with its point's verdicts) that carry
// flags of a disturbed measure; "" when none does. The text table and the
// HTML page both write it.
func DisturbedRanking(where string, labels []string, verdicts [][]string) string {
	var which []string
	for i, l := range labels {
		var kinds []string
		for _, v := range verdicts[i] {
			if slices.Contains(disturbingFlags, v) {
				kinds = append(kinds, v)
			}
		}
		if len(kinds) > 0 {
			which = append(which, printable.String(l)+" "+FlagCodes(kinds))
		}
	}
	if len(which) == 0 {
		return ""
	}
	return "Not trustworthy " + where + ": " + strings.Join(which, ", ") +
		" carry flags of a disturbed measure; a rank or tie there may not hold on a quiet machine"
}

// ratioText is a ratio with its interval: "1.23 [1.10, 1.36]".
func ratioText(r Ratio) string {
	if !r.Known {
		return "-"
	}
	if r.Lo == r.Hi {
		return f(r.Value, 3)
	}
	return fmt.Sprintf("%s [%s, %s]", f(r.Value, 3), f(r.Lo, 3), f(r.Hi, 3))
}

func writeComparisons(w io.Writer, s *Settings, title string, cs []Comparison, change bool) error {
	if len(cs) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "label\tsize\tpoint\treq/s ×\tdeviation (%s) ×\tmean lat ×\tp99 ×\t\n", s.Deviation)
	for _, c := range cs {
		p := c.Point
		size, pt := pointName(s, p.Size, p.ParamValue, p.Concurrency)
		if change {
			from, fromPt := pointName(s, c.Base.Size, c.Base.ParamValue, c.Base.Concurrency)
			if from != size {
				size = from + "→" + size
			}
			if fromPt != pt {
				pt = fromPt + "→" + pt
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.Label, size, pt,
			ratioText(c.Throughput), ratioText(c.Deviation), ratioText(c.MeanLatency), ratioText(c.P99))
	}
	return tw.Flush()
}
