package runcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"gab/client"
	"gab/internal/abprint"
	"gab/internal/dashboard"
	"gab/internal/live"
	"gab/internal/shard"
	"gab/internal/threshold"
	"gab/report"
)

// This file is a run of ab's command line once it is parsed, ab's sequence
// phase by phase: set up (TLS errors exit before the banner), banner,
// "Benchmarking ...", the -v 2 request dump, the run, then "Finished" or
// "..done", the report, the -e and -g files, and gab's outputs after them.

// Hooks lets tests replace what a run would otherwise take from the system.
type Hooks struct {
	Resolver client.Resolver // name resolution (nil: the system's)
	Dial     client.DialFunc // connecting (nil: net.Dialer)
	Location *time.Location  // time zone of the -g file (nil: time.Local)
	// LiveStdout is where --live - writes: the process's stdout, while the
	// report goes to stderr (nil: out).
	LiveStdout io.Writer
	// LiveClosing bounds the wait for the live sinks after the run.
	LiveClosing time.Duration
	// TerminalWidth says whether a writer is a terminal, and its width
	// (abprint.TerminalWidth).
	TerminalWidth func(io.Writer) (bool, int)
}

// Run runs the command line o (cmdline: its words with -A and -P hidden)
// and writes its outputs on out and errw; it returns gab's exit status.
func Run(ctx context.Context, o *Options, cmdline []string, out, errw *SyncWriter, h Hooks) int {
	if h.TerminalWidth == nil {
		h.TerminalWidth = abprint.TerminalWidth
	}
	r := &plainRun{cmdline: cmdline, o: o, out: out, errw: errw, hooks: h}
	defer func() {
		if r.dash != nil {
			r.dash.Close(ctx, false) // (after a lingering close: a no-op)
		}
	}()
	if status, done := r.setup(); done {
		return status
	}
	defer r.closeLive(ctx)
	if status, done := r.announce(ctx); done {
		return status
	}
	ms, status, done := r.measure(ctx)
	if done {
		return status
	}
	status = r.report(ctx, ms)
	if r.dash != nil {
		// The report is out before the dashboard lingers.
		if r.out.ReportWriteError(r.errw, r.out.Flush()) && status == ExitOK {
			status = ExitError
		}
		r.dash.Close(ctx, true)
	}
	return status
}

// plainRun is a run of ab's command line between its phases.
type plainRun struct {
	cmdline   []string // the command line with -A and -P hidden
	o         *Options
	hooks     Hooks
	out, errw *SyncWriter
	cfg       client.Config
	textw     io.Writer           // the run's text: stdout, or stderr with --format json
	live      *abprint.StatusLine // --progress's status line (nil without it)
	output    *Output
	runner    *client.Runner
	stream    *live.Outputs // the live sinks and --dashboard's (nil without them)
	runStream *live.Stream
	dash      *dashboard.Run // --dashboard's (nil without it)
	// interrupted says an interrupt ended the run (before its report).
	interrupted bool
}

// setup builds the engine and chooses the outputs. done says gab must exit
// with status.
func (r *plainRun) setup() (status int, done bool) {
	o, out, errw, h := r.o, r.out, r.errw, r.hooks
	r.cfg = o.Config
	cfg := &r.cfg
	cfg.Resolver, cfg.Dial = h.Resolver, h.Dial
	// The run's text (banner, "Benchmarking", -v output, "..done") goes to
	// stderr with --format json, whose stdout carries only the JSON document.
	r.textw = out
	if o.Format == "json" {
		r.textw = errw
	}
	// The live status line (--progress) erases itself before each of the
	// sink's stderr lines.
	sinkErr := io.Writer(errw)
	if tty, width := h.TerminalWidth(errw.W); abprint.StatusOn(o.ProgressBar, o.Progress, tty) {
		r.live = abprint.NewStatusLine(errw, width)
		sinkErr, cfg.Live = r.live, true
	}
	cfg.Events = abprint.NewSink(r.textw, sinkErr, o.Config.Verbosity, o.Progress)
	r.output = newOutput(o, r.cmdline)
	if status, done := r.output.Prepare(out, errw, cfg); done {
		return status, true
	}
	if status, done := r.startLive(h.LiveStdout); done {
		return status, true
	}
	runner, err := client.New(*cfg)
	if err != nil {
		if status, done := r.output.Fatal(out, errw, nil, err); done {
			return status, true
		}
		return fatal(out, errw, err, 0), true
	}
	r.runner = runner
	return ExitOK, false
}

// announce prints ab's first lines (banner, "Benchmarking ...", -v 2's
// request) and waits for --start-at. done says gab must exit with status.
func (r *plainRun) announce(ctx context.Context) (status int, done bool) {
	o, cfg, textw := r.o, &r.cfg, r.textw
	// On a terminal, --start-at's wait is announced before ab's first line
	// (which "Benchmarking ... (be patient)..." would leave unfinished).
	NoteStartAt(r.errw, o.StartAt, time.Now())
	if !o.NoBanner {
		abprint.WriteBanner(textw, o.HTML)
	}
	if !o.HTML {
		fmt.Fprintf(textw, "Benchmarking %s ", cfg.Target.Host)
		if o.Proxy {
			fmt.Fprintf(textw, "[through %s:%d] ", cfg.ProxyHost, cfg.ProxyPort)
		}
		if o.Progress > 0 {
			io.WriteString(textw, "(be patient)\n")
		} else {
			io.WriteString(textw, "(be patient)...")
		}
	}
	if cfg.Verbosity >= 2 {
		fmt.Fprintf(textw, "INFO: %s header == \n---\n%s\n---\n", cfg.Spec.Method, cfg.RequestHead())
	}
	if r.out.ReportWriteError(r.errw, r.out.Flush()) {
		return ExitError, true
	}
	if !shard.WaitForStart(ctx, o.StartAt) { // --start-at: every shard starts at the same instant
		io.WriteString(r.errw, "gab: interrupted while waiting for --start-at\n")
		return ExitError, true
	}
	return ExitOK, false
}

// measure runs the engine (MeasureRun) with the status line, then prints
// "..done" or "Finished". done says gab must exit with status (the run ended
// with an error).
func (r *plainRun) measure(ctx context.Context) (ms *Measured, status int, done bool) {
	if r.live != nil {
		r.live.Start(r.runner, r.cfg.Requests, r.cfg.TimeLimit)
	}
	if r.dash != nil {
		lo := report.LiveOptions{Report: ReportOptions(r.o, r.cmdline, report.CPUUsage{}, nil), Start: time.Now(), Interval: r.cfg.Interval}
		if len(r.cfg.RateSchedule) == 0 {
			lo.TargetPerS = r.cfg.Rate
		}
		r.dash.Begin(lo)
	}
	ms = MeasureRun(ctx, r.runner, &r.output.Meter)
	r.interrupted = ms.Res != nil && ms.Res.Ending == client.EndInterrupted
	if r.live != nil {
		r.live.Stop()
	}
	if ms.Err != nil {
		if r.runStream != nil {
			var sum *report.Run
			if ms.Res != nil {
				sum = ms.Summarize(r.o, r.cmdline)
			}
			r.stream.Finish(r.runStream, sum, ms.Res)
		}
		status, done := r.output.Fatal(r.out, r.errw, ms, ms.Err)
		if !done {
			completed := 0
			if ms.Res != nil {
				completed = ms.Res.Complete
			}
			status = fatal(r.out, r.errw, ms.Err, completed)
		}
		// After ab's message: the pictures of what the run measured.
		drawFailedRun(ctx, r.o, r.cmdline, ms, r.output.Failed, r.errw, r.dash)
		return ms, status, true
	}
	if ms.Res.Ending != client.EndInterrupted {
		if r.o.Progress > 0 {
			fmt.Fprintf(r.errw, "Finished %d requests\n", ms.Res.Complete)
		} else {
			io.WriteString(r.textw, "..done\n")
		}
	}
	return ms, ExitOK, false
}

// report writes every output of the finished run and returns gab's exit
// status.
func (r *plainRun) report(ctx context.Context, ms *Measured) int {
	o, res := r.o, ms.Res
	sum := ms.Summarize(o, r.cmdline)
	r.stream.Finish(r.runStream, sum, res)
	if status := r.output.Write(r.out, r.errw, sum, ms.ServerErr, res, r.hooks.Location); status != ExitOK {
		return status
	}
	// The pictures (--histogram, --plot, --html) come last; an interrupted
	// run is drawn as far as it went.
	if status := WritePictures(context.WithoutCancel(ctx), o, r.cmdline, res, sum, r.out, r.errw, r.dash); status != ExitOK {
		return status
	}
	if res.Ending == client.EndInterrupted {
		return ExitError
	}
	capHint(r.errw, o, res)
	if sum.ThresholdsFailed() {
		return threshold.ExitStatus
	}
	return ExitOK
}

// openLive opens the live outputs of o (stdout: where --live - writes;
// closing bounds the wait for them after the run).
func openLive(o *Options, stdout, stderr io.Writer, closing time.Duration) (*live.Outputs, error) {
	runID := ""
	if o.Shard != nil {
		runID = o.Shard.RunID
	}
	l, err := live.Open(o.Live, live.RunID(runID), "gab/"+o.Version, stdout, stderr)
	if l != nil {
		l.Closing = closing
	}
	return l, err
}

// startLive opens the live outputs and --dashboard, a sink of theirs, and
// streams the run (stdout: where --live - writes). done says gab must exit
// with status.
func (r *plainRun) startLive(stdout io.Writer) (status int, done bool) {
	o := r.o
	if !o.Live.Any() && o.Dashboard == "" {
		return ExitOK, false
	}
	if stdout == nil {
		stdout = r.out
	}
	l, err := openLive(o, stdout, r.errw, r.hooks.LiveClosing)
	if err != nil {
		fmt.Fprintf(r.errw, "gab: %v\n", err)
		return ExitError, true
	}
	r.stream = l
	if o.Dashboard != "" {
		// The page's script asks for the state about twice an interval, at
		// most 4 times a second.
		d, err := dashboard.Start(dashboard.RunConfig{Addr: o.Dashboard, Linger: o.DashboardLinger, Title: htmlTitle(o),
			Figure: commandTitle(r.cmdline), Charts: ChartOptions(o, HTMLPointLimit),
			Refresh: max(TimelineInterval(o)/2, 250*time.Millisecond), Stderr: r.errw})
		if err != nil {
			fmt.Fprintf(r.errw, "gab: --dashboard %s: %v\n", o.Dashboard, err)
			return ExitError, true
		}
		r.dash = d
		d.Attach(l)
	}
	target := o.URL
	if target == "" {
		target = r.cfg.Target.Raw
	}
	r.runStream = l.Begin(&r.cfg, target, "", TimelineInterval(o))
	return ExitOK, false
}

// closeLive ends the live outputs after the report: stdout first, so that
// the report is out while --metrics-linger keeps the endpoint up.
func (r *plainRun) closeLive(ctx context.Context) {
	if r.stream == nil {
		return
	}
	_ = r.out.Flush() // an error stays in the writer and is reported at the end
	r.stream.Close(ctx, r.o.Live.MetricsLinger, r.interrupted)
}

// NoteStartAt tells a user at a terminal that gab waits for --start-at, and
// how long. ab has no such wait; when stderr is not a terminal nothing is
// written (scripts see ab's output).
func NoteStartAt(stderr io.Writer, at, now time.Time) {
	if at.IsZero() || !isTerminal(stderr) {
		return
	}
	fmt.Fprintf(stderr, "gab: waiting until %s (in %s) for --start-at\n", at.UTC().Format(time.RFC3339Nano), shard.AheadText(at.Sub(now)))
}

// fatal reports an error that ends the run as ab's err()/apr_err() do: the
// message on stderr, then "Total of N requests completed" on stdout if N > 0.
func fatal(out, errw io.Writer, err error, completed int) int {
	fe := FatalError(err)
	io.WriteString(errw, fe.Message)
	if completed > 0 {
		fmt.Fprintf(out, "Total of %d requests completed\n", completed)
	}
	return fe.Exit
}

// SubcommandLive opens the live outputs of gab sweep or gab capacity (cmd)
// from a run's options o: every run they make streams as a run of its own,
// named by its step or point (closing: openLive's). --live - is refused:
// their table is stdout's.
func SubcommandLive(o *Options, cmd string, stderr io.Writer, closing time.Duration) (l *live.Outputs, status int, done bool) {
	if !o.Live.Any() {
		return nil, ExitOK, false
	}
	if o.Live.File == "-" {
		fmt.Fprintf(stderr, "%s: --live - needs stdout, where the table goes: give --live a file\n", cmd)
		return nil, ExitUsage, true
	}
	l, err := openLive(o, nil, stderr, closing)
	if err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return nil, ExitError, true
	}
	return l, ExitOK, false
}

// capHint tells a user at a terminal that -t's run ended at ab's 50,000-request
// cap rather than at the time limit, and how to lift it. ab says nothing, and
// neither does gab when stderr is not a terminal (scripts see ab's output).
func capHint(stderr io.Writer, o *Options, res *client.Result) {
	cfg := &o.Config
	if cfg.TimeLimit <= 0 || o.NoCap || cfg.Requests != TimeLimitRequests ||
		res.Ending != client.EndCompleted || res.Complete != TimeLimitRequests || !isTerminal(stderr) {
		return
	}
	fmt.Fprintf(stderr, "gab: the run ended at ab's %d-request cap of -t after %.2f of %g seconds; --no-cap lifts the cap\n",
		TimeLimitRequests, res.Elapsed.Seconds(), cfg.TimeLimit.Seconds())
}

// isTerminal reports whether w is a terminal (through gab's stderr wrapper).
func isTerminal(w io.Writer) bool {
	if sw, ok := w.(*SyncWriter); ok {
		w = sw.W
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
