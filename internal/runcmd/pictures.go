package runcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"gab/client"
	"gab/gnuplot"
	"gab/internal/chart"
	"gab/internal/dashboard"
	"gab/internal/outfile"
	"gab/internal/printable"
	"gab/report"
)

// This file is gab's pictures of a run: --plot (gnuplot charts), --html (a
// self-contained page) and --histogram (a terminal histogram). They are
// written after ab's report and files; the output paths are checked before
// the run starts.

// plotPointLimit is the most requests the latency-over-time chart draws;
// past it, the chart draws an LTTB downsampling and says so in its title.
const plotPointLimit = 20_000

// CheckPictures checks, before the run (or gab sweep's first request), that
// the --plot and --html files can be written; it leaves no file behind.
func CheckPictures(plot, html string) error {
	if plot != "" {
		if err := gnuplot.CheckImagePath(plot); err != nil {
			return PictureError("--plot ", err)
		}
	}
	if html != "" {
		if err := outfile.CheckWritable(html); err != nil {
			return PictureError("--html ", err)
		}
	}
	return nil
}

// PictureError is err's message after what, on one line of printable text:
// a file name may hold any byte.
func PictureError(what string, err error) error {
	return errors.New(what + printable.String(err.Error()))
}

// wantsPerSecond reports whether the pictures need the engine's per-second
// counts (client.Config.Extended).
func wantsPerSecond(o *Options) bool {
	return o.PlotFile != "" || o.HTMLFile != "" || o.Dashboard != ""
}

// WritePictures writes what the picture options ask for after the report; it
// returns a non-zero exit status when one could not be made.
// dash, when set, is --dashboard's, which serves the HTML report's bytes.
func WritePictures(ctx context.Context, o *Options, cmdline []string, res *client.Result, sum *report.Run, out io.Writer, errw io.Writer, dash *dashboard.Run) int {
	status := ExitOK
	if o.Histogram && o.Format != "json" && !o.HTML {
		if err := report.WriteHistogram(out, sum); err != nil {
			return ExitError // a stdout error is reported by the root's runWith
		}
	}
	if drawFiles(ctx, o, cmdline, res, sum, errw, dash) != ExitOK {
		status = ExitError
	}
	return status
}

// drawFiles writes the --plot and --html files of a run (after ab's report,
// or after the error that ended it, drawn as far as it went); it returns a
// non-zero exit status when one could not be made, and says why. dash, when
// set, is --dashboard's, which serves the same bytes as the --html file.
func drawFiles(ctx context.Context, o *Options, cmdline []string, res *client.Result, sum *report.Run, errw io.Writer, dash *dashboard.Run) int {
	status := ExitOK
	if o.PlotFile != "" {
		if err := plotRun(ctx, o, cmdline, res, sum); err != nil {
			fmt.Fprintf(errw, "gab: %v\n", PictureError("--plot: ", err))
			status = ExitError
		}
	}
	if o.HTMLFile != "" || dash != nil {
		if err := htmlRun(o, cmdline, res, sum, dash); err != nil {
			what := "--html: "
			if o.HTMLFile == "" {
				what = "--dashboard: "
			}
			fmt.Fprintf(errw, "gab: %v\n", PictureError(what, err))
			status = ExitError
		}
	}
	return status
}

// drawFailedRun writes the --plot and --html files of a run that ended in
// an error (-s's timeout, a receive error without -r) from what it
// measured (sum: its record with the error), or says on stderr why there
// are none; --dashboard's page (dash, nil without it) becomes that report.
func drawFailedRun(ctx context.Context, o *Options, cmdline []string, ms *Measured, sum *report.Run, errw io.Writer, dash *dashboard.Run) {
	if o.PlotFile == "" && o.HTMLFile == "" && dash == nil {
		return
	}
	if ms == nil || ms.Res == nil || sum == nil {
		for _, f := range []struct{ option, name string }{{"--plot", o.PlotFile}, {"--html", o.HTMLFile}} {
			if f.name != "" {
				fmt.Fprintf(errw, "gab: %s %s: not written: the run ended before it Measured anything\n", f.option, printable.String(f.name))
			}
		}
		return
	}
	drawFiles(context.WithoutCancel(ctx), o, cmdline, ms.Res, sum, errw, dash)
}

// ChartOptions are the charts' settings from the command line.
func ChartOptions(o *Options, points int) report.ChartOptions {
	c := report.ChartOptions{MaxPoints: points, AdaptIntervals: o.Interval == 0}
	for _, d := range o.Ranges {
		c.RangeEdgesMs = append(c.RangeEdgesMs, float64(d)/float64(time.Millisecond))
	}
	return c
}

// TimelineInterval is the timeline's interval: --interval's; else, for the
// pictures, about a hundredth of -t's limit (at least client.MinInterval, in
// whole multiples of it), or client.MinInterval without one, whose intervals
// the charts merge into about a hundred (report.ChartOptions.AdaptIntervals);
// else client.DefaultInterval. With a --rate schedule the default is
// shortened until it divides the steps (report.StepInterval), so that no
// interval holds two steps' requests (--interval is checked with the
// command line: checkStepInterval).
func TimelineInterval(o *Options) time.Duration {
	switch {
	case o.Interval > 0:
		return o.Interval
	case !wantsPerSecond(o):
		return stepInterval(o, client.DefaultInterval)
	}
	return stepInterval(o, max(client.MinInterval, (o.Config.TimeLimit/100).Truncate(client.MinInterval)))
}

// stepInterval is want, or with a --rate schedule the longest interval up
// to it that divides the steps, else the steps' grain (report.StepGrain)
// itself; want if neither does (checkStepInterval refused such a schedule
// with the command line).
func stepInterval(o *Options, want time.Duration) time.Duration {
	cfg := &o.Config
	for _, w := range []time.Duration{want, report.StepGrain(cfg.RateSchedule, cfg.TimeLimit)} {
		if d := report.StepInterval(w, cfg.RateSchedule, cfg.TimeLimit); d > 0 {
			return d
		}
	}
	return want
}

// showsTimeline reports whether an output shows the latency timeline
// (output.prepare then sets client.Config.Interval).
func showsTimeline(o *Options) bool {
	return o.HlogFile != "" || o.Extended || o.Format == "json" || o.JSONFile != "" || o.PlotFile != "" || o.HTMLFile != ""
}

// checkStepInterval refuses a --rate schedule whose steps the timeline's
// intervals cannot follow: a step's figures (rate.steps) are those of the
// intervals that start in it, so every step boundary within the run must
// be a whole number of intervals, --interval's or one of at least
// client.MinInterval.
func checkStepInterval(o *Options) error {
	cfg := &o.Config
	if len(cfg.RateSchedule) == 0 || !showsTimeline(o) {
		return nil
	}
	grain := report.StepGrain(cfg.RateSchedule, cfg.TimeLimit)
	if grain == 0 {
		return nil
	}
	if o.Interval > 0 {
		if grain%o.Interval == 0 {
			return nil
		}
		msg := fmt.Sprintf("--interval %v does not divide the --rate steps (their ends are multiples of %v): each step's figures need whole intervals", o.Interval, grain)
		if d := report.StepInterval(o.Interval, cfg.RateSchedule, cfg.TimeLimit); d > 0 {
			return fmt.Errorf("%s; --interval %v does", msg, d)
		}
		return errors.New(msg)
	}
	if report.StepInterval(grain, cfg.RateSchedule, cfg.TimeLimit) == 0 {
		return fmt.Errorf("--rate steps whose ends are multiples of %v cannot be cut into timeline intervals of at least %v (whole µs): each step's figures need whole intervals", grain, client.MinInterval)
	}
	return nil
}

// HTMLPointLimit is the most requests the HTML page's latency chart draws
// (each is a few bytes of SVG path).
const HTMLPointLimit = 8_000

// htmlTitle is the HTML report's title.
func htmlTitle(o *Options) string { return "gab: " + o.Config.Target.Host + o.Config.Target.Path }

// htmlRun makes a finished run's HTML report, writes it to --html's file
// and hands the same bytes to the dashboard (dash; nil without one).
func htmlRun(o *Options, cmdline []string, res *client.Result, sum *report.Run, dash *dashboard.Run) error {
	d := report.RunChartData(sum, res, ChartOptions(o, HTMLPointLimit))
	page := &report.Page{
		Title:  htmlTitle(o),
		Runs:   []report.PageRun{{Doc: sum, Chart: d}},
		Figure: chart.RunFigure(commandTitle(cmdline), []*chart.Data{d}),
	}
	var b bytes.Buffer
	if err := report.WriteHTMLPage(&b, page); err != nil {
		return err
	}
	if dash != nil {
		dash.Finish(b.Bytes(), res)
	}
	if o.HTMLFile == "" {
		return nil
	}
	return outfile.WriteAtomic(o.HTMLFile, func(w io.Writer) error {
		_, err := w.Write(b.Bytes())
		return err
	})
}

// plotRun draws a finished run's charts into image.
func plotRun(ctx context.Context, o *Options, cmdline []string, res *client.Result, sum *report.Run) error {
	image := o.PlotFile
	if sum.Report == nil || sum.Report.ConnectionTimes == nil {
		return fmt.Errorf("%s: no request was recorded, nothing to draw", image)
	}
	d := report.RunChartData(sum, res, ChartOptions(o, plotPointLimit))
	return DrawPlot(ctx, image, chart.RunFigure(commandTitle(cmdline), []*chart.Data{d}))
}

// commandTitle is a chart title from the command line (cmdline: its
// credentials hidden already).
func commandTitle(cmdline []string) string {
	a := cmdline
	if len(a) > 0 {
		a = append([]string{"gab"}, a[1:]...)
	}
	return strings.Join(a, " ")
}

// DrawPlot draws fig into image with gnuplot, saying how to draw it by hand
// when gnuplot is missing (a shell command line, its names quoted).
func DrawPlot(ctx context.Context, image string, fig *chart.Figure) error {
	err := gnuplot.Draw(ctx, image, fig)
	if errors.Is(err, gnuplot.ErrNoGnuplot) {
		data, script := gnuplot.Companions(image)
		how := "gnuplot " + gnuplot.ShellWord(filepath.Base(script))
		if dir := filepath.Dir(script); dir != "." {
			how = "cd " + gnuplot.ShellWord(dir) + " && " + how
		}
		return fmt.Errorf("gnuplot is not on PATH: wrote %s and %s; draw %s with: %s",
			printable.String(script), printable.String(data), printable.String(image), how)
	}
	return err
}
