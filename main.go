// Command gab is a drop-in replacement for ApacheBench (ab 2.3): the same
// options, output, files and exit statuses, plus extensions behind long options.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"gab/client"
	"gab/internal/threshold"
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

// runHooks lets tests replace what run would otherwise take from the system.
type runHooks struct {
	resolver client.Resolver // name resolution (nil: the system's)
	dial     client.DialFunc // connecting (nil: net.Dialer)
	location *time.Location  // time zone of the -g file (nil: time.Local)
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
	errw := &syncWriter{w: stderr, flushFirst: out}
	status := runFlushed(ctx, argv, out, errw, h)
	if out.reportWriteError(errw, out.Flush()) {
		if status == exitOK {
			status = exitError
		}
	}
	return status
}

func runFlushed(ctx context.Context, argv []string, out, errw *syncWriter, h runHooks) int {
	// With --format json even a command-line error ends in a JSON document.
	jsonMode := jsonRequested(argv)
	var parseErrs strings.Builder
	perrw := io.Writer(errw)
	if jsonMode {
		perrw = io.MultiWriter(errw, &parseErrs)
	}
	o, status, done := parseArgs(argv, out, perrw)
	if done {
		if jsonMode && status != exitOK {
			notStarted(out, argv, parseErrs.String(), status)
		}
		return status
	}
	if o.CPUs > 0 {
		runtime.GOMAXPROCS(o.CPUs)
	}
	if o.Demo {
		stop, err := startDemo(o)
		if err != nil {
			fmt.Fprintf(errw, "gab: --demo: %v\n", err)
			return exitError
		}
		defer stop()
	}
	cfg := o.Config
	cfg.Resolver, cfg.Dial = h.resolver, h.dial
	textOut := o.Format != "json" // with --format json, stdout carries only the JSON document
	// The run's text (banner, "Benchmarking", -v output, "..done") goes to
	// stderr with --format json.
	var textw io.Writer = out
	if !textOut {
		textw = errw
	}
	// The live status line (progress.go) erases itself before each of the
	// sink's stderr lines.
	var live *statusLine
	sinkErr := io.Writer(errw)
	if on, width := statusMode(o, errw.w); on {
		live = newStatusLine(errw, width)
		sinkErr, cfg.Live = live, true
	}
	cfg.Events = newSink(textw, sinkErr, o.Config.Verbosity, o.Progress)
	output := newOutput(o, argv)
	if status, done := output.prepare(out, errw, &cfg); done {
		return status
	}
	runner, err := client.New(cfg)
	if err != nil {
		if status, done := output.fatal(out, errw, nil, err); done {
			return status
		}
		return fatal(out, errw, err, 0)
	}

	// On a terminal, --start-at's wait is announced before ab's first line
	// (which "Benchmarking ... (be patient)..." would leave unfinished).
	noteStartAt(errw, o.StartAt, time.Now())
	writeBanner(textw, o.HTML)
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
	if out.reportWriteError(errw, out.Flush()) {
		return exitError
	}

	if !waitForStart(ctx, o.StartAt) { // --start-at: every shard starts at the same instant
		io.WriteString(errw, "gab: interrupted while waiting for --start-at\n")
		return exitError
	}
	output.begin()
	if live != nil {
		live.start(runner, cfg.Requests, cfg.TimeLimit)
	}
	res, err := runner.Run(ctx)
	if live != nil {
		live.stop()
	}
	if err != nil {
		if status, done := output.fatal(out, errw, res, err); done {
			return status
		}
		completed := 0
		if res != nil {
			completed = res.Complete
		}
		return fatal(out, errw, err, completed)
	}
	interrupted := res.Ending == client.EndInterrupted
	if !interrupted {
		if o.Progress > 0 {
			fmt.Fprintf(errw, "Finished %d requests\n", res.Complete)
		} else {
			io.WriteString(textw, "..done\n")
		}
	}

	sum, serverErr := output.summarize(res)
	if status := output.write(out, errw, sum, serverErr, res, h.location); status != exitOK {
		return status
	}
	// The pictures (--histogram, --plot, --html) come last; an interrupted
	// run is drawn as far as it went.
	if status := writePictures(context.WithoutCancel(ctx), o, argv, res, sum, out, errw); status != exitOK {
		return status
	}
	if interrupted {
		return exitError
	}
	capHint(errw, o, res)
	if sum.ThresholdsFailed {
		return threshold.ExitStatus
	}
	return exitOK
}

// fatal reports an error that ends the run as ab's err()/apr_err() do: the
// message on stderr, then "Total of N requests completed" on stdout if N > 0.
func fatal(out, errw io.Writer, err error, completed int) int {
	var fe *client.FatalError
	if !errors.As(err, &fe) {
		fe = &client.FatalError{Message: "gab: " + err.Error() + "\n", Exit: exitError}
	}
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
