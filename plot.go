package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"gab/gnuplot"
	"gab/internal/chart"
	"gab/internal/outfile"
	"gab/internal/sweep"
	"gab/report"
)

// This file is `gab plot`: the pictures of --plot and --html drawn from saved
// JSON documents (gab --json, gab sweep --json). Several runs are overlaid,
// each labelled with its file's name or the LABEL of a LABEL=FILE argument;
// a sweep document is drawn on its own.

const plotUsage = `Usage: gab plot [-o FILE.png|FILE.svg|FILE.pdf|FILE.html] [LABEL=]RUN.json...
Draws the charts of saved gab JSON documents (gab --json FILE, gab --format json,
gab sweep --json FILE). Several runs are overlaid, labelled by file name or LABEL.
The default output is the first document's name with .png added (run.json.png);
its gnuplot script and data are kept beside it (run.json.png.gp, run.json.png.dat).
`

// plotInput is one document named on the command line.
type plotInput struct {
	label, path string
	run         *report.Run
	sweep       *sweep.Document
}

// runPlot is `gab plot ARGS...` (argv[0] is "plot"'s caller, argv[1] "plot").
func runPlot(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("gab plot", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	output := fs.StringP("output", "o", "", "")
	help := fs.BoolP("help", "h", false, "")
	fail := func(status int, format string, a ...any) int {
		// Names and messages on one line of printable text.
		fmt.Fprintf(stderr, "gab plot: %s\n", chart.Printable(fmt.Sprintf(format, a...)))
		return status
	}
	if err := fs.Parse(argv[2:]); err != nil {
		fmt.Fprintf(stderr, "gab plot: %v\n", subcommandOptionError(err)) // one line, as every option error
		return exitUsage
	}
	if *help {
		io.WriteString(stdout, plotUsage)
		return exitOK
	}
	if fs.Changed("output") && *output == "" {
		return fail(exitUsage, "-o needs a value (an empty one would leave it without effect)")
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "gab plot: no document given\n%s", plotUsage)
		return exitUsage
	}
	var inputs []plotInput
	for _, a := range fs.Args() {
		in := plotInput{path: a}
		if i := strings.IndexByte(a, '='); i > 0 {
			if _, err := os.Stat(a); err != nil { // a file may have = in its name
				in.label, in.path = a[:i], a[i+1:]
			}
		}
		if in.label == "" {
			in.label = strings.TrimSuffix(filepath.Base(in.path), filepath.Ext(in.path))
		}
		inputs = append(inputs, in)
	}
	out := *output
	if out == "" {
		// run.json.png: never run.png, which gab --plot run.png may have
		// drawn from the run itself, with more in it.
		out = inputs[0].path + ".png"
	}
	isHTML := strings.EqualFold(filepath.Ext(out), ".html") || strings.EqualFold(filepath.Ext(out), ".htm")
	if isHTML {
		if err := outfile.CheckWritable(out); err != nil {
			return fail(exitError, "%v", err)
		}
	} else if _, err := gnuplot.TerminalFor(out); err != nil {
		return fail(exitUsage, "%v (or .html)", err)
	} else if err := gnuplot.CheckImagePath(out); err != nil {
		return fail(exitError, "%v", err)
	}
	sweeps := 0
	for i := range inputs {
		if err := loadPlotInput(&inputs[i]); err != nil {
			return fail(exitError, "%v", err)
		}
		if inputs[i].sweep != nil {
			sweeps++
		}
	}
	if sweeps > 0 && len(inputs) > 1 {
		return fail(exitUsage, "a sweep document is drawn on its own, not with other documents")
	}
	title := "gab plot " + strings.Join(fs.Args(), " ")
	var err error
	switch {
	case sweeps == 1 && isHTML:
		err = writeSweepHTML(out, inputs[0].sweep)
	case sweeps == 1:
		err = drawPlot(ctx, out, sweepFigure(inputs[0].sweep))
	default:
		err = plotRuns(ctx, out, title, inputs, isHTML)
	}
	if err != nil {
		return fail(exitError, "%v", err)
	}
	return exitOK
}

// loadPlotInput reads one document and checks it as gab merge and gab
// compare do (report.DecodeDocument, sweep.DecodeDocument): its strings made
// printable, every figure consistent. Errors start with the file's name.
func loadPlotInput(in *plotInput) error {
	name := chart.Printable(in.path)
	raw, err := os.ReadFile(in.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: no such file", name)
		}
		return fmt.Errorf("%s: %s", name, chart.Printable(err.Error()))
	}
	var head struct {
		Tool          string `json:"tool"`
		Schema        string `json:"schema"`
		SchemaVersion *int   `json:"schema_version"`
	}
	if json.Unmarshal(raw, &head) != nil || head.Tool != "gab" || head.SchemaVersion == nil {
		return fmt.Errorf("%s: not a gab JSON document (gab --json FILE or gab sweep --json FILE writes one)", name)
	}
	if head.Schema == "gab-sweep" {
		in.sweep, err = sweep.DecodeDocument(in.path, raw)
		return err
	}
	in.run, err = report.DecodeDocument(in.path, raw)
	return err
}

// plotRuns draws saved runs, overlaid.
func plotRuns(ctx context.Context, out, title string, inputs []plotInput, isHTML bool) error {
	var data []*chart.Data
	var runs []report.PageRun
	for _, in := range inputs {
		d, err := report.DocumentChartData(in.run)
		if err != nil {
			return fmt.Errorf("%s: %v", in.path, err)
		}
		d.Label = in.label
		data = append(data, d)
		runs = append(runs, report.PageRun{Label: in.label, Doc: in.run, Chart: d})
	}
	fig := chart.RunFigure(title, data)
	if isHTML {
		page := &report.Page{Title: title, Runs: runs, Figure: fig}
		return outfile.WriteAtomic(out, func(w io.Writer) error { return report.WriteHTMLPage(w, page) })
	}
	return drawPlot(ctx, out, fig)
}

// drawPlot draws fig into image with gnuplot, saying how to draw it by hand
// when gnuplot is missing (a shell command line, its names quoted).
func drawPlot(ctx context.Context, image string, fig *chart.Figure) error {
	err := gnuplot.Draw(ctx, image, fig)
	if errors.Is(err, gnuplot.ErrNoGnuplot) {
		data, script := gnuplot.Companions(image)
		how := "gnuplot " + gnuplot.ShellWord(filepath.Base(script))
		if dir := filepath.Dir(script); dir != "." {
			how = "cd " + gnuplot.ShellWord(dir) + " && " + how
		}
		return fmt.Errorf("gnuplot is not on PATH: wrote %s and %s; draw %s with: %s",
			chart.Printable(script), chart.Printable(data), chart.Printable(image), how)
	}
	return err
}

// sweepSeries is one line of a sweep chart: a target (and size) across the
// concurrency levels, or across the sizes.
type sweepSeries struct {
	label  string
	points []sweep.DocPoint
}

// groupPoints groups the points by key, in the order keys first appear, each
// group sorted by x.
func groupPoints(points []sweep.DocPoint, key func(*sweep.DocPoint) string, x func(*sweep.DocPoint) float64) []sweepSeries {
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

func concurrencyOf(p *sweep.DocPoint) float64 { return float64(p.Concurrency) }
func sizeOf(p *sweep.DocPoint) float64 {
	if p.Size == nil {
		return 0
	}
	return float64(p.Size.Bytes)
}

// sweepFigure is a sweep's charts: requests per second against concurrency
// per target with the 95 % confidence interval as error bars, p50 and p99
// latency against concurrency, received bandwidth and mean latency against
// size (with several sizes), and the server's CPU per request where measured.
func sweepFigure(d *sweep.Document) *chart.Figure {
	f := &chart.Figure{Title: "gab " + strings.Join(d.CommandLine[min(1, len(d.CommandLine)):], " ")}
	sizes := len(d.Settings.Sizes) > 1
	if len(d.Settings.Concurrency) > 1 {
		f.Panels = append(f.Panels, concurrencyPanels(d, sizes)...)
	}
	if sizes {
		f.Panels = append(f.Panels, sizePanels(d)...)
	}
	if len(f.Panels) == 0 {
		// One concurrency and one size: the points side by side.
		f.Panels = append(f.Panels, targetPanel(d))
	}
	return f
}

// concurrencyPanels are the charts against concurrency, a line per target
// (and size, with several): requests per second with its confidence
// interval, p50 and p99 latency, and the server's CPU per request where
// measured.
func concurrencyPanels(d *sweep.Document, sizes bool) []chart.Panel {
	byTarget := func(p *sweep.DocPoint) string {
		if sizes && p.Size != nil {
			return p.Label + " " + p.Size.Text
		}
		return p.Label
	}
	concTics := func() []chart.Tic {
		var t []chart.Tic
		for _, c := range d.Settings.Concurrency {
			t = append(t, chart.Tic{Label: strconv.Itoa(c), At: float64(c)})
		}
		return t
	}
	logConc := len(d.Settings.Concurrency) > 2
	series := groupPoints(d.Points, byTarget, concurrencyOf)
	rps := chart.Panel{Title: fmt.Sprintf("Requests per second against concurrency (mean of %d runs; bars: 95 %% confidence interval)", d.Settings.Repeat),
		XLabel: "concurrency (-c)", YLabel: "requests per second", LogX: logConc, XTics: concTics(), YFromZero: true}
	lat := chart.Panel{Title: "Latency against concurrency (p50 and p99 of every request of every run)",
		XLabel: "concurrency (-c)", YLabel: "latency (ms)", LogX: logConc, XTics: concTics(), YFromZero: true}
	cpu := chart.Panel{Title: "Server CPU per request against concurrency (--server-pid, 10 ms ticks)",
		XLabel: "concurrency (-c)", YLabel: "server CPU per request (µs)", LogX: logConc, XTics: concTics(), YFromZero: true}
	for k, s := range series {
		l := chart.Line{Title: s.label, Style: chart.ErrorBars, Columns: []string{"concurrency", "rps_mean", "ci95_low", "ci95_high"},
			Note: "requests per second across the repetitions: mean and its 95 % confidence interval"}
		p50 := chart.Line{Title: s.label + " p50", Style: chart.Lines, Columns: []string{"concurrency", "p50_ms"}, Color: k + 1}
		p99 := chart.Line{Title: s.label + " p99", Style: chart.Lines, Columns: []string{"concurrency", "p99_ms"}, Color: k + 1, Dashed: true}
		c := chart.Line{Title: s.label, Style: chart.Lines, Columns: []string{"concurrency", "server_cpu_us_per_request"}}
		for _, p := range s.points {
			x := float64(p.Concurrency)
			l.Rows = append(l.Rows, []float64{x, p.RPS.MeanPerS, p.RPS.MeanPerS - p.RPS.CI95PerS, p.RPS.MeanPerS + p.RPS.CI95PerS})
			if p.Latency.Count > 0 {
				p50.Rows = append(p50.Rows, []float64{x, p.Latency.P50Ms})
				p99.Rows = append(p99.Rows, []float64{x, p.Latency.P99Ms})
			}
			if p.ServerCPUUsPerReq != nil {
				c.Rows = append(c.Rows, []float64{x, *p.ServerCPUUsPerReq})
			}
		}
		rps.Lines = append(rps.Lines, l)
		lat.Lines = append(lat.Lines, p50, p99)
		if len(c.Rows) > 0 {
			cpu.Lines = append(cpu.Lines, c)
		}
	}
	rps.TicRange()
	lat.TicRange()
	cpu.TicRange()
	if len(cpu.Lines) > 0 {
		return []chart.Panel{rps, lat, cpu}
	}
	return []chart.Panel{rps, lat}
}

// sizePanels are the charts against size, a line per target (and
// concurrency, with several): received bandwidth, and mean and p99 latency.
func sizePanels(d *sweep.Document) []chart.Panel {
	byConc := func(p *sweep.DocPoint) string {
		if len(d.Settings.Concurrency) > 1 {
			return p.Label + " c=" + strconv.Itoa(p.Concurrency)
		}
		return p.Label
	}
	var tics []chart.Tic
	for _, s := range d.Settings.Sizes {
		tics = append(tics, chart.Tic{Label: s.Text, At: float64(max(s.Bytes, 1))})
	}
	bw := chart.Panel{Title: "Received bandwidth against size (mean over the runs)", XLabel: "size (" + d.Settings.SizeOption + ", bytes)",
		YLabel: "received (Mbit/s)", LogX: true, XTics: tics, YFromZero: true}
	lat := chart.Panel{Title: "Latency against size (mean and p99 of every request of every run)", XLabel: "size (" + d.Settings.SizeOption + ", bytes)",
		YLabel: "latency (ms)", LogX: true, XTics: tics, YFromZero: true}
	for k, s := range groupPoints(d.Points, byConc, sizeOf) {
		b := chart.Line{Title: s.label, Style: chart.Lines, Columns: []string{"size_bytes", "received_mbit_per_s"}}
		mean := chart.Line{Title: s.label + " mean", Style: chart.Lines, Columns: []string{"size_bytes", "mean_ms"}, Color: k + 1}
		p99 := chart.Line{Title: s.label + " p99", Style: chart.Lines, Columns: []string{"size_bytes", "p99_ms"}, Color: k + 1, Dashed: true}
		for _, p := range s.points {
			x := max(sizeOf(&p), 1) // a size of 0 bytes is drawn at 1 on the log axis
			b.Rows = append(b.Rows, []float64{x, p.MbitPerS})
			if p.Latency.Count > 0 {
				mean.Rows = append(mean.Rows, []float64{x, p.Latency.MeanMs})
				p99.Rows = append(p99.Rows, []float64{x, p.Latency.P99Ms})
			}
		}
		bw.Lines = append(bw.Lines, b)
		lat.Lines = append(lat.Lines, mean, p99)
	}
	bw.TicRange()
	lat.TicRange()
	return []chart.Panel{bw, lat}
}

// targetPanel is the chart of a sweep of one concurrency and one size:
// requests per second per target, with its confidence interval.
func targetPanel(d *sweep.Document) chart.Panel {
	rps := chart.Panel{Title: fmt.Sprintf("Requests per second per target (mean of %d runs; bars: 95 %% confidence interval)", d.Settings.Repeat),
		XLabel: "target", YLabel: "requests per second", YFromZero: true}
	l := chart.Line{Style: chart.ErrorBars, Columns: []string{"target_number", "rps_mean", "ci95_low", "ci95_high"}}
	for i, p := range d.Points {
		rps.XTics = append(rps.XTics, chart.Tic{Label: p.Label, At: float64(i + 1)})
		l.Rows = append(l.Rows, []float64{float64(i + 1), p.RPS.MeanPerS, p.RPS.MeanPerS - p.RPS.CI95PerS, p.RPS.MeanPerS + p.RPS.CI95PerS})
	}
	rps.Lines = append(rps.Lines, l)
	rps.TicRange()
	return rps
}

// writeSweepHTML writes a sweep's HTML report: its charts, the points table
// and the rankings.
func writeSweepHTML(out string, d *sweep.Document) error {
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
		Figure: sweepFigure(d),
	}
	pts := [][]string{{"target", "size", "-c", "runs", "req/s mean", "± 95 % CI", "cv", "p50 (ms)", "p99 (ms)", "Mbit/s", "failed", "server CPU µs/req"}}
	for _, p := range d.Points {
		size, cpu, cv := "", "", strconv.FormatFloat(p.RPS.CV, 'f', 3, 64)
		if p.Size != nil {
			size = p.Size.Text
		}
		if p.ServerCPUUsPerReq != nil {
			cpu = strconv.FormatFloat(*p.ServerCPUUsPerReq, 'f', 1, 64)
		}
		if p.RPS.Unstable {
			cv += " (unstable)"
		}
		pts = append(pts, []string{p.Label, size, strconv.Itoa(p.Concurrency), fmt.Sprintf("%d/%d", p.Repeats, p.Planned),
			fmt.Sprintf("%.2f", p.RPS.MeanPerS), fmt.Sprintf("%.2f", p.RPS.CI95PerS), cv,
			fmt.Sprintf("%.3f", p.Latency.P50Ms), fmt.Sprintf("%.3f", p.Latency.P99Ms), fmt.Sprintf("%.2f", p.MbitPerS),
			strconv.Itoa(p.RequestsFailed), cpu})
	}
	page.Tables = append(page.Tables, report.PageTable{Title: "Points", Rows: pts,
		Note: "Requests per second across the repetitions; latency over every request of every run (HDR histogram, 3 significant digits)."})
	for _, r := range d.Rankings {
		title := "Ranking at -c " + strconv.Itoa(r.Concurrency)
		if r.Size != nil {
			title += ", size " + r.Size.Text
		}
		rows := [][]string{{"rank by req/s", "target", "req/s mean", "rank by latency sd", "target", "latency sd (ms)"}}
		for i := range max(len(r.ByThroughput), len(r.ByDeviation)) {
			row := make([]string, 6)
			if i < len(r.ByThroughput) {
				t := r.ByThroughput[i]
				row[0], row[1], row[2] = strconv.Itoa(t.Rank), t.Label, fmt.Sprintf("%.2f", t.RPSMeanPerS)
			}
			if i < len(r.ByDeviation) {
				t := r.ByDeviation[i]
				row[3], row[4], row[5] = strconv.Itoa(t.Rank), t.Label, fmt.Sprintf("%.3f", t.LatencySDMs)
			}
			rows = append(rows, row)
		}
		page.Tables = append(page.Tables, report.PageTable{Title: title, Rows: rows})
	}
	return outfile.WriteAtomic(out, func(w io.Writer) error { return report.WriteHTMLPage(w, page) })
}

// checkSweepPictures checks gab sweep's --plot and --html paths before the
// first request.
func checkSweepPictures(plot, html string) error {
	if plot != "" {
		if err := gnuplot.CheckImagePath(plot); err != nil {
			return pictureError("--plot ", err)
		}
	}
	if html != "" {
		if err := outfile.CheckWritable(html); err != nil {
			return pictureError("--html ", err)
		}
	}
	return nil
}

// sweepPictures draws a finished (or interrupted) sweep's --plot and --html.
func sweepPictures(ctx context.Context, plot, html string, d *sweep.Document) error {
	if plot != "" {
		if err := drawPlot(context.WithoutCancel(ctx), plot, sweepFigure(d)); err != nil {
			return pictureError("--plot: ", err)
		}
	}
	if html != "" {
		if err := writeSweepHTML(html, d); err != nil {
			return pictureError("--html: ", err)
		}
	}
	return nil
}
