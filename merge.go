package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"gab/internal/docfile"
	"gab/internal/printable"
	"gab/internal/runcmd"
	"gab/report"
)

// This file is `gab merge FILE...`: the report of a run measured as shards
// (--shard), from their JSON documents; the arithmetic is report.Merge.

const mergeUsage = `Usage: %s merge [--format text|json] [--force] FILE|DIR...
Combines the JSON documents of a sharded run (--shard i/N, --json FILE) into
the report one run would have printed: counts, failures, bytes, status codes,
min, mean, sd and max exact; medians and percentiles from the merged
histograms (one line says their precision). --format json prints a document
of the same schema (for gab compare and gab plot). A DIR stands for the
*.json files in it.
`

// runMerge is gab merge; argv[1] is "merge".
func runMerge(_ context.Context, argv []string, stdout, stderr io.Writer) int {
	var force *bool
	sc, status, done := parseSubcommand(argv, "merge", mergeUsage, stdout, stderr, func(fs *pflag.FlagSet) {
		force = fs.Bool("force", false, "merge documents of different runs (or with missing shards) on purpose; the report says so")
	})
	if done {
		return status
	}
	fset, format, usage := sc.fset, sc.format, sc.usage
	files, err := mergeFiles(fset.Args())
	if err != nil {
		fmt.Fprintf(stderr, "gab merge: %v\n", err)
		return exitError
	}
	if len(files) == 0 {
		fmt.Fprintf(stderr, "gab merge: no FILE given\n")
		usage(stderr)
		return exitUsage
	}
	var in []report.MergeInput
	bad := false
	for _, name := range files {
		d, err := readDocument(name)
		if err != nil {
			fmt.Fprintf(stderr, "gab merge: %v\n", err)
			bad = true
			continue
		}
		in = append(in, report.MergeInput{Name: printable.String(name), Doc: d})
	}
	if bad {
		return exitError // each unreadable document said why, on its line
	}
	m, notes, err := report.Merge(in, *force, redactCredentials(argv))
	if err != nil {
		fmt.Fprintf(stderr, "gab merge: %v\n", err)
		return exitError
	}
	out := runcmd.NewBufferedWriter(stdout)
	if *format == "json" {
		err = report.WriteJSON(out, m)
	} else {
		err = writeMergedText(out, m, notes)
	}
	return flushStdout(out, err, "merge", stderr)
}

// writeMergedText writes ab's report of the merged run, its figures (the
// catalog's), then gab merge's notes. ab's report starts with two blank lines
// that part it from ab's banner and "Benchmarking" line; a merge has neither,
// so it starts with the report's first line.
func writeMergedText(w io.Writer, m *report.Run, notes []string) error {
	var b bytes.Buffer
	if err := report.WriteText(&b, m); err != nil {
		return err
	}
	if _, err := w.Write(bytes.TrimPrefix(b.Bytes(), []byte("\n\n"))); err != nil {
		return err
	}
	// the --percentiles, corrected and --server-pid tables where the merged
	// run has them, then the catalog's figures
	if err := report.WriteSections(w, m, report.Sections{Tables: true, Figures: true}); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	for _, n := range notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// readDocument reads one gab JSON document, with a message that says what is
// wrong with a missing, truncated or foreign file.
func readDocument(name string) (*report.Run, error) {
	raw, err := docfile.Read(name, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file (a shard that failed or never ran?)", printable.String(name))
	}
	if err != nil {
		return nil, err
	}
	return report.DecodeDocument(name, raw)
}

// mergeFiles expands each directory argument into the *.json files in it
// (sorted), for containers without a shell to expand a pattern.
func mergeFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			files = append(files, a) // readDocument says what is wrong with it
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "*.json"))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: a directory without *.json files", a)
		}
		files = append(files, m...)
	}
	return files, nil
}
