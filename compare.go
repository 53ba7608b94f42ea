package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"gab/internal/capacity"
	"gab/internal/docfile"
	"gab/internal/runcmd"
	"gab/report"
)

// This file is `gab compare A.json B.json`: its command line and the
// settings of a command line (commandSettings); the documents are read by
// docfile.ReadSchema and compared by report.CompareFiles (runs and sweeps)
// or capacity.CompareFiles.

const compareUsage = `Usage: %s compare [--format text|json] A.json B.json [C.json...]
Compares gab JSON documents, each after the first with the first (runs, merged runs from gab merge, or sweeps
from gab sweep --json): the figures gab --extended lists (req/s, latency,
failures, bandwidth, the client's and server's CPU where present), with the
change from A to B in per cent. Where both sides have repetitions it says whether the
difference is outside the spread (the repetitions' ranges do not overlap).
Sweeps are compared point by point (same target label, size and concurrency).
With more than two files each comparison follows the last (--format json: an
array of them). gab sweep --baseline compares the targets of one sweep.
`

// runCompare is gab compare; argv[1] is "compare".
func runCompare(_ context.Context, argv []string, stdout, stderr io.Writer) int {
	sc, status, done := parseSubcommand(argv, "compare", compareUsage, stdout, stderr, nil)
	if done {
		return status
	}
	fset, format, usage := sc.fset, sc.format, sc.usage
	if fset.NArg() < 2 {
		fmt.Fprintf(stderr, "gab compare: want two files or more, A and B..., not %d\n", fset.NArg())
		usage(stderr)
		return exitUsage
	}
	names := fset.Args()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "gab compare: %v\n", err)
		return exitError
	}
	raw, schema, err := docfile.ReadSchema(names[0])
	if err != nil {
		return fail(err)
	}
	out := runcmd.NewBufferedWriter(stdout)
	if schema == capacity.Schema {
		all, err := capacity.CompareFiles(names, raw, docfile.ReadSchema)
		if err != nil {
			return fail(err)
		}
		return flushStdout(out, capacity.WriteComparison(out, *format, names, all), "compare", stderr)
	}
	docs, err := report.CompareFiles(names, raw, schema, docfile.ReadSchema, commandSettings)
	if err != nil {
		return fail(err)
	}
	return flushStdout(out, report.WriteComparisons(out, *format, docs), "compare", stderr)
}

// reportOnly are the options that change what gab prints or writes, not
// what it measures: ab's -v, -w, -x, -y, -z, -g, -e, -q, -d, -S, -V, -h and
// gab's output options.
var reportOnly = map[string]bool{
	"-v": true, "-w": true, "-x": true, "-y": true, "-z": true, "-g": true, "-e": true, "-q": true,
	"-d": true, "-S": true, "-V": true, "-h": true,
	"--format": true, "--json": true, "--percentiles": true, "--extended": true, "--interval": true,
	"--hlog": true, "--plot": true, "--html": true, "--histogram": true, "--progress": true,
	"--fail-if": true, "--help": true, "--version": true, "--shard": true, "--shards": true,
	"--run-id": true, "--start-at": true, "--server-pid": true, "--sample-limit": true,
}

// commandSettings reads a gab command line's options, by ab's grammar for
// the short ones (clusters, attached or separate values) and pflag's for the
// long ones, and its URL (the first operand). Repeated options (-H) keep
// every value.
func commandSettings(argv []string) map[string]string {
	out := map[string]string{}
	add := func(k, v string) {
		if reportOnly[k] {
			return
		}
		if old, ok := out[k]; ok {
			v = old + " " + v
		}
		out[k] = v
	}
	w := classifyArgv(argv)
	for i := 0; i < len(w.short); i++ {
		a := w.short[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			if a == "--" && i+1 < len(w.short) {
				a = w.short[i+1]
			}
			if a != "--" {
				out["URL"] = a
			}
			break
		}
		for j := 1; j < len(a); j++ {
			opt := "-" + a[j:j+1]
			if !takesArgument(a[j]) {
				add(opt, "yes")
				continue
			}
			v := a[j+1:]
			if v == "" && i+1 < len(w.short) {
				i++
				v = w.short[i]
			}
			add(opt, v)
			break
		}
	}
	fs := newLongFlagSet(new(longOptions))
	for i := 0; i < len(w.long); i++ {
		name, v, hasValue := strings.Cut(strings.TrimPrefix(w.long[i], "--"), "=")
		if !hasValue {
			v = "yes"
			if f := fs.Lookup(name); f != nil && f.NoOptDefVal == "" && i+1 < len(w.long) {
				i++
				v = w.long[i]
			}
		}
		add("--"+name, v)
	}
	return out
}
