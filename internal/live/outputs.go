package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gab/client"
	"gab/internal/outfile"
	"gab/internal/printable"
	"gab/report"
)

// This file is gab's live outputs as the command line asks for them: --live
// FILE (NDJSON, one line per interval as it closes), --metrics ADDR (a
// Prometheus endpoint, --metrics-linger) and --remote-write URL, each a sink
// of one Hub, beside which gab attaches others (--dashboard's). The engine's
// timeline hands each closed interval to a Stream (client.Config.OnInterval)
// from its collector goroutine; the hub passes it on to each sink's own
// goroutine through a bounded queue, so no sink slows the run.

// Flags hold the live options while they are parsed.
type Flags struct {
	File, Metrics, RemoteWrite string
}

// AddFlags adds the live options to fs; linger parses --metrics-linger's
// duration (gab's durations: 1.5s, 200ms or plain seconds).
func (f *Flags) AddFlags(fs *pflag.FlagSet, linger pflag.Value) {
	fs.StringVar(&f.File, "live", "", "write each interval's figures as a JSON line to `FILE` as the run goes, and a last line with the totals (- : stdout, the report then goes to stderr)")
	fs.StringVar(&f.Metrics, "metrics", "", "serve the run's figures to Prometheus at http://`ADDR`/metrics ([HOST]:PORT; loopback unless HOST says otherwise)")
	fs.Var(linger, "metrics-linger", "with --metrics, keep serving `DURATION` after the run (for the last scrape)")
	fs.StringVar(&f.RemoteWrite, "remote-write", "", "push the run's figures to a Prometheus remote-write `URL` after each interval and at the end")
}

// Spec checks the live options parsed (lingerSet: --metrics-linger was
// given, as linger) and says what they ask for.
func (f *Flags) Spec(lingerSet bool, linger time.Duration) (Spec, error) {
	s := Spec{File: f.File, MetricsLinger: linger, RemoteWrite: f.RemoteWrite}
	if f.Metrics != "" {
		addr, err := ListenAddress(f.Metrics)
		if err != nil {
			return s, fmt.Errorf("--metrics %s: %v", printable.String(f.Metrics), err)
		}
		s.MetricsAddr = addr
	}
	if lingerSet {
		if f.Metrics == "" {
			return s, errors.New("--metrics-linger needs --metrics")
		}
		if s.MetricsLinger <= 0 {
			return s, errors.New("--metrics-linger must be a positive duration")
		}
	}
	if s.RemoteWrite != "" {
		if _, err := NewRemoteWriter(s.RemoteWrite, ""); err != nil {
			return s, fmt.Errorf("--remote-write: %v", err)
		}
	}
	return s, nil
}

// Spec is what the live options ask for.
type Spec struct {
	File          string // --live ("-": stdout)
	MetricsAddr   string // --metrics, as host:port
	MetricsLinger time.Duration
	RemoteWrite   string
}

// Any says a live output is asked for.
func (s *Spec) Any() bool { return s.File != "" || s.MetricsAddr != "" || s.RemoteWrite != "" }

// Outputs are a process's live sinks.
type Outputs struct {
	hub     Hub
	runID   string
	file    *LineWriter
	fileSub *Sub
	name    string // --live's name as given
	closeF  func() error
	metrics *Server
	rw      *RemoteWriter
	rwSub   *Sub
	errw    io.Writer
	// Closing bounds the wait for the sinks after the run (the final line
	// to a reader that does not read, the final push to a slow receiver).
	Closing time.Duration
}

// DefaultClosing is Outputs.Closing unless it is set.
const DefaultClosing = 5 * time.Second

// Open opens what s asks for before the first request: --live's file
// (checked, and created unless it is a FIFO, whose open waits for a reader
// on the sink's goroutine), the --metrics listener, the remote writer.
// runID labels the runs; agent is the remote writer's User-Agent; stdout is
// where --live - writes, stderr where the outputs' notes go. An empty s
// gives Outputs without a sink, for others to Attach. The error is the
// message to print.
func Open(s Spec, runID, agent string, stdout, stderr io.Writer) (*Outputs, error) {
	l := &Outputs{runID: runID, errw: stderr, Closing: DefaultClosing}
	if s.File != "" {
		open, closeF, err := openFile(s.File, stdout)
		if err != nil {
			return nil, fmt.Errorf("--live %v", err)
		}
		l.name, l.closeF = s.File, closeF
		l.file = NewLineWriter(open)
		l.fileSub = l.hub.Attach("--live", 0, l.file.Handle)
	}
	if s.MetricsAddr != "" {
		m := &Metrics{}
		srv, err := Listen(s.MetricsAddr, m)
		if err != nil {
			l.Close(context.Background(), 0, false)
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
		rw, err := NewRemoteWriter(s.RemoteWrite, agent)
		if err != nil {
			l.Close(context.Background(), 0, false)
			return nil, fmt.Errorf("--remote-write: %v", err)
		}
		l.rw = rw
		l.rwSub = l.hub.Attach("--remote-write", 0, rw.Handle)
	}
	return l, nil
}

// Attach adds a sink of the gab process's own (Hub.Attach).
func (l *Outputs) Attach(name string, depth int, handle Handler) *Sub {
	return l.hub.Attach(name, depth, handle)
}

// openFile checks --live's path and returns how its sink opens it: a FIFO
// (or another file that is not regular) is opened by the sink, which may
// wait for a reader; a regular file is created now; "-" is stdout.
func openFile(name string, stdout io.Writer) (open func() (io.Writer, error), closeF func() error, err error) {
	if name == "-" {
		return func() (io.Writer, error) { return stdout, nil }, func() error { return nil }, nil
	}
	shown := printable.String(name)
	if err := outfile.CheckWritable(name); err != nil {
		return nil, nil, errors.New(printable.String(err.Error()))
	}
	if fi, err := os.Stat(name); err == nil && fi.Mode()&fs.ModeType != 0 && fi.Mode()&fs.ModeDevice == 0 {
		// A FIFO: opened by the sink (O_APPEND: never truncated).
		var f *os.File
		open = func() (io.Writer, error) {
			var err error
			f, err = os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", shown, errors.Unwrap(err))
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
		return nil, nil, errors.New(printable.String(err.Error()))
	}
	return func() (io.Writer, error) { return f, nil }, f.Close, nil
}

// RunID is the run_id label: given (--run-id's, a sharded run's) unless
// empty, else the time gab started and its process id.
func RunID(given string) string {
	if given != "" {
		return given
	}
	return time.Now().UTC().Format("20060102T150405Z") + "-" + strconv.Itoa(os.Getpid())
}

// target is the target label: the URL without credentials.
func target(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// Begin starts streaming a run of cfg against the URL target (step names a
// capacity step or sweep point): the timeline is kept (at interval, or the
// default) and hands its intervals to the stream. A nil l streams nothing
// and returns nil.
func (l *Outputs) Begin(cfg *client.Config, url, step string, interval time.Duration) *Stream {
	if l == nil {
		return nil
	}
	if cfg.Interval <= 0 {
		cfg.Interval = interval
	}
	st := l.hub.Begin(Run{ID: l.runID, Target: target(url), Step: step, Interval: cfg.Interval, Rate: cfg.Rate > 0})
	cfg.OnInterval = st.OnInterval
	return st
}

// Finish publishes a run's end: its record (nil when it never started) and
// result.
func (l *Outputs) Finish(st *Stream, sum *report.Run, res *client.Result) {
	if l == nil || st == nil {
		return
	}
	st.Finish(sum, res)
}

// CloseAfter ends a subcommand's live outputs after its table (out is
// flushed first, so that the table is out during --metrics-linger, linger).
func (l *Outputs) CloseAfter(ctx context.Context, out interface{ Flush() error }, linger time.Duration) {
	if l == nil {
		return
	}
	_ = out.Flush() // the command's caller reports a write error
	// The subcommand has ended when this runs: an interrupt by now ended
	// its runs (a sweep or a search stops on it).
	l.Close(ctx, linger, ctx.Err() != nil)
}

// Close ends the live outputs once the report is out: the sinks get
// Closing to finish, the metrics endpoint then serves the final figures
// for linger more, and stderr gets a line for each sink that lost lines,
// failed or could not finish. runInterrupted says an interrupt ended the
// run itself: then the context is already done, and only a second
// interrupt ends the linger (gab's main).
func (l *Outputs) Close(ctx context.Context, linger time.Duration, runInterrupted bool) {
	if l == nil {
		return
	}
	late := l.hub.Close(l.Closing)
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
	l.closeFile(slices.Contains(late, l.fileSub))
	l.closeRemoteWrite(slices.Contains(late, l.rwSub))
}

// closeFile says what became of --live's lines (late: its reader did not
// take the last ones in time) and closes the file unless late.
func (l *Outputs) closeFile(late bool) {
	if l.file == nil {
		return
	}
	switch err := l.file.Err(); {
	case err != nil:
		fmt.Fprintf(l.errw, "gab: --live %s\n", printable.String(err.Error()))
	case late:
		fmt.Fprintf(l.errw, "gab: --live %s: its reader did not take the last lines within %v\n", printable.String(l.name), l.Closing)
	case l.fileSub.Dropped() > 0:
		fmt.Fprintf(l.errw, "gab: --live %s: %d interval lines dropped (the reader fell behind)\n", printable.String(l.name), l.fileSub.Dropped())
	}
	if !late {
		if err := l.closeF(); err != nil {
			fmt.Fprintf(l.errw, "gab: --live %s\n", printable.String(err.Error()))
		}
	}
}

// closeRemoteWrite says what became of the remote writer's pushes (late:
// the last did not finish in time).
func (l *Outputs) closeRemoteWrite(late bool) {
	if l.rw == nil {
		return
	}
	pushed, failed, err := l.rw.Status()
	switch {
	case late:
		fmt.Fprintf(l.errw, "gab: --remote-write %s: the last push did not finish within %v\n", printable.String(l.rw.URL()), l.Closing)
	case err != nil:
		fmt.Fprintf(l.errw, "gab: --remote-write %s: the last push failed: %s\n", printable.String(l.rw.URL()), printable.String(err.Error()))
	case failed > 0 || l.rwSub.Dropped() > 0:
		fmt.Fprintf(l.errw, "gab: --remote-write %s: %d pushes made, %d failed, %d intervals skipped (the receiver was slow)\n",
			printable.String(l.rw.URL()), pushed, failed, l.rwSub.Dropped())
	}
}
