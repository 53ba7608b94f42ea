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

	"github.com/spf13/pflag"

	"gab/client"
	"gab/internal/capacity"
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
	lv, status, done := runcmd.SubcommandLive(opts[0], argv0+" capacity", stderr, liveClosing)
	if done {
		return status
	}
	defer lv.CloseAfter(ctx, out, opts[0].Live.MetricsLinger)
	ss.Measure = capacity.RunMeasure(opts, lv)
	if ca.opts.Format == "text" {
		ss.Log = stderr
	}
	doc := ss.NewDocument(redactCredentials(argv))
	interrupted := ss.Run(ctx, doc)
	return writeCapacity(ctx, &ca.opts, doc, interrupted, out, stderr, argv0)
}

// capacitySession parses the targets, each with ab's options for its
// steps, into the search's session; the options of each target beside it.
func capacitySession(ca *capacityArgs, s *capacity.Settings, argv0 string) (*capacity.Session, []*runcmd.Options, error) {
	targets, err := sweep.ParseTargets(ca.targets, "")
	if err != nil {
		return nil, nil, err
	}
	var opts []*runcmd.Options
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
		opts, labels, urls, bases = append(opts, &o.Options), append(labels, t.Label), append(urls, t.URL), append(bases, o.Config)
	}
	if len(opts[0].ServerPIDs) > 0 && len(opts) > 1 {
		return nil, nil, errors.New("--server-pid measures one server: give one TARGET")
	}
	ss := capacity.NewSession(s, labels, urls, bases)
	ss.Uncapped = uncappedRequests
	return ss, opts, nil
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
	if err := capacity.WritePictures(ctx, co.PlotFile, co.HTMLFile, doc); err != nil {
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
