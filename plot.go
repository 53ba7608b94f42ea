package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"gab/gnuplot"
	"gab/internal/capacity"
	"gab/internal/docfile"
	"gab/internal/outfile"
	"gab/internal/plot"
	"gab/internal/printable"
	"gab/internal/runcmd"
	"gab/report"
)

// This file is `gab plot`: its options, the documents read, one call to
// internal/plot, which builds the figure or page, and the writers (gnuplot,
// the HTML page). Several runs are overlaid, each labelled with its file's
// name or the LABEL of a LABEL=FILE argument; a sweep document is drawn on
// its own, several as configurations; capacity documents by capacity.Plot.

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
	sweep       *report.SweepDocument
	capacity    *report.CapacityDocument
}

// runPlot is `gab plot ARGS...` (argv[0] is "plot"'s caller, argv[1] "plot").
func runPlot(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("gab plot", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	output := fs.StringP("output", "o", "", "")
	help := fs.BoolP("help", "h", false, "")
	fail := func(status int, format string, a ...any) int {
		// Names and messages on one line of printable text.
		fmt.Fprintf(stderr, "gab plot: %s\n", printable.String(fmt.Sprintf(format, a...)))
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
	for i := range inputs {
		if err := loadPlotInput(&inputs[i]); err != nil {
			return fail(exitError, "%v", err)
		}
	}
	ins := make([]plot.Input, len(inputs))
	labels, paths, caps := make([]string, len(inputs)), make([]string, len(inputs)), make([]*report.CapacityDocument, len(inputs))
	for i, in := range inputs {
		ins[i] = plot.Input{Label: in.label, Path: in.path, Run: in.run, Sweep: in.sweep}
		labels[i], paths[i], caps[i] = in.label, in.path, in.capacity
	}
	if done, err := capacity.Plot(ctx, out, isHTML, caps, labels, paths); done {
		if err != nil {
			return fail(exitError, "%v", err)
		}
		return exitOK
	}
	res, err := plot.Build(ins, append([]string{"gab", "plot"}, fs.Args()...), isHTML)
	switch {
	case plot.IsUsage(err):
		return fail(exitUsage, "%v", err)
	case err != nil:
	case res.Page != nil:
		err = writePage(out, res.Page)
	default:
		err = runcmd.DrawPlot(ctx, out, res.Figure)
	}
	if err != nil {
		return fail(exitError, "%v", err)
	}
	return exitOK
}

// loadPlotInput reads one document (plot.Decode checks it). Errors start
// with the file's name.
func loadPlotInput(in *plotInput) error {
	name := printable.String(in.path)
	raw, err := docfile.Read(in.path, true)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: no such file", name)
		}
		if _, ok := err.(*os.PathError); !ok {
			return err // it names the file already (a file over the bound)
		}
		return fmt.Errorf("%s: %s", name, printable.String(err.Error()))
	}
	doc, err := plot.Decode(in.path, raw)
	in.run, in.sweep, in.capacity = doc.Run, doc.Sweep, doc.Capacity
	return err
}

// writePage writes an HTML page to out.
func writePage(out string, page *report.Page) error {
	return outfile.WriteAtomic(out, func(w io.Writer) error { return report.WriteHTMLPage(w, page) })
}

// groupSuffix is a ranked target's lettered tie groups after its rank
// (plot.GroupSuffix).
func groupSuffix(group string) string { return plot.GroupSuffix(group) }

// sweepPictures draws a finished (or interrupted) sweep's --plot and --html.
func sweepPictures(ctx context.Context, plotFile, htmlFile string, d *report.SweepDocument) error {
	if plotFile != "" {
		if err := runcmd.DrawPlot(context.WithoutCancel(ctx), plotFile, plot.SweepFigure(d)); err != nil {
			return runcmd.PictureError("--plot: ", err)
		}
	}
	if htmlFile != "" {
		if err := writePage(htmlFile, plot.SweepPage(d)); err != nil {
			return runcmd.PictureError("--html: ", err)
		}
	}
	return nil
}
