// Command gab is a drop-in replacement for ApacheBench (ab 2.3): the same
// options, output, files and exit statuses, plus extensions behind long options.
package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"gab/client"
	"gab/internal/abprint"
	"gab/internal/demo"
	"gab/internal/live"
	"gab/internal/runcmd"
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
	out := runcmd.NewBufferedWriter(stdout)
	if liveToStdout(argv) {
		// --live -: stdout carries the stream, and the report goes to stderr.
		h.liveStdout, out = stdout, runcmd.NewBufferedWriter(stderr)
	}
	errw := &runcmd.SyncWriter{W: stderr, FlushFirst: out}
	status := runFlushed(ctx, argv, out, errw, h)
	if out.ReportWriteError(errw, out.Flush()) {
		if status == exitOK {
			status = exitError
		}
	}
	return status
}

// runFlushed is a run of ab's command line, phase by phase: the command line,
// the setup, ab's first lines, the measurement and the outputs.
func runFlushed(ctx context.Context, argv []string, out, errw *runcmd.SyncWriter, h runHooks) int {
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
	return runcmd.Run(ctx, &o.Options, redactCredentials(argv), out, errw, runcmd.Hooks{Resolver: h.resolver, Dial: h.dial,
		Location: h.location, LiveStdout: h.liveStdout, LiveClosing: liveClosing, TerminalWidth: terminalWidth})
}

// parseCommandLine parses argv; with --format json even a command-line
// error ends in a JSON document.
func parseCommandLine(argv []string, out, errw *runcmd.SyncWriter) (o *cliOptions, status int, done bool) {
	jsonMode := jsonRequested(argv)
	var parseErrs strings.Builder
	perrw := io.Writer(errw)
	if jsonMode {
		perrw = io.MultiWriter(errw, &parseErrs)
	}
	o, status, done = parseArgs(argv, out, perrw)
	if done && jsonMode && status != exitOK {
		runcmd.NotStarted(out, redactCredentials(argv), parseErrs.String(), status)
	}
	return o, status, done
}

// liveClosing bounds the wait for the live sinks after the run (tests
// shorten it).
var liveClosing = live.DefaultClosing

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
