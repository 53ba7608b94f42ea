package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"gab/internal/runcmd"
)

// This file is gab's table of subcommands (gab WORD ...) and what they share:
// the parsing of their options and their help. A subcommand's word is never
// a URL, so ab's command lines keep their meaning.

// command is one subcommand: argv[1] is its name; run gets the whole argv
// and returns the exit status.
type command struct {
	name, summary string
	run           func(ctx context.Context, argv []string, stdout, stderr io.Writer) int
}

// commands is the table of subcommands, in the order gab --help lists them.
// (A function, not a variable: --help's list refers to it from parseArgs,
// which the subcommands call.)
func commands() []command {
	return []command{
		{"sweep", "many runs: targets x sizes x concurrencies, repeated; a table, CSV, JSON and charts", buffered(sweepMain)},
		{"plot", "the charts of saved JSON documents (runs overlaid, or a sweep)", runPlot},
		{"merge", "the report of a run measured as shards (--shard), from their JSON documents", runMerge},
		{"compare", "runs, merged runs or sweeps side by side, each against the first, with the change in per cent", runCompare},
		{"calibrate", "what gab can drive on this machine and the latency it adds, for the client-bound verdict", runCalibrate},
		{"capacity", "the highest rate each target sustains within latency objectives (--slo), searched step by step", buffered(capacityMain)},
	}
}

// buffered is a subcommand that writes its stdout through a buffer: main
// writes to out, and a write error (the buffer's first, reported at its
// flush) turns an exit status of 0 into 1.
func buffered(main func(ctx context.Context, argv []string, out *bufio.Writer, stderr io.Writer) int) func(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	return func(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
		out := bufio.NewWriterSize(stdout, 64<<10)
		status := main(ctx, argv, out, stderr)
		if err := out.Flush(); err != nil {
			fmt.Fprintf(stderr, "gab: stdout: %v\n", err)
			if status == exitOK {
				status = exitError
			}
		}
		return status
	}
}

// flushStdout ends gab NAME's output: it flushes out unless writing failed
// already (err), and a write error is one line on stderr and exit status 1.
func flushStdout(out *runcmd.SyncWriter, err error, name string, stderr io.Writer) int {
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "gab %s: stdout: %v\n", name, err)
		return exitError
	}
	return exitOK
}

// lookupCommand returns the subcommand that argv names (nil: a run of ab's
// command line).
func lookupCommand(argv []string) *command {
	if len(argv) < 2 {
		return nil
	}
	for _, c := range commands() {
		if c.name == argv[1] {
			return &c
		}
	}
	return nil
}

// writeCommands lists the subcommands, for gab --help (after ab's usage and
// gab's long options; ab's -h text stays as it is).
func writeCommands(w io.Writer, argv0 string) {
	cmds := commands()
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	fmt.Fprintf(w, "\ngab's subcommands (%s COMMAND --help for each):\n", argv0)
	for _, c := range cmds {
		fmt.Fprintf(w, "    %-*s  %s\n", width, c.name, c.summary)
	}
}

// subcommand is gab merge's or gab compare's command line: --format
// text|json, -h/--help, and what more adds. usage prints its help.
type subcommand struct {
	name   string // "merge"
	fset   *pflag.FlagSet
	format *string
	usage  func(io.Writer)
}

// parseSubcommand parses a subcommand's options (argv[2:]). help is its usage
// text (%s: argv[0]); the options follow it. --help prints both on stdout
// (exit 0); a bad option is one line that names it (exit 22). done says the
// caller must exit with status.
func parseSubcommand(argv []string, name, help string, stdout, stderr io.Writer, more func(*pflag.FlagSet)) (sc *subcommand, status int, done bool) {
	fset := pflag.NewFlagSet("gab "+name, pflag.ContinueOnError)
	fset.SetOutput(io.Discard)
	sc = &subcommand{name: name, fset: fset, format: fset.String("format", "text", "output `text|json`")}
	if more != nil {
		more(fset)
	}
	wantHelp := fset.BoolP("help", "h", false, "print this help")
	sc.usage = func(w io.Writer) {
		fmt.Fprintf(w, help, argv[0])
		writeLongUsage(w, fset)
	}
	if err := fset.Parse(argv[2:]); err != nil {
		fmt.Fprintf(stderr, "gab %s: %v\n", name, subcommandOptionError(err))
		return sc, exitUsage, true
	}
	if *wantHelp {
		sc.usage(stdout)
		return sc, exitOK, true
	}
	if *sc.format != "text" && *sc.format != "json" {
		fmt.Fprintf(stderr, "gab %s: --format must be text or json, not %q\n", name, *sc.format)
		return sc, exitUsage, true
	}
	return sc, exitOK, false
}

// subcommandOptionError is a subcommand's option error as one line that
// names the option as it was given (-o, or --output).
func subcommandOptionError(err error) error {
	var (
		unknown  *pflag.NotExistError
		required *pflag.ValueRequiredError
	)
	switch {
	case errors.As(err, &unknown) && unknown.GetSpecifiedShortnames() != "":
		return fmt.Errorf("unknown option -%s", unknown.GetSpecifiedName())
	case errors.As(err, &required) && required.GetSpecifiedShortnames() != "":
		return fmt.Errorf("-%s needs a value", required.GetSpecifiedName())
	}
	return longOptionError(err)
}

// splitSubArgs splits the command line of a subcommand that runs ab's
// command line many times (gab sweep, gab capacity): ab's options for every
// run (ab's grammar: clusters, attached or separate values; short ones only
// before the first target, long ones anywhere), the subcommand's own long
// options (parsed into rules.own) and the targets.
func splitSubArgs(args []string, rules subArgRules) (ab, targets []string, err error) {
	var lo longOptions
	abfs := newLongFlagSet(&lo)
	var own []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			targets = append(targets, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			dst := &own
			f := rules.own.Lookup(name)
			if f == nil {
				if err := rules.long(name); err != nil {
					return nil, nil, err
				}
				if f = abfs.Lookup(name); f == nil {
					return nil, nil, fmt.Errorf("unknown option --%s", name)
				}
				dst = &ab
			}
			*dst = append(*dst, a)
			if !hasValue && f.NoOptDefVal == "" && i+1 < len(args) {
				i++
				*dst = append(*dst, args[i])
			}
		case len(a) > 1 && a[0] == '-' && len(targets) == 0:
			kept := "-"
			for j := 1; j < len(a); j++ {
				c := a[j]
				if !takesArgument(c) {
					handled, err := rules.flag(c)
					if err != nil {
						return nil, nil, err
					}
					if !handled {
						kept += string(c)
					}
					continue
				}
				value := a[j+1:]
				if value == "" {
					if i+1 >= len(args) {
						return nil, nil, fmt.Errorf("option -%c needs a value", c)
					}
					i++
					value = args[i]
				}
				pass, err := rules.value(c, value)
				if err != nil {
					return nil, nil, err
				}
				if pass {
					ab = append(ab, kept+string(c), value)
					kept = "-"
				}
				break
			}
			if kept != "-" {
				ab = append(ab, kept)
			}
		case len(a) > 1 && a[0] == '-':
			return nil, nil, fmt.Errorf("ab's options go before the targets (%q follows a target)", a)
		default:
			targets = append(targets, a)
		}
	}
	if err := rules.own.Parse(own); err != nil {
		return nil, nil, longOptionError(err)
	}
	if name := emptyValue(rules.own); name != "" {
		return nil, nil, fmt.Errorf("--%s needs a value (an empty one would leave it without effect)", name)
	}
	return ab, targets, nil
}

// subArgRules is how a subcommand takes the options splitSubArgs meets.
type subArgRules struct {
	own *pflag.FlagSet // the subcommand's own long options
	// long refuses an ab long option the subcommand cannot use (nil error:
	// it goes to every run).
	long func(name string) error
	// flag sees a short option without a value: handled keeps it from the
	// runs' command line.
	flag func(c byte) (handled bool, err error)
	// value sees a short option with its value: pass puts both on the runs'
	// command line.
	value func(c byte, value string) (pass bool, err error)
}
