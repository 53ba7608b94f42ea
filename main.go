// Command gab is a drop-in replacement for ApacheBench (ab 2.3): the same
// options, output, files and exit statuses, plus extensions behind long options.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"gab/client"
	"gab/internal/abprint"
	"gab/internal/dashboard"
	"gab/internal/demo"
	"gab/internal/live"
	"gab/internal/shard"
	"gab/internal/threshold"
	"gab/report"
)

// version is gab's own version (--version); release builds set it with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	// ab ignores SIGPIPE; being notified of it makes a write to a closed stdout
	// return EPIPE (reported by run) instead of killing gab.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	go func() {
		<-signals
		cancel() // the run stops and prints its partial report
		<-signals
		os.Exit(1) // a second signal: the user does not want to wait
	}()
	os.Exit(run(ctx, os.Args, os.Stdout, os.Stderr))
}

// run is gab with its command line and streams; argv[0] is the program name
// as typed (ab prints it in its messages). It returns the exit status.
func run(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	return runWith(ctx, argv, stdout, stderr, runHooks{})
}

// terminalWidth says whether a writer is a terminal, and its width (tests
// replace it).
var terminalWidth = abprint.TerminalWidth

// runHooks lets tests replace what run would otherwise take from the system.
type runHooks struct {
	resolver client.Resolver // name resolution (nil: the system's)
	dial     client.DialFunc // connecting (nil: net.Dialer)
	location *time.Location  // time zone of the -g file (nil: time.Local)
	// liveStdout is where --live - writes (runWith sets it: the process's
	// stdout, while the report goes to stderr).
	liveStdout io.Writer
}

// runWith runs the subcommand argv names (commands.go), or else follows ab's
// sequence: parse, set up (TLS errors exit before the banner), banner,
// "Benchmarking ...", the -v 2 request dump, the run, then "Finished"/"..done",
// the report, and the -e and -g files.
func runWith(ctx context.Context, argv []string, stdout, stderr io.Writer, h runHooks) int {
	if c := lookupCommand(argv); c != nil {
		return c.run(ctx, argv, stdout, stderr)
	}
	out := newBufferedWriter(stdout)
	if liveToStdout(argv) {
		// --live -: stdout carries the stream, and the report goes to stderr.
		h.liveStdout, out = stdout, newBufferedWriter(stderr)
	}
	errw := &syncWriter{w: stderr, flushFirst: out}
	status := runFlushed(ctx, argv, out, errw, h)
	if out.reportWriteError(errw, out.Flush()) {
		if status == exitOK {
			status = exitError
		}
	}
	return status
}

// runFlushed is a run of ab's command line, phase by phase: the command line,
// the setup, ab's first lines, the measurement and the outputs.
func runFlushed(ctx context.Context, argv []string, out, errw *syncWriter, h runHooks) int {
	o, status, done := parseCommandLine(argv, out, errw)
	if done {
		return status
	}
	if o.memoryLimit > 0 && os.Getenv("GOMEMLIMIT") == "" { // a big --urls file (internal/targets)
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(o.memoryLimit))
	}
	if o.CPUs > 0 {
		runtime.GOMAXPROCS(o.CPUs)
	} else if w := o.Config.Workers; w > 0 { // -W: the run's threads (given back after it)
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(w))
	}
	if o.Demo {
		stop, err := startDemo(o)
		if err != nil {
			fmt.Fprintf(errw, "gab: --demo: %v\n", err)
			return exitError
		}
		defer stop()
	}
	r := &plainRun{argv: argv, o: o, out: out, errw: errw}
	defer func() {
		if r.dash != nil {
			r.dash.Close(ctx, false) // (after a lingering close: a no-op)
		}
	}()
	if status, done := r.setup(h); done {
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
	status = r.report(ctx, ms, h.location)
	if r.dash != nil {
		// The report is out before the dashboard lingers.
		if r.out.reportWriteError(r.errw, r.out.Flush()) && status == exitOK {
			status = exitError
		}
		r.dash.Close(ctx, true)
	}
	return status
}

// parseCommandLine parses argv; with --format json even a command-line
// error ends in a JSON document.
func parseCommandLine(argv []string, out, errw *syncWriter) (o *cliOptions, status int, done bool) {
	jsonMode := jsonRequested(argv)
	var parseErrs strings.Builder
	perrw := io.Writer(errw)
	if jsonMode {
		perrw = io.MultiWriter(errw, &parseErrs)
	}
	o, status, done = parseArgs(argv, out, perrw)
	if done && jsonMode && status != exitOK {
		notStarted(out, argv, parseErrs.String(), status)
	}
	return o, status, done
}

// plainRun is a run of ab's command line between its phases.
type plainRun struct {
	argv      []string
	o         *cliOptions
	out, errw *syncWriter
	cfg       client.Config
	textw     io.Writer           // the run's text: stdout, or stderr with --format json
	live      *abprint.StatusLine // --progress's status line (nil without it)
	output    *output
	runner    *client.Runner
	stream    *live.Outputs // the live sinks and --dashboard's (nil without them)
	runStream *live.Stream
	dash      *dashboard.Run // --dashboard's (nil without it)
	// interrupted says an interrupt ended the run (before its report).
	interrupted bool
}

// setup builds the engine and chooses the outputs. done says gab must exit
// with status.
func (r *plainRun) setup(h runHooks) (status int, done bool) {
	o, out, errw := r.o, r.out, r.errw
	r.cfg = o.Config
	cfg := &r.cfg
	cfg.Resolver, cfg.Dial = h.resolver, h.dial
	// The run's text (banner, "Benchmarking", -v output, "..done") goes to
	// stderr with --format json, whose stdout carries only the JSON document.
	r.textw = out
	if o.Format == "json" {
		r.textw = errw
	}
	// The live status line (--progress) erases itself before each of the
	// sink's stderr lines.
	sinkErr := io.Writer(errw)
	if tty, width := terminalWidth(errw.w); abprint.StatusOn(o.ProgressBar, o.Progress, tty) {
		r.live = abprint.NewStatusLine(errw, width)
		sinkErr, cfg.Live = r.live, true
	}
	cfg.Events = abprint.NewSink(r.textw, sinkErr, o.Config.Verbosity, o.Progress)
	r.output = newOutput(o, r.argv)
	if status, done := r.output.prepare(out, errw, cfg); done {
		return status, true
	}
	if status, done := r.startLive(h.liveStdout); done {
		return status, true
	}
	runner, err := client.New(*cfg)
	if err != nil {
		if status, done := r.output.fatal(out, errw, nil, err); done {
			return status, true
		}
		return fatal(out, errw, err, 0), true
	}
	r.runner = runner
	return exitOK, false
}

// announce prints ab's first lines (banner, "Benchmarking ...", -v 2's
// request) and waits for --start-at. done says gab must exit with status.
func (r *plainRun) announce(ctx context.Context) (status int, done bool) {
	o, cfg, textw := r.o, &r.cfg, r.textw
	// On a terminal, --start-at's wait is announced before ab's first line
	// (which "Benchmarking ... (be patient)..." would leave unfinished).
	noteStartAt(r.errw, o.StartAt, time.Now())
	if !o.NoBanner {
		writeBanner(textw, o.HTML)
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
	if r.out.reportWriteError(r.errw, r.out.Flush()) {
		return exitError, true
	}
	if !shard.WaitForStart(ctx, o.StartAt) { // --start-at: every shard starts at the same instant
		io.WriteString(r.errw, "gab: interrupted while waiting for --start-at\n")
		return exitError, true
	}
	return exitOK, false
}

// measure runs the engine (measure.go) with the status line, then prints
// "..done" or "Finished". done says gab must exit with status (the run ended
// with an error).
func (r *plainRun) measure(ctx context.Context) (ms *measured, status int, done bool) {
	if r.live != nil {
		r.live.Start(r.runner, r.cfg.Requests, r.cfg.TimeLimit)
	}
	if r.dash != nil {
		lo := report.LiveOptions{Report: reportOptions(r.o, r.argv, report.CPUUsage{}, nil), Start: time.Now(), Interval: r.cfg.Interval}
		if len(r.cfg.RateSchedule) == 0 {
			lo.TargetPerS = r.cfg.Rate
		}
		r.dash.Begin(lo)
	}
	ms = measureRun(ctx, r.runner, &r.output.meter)
	r.interrupted = ms.res != nil && ms.res.Ending == client.EndInterrupted
	if r.live != nil {
		r.live.Stop()
	}
	if ms.err != nil {
		if r.runStream != nil {
			var sum *report.Run
			if ms.res != nil {
				sum = ms.summarize(r.o, r.argv)
			}
			r.stream.Finish(r.runStream, sum, ms.res)
		}
		status, done := r.output.fatal(r.out, r.errw, ms, ms.err)
		if !done {
			completed := 0
			if ms.res != nil {
				completed = ms.res.Complete
			}
			status = fatal(r.out, r.errw, ms.err, completed)
		}
		// After ab's message: the pictures of what the run measured.
		drawFailedRun(ctx, r.o, r.argv, ms, r.output.failed, r.errw, r.dash)
		return ms, status, true
	}
	if ms.res.Ending != client.EndInterrupted {
		if r.o.Progress > 0 {
			fmt.Fprintf(r.errw, "Finished %d requests\n", ms.res.Complete)
		} else {
			io.WriteString(r.textw, "..done\n")
		}
	}
	return ms, exitOK, false
}

// report writes every output of the finished run and returns gab's exit
// status.
func (r *plainRun) report(ctx context.Context, ms *measured, loc *time.Location) int {
	o, res := r.o, ms.res
	sum := ms.summarize(o, r.argv)
	r.stream.Finish(r.runStream, sum, res)
	if status := r.output.write(r.out, r.errw, sum, ms.serverErr, res, loc); status != exitOK {
		return status
	}
	// The pictures (--histogram, --plot, --html) come last; an interrupted
	// run is drawn as far as it went.
	if status := writePictures(context.WithoutCancel(ctx), o, r.argv, res, sum, r.out, r.errw, r.dash); status != exitOK {
		return status
	}
	if res.Ending == client.EndInterrupted {
		return exitError
	}
	capHint(r.errw, o, res)
	if sum.ThresholdsFailed() {
		return threshold.ExitStatus
	}
	return exitOK
}

// liveClosing bounds the wait for the live sinks after the run (tests
// shorten it).
var liveClosing = live.DefaultClosing

// openLive opens the live outputs of o (stdout: where --live - writes).
func openLive(o *cliOptions, stdout, stderr io.Writer) (*live.Outputs, error) {
	runID := ""
	if o.Shard != nil {
		runID = o.Shard.RunID
	}
	l, err := live.Open(o.Live, live.RunID(runID), "gab/"+version, stdout, stderr)
	if l != nil {
		l.Closing = liveClosing
	}
	return l, err
}

// startLive opens the live outputs and --dashboard, a sink of theirs, and
// streams the run (stdout: where --live - writes). done says gab must exit
// with status.
func (r *plainRun) startLive(stdout io.Writer) (status int, done bool) {
	o := r.o
	if !o.Live.Any() && o.Dashboard == "" {
		return exitOK, false
	}
	if stdout == nil {
		stdout = r.out
	}
	l, err := openLive(o, stdout, r.errw)
	if err != nil {
		fmt.Fprintf(r.errw, "gab: %v\n", err)
		return exitError, true
	}
	r.stream = l
	if o.Dashboard != "" {
		// The page's script asks for the state about twice an interval, at
		// most 4 times a second.
		d, err := dashboard.Start(dashboard.RunConfig{Addr: o.Dashboard, Linger: o.DashboardLinger, Title: htmlTitle(o),
			Figure: commandTitle(r.argv), Charts: chartOptions(o, htmlPointLimit),
			Refresh: max(timelineInterval(o)/2, 250*time.Millisecond), Stderr: r.errw})
		if err != nil {
			fmt.Fprintf(r.errw, "gab: --dashboard %s: %v\n", o.Dashboard, err)
			return exitError, true
		}
		r.dash = d
		d.Attach(l)
	}
	target := o.URL
	if target == "" {
		target = r.cfg.Target.Raw
	}
	r.runStream = l.Begin(&r.cfg, target, "", timelineInterval(o))
	return exitOK, false
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

// noteStartAt tells a user at a terminal that gab waits for --start-at, and
// how long. ab has no such wait; when stderr is not a terminal nothing is
// written (scripts see ab's output).
func noteStartAt(stderr io.Writer, at, now time.Time) {
	if at.IsZero() || !isTerminal(stderr) {
		return
	}
	fmt.Fprintf(stderr, "gab: waiting until %s (in %s) for --start-at\n", at.UTC().Format(time.RFC3339Nano), shard.AheadText(at.Sub(now)))
}

// startDemoServer starts gab's built-in server (internal/demo) on a free
// loopback port: its base URL, and the function that shuts it down.
func startDemoServer(tlsConf *tls.Config) (base string, stop func(), err error) {
	return demo.Start(tlsConf, "gab-demo/"+version)
}

// startDemo starts --demo's server, points o at it (http://127.0.0.1:PORT/),
// and returns the function that shuts it down.
func startDemo(o *cliOptions) (stop func(), err error) {
	base, stop, err := startDemoServer(nil)
	if err != nil {
		return nil, err
	}
	url := base + "/"
	t, err := client.ParseURL(url)
	if err != nil {
		stop()
		return nil, err
	}
	o.URL = url
	o.setTarget(t)
	o.Config.NoSpin = true // the server runs on gab's own cores
	return stop, nil
}

// fatal reports an error that ends the run as ab's err()/apr_err() do: the
// message on stderr, then "Total of N requests completed" on stdout if N > 0.
func fatal(out, errw io.Writer, err error, completed int) int {
	fe := fatalError(err)
	io.WriteString(errw, fe.Message)
	if completed > 0 {
		fmt.Fprintf(out, "Total of %d requests completed\n", completed)
	}
	return fe.Exit
}

// writeBanner prints ab's banner (-V, and the start of every run); -w before
// -V gives its HTML form, whose last <p> is never closed.
func writeBanner(w io.Writer, html bool) {
	if html {
		io.WriteString(w, "<p>\n"+
			" This is ApacheBench, Version 2.3 <i>&lt;$Revision$&gt;</i><br>\n"+
			" Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/<br>\n"+
			" Licensed to The Apache Software Foundation, http://www.apache.org/<br>\n"+
			"</p>\n<p>\n")
		return
	}
	io.WriteString(w, "This is ApacheBench, Version 2.3 <$Revision$>\n"+
		"Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/\n"+
		"Licensed to The Apache Software Foundation, http://www.apache.org/\n"+
		"\n")
}

// syncWriter serialises the writes of run and of the event sink, which
// writes from many goroutines. Stdout is buffered (buf); stderr is not.
// flushFirst, if set, is flushed before each write, so that stdout text printed
// before a stderr line comes out first on a terminal, as with ab's
// line-buffered stdout.
type syncWriter struct {
	mu         sync.Mutex
	w          io.Writer
	buf        *bufio.Writer // nil: unbuffered
	flushFirst *syncWriter
	reported   bool // a write error was reported already (bufio keeps returning it)
}

// reportWriteError prints a stdout write error once, however many times
// bufio hands the same saved error back. It reports whether err was non-nil.
func (s *syncWriter) reportWriteError(errw io.Writer, err error) bool {
	if err == nil {
		return false
	}
	s.mu.Lock()
	first := !s.reported
	s.reported = true
	s.mu.Unlock()
	if first {
		fmt.Fprintf(errw, "gab: stdout: %v\n", err)
	}
	return true
}

func newBufferedWriter(w io.Writer) *syncWriter {
	return &syncWriter{w: w, buf: bufio.NewWriterSize(w, 64<<10)}
}

func (s *syncWriter) Write(p []byte) (int, error) {
	if s.flushFirst != nil {
		s.flushFirst.Flush() // an error stays in the bufio.Writer and is reported at the end
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buf != nil {
		return s.buf.Write(p)
	}
	return s.w.Write(p)
}

// Flush writes out what is buffered; its error is the first write error seen.
func (s *syncWriter) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buf == nil {
		return nil
	}
	return s.buf.Flush()
}
