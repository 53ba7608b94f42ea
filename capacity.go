package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gab/client"
	"gab/internal/capacity"
	"gab/internal/chart"
	"gab/internal/live"
	"gab/internal/outfile"
	"gab/internal/runcmd"
	"gab/internal/servercpu"
	"gab/internal/sweep"
	"gab/report"
)

// This file is gab capacity's command line: its options and targets, each
// step measured as a single run is (runcmd.MeasureRun, passed to the session), and
// the outputs. The search, the steps' figures and verdicts, the document
// and its pictures are internal/capacity's.

// capacityArgs is gab capacity's command line, split.
type capacityArgs struct {
	ab      []string // ab's options for every step
	conns   int      // -c (0: not given)
	targets []string
	opts    capacity.Options
	fs      *pflag.FlagSet // capacity's own options, parsed
}

func newCapacityFlagSet(o *capacity.Options) *pflag.FlagSet {
	return capacity.NewFlagSet(o, (*durationValue)(&o.Step), (*durationValue)(&o.Settle))
}

// splitCapacityArgs separates ab's options, -c, capacity's own options and
// the targets (ab's grammar for the short options, which come before the
// first target; long options anywhere).
func splitCapacityArgs(args []string) (*capacityArgs, error) {
	ca := &capacityArgs{}
	ca.fs = newCapacityFlagSet(&ca.opts)
	var err error
	ca.ab, ca.targets, err = splitSubArgs(args, subArgRules{own: ca.fs, long: capacity.LongOption,
		flag:  func(c byte) (bool, error) { return capacity.ShortFlag(c, &ca.opts) },
		value: func(c byte, v string) (bool, error) { return capacity.ShortValue(c, v, maxConcurrency, &ca.conns) },
	})
	return ca, err
}

// settings checks capacity's own options.
func (ca *capacityArgs) settings() (*capacity.Settings, error) {
	return capacity.NewSettings(&ca.opts, ca.conns, ca.fs.Changed("settle"))
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
	if ca.opts.Help {
		fmt.Fprintf(out, capacity.Usage, argv0)
		fmt.Fprint(out, newCapacityFlagSet(&capacity.Options{}).FlagUsages())
		return exitOK
	}
	s, err := ca.settings()
	if err != nil {
		return usage(err)
	}
	if ca.opts.Demo {
		if len(ca.targets) > 0 {
			return usage(fmt.Errorf("--demo searches its own server and takes no TARGET (%s)", ca.targets[0]))
		}
		base, stop, err := startDemoServer(nil)
		if err != nil {
			fmt.Fprintf(stderr, "gab: --demo: %v\n", err)
			return exitError
		}
		defer stop()
		ca.targets, s.InProcess = []string{"demo=" + base + "/"}, true
	}
	ss, opts, err := capacitySession(ca, s, argv0)
	if err != nil {
		return usage(err)
	}
	if pids := opts[0].ServerPIDs; len(pids) > 0 {
		if _, err := servercpu.New(pids); err != nil {
			fmt.Fprintf(stderr, "gab: %v\n", err)
			return exitError
		}
	}
	if bad, err := capacity.CheckOutputs(&ca.opts); bad != nil {
		return usage(bad)
	} else if err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return exitError
	}
	if cpus := opts[0].CPUs; cpus > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cpus))
	}
	lv, status, done := runcmd.SubcommandLive(&opts[0].Options, argv0+" capacity", stderr, liveClosing)
	if done {
		return status
	}
	defer lv.CloseAfter(ctx, out, opts[0].Live.MetricsLinger)
	ss.Measure = capacityMeasure(opts, lv)
	if ca.opts.Format == "text" {
		ss.Log = stderr
	}
	doc := ss.NewDocument(redactCredentials(argv))
	interrupted := ss.Run(ctx, doc)
	return writeCapacity(ctx, &ca.opts, doc, interrupted, out, stderr, argv0)
}

// capacitySession parses the targets, each with ab's options for its
// steps, into the search's session; the options of each target beside it.
func capacitySession(ca *capacityArgs, s *capacity.Settings, argv0 string) (*capacity.Session, []*cliOptions, error) {
	targets, err := sweep.ParseTargets(ca.targets, "")
	if err != nil {
		return nil, nil, err
	}
	var opts []*cliOptions
	var labels, urls []string
	var bases []client.Config
	for _, t := range targets {
		args := append([]string{argv0}, ca.ab...)
		args = append(args, "-k", "-n", strconv.Itoa(uncappedRequests), "-c", strconv.Itoa(s.Conns), t.URL)
		var msgs strings.Builder
		o, _, done := parseArgs(args, io.Discard, &msgs)
		if done {
			return nil, nil, fmt.Errorf("target %s: %s", t.Label, strings.TrimSpace(firstLine(msgs.String())))
		}
		opts, labels, urls, bases = append(opts, o), append(labels, t.Label), append(urls, t.URL), append(bases, o.Config)
	}
	if len(opts[0].ServerPIDs) > 0 && len(opts) > 1 {
		return nil, nil, errors.New("--server-pid measures one server: give one TARGET")
	}
	ss := capacity.NewSession(s, labels, urls, bases)
	ss.Uncapped = uncappedRequests
	return ss, opts, nil
}

// capacityMeasure is the session's Measure: a step of target i measured
// as a single run is (runcmd.MeasureRun between the meters' readings: the
// client's CPU, and the server's of --server-pid or found listening on a
// loopback URL's port), summarized with the step's settings and streamed
// to the live outputs as a run of its own.
func capacityMeasure(opts []*cliOptions, lv *live.Outputs) func(context.Context, int, client.Config, string) capacity.StepRun {
	return func(ctx context.Context, i int, cfg client.Config, name string) (m capacity.StepRun) {
		o := opts[i]
		stream := lv.Begin(&cfg, o.URL, name, client.DefaultInterval)
		defer func() {
			if stream != nil {
				lv.Finish(stream, m.Run, m.Result)
			}
		}()
		runner, err := client.New(cfg)
		meter := runcmd.Meter{Label: o.ServerLabel}
		if err == nil && len(o.ServerPIDs) > 0 {
			meter.Server, err = servercpu.New(o.ServerPIDs)
		}
		if err != nil {
			m.Err = err.Error()
			return m
		}
		meter.FindServer(&cfg)
		begin, sched := time.Now(), report.ReadSched()
		ms := runcmd.MeasureRun(ctx, runner, &meter)
		m.Wall, m.Sched = time.Since(begin), report.ReadSched().P99Since(sched)
		m.Result, m.CPU, m.Server = ms.Res, ms.CPU, ms.Server
		if ms.Err != nil {
			m.Err = strings.TrimSpace(runcmd.FatalError(ms.Err).Message)
		} else if ms.ServerErr != nil {
			m.Err = ms.ServerErr.Error()
		}
		if ms.Res != nil {
			so := *o
			so.Config = cfg // the step's connections and rate
			m.Run = ms.Summarize(&so.Options, nil)
		}
		return m
	}
}

// writeCapacity writes the document (--json, --plot, --html, stdout) and
// says when the search was interrupted.
func writeCapacity(ctx context.Context, co *capacity.Options, doc *report.CapacityDocument, interrupted bool, out io.Writer, stderr io.Writer, argv0 string) int {
	if co.JSONFile != "" {
		if err := outfile.WriteAtomic(co.JSONFile, func(w io.Writer) error { return capacity.WriteJSON(w, doc) }); err != nil {
			fmt.Fprintf(stderr, "gab: %v\n", err)
			return exitError
		}
	}
	if err := capacityPictures(ctx, co.PlotFile, co.HTMLFile, doc); err != nil {
		fmt.Fprintf(stderr, "%s capacity: %v\n", argv0, err)
		return exitError
	}
	write := capacity.WriteText
	if co.Format == "json" {
		write = capacity.WriteJSON
	}
	if err := write(out, doc); err != nil {
		return exitError
	}
	if interrupted {
		fmt.Fprintf(stderr, "%s capacity: interrupted; the outputs hold what was measured, marked incomplete\n", argv0)
		return exitError
	}
	return exitOK
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// capacityPictures draws the knee into plot (gnuplot) and writes the HTML
// report into html, each when named.
func capacityPictures(ctx context.Context, plot, html string, d *report.CapacityDocument) error {
	if plot != "" {
		if err := runcmd.DrawPlot(context.WithoutCancel(ctx), plot, capacity.Figure(d)); err != nil {
			return runcmd.PictureError("--plot: ", err)
		}
	}
	if html == "" {
		return nil
	}
	return outfile.WriteAtomic(html, func(w io.Writer) error { return report.WriteHTMLPage(w, capacity.Page(d)) })
}

// plotCapacities is gab plot of capacity documents: their knee (several
// documents' targets as LABEL:target) into out. done is false when no input
// is one.
func plotCapacities(ctx context.Context, out string, isHTML bool, inputs []plotInput) (done bool, err error) {
	var docs []*report.CapacityDocument
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
	var labels, paths []string
	for _, in := range inputs {
		labels, paths = append(labels, in.label), append(paths, in.path)
	}
	d := capacity.Combine(docs, labels, paths)
	if isHTML {
		return true, capacityPictures(ctx, "", out, d)
	}
	return true, capacityPictures(ctx, out, "", d)
}

// readCapacity reads a capacity document other than the first gab compare
// is given.
func readCapacity(name string) (*report.CapacityDocument, error) {
	raw, schema, err := readCompareFile(name)
	if err != nil || schema != capacity.Schema {
		return nil, fmt.Errorf("%s: not a capacity document (a capacity document compares with capacity documents)", chart.Printable(name))
	}
	return decodeCapacity(name, raw)
}

func decodeCapacity(name string, raw []byte) (*report.CapacityDocument, error) {
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
	var all [][]capacity.Change
	for _, name := range names[1:] {
		b, err := readCapacity(name)
		if err != nil {
			return fail(err)
		}
		rows := capacity.Compare(a, b)
		if len(rows) == 0 {
			return fail(fmt.Errorf("%s and %s have no target in common", chart.Printable(names[0]), chart.Printable(name)))
		}
		all = append(all, rows)
	}
	out := runcmd.NewBufferedWriter(stdout)
	err = capacity.WriteComparison(out, format, names, all)
	return flushStdout(out, err, "compare", stderr)
}
