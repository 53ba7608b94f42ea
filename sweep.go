package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gab/client"
	"gab/gnuplot"
	"gab/internal/abprint"
	"gab/internal/hoststat"
	"gab/internal/live"
	"gab/internal/servercpu"
	"gab/internal/sweep"
	"gab/report"
)

// gab sweep [ab options] [sweep options] TARGET...: an experiment made of
// many ab runs. Each point (target × size × concurrency) is measured --repeat
// times, the repetitions interleaved across the targets; each run is measured
// as a single run is (measureRun: client.Runner.Run between the CPU readings,
// then report.Summarize and the run's JSON document), and internal/sweep turns
// the runs into statistics, a table, a CSV file and a JSON document.

// sweepOptions are the sweep's own options.
type sweepOptions struct {
	sizes, postSizes, csvFile, jsonFile string
	plotFile, htmlFile                  string
	repeat, ci                          string
	pause, ramp                         durationValue
	maxCVPercent                        float64
	demo, help                          bool
	serverPIDs                          []string
	order, deviation, baseline          string
	param, before                       string
	requestsPerConn                     int
	seed                                uint64
}

func newSweepFlagSet(so *sweepOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("gab sweep", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.StringVar(&so.sizes, "sizes", "", "`LIST` of sizes (4,100b,10k,1m; 1k = 1024 bytes; each up to 1024g), each replacing {size} in the targets")
	fs.StringVar(&so.postSizes, "post-sizes", "", "POST a generated body of each size in `LIST` (each up to 64m, built in memory for its run; content type -T); {size} in a target takes the size too")
	fs.StringVar(&so.repeat, "repeat", "1", "measure each point `R` times (1 to 1000), interleaved across the targets; auto[:MAX]: until its req/s 95 % interval is within --ci of the mean (at least 3, at most MAX, 20 by default)")
	fs.StringVar(&so.ci, "ci", "5%", "flag points whose req/s 95 % interval's half-width exceeds `PCT` % of the mean; --repeat auto repeats until it does not")
	fs.Var(&so.pause, "pause", "wait `DURATION` between runs (Go duration or seconds; at most 1h)")
	fs.StringVar(&so.order, "order", sweep.OrderInterleaved, "run `ORDER`: interleaved (every point's first repetition, then every point's second, ...) or random (each such round shuffled; the seed is in --json)")
	fs.Uint64Var(&so.seed, "seed", 0, "--order random's seed `N` (1 or more; default: from the clock), as the JSON records it, to run an order again")
	fs.IntVar(&so.requestsPerConn, "requests-per-conn", 0, "each point sends c × `N` requests (-n), so every client makes N at every concurrency (not with -n or -t)")
	fs.StringVar(&so.param, "param", "", "sweep a parameter: `NAME=V1,V2,...`, set by --before's command before each run (a column and an x axis)")
	fs.StringVar(&so.before, "before", "", "run `COMMAND` (sh -c; {NAME} replaced by --param's value) before each run; a failure stops the sweep")
	fs.Var(&so.ramp, "ramp", "open each run's connections evenly over `DURATION` and leave the requests that start meanwhile out of every figure (as --warmup's)")
	fs.StringVar(&so.deviation, "deviation", sweep.DeviationPooled, "latency deviation `ESTIMATOR` for the table, rankings and ratios: pooled (every request's sd) or mean-of-runs (the runs' own sds averaged, JMeter's)")
	fs.StringVar(&so.baseline, "baseline", "", "also print every target's figures as ratios to target `LABEL`'s at the same point, with 95 % intervals")
	fs.Float64Var(&so.maxCVPercent, "max-cv", 5, "mark points whose req/s vary more than `PCT` % (coefficient of variation; 0 to 1000)")
	fs.StringVar(&so.csvFile, "csv", "", "write one row per point to `FILE`")
	fs.StringVar(&so.jsonFile, "json", "", "write the sweep, every run's JSON document included, to `FILE`")
	fs.StringVar(&so.plotFile, "plot", "", "draw the sweep's charts into `FILE`.png|.svg|.pdf with gnuplot (FILE.png.gp and FILE.png.dat beside it)")
	fs.StringVar(&so.htmlFile, "html", "", "write a self-contained HTML report of the sweep (charts, points, rankings) to `FILE`")
	fs.BoolVar(&so.demo, "demo", false, "sweep the built-in server (serves /bytes/N for any size N, accepts POST bodies)")
	fs.StringArrayVar(&so.serverPIDs, "server-pid", nil, "measure the CPU of processes `[LABEL=]PID[,PID...]`, their threads and children, per run (Linux); repeatable, once per label")
	fs.BoolVarP(&so.help, "help", "h", false, "print this help")
	return fs
}

const sweepUsage = `Usage: %s sweep [ab options] [sweep options] TARGET...
TARGET is URL or LABEL=URL. ab's options apply to every run (-n or -t per run, -k, -H, ...), except:
    -c LIST         concurrency values, e.g. -c 1,10,100 (default 1)
    -v N            also print ab's report of each run (stdout); N >= 2 as ab's -v
Limits: at most 100 targets and 100 values per list; at most 10000 runs
(targets x sizes x concurrencies x --repeat).
Sweep options:
`

// sweepArgs are the sweep's command line, split.
type sweepArgs struct {
	ab          []string  // ab's options for every run (no -c)
	concurrency string    // -c's list ("" when not given)
	shortSeen   [256]bool // ab's options given that take a value
	verbose     bool      // -v given
	targets     []string
	opts        sweepOptions
}

// splitSweepArgs separates ab's options, -c's list, the sweep's long options
// and the targets. ab's options follow ab's grammar (clusters, attached or
// separate values); long options may come anywhere, short ones only before
// the first target.
func splitSweepArgs(args []string) (*sweepArgs, error) {
	sa := &sweepArgs{}
	var err error
	sa.ab, sa.targets, err = splitSubArgs(args, subArgRules{
		own: newSweepFlagSet(&sa.opts),
		long: func(name string) error {
			switch name {
			case "dashboard", "dashboard-linger":
				return fmt.Errorf("--%s does not apply to gab sweep (it serves one run's report)", name)
			case "format", "extended":
				return fmt.Errorf("--%s does not apply to gab sweep (see --csv and --json)", name)
			case "version", "histogram", "hlog", "progress", "fail-if",
				"start-at", "start-at-force", "shard", "shards", "run-id":
				// Single runs' outputs and scheduling: no sweep run would use them.
				return fmt.Errorf("--%s does not apply to gab sweep", name)
			}
			return nil
		},
		flag: func(c byte) (bool, error) {
			switch c {
			case 'h':
				sa.opts.help = true
				return true, nil
			case 'w', 'V':
				return false, fmt.Errorf("-%c does not apply to gab sweep", c)
			}
			return false, nil
		},
		value: func(c byte, value string) (bool, error) {
			sa.shortSeen[c] = true
			switch c {
			case 'c':
				sa.concurrency = value
				return false, nil
			case 'e', 'g', 'x', 'y', 'z':
				return false, fmt.Errorf("-%c does not apply to gab sweep (each run would overwrite it; see --csv and --json)", c)
			case 'v':
				sa.verbose = true
			}
			return true, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return sa, nil
}

// sweepPoint is one target × size × concurrency, with its parsed options.
type sweepPoint struct {
	o    *cliOptions
	argv []string // the equivalent single-run command line
}

// sweepMain is gab sweep, phase by phase: the command line (settings), what
// must hold before the first request (prepare), the runs (measureAll) and the
// outputs (finish).
func sweepMain(ctx context.Context, argv []string, out *bufio.Writer, stderr io.Writer) int {
	sw := &sweepRun{argv: argv, argv0: argv[0], out: out, stderr: stderr}
	sa, err := splitSweepArgs(argv[2:])
	if err != nil {
		return sw.usageError(err)
	}
	if sa.opts.help {
		fmt.Fprintf(out, sweepUsage, sw.argv0)
		fmt.Fprint(out, newSweepFlagSet(&sweepOptions{}).FlagUsages())
		return exitOK
	}
	sw.sa = sa
	if err := sw.settings(); err != nil {
		return sw.usageError(err)
	}
	defer sw.close()
	if status, done := sw.prepare(); done {
		return status
	}
	defer sw.live.CloseAfter(ctx, sw.out, sw.points[sweep.Points(sw.dims())[0]].o.Live.MetricsLinger)
	return sw.finish(ctx, sw.measureAll(ctx))
}

// sweepRun is gab sweep between its phases.
type sweepRun struct {
	argv     []string
	argv0    string
	out      *bufio.Writer
	stderr   io.Writer
	sa       *sweepArgs
	s        *sweep.Settings
	meters   map[int]runMeter // by target (none without --server-pid)
	points   map[sweep.Point]*sweepPoint
	files    *sweep.Files
	stopDemo func()
	live     *live.Outputs // --live, --metrics, --remote-write (internal/live; nil without)
	// status is the live line under stderr while the runs go, on a terminal
	// (internal/abprint; nil otherwise, and with -v, whose reports go to stdout)
	status *abprint.StatusLine
}

// usageError prints a usage error: one line, as every extension's.
func (sw *sweepRun) usageError(err error) int {
	fmt.Fprintf(sw.stderr, "%s sweep: %v\n", sw.argv0, err)
	return exitUsage
}

// settings checks the sweep's options and reads its lists
// (sweep.Options.Settings).
func (sw *sweepRun) settings() error {
	so := &sw.sa.opts
	o := sweep.Options{Concurrency: sw.sa.concurrency, Sizes: so.sizes, PostSizes: so.postSizes, Repeat: so.repeat, CI: so.ci,
		Pause: time.Duration(so.pause), Ramp: time.Duration(so.ramp), MaxCVPercent: so.maxCVPercent,
		Order: so.order, Seed: so.seed, Deviation: so.deviation, Baseline: so.baseline, Param: so.param, Before: so.before,
		RequestsPerConn: so.requestsPerConn, NOrT: sw.sa.shortSeen['n'] || sw.sa.shortSeen['t'], Demo: so.demo,
		Targets: len(sw.sa.targets), ServerPIDs: len(so.serverPIDs)}
	var err error
	sw.s, err = o.Settings()
	return err
}

// prepare does what must hold before the first request: the targets (the
// --demo server started), --server-pid's processes, every point's command
// line parsed (so a bad option or URL, or -c above -n, stops the sweep as it
// stops ab), the pictures' paths checked and the files created. done says
// the sweep must exit with status.
func (sw *sweepRun) prepare() (status int, done bool) {
	s, so, stderr := sw.s, &sw.sa.opts, sw.stderr
	targetArgs := sw.sa.targets
	if so.demo {
		base, stop, err := startDemoServer(nil)
		if err != nil {
			fmt.Fprintf(stderr, "gab: --demo: %v\n", err)
			return exitError, true
		}
		sw.stopDemo = stop
		path := "/"
		if s.SizeOption != "" {
			path = "/bytes/" + sweep.Placeholder
		}
		targetArgs = []string{"demo=" + base + path}
	}
	var err error
	if s.Targets, err = sweep.ParseTargets(targetArgs, s.SizeOption); err != nil {
		return sw.usageError(err), true
	}
	if err := sweep.CheckRuns(sw.dims()); err != nil {
		return sw.usageError(err), true
	}
	if s.Baseline != "" && !slices.ContainsFunc(s.Targets, func(t sweep.Target) bool { return t.Label == s.Baseline }) {
		return sw.usageError(fmt.Errorf("--baseline: no target is labelled %q", s.Baseline)), true
	}
	if sw.meters, err = serverMeters(so.serverPIDs, s); err != nil {
		fmt.Fprintf(stderr, "%s sweep: %v\n", sw.argv0, err)
		if errors.Is(err, servercpu.ErrUnsupported) {
			return exitError, true
		}
		return exitUsage, true
	}
	sw.points = map[sweep.Point]*sweepPoint{}
	points := sweep.Points(sw.dims())
	for _, pt := range points {
		p, status := parsePoint(s, pt, sw.argv0, sw.sa.ab, so.demo, stderr)
		if p == nil {
			return status, true
		}
		sw.points[pt] = p
	}
	if cpus := sw.points[points[0]].o.CPUs; cpus > 0 {
		runtime.GOMAXPROCS(cpus)
	}
	if err := checkPictures(so.plotFile, so.htmlFile); err != nil {
		fmt.Fprintf(stderr, "%s sweep: %v\n", sw.argv0, err)
		if _, terr := gnuplot.TerminalFor(so.plotFile); so.plotFile != "" && terr != nil {
			return exitUsage, true
		}
		return exitError, true
	}
	if sw.files, err = sweep.CreateFiles(so.csvFile, so.jsonFile); err != nil {
		fmt.Fprintf(stderr, "%s sweep: %v\n", sw.argv0, err)
		return exitError, true
	}
	if sw.live, status, done = subcommandLive(sw.points[points[0]].o, sw.argv0+" sweep", stderr); done {
		return status, true
	}
	return exitOK, false
}

// close stops the --demo server and closes the files left open.
func (sw *sweepRun) close() {
	if sw.files != nil {
		sw.files.Close()
	}
	if sw.stopDemo != nil {
		sw.stopDemo()
	}
}

// measureAll runs the plan (sweep.Loop), each point's line on stderr after
// its last repetition, until its end or an interruption; a run is measured
// as a single run is (measure, measureRun).
func (sw *sweepRun) measureAll(ctx context.Context) *sweep.Runs {
	s := sw.s
	if tty, width := terminalWidth(sw.stderr); tty && !sw.sa.verbose {
		sw.status = abprint.NewStatusLine(sw.stderr, width)
		stderr := sw.stderr
		sw.stderr = sw.status // every line erases the live one first
		defer func() { sw.status.Stop(); sw.stderr, sw.status = stderr, nil }()
	}
	loop := &sweep.Loop{Settings: s, Dims: sw.dims(), Lines: sw.stderr,
		Before: func(ctx context.Context, pt sweep.Point) error { return s.RunBefore(ctx, pt, sw.stderr) },
		Measure: func(ctx context.Context, r sweep.Run, order, done, planned int) *sweep.RunResult {
			p := sw.points[r.Point]
			post := s.SizeOption == "--post-sizes"
			if post {
				setPostBody(&p.o.Config, s.Sizes[r.Point.Size].Bytes)
			}
			if sw.status != nil {
				sw.status.Prefix = fmt.Sprintf("[%d/%d] %s: ", done+1, planned, sweep.RunName(s, r))
			}
			rr := measure(ctx, s, r, order, p, sw.meters[r.Target], sw.sa.verbose, sw.out, sw.stderr, sw.live, sw.status)
			if post {
				dropPostBody(&p.o.Config)
				if s.Sizes[r.Point.Size].Bytes >= bigPostBody {
					runtime.GC() // the next body is not allocated beside this one
				}
			}
			return rr
		}}
	return loop.Run(ctx)
}

// finish writes the outputs (the table, the runs' errors, --csv, --json,
// --plot, --html) and returns the sweep's exit status.
func (sw *sweepRun) finish(ctx context.Context, m *sweep.Runs) int {
	s, so, out, stderr := sw.s, &sw.sa.opts, sw.out, sw.stderr
	results := sweep.Aggregate(s, m.Runs)
	if sw.sa.verbose {
		fmt.Fprintln(out)
	}
	complete := !m.Interrupted && m.BeforeErr == nil
	err := sweep.WriteTable(out, s, results, complete)
	if err == nil {
		err = sweep.WriteRunErrors(out, results)
	}
	if err != nil {
		fmt.Fprintf(stderr, "gab: stdout: %v\n", err)
		return exitError
	}
	meta := sweep.Meta{CommandLine: redactSweepArgs(sw.argv), Start: m.Start, End: time.Now(), Complete: complete,
		Machine: report.SweepMachine{CPUs: runtime.NumCPU(), LoadStart: m.LoadStart, LoadEnd: hoststat.LoadAverage()}}
	if err := sw.files.Write(s, results, meta); err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return exitError
	}
	if err := sweepPictures(ctx, so.plotFile, so.htmlFile, sweep.NewDocument(s, results, meta)); err != nil {
		fmt.Fprintf(stderr, "%s sweep: %v\n", sw.argv0, err)
		return exitError
	}
	if msg := sweep.StoppedAtMax(s, results); msg != "" {
		fmt.Fprintf(stderr, "%s sweep: %s\n", sw.argv0, msg)
	}
	switch {
	case m.BeforeErr != nil:
		fmt.Fprintf(stderr, "%s sweep: %v; stopped after %d of %d runs, the outputs hold what was measured, marked incomplete\n", sw.argv0, m.BeforeErr, len(m.Runs), m.Planned)
		return exitError
	case m.Interrupted:
		fmt.Fprintf(stderr, "%s sweep: interrupted after %d of %d runs; the outputs hold what was measured, marked incomplete\n", sw.argv0, len(m.Runs), m.Planned)
		return exitError
	case m.Fatal > 0:
		fmt.Fprintf(stderr, "%s sweep: %d of %d runs ended with an error (see the table's notes)\n", sw.argv0, m.Fatal, m.Planned)
		return exitError
	}
	return exitOK
}

// dims are the lengths of the sweep's lists.
func (sw *sweepRun) dims() sweep.Dims {
	s := sw.s
	d := sweep.Dims{Targets: len(s.Targets), Sizes: len(s.Sizes), Concurrency: len(s.Concurrency), Repeat: s.Repeat}
	if s.Param != nil {
		d.Params = len(s.Param.Values)
	}
	return d
}

// parsePoint builds a point's single-run command line and parses it with
// ab's grammar. On an error it prints ab's message and returns nil and the
// exit status. demo: the target is --demo's built-in server, which runs on
// gab's own cores (its runs' verdicts say client-bound, as gab --demo's).
func parsePoint(s *sweep.Settings, pt sweep.Point, argv0 string, ab []string, demo bool, stderr io.Writer) (*sweepPoint, int) {
	var size *sweep.Size
	if pt.Size >= 0 {
		size = &s.Sizes[pt.Size]
	}
	t := s.Targets[pt.Target]
	url := t.URLFor(size)
	argv := append([]string{argv0}, ab...)
	c := s.Concurrency[pt.Concurrency]
	if s.RequestsPerConn > 0 {
		argv = append(argv, "-n", strconv.FormatInt(int64(c)*int64(s.RequestsPerConn), 10))
	}
	argv = append(argv, "-c", strconv.Itoa(c), url)
	var msgs bytes.Buffer
	o, status, done := parseArgs(argv, io.Discard, &msgs)
	if done {
		fmt.Fprintf(stderr, "%s sweep: target %s, c=%d", argv0, t.Label, s.Concurrency[pt.Concurrency])
		if size != nil {
			fmt.Fprintf(stderr, ", size %s", size.Text)
		}
		// gab's own one-line errors stay one line; ab's keep ab's text.
		if msg, ok := strings.CutPrefix(msgs.String(), "gab: "); ok && strings.Count(msg, "\n") == 1 {
			fmt.Fprintf(stderr, ": %s", msg)
		} else {
			fmt.Fprintf(stderr, ":\n%s", msgs.String())
		}
		return nil, status
	}
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
			fmt.Fprintf(stderr, "%s sweep: --post-sizes cannot be used with -p, -u, -i or -m (it POSTs a generated body)\n", argv0)
			return nil, exitUsage
		}
		// The request and its body are built just before each run
		// (setPostBody), so that only one run's body is in memory.
		spec.Method, spec.Body, spec.HasBody = "POST", nil, true
		o.Config.Request, o.Config.HeadLen = nil, 0
	}
	return &sweepPoint{o: o, argv: argv}, exitOK
}

// bigPostBody is the --post-sizes body past which the sweep collects it as
// soon as its run ends.
const bigPostBody = 1 << 20

// setPostBody builds a --post-sizes run's request with its generated body of
// n bytes (at most sweep.MaxPostSize). The body is held once: Spec.Body (what
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

// serverMeters reads --server-pid: PIDS for every target, or LABEL=PIDS for
// one (repeatable), as each target's meter (measure.go; its label is the
// --server-pid label that chose it, "" for PIDS given for every target).
// Every process must exist now.
func serverMeters(specs []string, s *sweep.Settings) (map[int]runMeter, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	byLabel := map[string][]int{}
	for _, spec := range specs {
		label, pids, err := parseServerPID(spec)
		if err != nil {
			return nil, err
		}
		if _, dup := byLabel[label]; dup {
			return nil, fmt.Errorf("--server-pid given twice for %q", label)
		}
		byLabel[label] = pids
	}
	meters := map[int]runMeter{}
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
		meters[i] = runMeter{server: m, label: label}
		s.ServerPIDs[t.Label] = pids
	}
	for label := range byLabel {
		if !known[label] {
			return nil, fmt.Errorf("--server-pid: no target is labelled %q", label)
		}
	}
	return meters, nil
}

// measure runs one repetition of a point through the single run's
// measurement (measure.go; meter is its target's, the zero runMeter without
// --server-pid, which then measures the server it finds listening on a
// loopback URL's port) and returns what it measured.
func measure(ctx context.Context, s *sweep.Settings, r sweep.Run, order int, p *sweepPoint, meter runMeter,
	verbose bool, out, stderr io.Writer, lv *live.Outputs, status *abprint.StatusLine) *sweep.RunResult {
	o := p.o
	cfg := o.Config
	stream := lv.Begin(&cfg, o.URL, sweep.RunName(s, r), client.DefaultInterval)
	cfg.Extended = true // the latency histogram and the phases' exact moments
	cfg.Quiet = true
	if verbose {
		cfg.Events = abprint.NewSink(out, stderr, cfg.Verbosity, 0)
	}
	rr := &sweep.RunResult{Run: r, Order: order, URL: o.URL, Start: time.Now()}
	runner, err := client.New(cfg)
	ms := &measured{}
	if err == nil {
		meter.findServer(&cfg)
		if status != nil {
			status.Start(runner, cfg.Requests, cfg.TimeLimit)
		}
		ms = measureRun(ctx, runner, &meter)
		if status != nil {
			status.Stop()
		}
		if d := ms.machine; d.Checked(hoststat.FileStat) {
			rr.HostCPU, rr.HostCPUKnown = d.CPU, true
		}
		err = ms.err
		if ms.server != nil {
			rr.ServerCPU, rr.ServerCPUKnown = ms.server.CPU, true
		}
	}
	res, cpu, srvErr := ms.res, ms.cpu, ms.serverErr
	var runErr *client.FatalError
	if err != nil {
		runErr = fatalError(err)
		rr.Error = strings.TrimSpace(runErr.Message)
	}
	if srvErr != nil && rr.Error == "" {
		rr.Error = srvErr.Error()
	}
	sum := report.NotStarted(redactCredentials(p.argv), rr.Start, "", 0)
	if res != nil {
		sum = ms.summarize(o, p.argv)
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

// redactSweepArgs hides -A and -P values in the sweep's command line.
func redactSweepArgs(argv []string) []string {
	if len(argv) < 2 {
		return argv
	}
	rest := redactCredentials(append([]string{argv[0]}, argv[2:]...))
	return append([]string{argv[0], argv[1]}, rest[1:]...)
}
