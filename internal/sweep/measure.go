package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"gab/client"
	"gab/internal/abprint"
	"gab/internal/hoststat"
	"gab/internal/live"
	"gab/internal/runcmd"
	"gab/internal/servercpu"
	"gab/report"
)

// This file measures the sweep's runs: each point's command line is parsed
// by the root as a single run's (PointRun), and each run is measured through
// the single run's measurement (internal/runcmd).

// PointRun is a point's single-run command line, parsed.
type PointRun struct {
	Options     *runcmd.Options
	CommandLine []string // the command line with -A and -P hidden, as its JSON document shows it
}

// ForPoint makes a point's parsed command line, o, the sweep's: the ramp-up
// (-t is the measured time, after it), --demo's server inside gab, and
// --post-sizes' generated body (built just before each run).
func (s *Settings) ForPoint(o *runcmd.Options, demo bool) error {
	o.Config.RampUp = s.Ramp
	if o.Config.TimeLimit > 0 {
		o.Config.TimeLimit += s.Ramp // -t is the measured time, after the ramp-up
	}
	if demo {
		o.Config.NoSpin = true // the built-in server runs on gab's own cores
		o.Demo = true          // its verdicts: the server runs inside gab
	}
	if s.SizeOption == "--post-sizes" {
		spec := &o.Config.Spec
		if spec.HasBody || spec.Method != "GET" {
			return errors.New("--post-sizes cannot be used with -p, -u, -i or -m (it POSTs a generated body)")
		}
		// The request and its body are built just before each run
		// (setPostBody), so that only one run's body is in memory.
		spec.Method, spec.Body, spec.HasBody = "POST", nil, true
		o.Config.Request, o.Config.HeadLen = nil, 0
	}
	return nil
}

// Ending is why the sweep's runs m end gab sweep with an error ("": they
// do not): an error of --before, an interruption, or runs that ended in an
// error.
func (m *Runs) Ending() string {
	switch {
	case m.BeforeErr != nil:
		return fmt.Sprintf("%v; stopped after %d of %d runs, the outputs hold what was measured, marked incomplete", m.BeforeErr, len(m.Runs), m.Planned)
	case m.Interrupted:
		return fmt.Sprintf("interrupted after %d of %d runs; the outputs hold what was measured, marked incomplete", len(m.Runs), m.Planned)
	case m.Fatal > 0:
		return fmt.Sprintf("%d of %d runs ended with an error (see the table's notes)", m.Fatal, m.Planned)
	}
	return ""
}

// Runner measures the sweep's runs (Loop.Measure), each as a single run is
// measured (runcmd.MeasureRun, then report.Summarize and the run's JSON
// document).
type Runner struct {
	Settings *Settings
	Points   map[Point]PointRun
	Meters   map[int]runcmd.Meter // by target (none without --server-pid)
	// Verbose (-v) prints each run's ab report on Out.
	Verbose     bool
	Out, Stderr io.Writer
	Live        *live.Outputs // --live, --metrics, --remote-write (nil without)
	// Status is the live line under stderr while the runs go, on a terminal
	// (nil otherwise, and with -v, whose reports go to stdout).
	Status *abprint.StatusLine
}

// Measure is Loop.Measure: run r of the plan (its order-th, done of planned
// so far), its --post-sizes body built for it alone.
func (rn *Runner) Measure(ctx context.Context, r Run, order, done, planned int) *RunResult {
	s, p := rn.Settings, rn.Points[r.Point]
	post := s.SizeOption == "--post-sizes"
	if post {
		setPostBody(&p.Options.Config, s.Sizes[r.Point.Size].Bytes)
	}
	if rn.Status != nil {
		rn.Status.Prefix = fmt.Sprintf("[%d/%d] %s: ", done+1, planned, RunName(s, r))
	}
	rr := rn.measure(ctx, r, order, p, rn.Meters[r.Target])
	if post {
		dropPostBody(&p.Options.Config)
		if s.Sizes[r.Point.Size].Bytes >= bigPostBody {
			runtime.GC() // the next body is not allocated beside this one
		}
	}
	return rr
}

// measure runs one repetition of a point through the single run's
// measurement (runcmd.MeasureRun; meter is its target's, the zero
// runcmd.Meter without --server-pid, which then measures the server it finds
// listening on a loopback URL's port) and returns what it measured.
func (rn *Runner) measure(ctx context.Context, r Run, order int, p PointRun, meter runcmd.Meter) *RunResult {
	s, o, verbose, out, lv, status := rn.Settings, p.Options, rn.Verbose, rn.Out, rn.Live, rn.Status
	cfg := o.Config
	stream := lv.Begin(&cfg, o.URL, RunName(s, r), client.DefaultInterval)
	cfg.Extended = true // the latency histogram and the phases' exact moments
	cfg.Quiet = true
	if verbose {
		cfg.Events = abprint.NewSink(out, rn.Stderr, cfg.Verbosity, 0)
	}
	rr := &RunResult{Run: r, Order: order, URL: o.URL, Start: time.Now()}
	runner, err := client.New(cfg)
	ms := &runcmd.Measured{}
	if err == nil {
		meter.FindServer(&cfg)
		if status != nil {
			status.Start(runner, cfg.Requests, cfg.TimeLimit)
		}
		ms = runcmd.MeasureRun(ctx, runner, &meter)
		if status != nil {
			status.Stop()
		}
		if d := ms.Machine; d.Checked(hoststat.FileStat) {
			rr.HostCPU, rr.HostCPUKnown = d.CPU, true
		}
		err = ms.Err
		if ms.Server != nil {
			rr.ServerCPU, rr.ServerCPUKnown = ms.Server.CPU, true
		}
	}
	res, cpu, srvErr := ms.Res, ms.CPU, ms.ServerErr
	var runErr *client.FatalError
	if err != nil {
		runErr = runcmd.FatalError(err)
		rr.Error = strings.TrimSpace(runErr.Message)
	}
	if srvErr != nil && rr.Error == "" {
		rr.Error = srvErr.Error()
	}
	sum := report.NotStarted(p.CommandLine, rr.Start, "", 0)
	if res != nil {
		sum = ms.Summarize(o, p.CommandLine)
		rp := sum.Report
		rr.RPS = rp.RequestsPerSecond
		rr.Complete, rr.Failed = rp.CompleteRequests, rp.FailedRequests
		rr.Seconds, rr.ReadBytes, rr.SentBytes = rp.TimeTakenS, rp.TotalTransferredBytes, rp.TotalBodySentBytes
		rr.ClientCPU, rr.ClientCPUKnown = cpu.User+cpu.Sys, cpu.Known
		if verbose {
			label := s.Targets[r.Target].Label
			fmt.Fprintf(out, "\n== run %d: %s c=%d repetition %d: %s\n", order+1, label, s.Concurrency[r.Point.Concurrency], r.Rep+1, o.URL)
			_ = report.WriteText(out, sum) // a stdout error is reported when the table is written
		}
	}
	if runErr != nil {
		sum.SetError(runErr.Message, runErr.Exit)
	}
	lv.Finish(stream, sum, res)
	rr.Document = sum
	rr.Ending = rr.Document.Ending
	return rr
}

// bigPostBody is the --post-sizes body past which the sweep collects it as
// soon as its run ends.
const bigPostBody = 1 << 20

// setPostBody builds a --post-sizes run's request with its generated body of
// n bytes (at most MaxPostSize). The body is held once: Spec.Body (what
// HTTP/2 and CGI send) is the request's tail, and every connection sends the
// same bytes. dropPostBody releases it after the run.
func setPostBody(cfg *client.Config, n int64) {
	cfg.Request, cfg.HeadLen = client.BuildRequestWithBody(cfg.Spec, int(n), fillBody)
	cfg.Spec.Body = cfg.Request[cfg.HeadLen:]
}

// dropPostBody lets the garbage collector have a run's generated body.
func dropPostBody(cfg *client.Config) {
	cfg.Request, cfg.HeadLen, cfg.Spec.Body = nil, 0, nil
}

// fillBody writes --post-sizes' body: printable text, a 37-byte pattern
// repeated.
func fillBody(b []byte) {
	const pattern = "abcdefghijklmnopqrstuvwxyz0123456789\n"
	n := copy(b, pattern)
	for n < len(b) {
		n += copy(b[n:], b[:n])
	}
}

// ServerMeters reads --server-pid: PIDS for every target, or LABEL=PIDS for
// one (repeatable), as each target's meter (runcmd.Meter; its label is the
// --server-pid label that chose it, "" for PIDS given for every target).
// Every process must exist now.
func ServerMeters(specs []string, s *Settings) (map[int]runcmd.Meter, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	byLabel := map[string][]int{}
	for _, spec := range specs {
		label, pids, err := ParseServerPID(spec)
		if err != nil {
			return nil, err
		}
		if _, dup := byLabel[label]; dup {
			return nil, fmt.Errorf("--server-pid given twice for %q", label)
		}
		byLabel[label] = pids
	}
	meters := map[int]runcmd.Meter{}
	s.ServerPIDs = map[string][]int{}
	known := map[string]bool{"": true}
	for i, t := range s.Targets {
		known[t.Label] = true
		label := t.Label
		pids, ok := byLabel[label]
		if !ok {
			if pids, ok = byLabel[""]; !ok {
				continue
			}
			label = ""
		}
		m, err := servercpu.New(pids)
		if err != nil {
			return nil, err
		}
		meters[i] = runcmd.Meter{Server: m, Label: label}
		s.ServerPIDs[t.Label] = pids
	}
	for label := range byLabel {
		if !known[label] {
			return nil, fmt.Errorf("--server-pid: no target is labelled %q", label)
		}
	}
	return meters, nil
}

// ParseServerPID reads a --server-pid value, [LABEL=]PID[,PID...], for a run
// and for gab sweep alike. A label is a word of letters, digits, '.', '_'
// and '-' (a sweep target's label).
func ParseServerPID(spec string) (label string, pids []int, err error) {
	label, list, labelled := strings.Cut(spec, "=")
	if !labelled {
		label, list = "", spec
	} else if !IsLabel(label) {
		return "", nil, fmt.Errorf("--server-pid: %q is not a label (letters, digits, '.', '_', '-') in %q", label, spec)
	}
	pids, err = servercpu.ParsePIDs(list)
	return label, pids, err
}
