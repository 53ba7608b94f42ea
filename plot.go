package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"gab/gnuplot"
	"gab/internal/capacity"
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
gab sweep --json FILE). Several runs are overlaid, labelled by file name or LABEL;
several sweeps are configurations of one study (nic=A.json toe=B.json), each
target drawn as LABEL:target.
The default output is the first document's name with .png added (run.json.png);
its gnuplot script and data are kept beside it (run.json.png.gp, run.json.png.dat).
`

// plotInput is one document named on the command line.
type plotInput struct {
	label, path string
	run         *report.Run
	sweep       *sweep.Document
	capacity    *capacity.Document
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
	if done, err := plotCapacities(ctx, out, isHTML, inputs); done {
		if err != nil {
			return fail(exitError, "%v", err)
		}
		return exitOK
	}
	if sweeps > 0 && sweeps < len(inputs) {
		return fail(exitUsage, "a sweep document is drawn with other sweeps (as configurations), not with runs")
	}
	if sweeps > 1 {
		combined, err := sweepConfigurations(inputs)
		if err != nil {
			return fail(exitUsage, "%v", err)
		}
		inputs, sweeps = []plotInput{{label: "configurations", sweep: combined}}, 1
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

// sweepConfigurations joins several sweeps, each a configuration of one
// study, into one document: every target becomes LABEL:target (LABEL the
// input's), the lists are the union of the sweeps' (sizes by bytes), and
// where the sweeps' size options differ each point's bandwidth is the one
// that grows with its size (received for --sizes, sent for --post-sizes).
// The rankings are each sweep's own and are left out.
func sweepConfigurations(inputs []plotInput) (*sweep.Document, error) {
	first := inputs[0].sweep
	d := &sweep.Document{Schema: first.Schema, SchemaVersion: first.SchemaVersion, Tool: first.Tool,
		StartTime: first.StartTime, EndTime: first.EndTime, Complete: true, Machine: first.Machine}
	d.Settings = first.Settings
	d.Settings.Targets, d.Settings.Sizes, d.Settings.Concurrency = nil, nil, nil
	seenLabel, seenSize, seenConc := map[string]bool{}, map[int64]bool{}, map[int]bool{}
	mixed := false
	for _, in := range inputs {
		if seenLabel[in.label] {
			return nil, fmt.Errorf("two sweeps are labelled %q: give them LABEL=FILE", in.label)
		}
		seenLabel[in.label] = true
		sw := in.sweep
		d.CommandLine = append(d.CommandLine, in.label+"="+in.path)
		d.Complete = d.Complete && sw.Complete
		mixed = mixed || sw.Settings.SizeOption != first.Settings.SizeOption
		if sw.Settings.Repeat != first.Settings.Repeat {
			d.Settings.Repeat = min(d.Settings.Repeat, sw.Settings.Repeat)
		}
		if q := sw.Settings.Param; q == nil || first.Settings.Param == nil || q.Name != first.Settings.Param.Name {
			d.Settings.Param = nil
		}
		for _, t := range sw.Settings.Targets {
			t.Label = in.label + ":" + t.Label
			d.Settings.Targets = append(d.Settings.Targets, t)
		}
		for _, sz := range sw.Settings.Sizes {
			if !seenSize[sz.Bytes] {
				seenSize[sz.Bytes] = true
				d.Settings.Sizes = append(d.Settings.Sizes, sz)
			}
		}
		for _, c := range sw.Settings.Concurrency {
			if !seenConc[c] {
				seenConc[c] = true
				d.Settings.Concurrency = append(d.Settings.Concurrency, c)
			}
		}
		for _, p := range sw.Points {
			p.Label = in.label + ":" + p.Label
			if sw.Settings.SizeOption == "--post-sizes" {
				p.MbitPerS = p.SentMbitPerS
			}
			d.Points = append(d.Points, p)
		}
	}
	if len(d.Settings.Targets) > sweep.MaxListLength {
		return nil, fmt.Errorf("%d targets in the sweeps together, at most %d", len(d.Settings.Targets), sweep.MaxListLength)
	}
	sort.SliceStable(d.Settings.Sizes, func(i, j int) bool { return d.Settings.Sizes[i].Bytes < d.Settings.Sizes[j].Bytes })
	sort.Ints(d.Settings.Concurrency)
	if mixed {
		d.Settings.SizeOption = sizeOptionMixed
	} else if d.Settings.SizeOption == "--post-sizes" {
		for i := range d.Points {
			d.Points[i].MbitPerS = d.Points[i].SentMbitPerS // as a --post-sizes sweep's own chart
		}
		d.Settings.SizeOption = sizeOptionMixed
	}
	if d.Settings.Param == nil {
		for i := range d.Points {
			d.Points[i].ParamValue = ""
		}
	}
	d.Rankings = nil
	return d, nil
}

// sizeOptionMixed is the size option of configurations whose sweeps' size
// options differ (or are all --post-sizes): each point's bandwidth is then
// already the direction that grows.
const sizeOptionMixed = "--sizes or --post-sizes"

// loadPlotInput reads one document and checks it as gab merge and gab
// compare do (report.DecodeDocument, sweep.DecodeDocument): its strings made
// printable, every figure consistent. Errors start with the file's name.
func loadPlotInput(in *plotInput) error {
	name := chart.Printable(in.path)
	raw, err := readDocumentFile(in.path, true)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: no such file", name)
		}
		if _, ok := err.(*os.PathError); !ok {
			return err // it names the file already (a file over the bound)
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
	if head.Schema == capacity.Schema {
		if in.capacity, err = capacity.Decode(raw); err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		return nil
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

// maxBarGroups is the most sizes (times --param values) that get bar
// charts of their own; past it the charts against size compare the targets.
const maxBarGroups = 4

// sweepFigure is a sweep's charts, chosen from what it varied: with several
// targets and at most maxBarGroups sizes (times --param values), per size
// (and --param value) the targets side by side as bars of
// requests per second with their 95 % whiskers and of latency deviation, one
// bar per concurrency (the server studies' figures); against concurrency,
// requests per second with its interval and p50/p99 latency, and the
// server's CPU per request; against size, bandwidth in the direction that
// grows (sent for --post-sizes, whiskers: its 95 % interval), min and p50
// latency and CPU per request (client, server, whole host); against
// --param's values, requests per second, p50 latency, bandwidth (with
// whiskers) and CPU per request.
func sweepFigure(d *sweep.Document) *chart.Figure {
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
		f.Panels = append(f.Panels, concurrencyPanels(d, sizes)...)
	}
	if sizes {
		f.Panels = append(f.Panels, sizePanels(d)...)
	}
	if d.Settings.Param != nil && len(d.Settings.Param.Values) > 1 {
		f.Panels = append(f.Panels, paramPanels(d)...)
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
func sweepTitle(d *sweep.Document) string {
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
func sweepDataNote(d *sweep.Document) string {
	return "command line: " + strings.Join(d.CommandLine, " ")
}

// barPanels are the server studies' figures: per size and --param value,
// the targets side by side, one bar per concurrency, of requests per second
// (whiskers: its 95 % interval) and of latency deviation (by the sweep's
// estimator; whiskers: the 95 % interval of the runs' own sds). Whiskers
// below zero stop at zero.
func barPanels(d *sweep.Document) []chart.Panel {
	type key struct{ size, param string }
	var keys []key
	groups := map[key][]sweep.DocPoint{}
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
			bars[i].Rows = append(bars[i].Rows, []float64{x, p.RPS.MeanPerS, width})
			lo := max(p.RPS.MeanPerS-p.RPS.CI95PerS, 0)
			whiskers = append(whiskers, chart.Line{Style: chart.ErrorBars, Color: i + 1, Columns: []string{"target_number", "rps_mean", "ci95_low", "ci95_high"},
				Rows: [][]float64{{x, p.RPS.MeanPerS, lo, p.RPS.MeanPerS + p.RPS.CI95PerS}}})
			if p.Latency.Count > 0 {
				iv := sweep.IntervalOf(p.Latency.RunSDsMs)
				slo, shi, shift := iv.Lo, iv.Hi, p.Latency.DeviationMs-iv.Mean
				devBars[i].Rows = append(devBars[i].Rows, []float64{x, p.Latency.DeviationMs, width})
				if len(p.Latency.RunSDsMs) > 1 {
					devWhiskers = append(devWhiskers, chart.Line{Style: chart.ErrorBars, Color: i + 1, Columns: []string{"target_number", "deviation_ms", "ci95_low", "ci95_high"},
						Rows: [][]float64{{x, p.Latency.DeviationMs, max(slo+shift, 0), shi + shift}}})
				}
			}
		}
		rps.Lines = append(bars, whiskers...)
		dev.Lines = append(devBars, devWhiskers...)
		barX := func(p *sweep.DocPoint) float64 {
			return float64(target[p.Label]+1) - 0.4 + width*(float64(conc[p.Concurrency])+0.5)
		}
		addFlags(&rps, groups[k], func(p *sweep.DocPoint) (float64, float64, bool) { return barX(p), p.RPS.MeanPerS, true })
		addFlags(&dev, groups[k], func(p *sweep.DocPoint) (float64, float64, bool) {
			return barX(p), p.Latency.DeviationMs, p.Latency.Count > 0
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
func concurrencyPanels(d *sweep.Document, sizes bool) []chart.Panel {
	byTarget := func(p *sweep.DocPoint) string {
		l := p.Label
		if sizes && p.Size != nil {
			l += " " + p.Size.Text
		}
		if p.ParamValue != "" {
			l += " " + d.Settings.Param.Name + "=" + p.ParamValue
		}
		return l
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
			l.Rows = append(l.Rows, []float64{x, p.RPS.MeanPerS, max(p.RPS.MeanPerS-p.RPS.CI95PerS, 0), p.RPS.MeanPerS + p.RPS.CI95PerS})
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
	addFlags(&rps, d.Points, func(p *sweep.DocPoint) (float64, float64, bool) { return concurrencyOf(p), p.RPS.MeanPerS, true })
	addFlags(&lat, d.Points, func(p *sweep.DocPoint) (float64, float64, bool) {
		return concurrencyOf(p), p.Latency.P50Ms, p.Latency.Count > 0
	})
	if len(cpu.Lines) > 0 {
		addFlags(&cpu, d.Points, func(p *sweep.DocPoint) (float64, float64, bool) {
			if p.ServerCPUUsPerReq == nil {
				return 0, 0, false
			}
			return concurrencyOf(p), *p.ServerCPUUsPerReq, true
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

// sizePanels are the charts against size, a line per target (and
// concurrency, with several): bandwidth in the direction that grows with
// the size (received for --sizes, sent for --post-sizes), min and p50
// latency, and CPU per request: the client's, the --server-pid processes'
// and the whole host's (each where measured).
func sizePanels(d *sweep.Document) []chart.Panel {
	byConc := func(p *sweep.DocPoint) string {
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
	xl := "size (" + d.Settings.SizeOption + ", bytes)"
	post := d.Settings.SizeOption == "--post-sizes"
	bwTitle, bwLabel, bwCol := "Received bandwidth against size (mean over the runs)", "received (Mbit/s)", "received_mbit_per_s"
	switch d.Settings.SizeOption {
	case "--post-sizes":
		bwTitle, bwLabel, bwCol = "Sent bandwidth against size (request bodies; mean over the runs)", "sent (Mbit/s)", "sent_mbit_per_s"
	case sizeOptionMixed:
		bwTitle, bwLabel, bwCol = "Bandwidth against size (received for --sizes sweeps, sent for --post-sizes ones; mean over the runs)", "Mbit/s", "mbit_per_s"
	}
	bwTitle = strings.Replace(bwTitle, "(", "(whiskers: 95 % interval; ", 1)
	bw := chart.Panel{Title: bwTitle, XLabel: xl, YLabel: bwLabel, LogX: true, XTics: tics, YFromZero: true}
	lat := chart.Panel{Title: "Latency against size (min: solid, p50: dashed in the same colour; every request of every run)", XLabel: xl,
		YLabel: "latency (ms)", LogX: true, XTics: tics, YFromZero: true}
	cpu := chart.Panel{Title: "CPU per request against size (client: solid; --server-pid: dashed in the same colour)", XLabel: xl,
		YLabel: "CPU per request (µs)", LogX: true, XTics: tics, YFromZero: true}
	host := chart.Panel{Title: "Whole host's CPU per request against size (/proc/stat: user, system, irq, softirq; 10 ms ticks)", XLabel: xl,
		YLabel: "host CPU per request (µs)", LogX: true, XTics: tics, YFromZero: true}
	for k, s := range groupPoints(d.Points, byConc, sizeOf) {
		b := chart.Line{Title: s.label, Style: chart.ErrorBars, Columns: []string{"size_bytes", bwCol, "ci95_low", "ci95_high"}, Color: k + 1,
			Note: bwWhiskers}
		minL := chart.Line{Title: s.label, Style: chart.Lines, Columns: []string{"size_bytes", "min_ms"}, Color: k + 1, Note: "min of " + s.label}
		p50 := chart.Line{Style: chart.Lines, Columns: []string{"size_bytes", "p50_ms"}, Color: k + 1, Dashed: true, Note: "p50 of " + s.label}
		cli := chart.Line{Title: s.label, Style: chart.Lines, Columns: []string{"size_bytes", "client_cpu_us_per_request"}, Color: k + 1, Note: "client CPU of " + s.label}
		srv := chart.Line{Style: chart.Lines, Columns: []string{"size_bytes", "server_cpu_us_per_request"}, Color: k + 1, Dashed: true, Note: "server CPU of " + s.label}
		h := chart.Line{Title: s.label, Style: chart.Lines, Columns: []string{"size_bytes", "host_busy_us_per_request"}, Color: k + 1}
		for _, p := range s.points {
			x := max(sizeOf(&p), 1) // a size of 0 bytes is drawn at 1 on the log axis
			v := p.MbitPerS
			if post {
				v = p.SentMbitPerS
			}
			b.Rows = append(b.Rows, bandwidthRow(x, v, &p))
			if p.Latency.Count > 0 {
				minL.Rows = append(minL.Rows, []float64{x, p.Latency.MinMs})
				p50.Rows = append(p50.Rows, []float64{x, p.Latency.P50Ms})
			}
			if p.ClientCPUUsPerReq != nil {
				cli.Rows = append(cli.Rows, []float64{x, *p.ClientCPUUsPerReq})
			}
			if p.ServerCPUUsPerReq != nil {
				srv.Rows = append(srv.Rows, []float64{x, *p.ServerCPUUsPerReq})
			}
			if p.HostCPU != nil {
				h.Rows = append(h.Rows, []float64{x, p.HostCPU.BusyUsPerReq})
			}
		}
		if len(cli.Rows) == 0 { // the server's line names the series then
			srv.Title = s.label
		}
		bw.Lines = append(bw.Lines, b)
		lat.Lines = append(lat.Lines, minL, p50)
		for _, l := range []chart.Line{cli, srv} {
			if len(l.Rows) > 0 {
				cpu.Lines = append(cpu.Lines, l)
			}
		}
		if len(h.Rows) > 0 {
			host.Lines = append(host.Lines, h)
		}
	}
	sizeX := func(p *sweep.DocPoint) float64 { return max(sizeOf(p), 1) }
	addFlags(&bw, d.Points, func(p *sweep.DocPoint) (float64, float64, bool) {
		if post {
			return sizeX(p), p.SentMbitPerS, true
		}
		return sizeX(p), p.MbitPerS, true
	})
	addFlags(&lat, d.Points, func(p *sweep.DocPoint) (float64, float64, bool) {
		return sizeX(p), p.Latency.P50Ms, p.Latency.Count > 0
	})
	if len(cpu.Lines) > 0 {
		addFlags(&cpu, d.Points, func(p *sweep.DocPoint) (float64, float64, bool) {
			switch {
			case p.ClientCPUUsPerReq != nil:
				return sizeX(p), *p.ClientCPUUsPerReq, true
			case p.ServerCPUUsPerReq != nil:
				return sizeX(p), *p.ServerCPUUsPerReq, true
			}
			return 0, 0, false
		})
	}
	if len(host.Lines) > 0 {
		addFlags(&host, d.Points, func(p *sweep.DocPoint) (float64, float64, bool) {
			if p.HostCPU == nil {
				return 0, 0, false
			}
			return sizeX(p), p.HostCPU.BusyUsPerReq, true
		})
	}
	out := []chart.Panel{bw, lat}
	for _, p := range []chart.Panel{cpu, host} {
		if len(p.Lines) > 0 {
			out = append(out, p)
		}
	}
	for i := range out {
		out[i].TicRange()
		if i > 0 { // latency and CPU; bandwidth grows with size by design
			out[i].LogIfDecades()
		}
	}
	return out
}

// bwWhiskers says where a bandwidth's whiskers come from.
const bwWhiskers = "bandwidth and its 95 % interval: the requests per second's interval scaled to the bandwidth (the bytes per request are the point's own)"

// bandwidthRow is a bandwidth v at x with its 95 % interval: the requests
// per second's relative half-width (at one point the bytes per request are
// fixed, so the bandwidth varies as the rate), stopped at zero.
func bandwidthRow(x, v float64, p *sweep.DocPoint) []float64 {
	h := 0.0
	if p.RPS.MeanPerS > 0 {
		h = v * p.RPS.CI95PerS / p.RPS.MeanPerS
	}
	return []float64{x, v, max(v-h, 0), v + h}
}

// paramPanels are the charts against --param's values (in their order, one
// tic each), a line per target (and size and concurrency, with several):
// requests per second with its interval, p50 latency, bandwidth with its
// interval, and CPU per request (client and --server-pid) where measured.
func paramPanels(d *sweep.Document) []chart.Panel {
	q := d.Settings.Param
	at := map[string]float64{}
	var tics []chart.Tic
	for i, v := range q.Values {
		at[v] = float64(i + 1)
		tics = append(tics, chart.Tic{Label: v, At: float64(i + 1)})
	}
	key := func(p *sweep.DocPoint) string {
		l := p.Label
		if p.Size != nil && len(d.Settings.Sizes) > 1 {
			l += " " + p.Size.Text
		}
		if len(d.Settings.Concurrency) > 1 {
			l += " c=" + strconv.Itoa(p.Concurrency)
		}
		return l
	}
	xl := q.Name + " (--param)"
	rps := chart.Panel{Title: fmt.Sprintf("Requests per second against %s (mean of %d runs; bars: 95 %% confidence interval)", q.Name, d.Settings.Repeat),
		XLabel: xl, YLabel: "requests per second", XTics: tics, YFromZero: true}
	lat := chart.Panel{Title: "p50 latency against " + q.Name + " (every request of every run)", XLabel: xl, YLabel: "latency (ms)", XTics: tics, YFromZero: true}
	for k, s := range groupPoints(d.Points, key, func(p *sweep.DocPoint) float64 { return at[p.ParamValue] }) {
		l := chart.Line{Title: s.label, Style: chart.ErrorBars, Color: k + 1, Columns: []string{"param_number", "rps_mean", "ci95_low", "ci95_high"}}
		p50 := chart.Line{Title: s.label, Style: chart.Lines, Color: k + 1, Columns: []string{"param_number", "p50_ms"}}
		for _, p := range s.points {
			x := at[p.ParamValue]
			l.Rows = append(l.Rows, []float64{x, p.RPS.MeanPerS, max(p.RPS.MeanPerS-p.RPS.CI95PerS, 0), p.RPS.MeanPerS + p.RPS.CI95PerS})
			if p.Latency.Count > 0 {
				p50.Rows = append(p50.Rows, []float64{x, p.Latency.P50Ms})
			}
		}
		rps.Lines = append(rps.Lines, l)
		lat.Lines = append(lat.Lines, p50)
	}
	addFlags(&rps, d.Points, func(p *sweep.DocPoint) (float64, float64, bool) { return at[p.ParamValue], p.RPS.MeanPerS, true })
	addFlags(&lat, d.Points, func(p *sweep.DocPoint) (float64, float64, bool) {
		return at[p.ParamValue], p.Latency.P50Ms, p.Latency.Count > 0
	})
	// Bandwidth (in the direction that grows with a size: sent for
	// --post-sizes) and CPU per request (client solid, --server-pid dashed)
	// against the parameter: a setting that saves CPU or packs more bytes
	// shows here, not in the rate.
	post := d.Settings.SizeOption == "--post-sizes"
	bwLabel, bwCol := "received (Mbit/s)", "received_mbit_per_s"
	if post {
		bwLabel, bwCol = "sent (Mbit/s)", "sent_mbit_per_s"
	}
	bw := chart.Panel{Title: "Bandwidth against " + q.Name + " (mean over the runs; whiskers: 95 % interval)", XLabel: xl, YLabel: bwLabel, XTics: tics, YFromZero: true}
	cpu := chart.Panel{Title: "CPU per request against " + q.Name + " (client: solid; --server-pid: dashed in the same colour)", XLabel: xl,
		YLabel: "CPU per request (µs)", XTics: tics, YFromZero: true}
	for k, s := range groupPoints(d.Points, key, func(p *sweep.DocPoint) float64 { return at[p.ParamValue] }) {
		b := chart.Line{Title: s.label, Style: chart.ErrorBars, Color: k + 1, Columns: []string{"param_number", bwCol, "ci95_low", "ci95_high"}, Note: bwWhiskers}
		cli := chart.Line{Title: s.label, Style: chart.Lines, Color: k + 1, Columns: []string{"param_number", "client_cpu_us_per_request"}, Note: "client CPU of " + s.label}
		srv := chart.Line{Style: chart.Lines, Color: k + 1, Dashed: true, Columns: []string{"param_number", "server_cpu_us_per_request"}, Note: "server CPU of " + s.label}
		for _, p := range s.points {
			x, v := at[p.ParamValue], p.MbitPerS
			if post {
				v = p.SentMbitPerS
			}
			b.Rows = append(b.Rows, bandwidthRow(x, v, &p))
			if p.ClientCPUUsPerReq != nil {
				cli.Rows = append(cli.Rows, []float64{x, *p.ClientCPUUsPerReq})
			}
			if p.ServerCPUUsPerReq != nil {
				srv.Rows = append(srv.Rows, []float64{x, *p.ServerCPUUsPerReq})
			}
		}
		if len(cli.Rows) == 0 {
			srv.Title = s.label
		}
		bw.Lines = append(bw.Lines, b)
		for _, l := range []chart.Line{cli, srv} {
			if len(l.Rows) > 0 {
				cpu.Lines = append(cpu.Lines, l)
			}
		}
	}
	addFlags(&bw, d.Points, func(p *sweep.DocPoint) (float64, float64, bool) {
		if post {
			return at[p.ParamValue], p.SentMbitPerS, true
		}
		return at[p.ParamValue], p.MbitPerS, true
	})
	out := []chart.Panel{rps, lat, bw}
	if len(cpu.Lines) > 0 {
		addFlags(&cpu, d.Points, func(p *sweep.DocPoint) (float64, float64, bool) {
			switch {
			case p.ClientCPUUsPerReq != nil:
				return at[p.ParamValue], *p.ClientCPUUsPerReq, true
			case p.ServerCPUUsPerReq != nil:
				return at[p.ParamValue], *p.ServerCPUUsPerReq, true
			}
			return 0, 0, false
		})
		out = append(out, cpu)
	}
	for i := range out {
		out[i].TicRange()
		if i == 1 || i == 3 {
			out[i].LogIfDecades()
		}
	}
	return out
}

// targetPanel is the chart of a sweep of one target, concurrency and size:
// its requests per second, with its confidence interval.
func targetPanel(d *sweep.Document) chart.Panel {
	rps := chart.Panel{Title: fmt.Sprintf("Requests per second per target (mean of %d runs; bars: 95 %% confidence interval)", d.Settings.Repeat),
		XLabel: "target", YLabel: "requests per second", YFromZero: true}
	l := chart.Line{Style: chart.ErrorBars, Columns: []string{"target_number", "rps_mean", "ci95_low", "ci95_high"}}
	for i, p := range d.Points {
		rps.XTics = append(rps.XTics, chart.Tic{Label: p.Label, At: float64(i + 1)})
		l.Rows = append(l.Rows, []float64{float64(i + 1), p.RPS.MeanPerS, max(p.RPS.MeanPerS-p.RPS.CI95PerS, 0), p.RPS.MeanPerS + p.RPS.CI95PerS})
	}
	rps.Lines = append(rps.Lines, l)
	at := map[*sweep.DocPoint]float64{}
	for i := range d.Points {
		at[&d.Points[i]] = float64(i + 1)
	}
	addFlags(&rps, d.Points, func(p *sweep.DocPoint) (float64, float64, bool) { return at[p], p.RPS.MeanPerS, true })
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
func addFlags(pn *chart.Panel, points []sweep.DocPoint, at func(*sweep.DocPoint) (x, y float64, ok bool)) {
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
	deviation := d.Settings.Deviation
	if deviation == "" {
		deviation = sweep.DeviationPooled
	}
	head := []string{"target", "size"}
	if d.Settings.Param != nil {
		head = append(head, d.Settings.Param.Name)
	}
	head = append(head, "-c", "runs", "req/s mean", "± 95 % CI", "cv %", "flags", "mean (ms)", "deviation (ms)", "min (ms)", "p50 (ms)", "p99 (ms)",
		"Mbit/s", "failed", "client CPU µs/req", "server CPU µs/req", "host CPU µs/req")
	pts := [][]string{head}
	opt := func(v *float64, prec int) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', prec, 64)
	}
	for _, p := range d.Points {
		size, cv := "", strconv.FormatFloat(p.RPS.CV*100, 'f', 1, 64)
		if p.Size != nil {
			size = p.Size.Text
		}
		if p.RPS.Unstable {
			cv += " (unstable)"
		}
		var host *float64
		if p.HostCPU != nil {
			host = &p.HostCPU.BusyUsPerReq
		}
		mbit := p.MbitPerS
		if d.Settings.SizeOption == "--post-sizes" {
			mbit = p.SentMbitPerS
		}
		row := []string{p.Label, size}
		if d.Settings.Param != nil {
			row = append(row, p.ParamValue)
		}
		row = append(row, strconv.Itoa(p.Concurrency), fmt.Sprintf("%d/%d", p.Repeats, p.Planned),
			fmt.Sprintf("%.2f", p.RPS.MeanPerS), fmt.Sprintf("%.2f", p.RPS.CI95PerS), cv, sweep.FlagCodes(p.Verdicts),
			fmt.Sprintf("%.3f", p.Latency.MeanMs), fmt.Sprintf("%.3f", p.Latency.DeviationMs), fmt.Sprintf("%.3f", p.Latency.MinMs),
			fmt.Sprintf("%.3f", p.Latency.P50Ms), fmt.Sprintf("%.3f", p.Latency.P99Ms), fmt.Sprintf("%.2f", mbit),
			strconv.Itoa(p.RequestsFailed), opt(p.ClientCPUUsPerReq, 1), opt(p.ServerCPUUsPerReq, 1), opt(host, 1))
		pts = append(pts, row)
	}
	bwNote := "Mbit/s: received"
	if d.Settings.SizeOption == "--post-sizes" {
		bwNote = "Mbit/s: sent"
	}
	var kinds [][]string
	for _, p := range d.Points {
		kinds = append(kinds, p.Verdicts)
	}
	flags := ""
	if legend := sweep.FlagLegend(kinds); legend != "" {
		flags = " Flags: the points' verdicts (each found by a run or more; the JSON has the evidence, the charts ring the points): " + legend + "."
	}
	page.Tables = append(page.Tables, report.PageTable{Title: "Points", Rows: pts, Compact: true,
		Note: "Requests per second across the repetitions (cv: sd / mean, in %); latency over every request of every run (HDR histogram, 3 significant digits; min exact); " +
			"deviation: " + deviation + "; " + bwNote + "; host CPU: the whole host's busy time (/proc/stat) per request." + flags})
	if q := d.Settings.Param; q != nil && len(q.Values) > 1 {
		var in []sweep.ParamRow
		for i := range d.Points {
			p := &d.Points[i]
			if p.Repeats > 0 {
				in = append(in, sweep.ParamRow{Configuration: d.ConfigurationName(p), Value: p.ParamValue, MeanPerS: p.RPS.MeanPerS, CI95PerS: p.RPS.CI95PerS})
			}
		}
		rows := [][]string{{"configuration", "max req/s", "± 95 % CI", "at " + q.Name, "within"}}
		for _, m := range sweep.ParamMaxima(in) {
			rows = append(rows, []string{m.Configuration, fmt.Sprintf("%.2f", m.MeanPerS), fmt.Sprintf("%.2f", m.CI95PerS), m.At, strings.Join(m.Within, ", ")})
		}
		page.Tables = append(page.Tables, report.PageTable{Title: "Maximum req/s per configuration over " + q.Name, Rows: rows,
			Note: "Mean over the runs; within: the values of " + q.Name + " whose 95 % interval reaches the maximum's (the runs cannot tell them from it)."})
	}
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
				row[0], row[1], row[2] = t.RankText()+groupSuffix(t.Group), t.Label, fmt.Sprintf("%.2f", t.RPSMeanPerS)
			}
			if i < len(r.ByDeviation) {
				t := r.ByDeviation[i]
				dev := t.DeviationMs
				if d.Settings.Deviation == "" { // a document of an earlier gab
					dev = t.LatencySDMs
				}
				row[3], row[4], row[5] = t.RankText()+groupSuffix(t.Group), t.Label, fmt.Sprintf("%.3f", dev)
			}
			rows = append(rows, row)
		}
		page.Tables = append(page.Tables, report.PageTable{Title: title, Rows: rows, Note: "Deviation: " + deviation + ". " + d.Settings.TieRule})
	}
	page.Tables = append(page.Tables, comparisonTables(d, deviation)...)
	return outfile.WriteAtomic(out, func(w io.Writer) error { return report.WriteHTMLPage(w, page) })
}

// comparisonTables are the sweep's ratios to --baseline and its changes from
// the first concurrency (or size) to the last, as the table text has them
// (none where the document has none).
func comparisonTables(d *sweep.Document, deviation string) []report.PageTable {
	ratio := func(r *sweep.DocRatio) string {
		switch {
		case r == nil:
			return ""
		case r.Lo == r.Hi:
			return strconv.FormatFloat(r.Ratio, 'f', 3, 64)
		}
		return fmt.Sprintf("%.3f [%.3f, %.3f]", r.Ratio, r.Lo, r.Hi)
	}
	size := func(s *sweep.DocSize) string {
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
	table := func(title string, cs []sweep.DocComparison, change bool) report.PageTable {
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

// groupSuffix is a ranked target's lettered tie groups after its rank:
// " (ab)"; empty in documents from before them.
func groupSuffix(group string) string {
	if group == "" {
		return ""
	}
	return " (" + group + ")"
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
