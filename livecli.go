package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gab/client"
	"gab/internal/chart"
	"gab/internal/live"
	"gab/internal/outfile"
	"gab/report"
)

// This file is gab's live results (internal/live): --live FILE (NDJSON,
// one line per interval as it closes), --metrics ADDR (a Prometheus
// endpoint, --metrics-linger) and --remote-write URL. The engine's timeline
// hands each closed interval to a live.Stream (client.Config.OnInterval)
// from its collector goroutine; the hub passes it on to each sink's own
// goroutine through a bounded queue, so no sink slows the run.

// liveFlags hold the live options while they are parsed.
type liveFlags struct {
	file, metrics, remoteWrite string
	linger                     durationValue
}

func addLiveFlags(fs *pflag.FlagSet, f *liveFlags) {
	fs.StringVar(&f.file, "live", "", "write each interval's figures as a JSON line to `FILE` as the run goes, and a last line with the totals (- : stdout, the report then goes to stderr)")
	fs.StringVar(&f.metrics, "metrics", "", "serve the run's figures to Prometheus at http://`ADDR`/metrics ([HOST]:PORT; loopback unless HOST says otherwise)")
	fs.Var(&f.linger, "metrics-linger", "with --metrics, keep serving `DURATION` after the run (for the last scrape)")
	fs.StringVar(&f.remoteWrite, "remote-write", "", "push the run's figures to a Prometheus remote-write `URL` after each interval and at the end")
}

// liveSpec is what the live options ask for.
type liveSpec struct {
	File          string // --live ("-": stdout)
	MetricsAddr   string // --metrics, as host:port
	MetricsLinger time.Duration
	RemoteWrite   string
}

func (s *liveSpec) any() bool { return s.File != "" || s.MetricsAddr != "" || s.RemoteWrite != "" }

// applyLiveLong checks the live options.
func (o *cliOptions) applyLiveLong(lo *longOptions, fs *pflag.FlagSet) error {
	f := &lo.live
	s := liveSpec{File: f.file, MetricsLinger: time.Duration(f.linger), RemoteWrite: f.remoteWrite}
	if f.metrics != "" {
		addr, err := live.ListenAddress(f.metrics)
		if err != nil {
			return fmt.Errorf("--metrics %s: %v", chart.Printable(f.metrics), err)
		}
		s.MetricsAddr = addr
	}
	if fs.Changed("metrics-linger") {
		if f.metrics == "" {
			return errors.New("--metrics-linger needs --metrics")
		}
		if s.MetricsLinger <= 0 {
			return errors.New("--metrics-linger must be a positive duration")
		}
	}
	if s.RemoteWrite != "" {
		if _, err := live.NewRemoteWriter(s.RemoteWrite, ""); err != nil {
			return fmt.Errorf("--remote-write: %v", err)
		}
	}
	if s.File == "-" && o.Format == "json" {
		return errors.New("--live - needs stdout, where --format json writes its document: give --live a file (or --json FILE for the document)")
	}
	o.Live = s
	return nil
}

// liveToStdout reports whether argv's long options say --live - (before the
// options are parsed, so that the report can be sent to stderr from the
// start).
func liveToStdout(argv []string) bool {
	if len(argv) < 2 {
		return false
	}
	var lo longOptions
	fs := newLongFlagSet(&lo)
	words := splitArgs(argv[1:], fs)
	if fs.Parse(words.long) != nil {
		return false
	}
	return lo.live.file == "-" && lo.format != "json"
}

// liveOutputs are a process's live sinks; nil when no live option is given.
type liveOutputs struct {
	hub     live.Hub
	runID   string
	linger  time.Duration
	file    *live.LineWriter
	fileSub *live.Sub
	name    string // --live's name as given
	closeF  func() error
	metrics *live.Server
	rw      *live.RemoteWriter
	rwSub   *live.Sub
	errw    io.Writer
}

// liveClosing bounds the wait for the sinks after the run (the final line
// to a reader that does not read, the final push to a slow receiver).
var liveClosing = 5 * time.Second

// newLiveOutputs opens what the live options ask for before the first
// request: --live's file (checked, and created unless it is a FIFO, whose
// open waits for a reader on the sink's goroutine), the --metrics listener.
// stdout is where --live - writes. The error is the message to print.
func newLiveOutputs(o *cliOptions, stdout, stderr io.Writer) (*liveOutputs, error) {
	s := &o.Live
	if !s.any() {
		return nil, nil
	}
	l := &liveOutputs{runID: liveRunID(o), linger: s.MetricsLinger, errw: stderr}
	if s.File != "" {
		open, closeF, err := openLiveFile(s.File, stdout)
		if err != nil {
			return nil, fmt.Errorf("--live %v", err)
		}
		l.name, l.closeF = s.File, closeF
		l.file = live.NewLineWriter(open)
		l.fileSub = l.hub.Attach("--live", 0, l.file.Handle)
	}
	if s.MetricsAddr != "" {
		m := &live.Metrics{}
		srv, err := live.Listen(s.MetricsAddr, m)
		if err != nil {
			l.close(context.Background(), 0, false)
			return nil, fmt.Errorf("--metrics: %v", err)
		}
		l.metrics = srv
		l.hub.Attach("--metrics", 0, m.Handle)
		if strings.HasSuffix(s.MetricsAddr, ":0") {
			// The port was the system's choice: say which.
			fmt.Fprintf(stderr, "gab: --metrics serves http://%s/metrics\n", srv.Addr())
		}
	}
	if s.RemoteWrite != "" {
		rw, err := live.NewRemoteWriter(s.RemoteWrite, "gab/"+version)
		if err != nil {
			l.close(context.Background(), 0, false)
			return nil, fmt.Errorf("--remote-write: %v", err)
		}
		l.rw = rw
		l.rwSub = l.hub.Attach("--remote-write", 0, rw.Handle)
	}
	return l, nil
}

// openLiveFile checks --live's path and returns how its sink opens it: a
// FIFO (or another file that is not regular) is opened by the sink, which
// may wait for a reader; a regular file is created now; "-" is stdout.
func openLiveFile(name string, stdout io.Writer) (open func() (io.Writer, error), closeF func() error, err error) {
	if name == "-" {
		return func() (io.Writer, error) { return stdout, nil }, func() error { return nil }, nil
	}
	printable := chart.Printable(name)
	if err := outfile.CheckWritable(name); err != nil {
		return nil, nil, errors.New(chart.Printable(err.Error()))
	}
	if fi, err := os.Stat(name); err == nil && fi.Mode()&fs.ModeType != 0 && fi.Mode()&fs.ModeDevice == 0 {
		// A FIFO: opened by the sink (O_APPEND: never truncated).
		var f *os.File
		open = func() (io.Writer, error) {
			var err error
			f, err = os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", printable, errors.Unwrap(err))
			}
			return f, nil
		}
		closeF = func() error {
			if f == nil {
				return nil
			}
			return f.Close()
		}
		return open, closeF, nil
	}
	f, err := outfile.Create(name)
	if err != nil {
		return nil, nil, errors.New(chart.Printable(err.Error()))
	}
	return func() (io.Writer, error) { return f, nil }, f.Close, nil
}

// liveRunID is the run_id label: --run-id's (a sharded run's), else the
// time gab started and its process id.
func liveRunID(o *cliOptions) string {
	if o.Shard != nil && o.Shard.RunID != "" {
		return o.Shard.RunID
	}
	return time.Now().UTC().Format("20060102T150405Z") + "-" + strconv.Itoa(os.Getpid())
}

// liveTarget is the target label: the URL without credentials.
func liveTarget(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// begin starts streaming a run of cfg (step names a capacity step or sweep
// point): the timeline is kept (at interval, or the default) and hands its
// intervals to the stream. A nil l streams nothing and returns nil.
func (l *liveOutputs) begin(cfg *client.Config, target, step string, interval time.Duration) *live.Stream {
	if l == nil {
		return nil
	}
	if cfg.Interval <= 0 {
		cfg.Interval = interval
	}
	st := l.hub.Begin(live.Run{ID: l.runID, Target: liveTarget(target), Step: step, Interval: cfg.Interval, Rate: cfg.Rate > 0})
	cfg.OnInterval = st.OnInterval
	return st
}

// finish publishes a run's end: its record (nil when it never started) and
// result.
func (l *liveOutputs) finish(st *live.Stream, sum *report.Run, res *client.Result) {
	if l == nil || st == nil {
		return
	}
	st.Finish(sum, res)
}

// close ends the live outputs once the report is out: the sinks get
// liveClosing to finish, the metrics endpoint then serves the final figures
// for linger more, and stderr gets a line for each sink that lost lines,
// failed or could not finish.
// runInterrupted says an interrupt ended the run itself: then the context
// is already done, and only a second interrupt ends the linger (main).
func (l *liveOutputs) close(ctx context.Context, linger time.Duration, runInterrupted bool) {
	if l == nil {
		return
	}
	late := l.hub.Close(liveClosing)
	if l.metrics != nil {
		if linger > 0 {
			// An interrupt (the context) ends the linger, unless the run
			// itself was interrupted. Whether it was is the run's ending,
			// not the context's state here: an interrupt that came after
			// the run ended, before the linger began, ends the linger.
			stop := ctx.Done()
			if runInterrupted {
				stop = nil
			}
			tm := time.NewTimer(linger)
			select {
			case <-tm.C:
			case <-stop:
			}
			tm.Stop()
		}
		if err := l.metrics.Close(time.Second); err != nil {
			fmt.Fprintf(l.errw, "gab: --metrics: %v\n", err)
		}
	}
	isLate := func(s *live.Sub) bool {
		for _, x := range late {
			if x == s {
				return true
			}
		}
		return false
	}
	if l.file != nil {
		switch err := l.file.Err(); {
		case err != nil:
			fmt.Fprintf(l.errw, "gab: --live %s\n", chart.Printable(err.Error()))
		case isLate(l.fileSub):
			fmt.Fprintf(l.errw, "gab: --live %s: its reader did not take the last lines within %v\n", chart.Printable(l.name), liveClosing)
		case l.fileSub.Dropped() > 0:
			fmt.Fprintf(l.errw, "gab: --live %s: %d interval lines dropped (the reader fell behind)\n", chart.Printable(l.name), l.fileSub.Dropped())
		}
		if !isLate(l.fileSub) {
			if err := l.closeF(); err != nil {
				fmt.Fprintf(l.errw, "gab: --live %s\n", chart.Printable(err.Error()))
			}
		}
	}
	if l.rw != nil {
		pushed, failed, err := l.rw.Status()
		switch {
		case isLate(l.rwSub):
			fmt.Fprintf(l.errw, "gab: --remote-write %s: the last push did not finish within %v\n", chart.Printable(l.rw.URL()), liveClosing)
		case err != nil:
			fmt.Fprintf(l.errw, "gab: --remote-write %s: the last push failed: %s\n", chart.Printable(l.rw.URL()), chart.Printable(err.Error()))
		case failed > 0 || l.rwSub.Dropped() > 0:
			fmt.Fprintf(l.errw, "gab: --remote-write %s: %d pushes made, %d failed, %d intervals skipped (the receiver was slow)\n",
				chart.Printable(l.rw.URL()), pushed, failed, l.rwSub.Dropped())
		}
	}
}

// startLive opens the live outputs and streams the run (stdout: where
// --live - writes). done says gab must exit with status.
func (r *plainRun) startLive(stdout io.Writer) (status int, done bool) {
	if !r.o.Live.any() {
		return exitOK, false
	}
	if stdout == nil {
		stdout = r.out
	}
	l, err := newLiveOutputs(r.o, stdout, r.errw)
	if err != nil {
		fmt.Fprintf(r.errw, "gab: %v\n", err)
		return exitError, true
	}
	r.stream = l
	target := r.o.URL
	if target == "" {
		target = r.cfg.Target.Raw
	}
	r.runStream = l.begin(&r.cfg, target, "", timelineInterval(r.o))
	return exitOK, false
}

// closeLive ends the live outputs after the report: stdout first, so that
// the report is out while --metrics-linger keeps the endpoint up.
func (r *plainRun) closeLive(ctx context.Context) {
	if r.stream == nil {
		return
	}
	_ = r.out.Flush() // an error stays in the writer and is reported at the end
	r.stream.close(ctx, r.o.Live.MetricsLinger, r.interrupted)
}

// subcommandLive opens the live outputs of gab sweep or gab capacity (cmd)
// from a run's options o: every run they make streams as a run of its own,
// named by its step or point. --live - is refused: their table is stdout's.
func subcommandLive(o *cliOptions, cmd string, stderr io.Writer) (l *liveOutputs, status int, done bool) {
	if !o.Live.any() {
		return nil, exitOK, false
	}
	if o.Live.File == "-" {
		fmt.Fprintf(stderr, "%s: --live - needs stdout, where the table goes: give --live a file\n", cmd)
		return nil, exitUsage, true
	}
	l, err := newLiveOutputs(o, nil, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return nil, exitError, true
	}
	return l, exitOK, false
}

// closeAfter ends a subcommand's live outputs after its table (out is
// flushed first, so that the table is out during --metrics-linger).
func (l *liveOutputs) closeAfter(ctx context.Context, out interface{ Flush() error }, o *cliOptions) {
	if l == nil {
		return
	}
	_ = out.Flush() // the command's caller reports a write error
	// The subcommand has ended when this runs: an interrupt by now ended
	// its runs (a sweep or a search stops on it).
	l.close(ctx, o.Live.MetricsLinger, ctx.Err() != nil)
}
