package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"gab/internal/capacity"
	"gab/internal/chart"
	"gab/internal/docfile"
	"gab/internal/runcmd"
	"gab/report"
)

// This file is `gab compare A.json B.json`: its command line, the documents
// read into report.CompareGroups (a run, or a sweep's points) and the
// settings of a command line; the comparison is report.Compare.

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

// readCompareFile reads a document gab compare is given, once (a pipe
// holds it only once), and its schema.
func readCompareFile(name string) (raw []byte, schema string, err error) {
	raw, err = docfile.Read(name, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%s: no such file", chart.Printable(name))
	}
	if err != nil {
		return nil, "", err
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, "", report.JSONError(chart.Printable(name), "gab JSON document", err)
	}
	return raw, head.Schema, nil
}

// readCompareSide reads a run document or a sweep.
func readCompareSide(name string) ([]report.CompareGroup, error) {
	raw, schema, err := readCompareFile(name)
	if err != nil {
		return nil, err
	}
	return compareSide(name, raw, schema)
}

// compareSide decodes raw, the document name of the schema, as a run
// document or a sweep.
func compareSide(name string, raw []byte, schema string) ([]report.CompareGroup, error) {
	if schema == "gab-sweep" {
		sw, err := report.DecodeSweep(name, raw)
		if err != nil {
			return nil, err
		}
		var groups []report.CompareGroup
		for _, p := range sw.Points {
			g := report.CompareGroup{Key: fmt.Sprintf("%s -c %d", p.Label, p.Concurrency), Pooled: true}
			if p.Size != nil {
				g.Key = fmt.Sprintf("%s size %s -c %d", p.Label, p.Size.Text, p.Concurrency)
			}
			for _, r := range p.Runs {
				if r.Document != nil && r.Document.Report != nil {
					g.Runs = append(g.Runs, r.Document)
				}
			}
			if len(g.Runs) > 0 {
				groups = append(groups, g)
			}
		}
		if len(groups) == 0 {
			return nil, fmt.Errorf("%s: a sweep without a finished run", chart.Printable(name))
		}
		return groups, nil
	}
	d, err := report.DecodeDocument(name, raw)
	if err != nil {
		return nil, err
	}
	if d.Report == nil {
		return nil, fmt.Errorf("%s: has no report (ending %s)", chart.Printable(name), d.Ending)
	}
	return []report.CompareGroup{{Runs: []*report.Run{d}}}, nil
}

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
	raw, schema, err := readCompareFile(names[0])
	if err != nil {
		fmt.Fprintf(stderr, "gab compare: %v\n", err)
		return exitError
	}
	if schema == capacity.Schema {
		all, err := capacity.CompareFiles(names, raw, readCompareFile)
		if err != nil {
			fmt.Fprintf(stderr, "gab compare: %v\n", err)
			return exitError
		}
		out := runcmd.NewBufferedWriter(stdout)
		return flushStdout(out, capacity.WriteComparison(out, *format, names, all), "compare", stderr)
	}
	docs, err := compareAll(names, raw, schema)
	if err != nil {
		fmt.Fprintf(stderr, "gab compare: %v\n", err)
		return exitError
	}
	out := runcmd.NewBufferedWriter(stdout)
	switch {
	case *format == "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if len(docs) == 1 {
			err = enc.Encode(docs[0])
		} else {
			err = enc.Encode(docs)
		}
	default:
		for i, doc := range docs {
			if i > 0 {
				fmt.Fprintln(out)
			}
			if err = doc.WriteText(out); err != nil {
				break
			}
		}
	}
	return flushStdout(out, err, "compare", stderr)
}

// compareAll compares every document after the first with the first, whose
// bytes are raw, of the schema.
func compareAll(names []string, raw []byte, schema string) ([]*report.Comparison, error) {
	ga, err := compareSide(names[0], raw, schema)
	if err != nil {
		return nil, err
	}
	var docs []*report.Comparison
	for _, nameB := range names[1:] {
		gb, err := readCompareSide(nameB)
		if err != nil {
			return nil, err
		}
		doc, err := report.Compare(names[0], nameB, ga, gb, commandSettings)
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	return docs, nil
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
