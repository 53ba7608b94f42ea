package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"gab/client"
	"gab/gnuplot"
	"gab/internal/capacity"
	"gab/internal/chart"
	"gab/internal/hoststat"
	"gab/internal/outfile"
	"gab/internal/servercpu"
	"gab/internal/sweep"
	"gab/internal/threshold"
	"gab/report"
)

// This file is gab capacity: the highest constant rate at which each target
// meets the latency objectives (--slo) on the corrected latencies and keeps
// the rate (internal/capacity's search). Every step is a run of its own at
// a constant --rate on kept-alive connections, after a settle (a warm-up at
// the same rate that no figure counts), measured as a single run is
// (measureRun). Several targets are searched step by step in turn.

// capacityOptions are gab capacity's own options.
type capacityOptions struct {
	slo                     []string
	step, settle            durationValue
	start, maxRate, resolve float64
	repeat, attempts, noise int
	format, jsonFile        string
	plotFile, htmlFile      string
	demo, help              bool
}

func newCapacityFlagSet(co *capacityOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("gab capacity", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.StringArrayVar(&co.slo, "slo", nil, "an objective every passing step meets on the corrected latencies: `EXPR` as --fail-if's (p99<20ms, p99.9<100ms, mean<5ms, failed<0.1%); repeatable, at least one")
	fs.Var(&co.step, "step", "each step's measured `DURATION` (default 10s)")
	fs.Var(&co.settle, "settle", "each step's first `DURATION` at its rate, on its connections, left out of its figures (default a fifth of --step, 100ms to 2s; 0: none)")
	fs.Float64Var(&co.start, "start", 100, "the first step's `RATE` (requests per second); the climb doubles it")
	fs.Float64Var(&co.maxRate, "max-rate", 1e7, "no step above `RATE`")
	fs.Float64Var(&co.resolve, "resolution", 5, "stop bisecting when the failing and passing rates are within `PCT` % (0.1 to 100)")
	fs.IntVar(&co.attempts, "attempts", 2, "a rate fails when `K` steps in a row fail (2 to 10; a busy machine's stall fails a step, never passes one)")
	fs.IntVar(&co.repeat, "repeat", 1, "search `R` times (1 to 100); the capacity is the geometric mean of those found with its 95 % interval (on a log scale), the others' bounds beside it")
	fs.IntVar(&co.noise, "noise", 0, "before each target's searches, `K` steps at a quarter of --start (at least 1 req/s) measure the machine's latency noise and say when the objectives lie inside it (0 to 10; 0: none)")
	fs.StringVar(&co.format, "format", "text", "output `text|json`")
	fs.StringVar(&co.jsonFile, "json", "", "also write the document to `FILE`")
	fs.StringVar(&co.plotFile, "plot", "", "draw the knee (p99 against achieved req/s, corrected and uncorrected) into `FILE`.png|.svg|.pdf with gnuplot")
	fs.StringVar(&co.htmlFile, "html", "", "write a self-contained HTML report (the knee, every step, the ranking) to `FILE`")
	fs.BoolVar(&co.demo, "demo", false, "search the built-in server")
	fs.BoolVarP(&co.help, "help", "h", false, "print this help")
	return fs
}

const capacityUsage = `Usage: %s capacity --slo EXPR [--slo EXPR ...] [ab options] [capacity options] TARGET...
TARGET is URL or LABEL=URL. The highest constant rate at which every objective holds on the
corrected latencies (from each request's intended send time) and at least 98 %% of the rate is
achieved: a geometric climb until a rate fails (--attempts steps in a row), then a bisection.
Each step is a run at a constant --rate: --settle, then --step measured, on the same kept-alive
connections. Unless an objective on failed is given, failed<0.1%% is one, and unless one on
non2xx is given, non2xx<0.1%% is one: an answer that is not 2xx (a 503 of a server shedding load)
is not capacity. Several targets are searched step by step in turn and ranked. ab's options apply to every step, except:
    -c N            the most connections a step may open (default 256); a step opens
                    rate x the largest latency objective x 1.5 of them, at least 2
    -n, -t, --rate, --warmup    set by the search; -k and -r are implied (a server's
                    resets are failures counted against the objectives)
    --server-pid [LABEL=]PID[,PID...]   the server's CPU in every step and at the capacity
                    (one TARGET; without it, the processes listening on a loopback URL's port)
A failing step where gab itself was at its limit (its CPU at the cores it may use, its goroutines
waiting for a CPU, a schedule behind with connections free; or --demo's server in its process)
ends the search: the capacity is then "at least", the client's. Each step carries a single run's
busy-machine and kernel-drop verdicts; a search whose lowest failing rate failed only in steps on a
busy machine ends "disturbed: the machine was busy", at least what passed.
Capacity options:
`

// capacityDefaultConns is -c's default for gab capacity.
const capacityDefaultConns = 256

// capacityArgs is gab capacity's command line, split.
type capacityArgs struct {
	ab      []string // ab's options for every step
	conns   int      // -c (0: not given)
	targets []string
	opts    capacityOptions
	fs      *pflag.FlagSet // capacity's own options, parsed
}

// splitCapacityArgs separates ab's options, -c, capacity's own options and
// the targets (ab's grammar for the short options, which come before the
// first target; long options anywhere).
func splitCapacityArgs(args []string) (*capacityArgs, error) {
	ca := &capacityArgs{}
	ca.fs = newCapacityFlagSet(&ca.opts)
	var err error
	ca.ab, ca.targets, err = splitSubArgs(args, subArgRules{
		own: ca.fs,
		long: func(name string) error {
			switch name {
			case "dashboard", "dashboard-linger":
				return fmt.Errorf("--%s does not apply to gab capacity (it serves one run's report)", name)
			case "rate", "warmup", "no-cap", "extended", "hlog", "interval", "progress", "fail-if", "histogram", "version",
				"shard", "shards", "run-id", "start-at", "start-at-force":
				return fmt.Errorf("--%s does not apply to gab capacity", name)
			}
			return nil
		},
		flag: func(c byte) (bool, error) {
			switch c {
			case 'h':
				ca.opts.help = true
				return true, nil
			case 'k':
				return true, nil // every step keeps its connections alive
			case 'w', 'V':
				return false, fmt.Errorf("-%c does not apply to gab capacity", c)
			}
			return false, nil
		},
		value: func(c byte, value string) (bool, error) {
			switch c {
			case 'c':
				n, err := strconv.Atoi(value)
				if err != nil || n < 1 || n > maxConcurrency {
					return false, fmt.Errorf("-c %q: the most connections a step may open, 1 to %d", value, maxConcurrency)
				}
				ca.conns = n
				return false, nil
			case 'n', 't', 'e', 'g', 'v':
				return false, fmt.Errorf("-%c does not apply to gab capacity", c)
			}
			return true, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return ca, nil
}

// capacitySettings are the search's settings, checked.
type capacitySettings struct {
	objectives   []threshold.Threshold
	latencyMax   time.Duration // the largest latency objective (1s without one)
	latencyGiven bool          // an objective on latency was given
	step         time.Duration
	settle       time.Duration
	conns        int
	inProcess    bool // --demo: the server shares gab's process
	co           *capacityOptions
}

// settings checks capacity's own options.
func (ca *capacityArgs) settings() (*capacitySettings, error) {
	co := &ca.opts
	s := &capacitySettings{co: co, conns: capacityDefaultConns, step: 10 * time.Second, latencyMax: 0}
	if ca.conns > 0 {
		s.conns = ca.conns
	}
	if len(co.slo) == 0 {
		return nil, errors.New("--slo is required: an objective such as --slo 'p99<20ms'")
	}
	hasFailed, hasNon2xx := false, false
	for _, e := range co.slo {
		t, err := report.ParseThreshold(e)
		if err != nil {
			return nil, errors.New(strings.Replace(err.Error(), "--fail-if", "--slo", 1))
		}
		if !capacity.StepFigure(t.Metric) {
			return nil, fmt.Errorf("--slo %q: an objective is on latency (pN, median, mean, min, max) or failures (failed, non2xx)", e)
		}
		switch t.Kind {
		case threshold.Latency:
			if t.Op == "<" || t.Op == "<=" {
				s.latencyMax = max(s.latencyMax, time.Duration(t.Value)*time.Microsecond)
				s.latencyGiven = true
			}
		}
		hasFailed = hasFailed || t.Key == "failed"
		hasNon2xx = hasNon2xx || t.Key == "non2xx"
		s.objectives = append(s.objectives, t)
	}
	// The default objectives on failures: a request the server failed or
	// answered with a status other than 2xx was not served.
	for _, d := range []struct {
		given bool
		expr  string
	}{{hasFailed, "failed<0.1%"}, {hasNon2xx, "non2xx<0.1%"}} {
		if !d.given {
			t, _ := report.ParseThreshold(d.expr)
			s.objectives = append(s.objectives, t)
		}
	}
	if s.latencyMax == 0 {
		s.latencyMax = time.Second
	}
	if co.step > 0 {
		s.step = time.Duration(co.step)
	}
	if s.step < 100*time.Millisecond {
		return nil, fmt.Errorf("--step must be at least 100ms, not %v", s.step)
	}
	s.settle = max(min(s.step/5, 2*time.Second), client.MinInterval)
	if ca.fs.Changed("settle") {
		s.settle = time.Duration(co.settle)
		if s.settle != 0 && s.settle < client.MinInterval {
			return nil, fmt.Errorf("--settle must be 0 or at least %v, not %v", client.MinInterval, s.settle)
		}
	}
	switch {
	case math.IsNaN(co.start) || co.start < capacity.MinRate || co.start > capacity.MaxRate:
		return nil, fmt.Errorf("--start must be from %v to 1e9 requests per second", capacity.MinRate)
	case math.IsNaN(co.maxRate) || co.maxRate < co.start || co.maxRate > capacity.MaxRate:
		return nil, errors.New("--max-rate must be from --start to 1e9 requests per second")
	case math.IsNaN(co.resolve) || co.resolve < capacity.MinResolution || co.resolve > capacity.MaxResolution:
		return nil, fmt.Errorf("--resolution must be from %g to %g (per cent)", capacity.MinResolution, capacity.MaxResolution)
	case co.attempts < capacity.MinAttempts || co.attempts > capacity.MaxAttempts:
		return nil, fmt.Errorf("--attempts must be from %d to %d", capacity.MinAttempts, capacity.MaxAttempts)
	case co.noise < 0 || co.noise > capacity.MaxNoise:
		return nil, fmt.Errorf("--noise must be from 0 to %d", capacity.MaxNoise)
	case co.repeat < 1 || co.repeat > capacity.MaxRepeat:
		return nil, fmt.Errorf("--repeat must be from 1 to %d", capacity.MaxRepeat)
	case co.format != "text" && co.format != "json":
		return nil, fmt.Errorf("--format must be text or json, not %q", co.format)
	}
	return s, nil
}

// connsFor is how many connections a step at rate opens: enough to carry
// rate requests per second at the largest latency objective, with half as
// many again to spare, at least 2, at most -c.
func (s *capacitySettings) connsFor(rate float64) int {
	n := math.Ceil(rate * s.latencyMax.Seconds() * 1.5)
	return int(min(max(n, 2), float64(s.conns)))
}

// schedBound is how long gab's goroutines may wait for a CPU (p99) before a
// step counts as client-bound: a fifth of the largest latency objective (the
// error such waits add to the latencies near it), at least
// report.ClientSchedBound.
func (s *capacitySettings) schedBound() time.Duration {
	return max(s.latencyMax/5, report.ClientSchedBound)
}

// capacityTarget is one target with its parsed single-run options.
type capacityTarget struct {
	*capacity.Target
	o *cliOptions
}

// capacityMain is gab capacity; argv[1] is "capacity".
func capacityMain(ctx context.Context, argv []string, out *bufio.Writer, stderr io.Writer) int {
	argv0 := argv[0]
	usage := func(err error) int {
		fmt.Fprintf(stderr, "%s capacity: %v\n", argv0, err)
		return exitUsage
	}
	ca, err := splitCapacityArgs(argv[2:])
	if err != nil {
		return usage(err)
	}
	if ca.opts.help {
		fmt.Fprintf(out, capacityUsage, argv0)
		fmt.Fprint(out, newCapacityFlagSet(&capacityOptions{}).FlagUsages())
		return exitOK
	}
	s, err := ca.settings()
	if err != nil {
		return usage(err)
	}
	if ca.opts.demo {
		if len(ca.targets) > 0 {
			return usage(fmt.Errorf("--demo searches its own server and takes no TARGET (%s)", ca.targets[0]))
		}
		base, stop, err := startDemoServer(nil)
		if err != nil {
			fmt.Fprintf(stderr, "gab: --demo: %v\n", err)
			return exitError
		}
		defer stop()
		ca.targets = []string{"demo=" + base + "/"}
		s.inProcess = true
	}
	targets, err := sweep.ParseTargets(ca.targets, "")
	if err != nil {
		return usage(err)
	}
	var ts []*capacityTarget
	cpus := 0
	for _, t := range targets {
		args := append([]string{argv0}, ca.ab...)
		args = append(args, "-k", "-n", strconv.Itoa(uncappedRequests), "-c", strconv.Itoa(s.conns), t.URL)
		var msgs strings.Builder
		o, _, done := parseArgs(args, io.Discard, &msgs)
		if done {
			return usage(fmt.Errorf("target %s: %s", t.Label, strings.TrimSpace(firstLine(msgs.String()))))
		}
		cpus = o.CPUs
		ct := &capacityTarget{Target: &capacity.Target{Label: t.Label, URL: t.URL}, o: o}
		for range ca.opts.repeat {
			ct.Searches = append(ct.Searches, capacity.Search{Start: ca.opts.start, MaxRate: ca.opts.maxRate, Resolution: ca.opts.resolve / 100, Attempts: ca.opts.attempts})
		}
		ts = append(ts, ct)
	}
	if pids := ts[0].o.ServerPIDs; len(pids) > 0 {
		if len(ts) > 1 {
			return usage(errors.New("--server-pid measures one server: give one TARGET"))
		}
		if _, err := servercpu.New(pids); err != nil {
			fmt.Fprintf(stderr, "gab: %v\n", err)
			return exitError
		}
	}
	if cpus > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cpus))
	}
	doc := &capacity.Document{Tool: "gab", Schema: capacity.Schema, SchemaVersion: capacity.SchemaVersion,
		CommandLine: redactCredentials(argv), Start: time.Now(), Repeat: ca.opts.repeat, Attempts: ca.opts.attempts,
		StepS: s.step.Seconds(), SettleS: s.settle.Seconds(), ResolutionPercent: ca.opts.resolve,
		MinAchieved: capacity.MinAchieved, MaxConnections: s.conns, TieRule: sweep.TieRule,
		Machine: capacity.Machine{CPUs: runtime.NumCPU(), Cores: report.Cores(), LoadStart: hoststat.LoadAverage()}}
	for _, t := range s.objectives {
		doc.Objectives = append(doc.Objectives, t.Expr)
	}
	if s.latencyGiven {
		doc.LatencyObjectiveMs = float64(s.latencyMax.Microseconds()) / 1e3
	}
	if f := ca.opts.plotFile; f != "" {
		if _, err := gnuplot.TerminalFor(f); err != nil {
			return usage(fmt.Errorf("--plot: %v", err))
		}
		if err := gnuplot.CheckImagePath(f); err != nil {
			fmt.Fprintf(stderr, "gab: --plot: %v\n", err)
			return exitError
		}
	}
	for _, f := range []string{ca.opts.jsonFile, ca.opts.htmlFile} {
		if f == "" {
			continue
		}
		if err := outfile.CheckWritable(f); err != nil {
			fmt.Fprintf(stderr, "gab: %v\n", err)
			return exitError
		}
	}
	lv, status, done := subcommandLive(ts[0].o, argv0+" capacity", stderr)
	if done {
		return status
	}
	defer lv.closeAfter(ctx, out, ts[0].o)
	steps := 0
	interrupted := false
	// The machine's latency noise at a low rate, before any search.
	if k := ca.opts.noise; k > 0 {
		rate := max(capacity.MinRate, ca.opts.start/4)
		for _, t := range ts {
			var probes []capacity.Step
			for i := range k {
				steps++
				st := s.measureStep(ctx, t.o, rate, lv, fmt.Sprintf("%d: %s noise %d of %d at %s/s", steps, t.Label, i+1, k, capacity.Rate(rate)))
				if ctx.Err() != nil {
					interrupted = true
					break
				}
				probes = append(probes, st)
			}
			if interrupted {
				break
			}
			t.Noise = capacity.NoiseOf(rate, probes)
			if s.co.format == "text" {
				fmt.Fprintf(stderr, "%s: latency noise: %s\n", chart.Printable(t.Label), t.Noise.Line(capacity.Rate, capacity.Ms, strings.Join(doc.Objectives, ", ")))
			}
		}
	}
	for rep := 0; rep < ca.opts.repeat && !interrupted; rep++ {
		for _, t := range ts {
			// A rate failing below one an earlier search passed is
			// measured once more before it fails.
			for i := range rep {
				t.Searches[rep].Passed = max(t.Searches[rep].Passed, t.Searches[i].Result().CapacityPerS)
			}
		}
		for active := true; active && !interrupted; {
			active = false
			for _, t := range ts {
				srch := &t.Searches[rep]
				rate, ok := srch.Next()
				if !ok {
					continue
				}
				active = true
				steps++
				st := s.measureStep(ctx, t.o, rate, lv, fmt.Sprintf("%d: %s %s/s", steps, t.Label, capacity.Rate(rate)))
				if ctx.Err() != nil {
					interrupted = true
					break
				}
				srch.Record(st)
				if s.co.format == "text" {
					fmt.Fprintf(stderr, "%s: %s/s: %s\n", chart.Printable(t.Label), capacity.Rate(rate), st.Verdict())
				}
			}
		}
	}
	doc.End, doc.Machine.LoadEnd, doc.Complete = time.Now(), hoststat.LoadAverage(), !interrupted
	for _, t := range ts {
		if interrupted {
			for i := range t.Searches {
				t.Searches[i].Interrupt() // a search that had not ended: at least what it passed
			}
		}
		t.Finish()
		doc.Targets = append(doc.Targets, t.Target)
	}
	capacity.Rank(doc.Targets)
	if ca.opts.jsonFile != "" {
		err := outfile.WriteAtomic(ca.opts.jsonFile, func(w io.Writer) error { return writeCapacityJSON(w, doc) })
		if err != nil {
			fmt.Fprintf(stderr, "gab: %v\n", err)
			return exitError
		}
	}
	if err := capacityPictures(ctx, ca.opts.plotFile, ca.opts.htmlFile, doc); err != nil {
		fmt.Fprintf(stderr, "%s capacity: %v\n", argv0, err)
		return exitError
	}
	if ca.opts.format == "json" {
		if err := writeCapacityJSON(out, doc); err != nil {
			return exitError
		}
	} else if err := capacity.WriteText(out, doc); err != nil {
		return exitError
	}
	if interrupted {
		fmt.Fprintf(stderr, "%s capacity: interrupted; the outputs hold what was measured, marked incomplete\n", argv0)
		return exitError
	}
	return exitOK
}

func writeCapacityJSON(w io.Writer, d *capacity.Document) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// measureStep runs one step at rate and judges it: one run at the rate for
// the settle and then the step, on the same connections, whose Window past
// the settle (timeline intervals of the settle's length) is the step's run.
func (s *capacitySettings) measureStep(ctx context.Context, o *cliOptions, rate float64, lv *liveOutputs, step string) capacity.Step {
	cfg := s.stepConfig(o, rate)
	st := capacity.Step{TargetPerS: rate, Connections: cfg.Concurrency}
	// The live outputs stream the step as a run of its own (1 s intervals
	// without a settle; with one, the settle's, which the window reads).
	stream := lv.begin(&cfg, o.URL, step, client.DefaultInterval)
	defer func() {
		if stream != nil {
			lv.finish(stream, nil, nil)
		}
	}()
	runner, err := client.New(cfg)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	// The server's CPU: --server-pid's processes, or those found listening
	// on a loopback URL's port.
	meter := runMeter{label: o.ServerLabel}
	if len(o.ServerPIDs) > 0 {
		if meter.server, err = servercpu.New(o.ServerPIDs); err != nil {
			st.Error = err.Error()
			return st
		}
	}
	meter.findServer(&cfg)
	begin, sched := time.Now(), report.ReadSched()
	ms := measureRun(ctx, runner, &meter)
	m := stepRun{res: ms.res, cpu: ms.cpu, wall: time.Since(begin)}
	m.sched = report.ReadSched().P99Since(sched)
	if ms.err != nil {
		m.err = strings.TrimSpace(fatalError(ms.err).Message)
	} else if ms.serverErr != nil {
		m.err = ms.serverErr.Error()
	}
	if ms.res != nil {
		so := *o
		so.Config = cfg // the step's connections and rate
		m.run = ms.summarize(&so, nil)
		if stream != nil {
			lv.finish(stream, m.run, ms.res)
			stream = nil
		}
	}
	s.judgeStep(&st, &cfg, m, ms.server)
	return st
}

// stepConfig is the run of a step at rate: the target's options at a
// constant rate for the settle and the step, on connsFor(rate) kept-alive
// connections, a reset counted as a failure, the timeline's interval the
// settle's.
func (s *capacitySettings) stepConfig(o *cliOptions, rate float64) client.Config {
	cfg := o.Config
	cfg.Rate, cfg.RateSchedule = rate, nil
	cfg.TimeLimit, cfg.Requests = s.settle+s.step, uncappedRequests
	cfg.Concurrency = s.connsFor(rate)
	cfg.WarmupRequests, cfg.WarmupTime = 0, 0
	cfg.Extended, cfg.Quiet, cfg.Events = true, true, nil
	cfg.KeepGoing = true // -r: a reset connection is a failure counted, not the end of the step
	cfg.Interval = 0
	if s.settle > 0 {
		cfg.Interval = s.settle
	}
	return cfg
}

// stepRun is what a step's run measured.
type stepRun struct {
	res   *client.Result // nil: the run never started
	run   *report.Run    // res summarized (nil without res)
	err   string         // what ended the run early, or a failed server reading
	cpu   report.CPUUsage
	wall  time.Duration // the run's time, settle included
	sched time.Duration // the Go scheduler's wait (p99) over the run
}

// judgeStep fills the step from its run: its figures from the run's window
// past the settle, read through the catalog (the latencies from the
// intended send times), its objectives checked as --fail-if checks a run's,
// its machine verdicts and whether a failure is the client's.
func (s *capacitySettings) judgeStep(st *capacity.Step, cfg *client.Config, m stepRun, srv *report.ServerCPU) {
	st.Error = m.err
	res := m.res
	if srv != nil && res != nil && m.wall > 0 {
		pct := 100 * srv.CPU.Seconds() / m.wall.Seconds()
		st.ServerCPUPercent = &pct
		if res.Complete > 0 {
			us := float64(srv.CPU.Microseconds()) / float64(res.Complete)
			st.ServerCPUUsPerRequest = &us
		}
	}
	if m.run != nil {
		machineVerdicts(st, m.run)
	}
	if res == nil || res.Extra == nil || res.Extra.Rate == nil {
		if st.Error == "" {
			st.Error = "the step measured nothing"
		}
		return
	}
	win, err := s.stepWindow(m)
	if err != nil {
		if st.Error == "" {
			st.Error = "the step's timeline: " + err.Error()
		}
		return
	}
	vs, ok := s.stepFigures(st, win, res)
	st.Kept = st.AchievedPerS >= capacity.MinAchieved*st.TargetPerS
	// The busy share counts the requests still unanswered at the step's
	// end (Result.Outstanding) for their time in flight. While the server
	// has answered nothing at all, every connection waits on it: a schedule
	// behind then is the server's failure, not a client that could not
	// drive the rate.
	busy := win.ConnectionsBusy(cfg.Concurrency)
	if len(res.Outstanding) > 0 && res.Complete == 0 && res.Failed.Total == 0 {
		busy = 1
	}
	cb := report.ClientBound(report.ClientLoad{
		CPU: m.cpu.User + m.cpu.Sys, Wall: m.wall, Cores: report.Cores(),
		Sent: res.Extra.Rate.Sent, Behind: behindPast(res.Extra.Rate.BehindAtEnd, st.TargetPerS, behindGrace), Busy: busy,
		SchedP99: waitedFor(vs, st.Kept, m.sched), SchedBound: s.schedBound(),
	})
	// A step that met every objective at the rate shows the server's
	// capacity whatever the client's limits (they only add to the
	// latencies); a failing one is the client's when the client was at its
	// limit, or when the server runs inside gab (--demo).
	st.Pass = ok && st.Kept && st.Error == ""
	if !st.Pass && s.inProcess {
		cb.Bound, cb.Reasons = true, append(cb.Reasons, "the server runs in gab's own process (--demo): its limit is gab's")
	}
	// Every connection busy while the server answered within the largest
	// objective (uncorrected p99): the queue was in gab's connections.
	st.AtMaxConnections = !st.Pass && cfg.Concurrency >= s.conns && busy >= report.ClientBusyFree &&
		time.Duration(st.UncorrectedP99Us)*time.Microsecond < s.latencyMax
	if !st.Pass && cb.Bound {
		st.ClientBound, st.ClientReasons = true, cb.Reasons
	}
}

// stepWindow is the step's run past its settle: report.Window over the
// timeline's whole intervals (of the settle's length) from the settle on,
// the requests in flight at the end among them; the interval the engine's
// stop cut short is left out, whose time would lower the achieved rate
// with requests due before it. Without a settle, or when the run ended
// early (its error fails the step whatever its figures), the whole run.
func (s *capacitySettings) stepWindow(m stepRun) (*report.Run, error) {
	if s.settle == 0 || m.err != "" || m.run.Timeline == nil {
		return m.run, nil
	}
	return report.Window(m.run, s.settle, m.res.Elapsed/s.settle*s.settle)
}

// stepFigures sets the step's figures from its window, read through the
// catalog (the latencies from each request's intended send time, the
// window's FromIntendedSend view), and checks its objectives on them.
func (s *capacitySettings) stepFigures(st *capacity.Step, win *report.Run, res *client.Result) ([]threshold.Verdict, bool) {
	cor := win.FromIntendedSend()
	if cor == nil {
		cor = win // no corrected latencies: never in rate mode
	}
	st.Complete = int64(figure(win, "complete"))
	st.Non2xx = int64(figure(win, "non2xx"))
	st.AchievedPerS = figure(win, "rps")
	if win.Outstanding != nil {
		st.Outstanding = win.Outstanding.Requests
	}
	us := func(r *report.Run, key string) int64 { return int64(math.Round(figure(r, key) * 1e3)) }
	st.P50Us, st.P99Us, st.P999Us = us(cor, "p50"), us(cor, "p99"), us(cor, "p99.9")
	st.UncorrectedP99Us, st.UncorrectedMeanUs = us(win, "p99"), figure(win, "mean")*1e3
	// What a step counts as failed beyond the catalog's failed (ab's
	// Failed requests, and the requests in flight at the end older than
	// -s): a request gab could not write was not served (ab lists write
	// errors apart), and one unanswered at the end is a failure once older
	// than the largest latency objective.
	extra := int64(win.Report.WriteErrors) + unansweredPast(res, win, s.latencyMax)
	st.Failed = int64(figure(win, "failed")) + extra
	f := cor.ThresholdFigures()
	value := f.Value
	f.Value = func(m threshold.Metric) (float64, bool) {
		v, ok := value(m)
		if ok && m.Key == "failed" {
			v += float64(extra)
		}
		return v, ok
	}
	vs, ok := threshold.CheckAll(s.objectives, f)
	for _, v := range vs {
		st.Objectives = append(st.Objectives, strings.TrimPrefix(v.Line(), "--fail-if "))
	}
	return vs, ok
}

// figure is a catalog figure of the run (0 where it lacks it).
func figure(r *report.Run, key string) float64 {
	f, _ := report.FigureByKey(key)
	v, _ := f.Value(r)
	return v
}

// unansweredPast is how many of the requests unanswered at the run's end
// (in the window) are older than bound from their intended send times, or
// -s when shorter, beyond those the catalog already counts as failed (older
// than -s from their starts).
func unansweredPast(res *client.Result, win *report.Run, bound time.Duration) int64 {
	o := win.Outstanding
	if o == nil {
		return 0
	}
	if res.Timeout > 0 {
		bound = min(bound, res.Timeout)
	}
	var n int64
	for _, f := range res.Outstanding {
		if f.Corrected > bound {
			n++
		}
	}
	return max(0, n-o.Failed)
}

// machineVerdicts copies to the step the single-run verdicts of its run
// (settle and step: report.Summarize's judge, the machine's /proc/stat and
// TCP counters over the run) that say the machine, not the server, may have
// failed it: busy_machine and kernel_drops.
func machineVerdicts(st *capacity.Step, run *report.Run) {
	lines := run.VerdictLines()
	for i, k := range run.VerdictKinds() {
		switch k {
		case "busy_machine":
			st.BusyMachine = true
		case "kernel_drops":
			st.KernelDrops = true
		default:
			continue
		}
		if i < len(lines) {
			st.Verdicts = append(st.Verdicts, lines[i])
		}
	}
}

// behindGrace is how late a request may still be unsent at a step's end
// without counting as the client falling behind: a timer woken late on a busy
// machine is not a client that cannot keep the rate.
const behindGrace = 100 * time.Millisecond

// behindPast is behind less the requests due in the grace before the end.
func behindPast(behind int64, rate float64, grace time.Duration) int64 {
	return max(0, behind-int64(math.Ceil(rate*grace.Seconds())))
}

// waitedFor is the client's scheduling wait (p99) when it may explain the
// step's failures: the rate kept and every failing objective a latency that
// would pass without that wait; 0 otherwise (a failure it cannot explain is
// the server's).
func waitedFor(vs []threshold.Verdict, kept bool, wait time.Duration) time.Duration {
	if !kept {
		return 0
	}
	for _, v := range vs {
		if v.Pass {
			continue
		}
		if v.Kind != threshold.Latency || v.NoData {
			return 0
		}
		if !v.Holds(v.Actual - float64(wait.Microseconds())) {
			return 0
		}
	}
	return wait
}

// capacityFigure is the knee of every target's searches: a panel per
// search, its steps passing and failing apart, the target's capacity and its
// interval.
func capacityFigure(d *capacity.Document) *chart.Figure {
	var ts []chart.KneeTarget
	for _, t := range d.Targets {
		c := t.Capacity
		kt := chart.KneeTarget{Label: t.Label, CapacityPerS: c.MeanPerS}
		if c.FoundN > 1 { // an interval over the capacities found (bounds apart)
			kt.LoPerS, kt.HiPerS = c.LoPerS, c.HiPerS
		}
		for _, r := range t.Runs {
			ks := chart.KneeSearch{Result: r.Result.Line(capacity.Rate)}
			for _, s := range r.Steps {
				if s.Complete == 0 {
					continue
				}
				ks.Steps = append(ks.Steps, chart.KneeStep{AchievedPerS: s.AchievedPerS, CorrectedP50Ms: float64(s.P50Us) / 1e3,
					CorrectedP99Ms: float64(s.P99Us) / 1e3, UncorrectedP99Ms: float64(s.UncorrectedP99Us) / 1e3,
					Pass: s.Pass, ClientBound: s.ClientBound})
			}
			kt.Searches = append(kt.Searches, ks)
		}
		ts = append(ts, kt)
	}
	return chart.CapacityFigure("gab capacity: "+strings.Join(d.Objectives, ", "), ts, d.LatencyObjectiveMs)
}

// capacityPictures draws the knee into plot (gnuplot) and writes the HTML
// report into html, each when named.
func capacityPictures(ctx context.Context, plot, html string, d *capacity.Document) error {
	if plot != "" {
		if err := drawPlot(context.WithoutCancel(ctx), plot, capacityFigure(d)); err != nil {
			return pictureError("--plot: ", err)
		}
	}
	if html == "" {
		return nil
	}
	page := &report.Page{Title: "gab capacity", Command: d.CommandLine, Figure: capacityFigure(d),
		Environment: []report.PageRow{
			{Name: "Started", Value: d.Start.Format(time.RFC3339)}, {Name: "Ended", Value: d.End.Format(time.RFC3339)},
			{Name: "Complete", Value: strconv.FormatBool(d.Complete)},
			{Name: "Objectives", Value: strings.Join(d.Objectives, ", ")},
			{Name: "Steps", Value: fmt.Sprintf("%gs after a %gs settle; a rate fails when %d in a row fail; bisected to %g %%", d.StepS, d.SettleS, d.Attempts, d.ResolutionPercent)},
			{Name: "CPUs", Value: strconv.Itoa(d.Machine.CPUs)},
		}}
	rank := [][]string{{"rank", "target", "capacity req/s", "95 % interval", "searches", "result"}}
	for _, t := range d.Targets {
		c := t.Capacity
		iv := "-"
		result := t.Runs[len(t.Runs)-1].Result.Line(capacity.Rate)
		if c.N > 1 {
			result = c.Line(capacity.Rate)
		}
		if c.FoundN > 1 {
			iv = capacity.Rate(c.LoPerS) + " to " + capacity.Rate(c.HiPerS)
		}
		rank = append(rank, []string{c.RankText() + groupSuffix(c.Group), t.Label, capacity.Rate(c.MeanPerS), iv, strconv.Itoa(c.N), result})
		steps := [][]string{{"target/s", "achieved/s", "conns", "p50 ms", "p99 ms", "p99.9 ms", "uncorrected p99 ms", "failed", "non-2xx", "verdict", "client", "machine"}}
		for _, run := range t.Runs {
			for _, s := range run.Steps {
				steps = append(steps, []string{capacity.Rate(s.TargetPerS), capacity.Rate(s.AchievedPerS), strconv.Itoa(s.Connections),
					capacity.Ms(s.P50Us), capacity.Ms(s.P99Us), capacity.Ms(s.P999Us), capacity.Ms(s.UncorrectedP99Us),
					strconv.FormatInt(s.Failed, 10), strconv.FormatInt(s.Non2xx, 10), s.Verdict(), strings.Join(s.ClientReasons, "; "), strings.Join(s.Verdicts, "; ")})
			}
		}
		page.Tables = append(page.Tables, report.PageTable{Title: "Steps: " + t.Label + " (" + t.URL + ")", Rows: steps})
	}
	page.Tables = append([]report.PageTable{{Title: "Capacity", Note: d.TieRule, Rows: rank}}, page.Tables...)
	return outfile.WriteAtomic(html, func(w io.Writer) error { return report.WriteHTMLPage(w, page) })
}

// plotCapacities is gab plot of capacity documents: their knee (several
// documents' targets as LABEL:target) into out. done is false when no input
// is one.
func plotCapacities(ctx context.Context, out string, isHTML bool, inputs []plotInput) (done bool, err error) {
	var docs []*capacity.Document
	for _, in := range inputs {
		if in.capacity != nil {
			docs = append(docs, in.capacity)
		}
	}
	switch {
	case len(docs) == 0:
		return false, nil
	case len(docs) < len(inputs):
		return true, errors.New("a capacity document is drawn with other capacity documents, not with runs or sweeps")
	}
	d := docs[0]
	if len(docs) > 1 {
		c := *d
		c.Targets, c.CommandLine = nil, nil
		for i, x := range docs {
			c.CommandLine = append(c.CommandLine, inputs[i].label+"="+inputs[i].path)
			for _, t := range x.Targets {
				tt := *t
				tt.Label = inputs[i].label + ":" + t.Label
				c.Targets = append(c.Targets, &tt)
			}
		}
		d = &c
	}
	if isHTML {
		return true, capacityPictures(ctx, "", out, d)
	}
	return true, capacityPictures(ctx, out, "", d)
}

// CapacityChange is one target's capacity in two capacity documents.
type CapacityChange struct {
	Target        string  `json:"target"`
	APerS         float64 `json:"a_per_s"`
	BPerS         float64 `json:"b_per_s"`
	ChangePercent float64 `json:"change_percent"`
	// Apart: the 95 % interval of the capacities' ratio excludes 1
	// (sweep.Apart, sweep.TieRule's test);
	// Found: both capacities were found (none is a client's "at least").
	Apart bool `json:"apart"`
	Found bool `json:"found"`
}

// capacityFigureOf is the capacity gab compare states: the found
// capacities' geometric mean, or when no search found one the highest of
// its searches' bounds (the row then says "at least").
func capacityFigureOf(c capacity.Summary) float64 {
	if c.FoundN > 0 || len(c.Bounds) == 0 {
		return c.MeanPerS
	}
	v := 0.0
	for _, b := range c.Bounds {
		v = max(v, b.PerS)
	}
	return v
}

// readCapacity reads a capacity document other than the first gab compare
// is given.
func readCapacity(name string) (*capacity.Document, error) {
	raw, schema, err := readCompareFile(name)
	if err != nil || schema != capacity.Schema {
		return nil, fmt.Errorf("%s: not a capacity document (a capacity document compares with capacity documents)", chart.Printable(name))
	}
	return decodeCapacity(name, raw)
}

func decodeCapacity(name string, raw []byte) (*capacity.Document, error) {
	d, err := capacity.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", chart.Printable(name), err)
	}
	return d, nil
}

// compareCapacities is gab compare of capacity documents: every document
// after the first (whose bytes are raw) against the first, target by
// target (by label).
func compareCapacities(names []string, raw []byte, format string, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "gab compare: %v\n", err)
		return exitError
	}
	a, err := decodeCapacity(names[0], raw)
	if err != nil {
		return fail(err)
	}
	var all [][]CapacityChange
	for _, name := range names[1:] {
		b, err := readCapacity(name)
		if err != nil {
			return fail(err)
		}
		var rows []CapacityChange
		for _, ta := range a.Targets {
			for _, tb := range b.Targets {
				if ta.Label != tb.Label {
					continue
				}
				ca, cb := ta.Capacity, tb.Capacity
				r := CapacityChange{Target: ta.Label, APerS: capacityFigureOf(ca), BPerS: capacityFigureOf(cb), Found: ca.Found && cb.Found,
					Apart: ca.Found && cb.Found && sweep.Apart(ta.Interval(), tb.Interval())}
				if r.APerS > 0 {
					r.ChangePercent = 100 * (r.BPerS - r.APerS) / r.APerS
				}
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			return fail(fmt.Errorf("%s and %s have no target in common", chart.Printable(names[0]), chart.Printable(name)))
		}
		all = append(all, rows)
	}
	out := newBufferedWriter(stdout)
	if format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(all)
	} else {
		for i, rows := range all {
			fmt.Fprintf(out, "Capacity: %s (A) against %s (B)\n", chart.Printable(names[0]), chart.Printable(names[i+1]))
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "target\tA req/s\tB req/s\tchange %\t\t")
			for _, r := range rows {
				note := "not apart (the ratio's 95 % interval holds 1)"
				switch {
				case !r.Found:
					note = "a capacity not found (client-bound, --max-rate, out of steps or interrupted): at least"
				case r.Apart:
					note = "apart"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%+.1f\t%s\t\n", chart.Printable(r.Target), capacity.Rate(r.APerS), capacity.Rate(r.BPerS), r.ChangePercent, note)
			}
			tw.Flush()
		}
	}
	return flushStdout(out, err, "compare", stderr)
}
