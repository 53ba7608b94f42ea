package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"gab/gnuplot"
	"gab/internal/abprint"
	"gab/internal/live"
	"gab/internal/runcmd"
	"gab/internal/servercpu"
	"gab/internal/sweep"
)

// gab sweep [ab options] [sweep options] TARGET...: an experiment made of
// many ab runs. Each point (target × size × concurrency) is measured --repeat
// times, the repetitions interleaved across the targets; each run is measured
// as a single run is (runcmd.MeasureRun: client.Runner.Run between the CPU readings,
// then report.Summarize and the run's JSON document), and internal/sweep turns
// the runs into statistics, a table, a CSV file and a JSON document.

// splitSweepArgs separates ab's options, -c's list, the sweep's long options
// and the targets (sweep.Args). ab's options follow ab's grammar (clusters,
// attached or separate values); long options may come anywhere, short ones
// only before the first target.
func splitSweepArgs(args []string) (*sweep.Args, error) {
	sa := &sweep.Args{}
	var err error
	sa.AB, sa.Targets, err = splitSubArgs(args, subArgRules{own: sweep.NewFlagSet(&sa.Own), long: sweep.LongOption,
		flag: sa.ShortFlag, value: sa.ShortValue})
	if err != nil {
		return nil, err
	}
	return sa, nil
}

// sweepMain is gab sweep, phase by phase: the command line, what
// must hold before the first request (prepare), the runs (measureAll) and the
// outputs (finish).
func sweepMain(ctx context.Context, argv []string, out *bufio.Writer, stderr io.Writer) int {
	sw := &sweepRun{argv: argv, argv0: argv[0], out: out, stderr: stderr}
	sa, err := splitSweepArgs(argv[2:])
	if err != nil {
		return sw.usageError(err)
	}
	if sa.Own.Help {
		fmt.Fprintf(out, sweep.Usage, sw.argv0)
		fmt.Fprint(out, sweep.NewFlagSet(&sweep.OwnFlags{}).FlagUsages())
		return exitOK
	}
	sw.sa = sa
	o := sa.Options() // checked by sweep.Options.Settings
	if sw.s, err = o.Settings(); err != nil {
		return sw.usageError(err)
	}
	defer sw.close()
	if status, done := sw.prepare(); done {
		return status
	}
	defer sw.live.CloseAfter(ctx, sw.out, sw.points[sweep.Points(sw.s.Dims())[0]].Options.Live.MetricsLinger)
	return sw.finish(ctx, sw.measureAll(ctx))
}

// sweepRun is gab sweep between its phases.
type sweepRun struct {
	argv     []string
	argv0    string
	out      *bufio.Writer
	stderr   io.Writer
	sa       *sweep.Args
	s        *sweep.Settings
	meters   map[int]runcmd.Meter // by target (none without --server-pid)
	points   map[sweep.Point]sweep.PointRun
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

// prepare does what must hold before the first request: the targets (the
// --demo server started), --server-pid's processes, every point's command
// line parsed (so a bad option or URL, or -c above -n, stops the sweep as it
// stops ab), the pictures' paths checked and the files created. done says
// the sweep must exit with status.
func (sw *sweepRun) prepare() (status int, done bool) {
	s, so, stderr := sw.s, &sw.sa.Own, sw.stderr
	targetArgs := sw.sa.Targets
	if so.Demo {
		base, stop, err := startDemoServer(nil)
		if err != nil {
			fmt.Fprintf(stderr, "gab: --demo: %v\n", err)
			return exitError, true
		}
		sw.stopDemo = stop
		targetArgs = []string{s.DemoTarget(base)}
	}
	if err := s.SetTargets(targetArgs); err != nil {
		return sw.usageError(err), true
	}
	var err error
	if sw.meters, err = sweep.ServerMeters(so.ServerPIDs, s); err != nil {
		fmt.Fprintf(stderr, "%s sweep: %v\n", sw.argv0, err)
		if errors.Is(err, servercpu.ErrUnsupported) {
			return exitError, true
		}
		return exitUsage, true
	}
	sw.points = map[sweep.Point]sweep.PointRun{}
	points := sweep.Points(sw.s.Dims())
	for _, pt := range points {
		p, status := parsePoint(s, pt, sw.argv0, sw.sa.AB, so.Demo, stderr)
		if p.Options == nil {
			return status, true
		}
		sw.points[pt] = p
	}
	if cpus := sw.points[points[0]].Options.CPUs; cpus > 0 {
		runtime.GOMAXPROCS(cpus)
	}
	if err := runcmd.CheckPictures(so.PlotFile, so.HTMLFile); err != nil {
		fmt.Fprintf(stderr, "%s sweep: %v\n", sw.argv0, err)
		if _, terr := gnuplot.TerminalFor(so.PlotFile); so.PlotFile != "" && terr != nil {
			return exitUsage, true
		}
		return exitError, true
	}
	if sw.files, err = sweep.CreateFiles(so.CSVFile, so.JSONFile); err != nil {
		fmt.Fprintf(stderr, "%s sweep: %v\n", sw.argv0, err)
		return exitError, true
	}
	if sw.live, status, done = runcmd.SubcommandLive(sw.points[points[0]].Options, sw.argv0+" sweep", stderr, liveClosing); done {
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

// measureAll runs the plan (sweep.Runner.RunPlan: each point's line on
// stderr after its last repetition, a run measured as a single run is), with
// the live status line under stderr on a terminal.
func (sw *sweepRun) measureAll(ctx context.Context) *sweep.Runs {
	if tty, width := terminalWidth(sw.stderr); tty && !sw.sa.Verbose {
		sw.status = abprint.NewStatusLine(sw.stderr, width)
		stderr := sw.stderr
		sw.stderr = sw.status // every line erases the live one first
		defer func() { sw.status.Stop(); sw.stderr, sw.status = stderr, nil }()
	}
	rn := &sweep.Runner{Settings: sw.s, Points: sw.points, Meters: sw.meters, Verbose: sw.sa.Verbose,
		Out: sw.out, Stderr: sw.stderr, Live: sw.live, Status: sw.status}
	return rn.RunPlan(ctx)
}

// finish writes the outputs (the table, the runs' errors, --csv, --json,
// --plot, --html) and returns the sweep's exit status.
func (sw *sweepRun) finish(ctx context.Context, m *sweep.Runs) int {
	s, so, out, stderr := sw.s, &sw.sa.Own, sw.out, sw.stderr
	results := sweep.Aggregate(s, m.Runs)
	if sw.sa.Verbose {
		fmt.Fprintln(out)
	}
	if err := sweep.WriteReport(out, s, results, m.Complete()); err != nil {
		fmt.Fprintf(stderr, "gab: stdout: %v\n", err)
		return exitError
	}
	meta := m.Meta(redactSweepArgs(sw.argv))
	if err := sw.files.Write(s, results, meta); err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return exitError
	}
	if err := sweepPictures(ctx, so.PlotFile, so.HTMLFile, sweep.NewDocument(s, results, meta)); err != nil {
		fmt.Fprintf(stderr, "%s sweep: %v\n", sw.argv0, err)
		return exitError
	}
	if msg := sweep.StoppedAtMax(s, results); msg != "" {
		fmt.Fprintf(stderr, "%s sweep: %s\n", sw.argv0, msg)
	}
	if msg := m.Ending(); msg != "" {
		fmt.Fprintf(stderr, "%s sweep: %s\n", sw.argv0, msg)
		return exitError
	}
	return exitOK
}

// parsePoint builds a point's single-run command line and parses it with
// ab's grammar. On an error it prints ab's message and returns no options
// and the exit status. demo: the target is --demo's built-in server, which runs on
// gab's own cores (its runs' verdicts say client-bound, as gab --demo's).
func parsePoint(s *sweep.Settings, pt sweep.Point, argv0 string, ab []string, demo bool, stderr io.Writer) (sweep.PointRun, int) {
	argv := s.PointArgs(pt, argv0, ab)
	var msgs bytes.Buffer
	o, status, done := parseArgs(argv, io.Discard, &msgs)
	if done {
		s.WritePointError(stderr, pt, argv0, msgs.String())
		return sweep.PointRun{}, status
	}
	if err := s.ForPoint(&o.Options, demo); err != nil {
		fmt.Fprintf(stderr, "%s sweep: %v\n", argv0, err)
		return sweep.PointRun{}, exitUsage
	}
	return sweep.PointRun{Options: &o.Options, CommandLine: redactCredentials(argv)}, exitOK
}

// redactSweepArgs hides -A and -P values in the sweep's command line.
func redactSweepArgs(argv []string) []string {
	if len(argv) < 2 {
		return argv
	}
	rest := redactCredentials(append([]string{argv[0]}, argv[2:]...))
	return append([]string{argv[0], argv[1]}, rest[1:]...)
}
