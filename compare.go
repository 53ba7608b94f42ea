package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"

	"gab/internal/sweep"
	"gab/report"
)

// This file is `gab compare A.json B.json`: one table of the figures that
// matter for two runs, merged runs or sweeps, with the change from A to B in
// per cent and, where both sides have repetitions (sweeps), whether the
// difference is outside the spread: every repetition of one side beyond every
// repetition of the other.

const compareUsage = `Usage: %s compare [--format text|json] A.json B.json
Compares two gab JSON documents (runs, merged runs from gab merge, or sweeps
from gab sweep --json): req/s, mean, p50, p90, p99, p99.9, failures, Mbit/s,
and the client's and server's CPU where present, with the change from A to B
in per cent. Where both sides have repetitions it says whether the
difference is outside the spread (the repetitions' ranges do not overlap).
Sweeps are compared point by point (same target label, size and concurrency).
`

// figure is one row of the comparison.
type figure struct {
	name, unit string
	// of returns the figure of one run document (ok false where absent).
	of func(d *report.Document) (float64, bool)
}

var compareFigures = []figure{
	{"Requests per second", "#/s", func(d *report.Document) (float64, bool) { return d.Report.RequestsPerSecond, true }},
	{"Mean", "ms", meanMs},
	{"p50", "ms", percentileMs(50)},
	{"p90", "ms", percentileMs(90)},
	{"p99", "ms", percentileMs(99)},
	{"p99.9", "ms", percentileMs(99.9)},
	{"Failed requests", "", func(d *report.Document) (float64, bool) { return float64(d.Report.FailedRequests), true }},
	{"Received", "Mbit/s", func(d *report.Document) (float64, bool) {
		if d.Report.TimeTakenS <= 0 {
			return 0, false
		}
		return float64(d.Report.TotalTransferredBytes) * 8 / 1e6 / d.Report.TimeTakenS, true
	}},
	{"Client CPU", "% of a core", func(d *report.Document) (float64, bool) {
		if d.Extended == nil || d.Extended.ClientCPU == nil || d.Extended.ClientCPU.PercentOfOneCore == nil {
			return 0, false // not measured, or a run too short for a share of a core
		}
		return *d.Extended.ClientCPU.PercentOfOneCore, true
	}},
	{"Server CPU", "% of a core", func(d *report.Document) (float64, bool) {
		if d.ServerCPU == nil {
			return 0, false
		}
		return d.ServerCPU.PercentOfOneCore, true
	}},
	{"Server CPU per request", "µs", func(d *report.Document) (float64, bool) {
		if d.ServerCPU == nil {
			return 0, false
		}
		return d.ServerCPU.UsPerRequest, true
	}},
}

// meanMs is the exact mean total time: from the sums where the document has
// them, else ab's truncated µs mean.
func meanMs(d *report.Document) (float64, bool) {
	if s := d.Sums; s != nil && s.Total.Count > 0 {
		return float64(s.Total.SumUs) / float64(s.Total.Count) / 1000, true
	}
	if ct := d.Report.ConnectionTimes; ct != nil {
		return float64(ct.Total.MeanUs) / 1000, true
	}
	return 0, false
}

// percentileMs reads a total-time percentile: from the sums' histogram, else
// the extended report's total phase.
func percentileMs(p float64) func(d *report.Document) (float64, bool) {
	return func(d *report.Document) (float64, bool) {
		if s := d.Sums; s != nil && s.Total.Count > 0 {
			if dist, err := s.Total.Dist(); err == nil {
				return float64(dist.Percentile(p)) / 1000, true
			}
		}
		if x := d.Extended; x != nil && x.Phases.Total.Count > 0 {
			t := &x.Phases.Total
			switch p {
			case 50:
				return float64(t.MedianUs) / 1000, true
			case 90:
				return float64(t.P90Us) / 1000, true
			case 99:
				return float64(t.P99Us) / 1000, true
			case 99.9:
				return float64(t.P999Us) / 1000, true
			}
		}
		return 0, false
	}
}

// compareGroup is one comparable unit of a side: a run, or a sweep's point
// with its repetitions.
type compareGroup struct {
	key  string // "" for a single run
	runs []*report.Document
}

// readCompareSide reads a run document or a sweep.
func readCompareSide(name string) ([]compareGroup, error) {
	raw, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file", name)
	}
	if err != nil {
		return nil, err
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("%s: not a complete JSON document: %v", name, err)
	}
	if head.Schema == "gab-sweep" {
		var sw sweep.Document
		if err := json.Unmarshal(raw, &sw); err != nil {
			return nil, fmt.Errorf("%s: not a gab sweep document: %v", name, err)
		}
		var groups []compareGroup
		for _, p := range sw.Points {
			g := compareGroup{key: fmt.Sprintf("%s -c %d", p.Label, p.Concurrency)}
			if p.Size != nil {
				g.key = fmt.Sprintf("%s size %s -c %d", p.Label, p.Size.Text, p.Concurrency)
			}
			for _, r := range p.Runs {
				if r.Document != nil && r.Document.Report != nil {
					g.runs = append(g.runs, r.Document)
				}
			}
			if len(g.runs) > 0 {
				groups = append(groups, g)
			}
		}
		if len(groups) == 0 {
			return nil, fmt.Errorf("%s: a sweep without a finished run", name)
		}
		return groups, nil
	}
	d, err := decodeDocument(name, raw)
	if err != nil {
		return nil, err
	}
	if d.Report == nil {
		return nil, fmt.Errorf("%s: has no report (ending %s)", name, d.Ending)
	}
	return []compareGroup{{runs: []*report.Document{d}}}, nil
}

// compareRow is one figure of one group, A against B.
type compareRow struct {
	Figure        string   `json:"figure"`
	Unit          string   `json:"unit"`
	A             float64  `json:"a"`
	B             float64  `json:"b"`
	ChangePercent *float64 `json:"change_percent"` // null when A is 0
	// ASD and BSD are the sds across repetitions (absent for a single run);
	// OutsideSpread is set where both sides have repetitions.
	ASD           *float64 `json:"a_sd,omitempty"`
	BSD           *float64 `json:"b_sd,omitempty"`
	OutsideSpread *bool    `json:"outside_spread,omitempty"`
}

// compareGroupResult is the comparison of one group.
type compareGroupResult struct {
	Key   string       `json:"key,omitempty"`
	ARuns int          `json:"a_runs"`
	BRuns int          `json:"b_runs"`
	Rows  []compareRow `json:"rows"`
}

// compareDocument is gab compare --format json.
type compareDocument struct {
	Schema string               `json:"schema"` // "gab-compare"
	A      string               `json:"a"`
	B      string               `json:"b"`
	Groups []compareGroupResult `json:"groups"`
}

func compareGroups(a, b compareGroup) compareGroupResult {
	out := compareGroupResult{Key: a.key, ARuns: len(a.runs), BRuns: len(b.runs)}
	for _, f := range compareFigures {
		var xa, xb []float64
		for _, d := range a.runs {
			if v, ok := f.of(d); ok {
				xa = append(xa, v)
			}
		}
		for _, d := range b.runs {
			if v, ok := f.of(d); ok {
				xb = append(xb, v)
			}
		}
		if len(xa) == 0 || len(xb) == 0 {
			continue // absent on a side: not comparable
		}
		// The statistics across repetitions are the sweep's (any figure,
		// not only req/s; the CV warning is not used here).
		sa, sb := sweep.SummarizeRPS(xa, math.Inf(1)), sweep.SummarizeRPS(xb, math.Inf(1))
		ma, mb := sa.Mean, sb.Mean
		r := compareRow{Figure: f.name, Unit: f.unit, A: ma, B: mb}
		if ma != 0 {
			c := (mb - ma) / math.Abs(ma) * 100
			r.ChangePercent = &c
		}
		if len(xa) > 1 {
			r.ASD = &sa.SD
		}
		if len(xb) > 1 {
			r.BSD = &sb.SD
		}
		if len(xa) > 1 && len(xb) > 1 {
			outside := sb.Min > sa.Max || sb.Max < sa.Min
			r.OutsideSpread = &outside
		}
		out.Rows = append(out.Rows, r)
	}
	return out
}

// runCompare is gab compare; argv[1] is "compare".
func runCompare(argv []string, stdout, stderr io.Writer) int {
	sc, status, done := parseSubcommand(argv, "compare", compareUsage, stderr, nil)
	if done {
		return status
	}
	fset, format, usage := sc.fset, sc.format, sc.usage
	if fset.NArg() != 2 {
		fmt.Fprintf(stderr, "gab compare: want two files, A and B, not %d\n", fset.NArg())
		usage()
		return exitUsage
	}
	nameA, nameB := fset.Arg(0), fset.Arg(1)
	ga, err := readCompareSide(nameA)
	if err == nil {
		var gb []compareGroup
		gb, err = readCompareSide(nameB)
		if err == nil {
			var doc *compareDocument
			doc, err = compareSides(nameA, nameB, ga, gb)
			if err == nil {
				out := newBufferedWriter(stdout)
				if *format == "json" {
					enc := json.NewEncoder(out)
					enc.SetIndent("", "  ")
					err = enc.Encode(doc)
				} else {
					err = writeCompareText(out, doc)
				}
				if err == nil {
					err = out.Flush()
				}
				if err != nil {
					fmt.Fprintf(stderr, "gab compare: stdout: %v\n", err)
					return exitError
				}
				return exitOK
			}
		}
	}
	fmt.Fprintf(stderr, "gab compare: %v\n", err)
	return exitError
}

// compareSides pairs the groups: a run with a run (or a one-point sweep), a
// sweep's points with the other sweep's points of the same key.
func compareSides(nameA, nameB string, ga, gb []compareGroup) (*compareDocument, error) {
	doc := &compareDocument{Schema: "gab-compare", A: nameA, B: nameB}
	if len(ga) == 1 && len(gb) == 1 {
		res := compareGroups(ga[0], gb[0])
		if ga[0].key != gb[0].key {
			res.Key = strings.Trim(ga[0].key+" | "+gb[0].key, " |")
		}
		doc.Groups = append(doc.Groups, res)
		return doc, nil
	}
	if len(ga) == 1 && ga[0].key == "" || len(gb) == 1 && gb[0].key == "" {
		return nil, fmt.Errorf("%s has %d points, %s %d: a single run compares with a run or a one-point sweep", nameA, len(ga), nameB, len(gb))
	}
	byKey := map[string]compareGroup{}
	for _, g := range gb {
		byKey[g.key] = g
	}
	var unmatched []string
	for _, g := range ga {
		if h, ok := byKey[g.key]; ok {
			doc.Groups = append(doc.Groups, compareGroups(g, h))
		} else {
			unmatched = append(unmatched, g.key)
		}
	}
	if len(doc.Groups) == 0 {
		return nil, fmt.Errorf("the sweeps have no point in common (%s's: %s)", nameA, strings.Join(unmatched, "; "))
	}
	return doc, nil
}

func writeCompareText(w io.Writer, doc *compareDocument) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s\nB: %s\n", doc.A, doc.B)
	spreadNote := false
	for _, g := range doc.Groups {
		b.WriteString("\n")
		if g.Key != "" {
			fmt.Fprintf(&b, "%s\n", g.Key)
		}
		fmt.Fprintf(&b, "%-36s %14s %14s %9s", fmt.Sprintf("(A: %s, B: %s)", runs(g.ARuns), runs(g.BRuns)), "A", "B", "change")
		both := g.ARuns > 1 && g.BRuns > 1
		if both {
			b.WriteString("  outside spread")
			spreadNote = true
		}
		b.WriteString("\n")
		for _, r := range g.Rows {
			name := r.Figure
			if r.Unit != "" {
				name += " [" + r.Unit + "]"
			}
			change := "–"
			if r.ChangePercent != nil {
				change = fmt.Sprintf("%+.1f %%", *r.ChangePercent)
			} else if r.B == r.A {
				change = "0"
			}
			fmt.Fprintf(&b, "%-36s %14s %14s %9s", name, compareValue(r.A, r.ASD), compareValue(r.B, r.BSD), change)
			if r.OutsideSpread != nil {
				if *r.OutsideSpread {
					b.WriteString("  yes")
				} else {
					b.WriteString("  no")
				}
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nMean and percentiles are of the total time; percentiles from HDR histograms (3 significant digits).\n")
	if spreadNote {
		b.WriteString("With repetitions: the mean ± sd of the runs; outside spread means every run of one side is beyond every run of the other.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func runs(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

// compareValue prints a value with 4 significant digits at least (and its sd
// across repetitions).
func compareValue(v float64, sd *float64) string {
	f := func(x float64) string {
		switch a := math.Abs(x); {
		case a >= 1000 || a == math.Trunc(a):
			return fmt.Sprintf("%.0f", x)
		case a >= 10:
			return fmt.Sprintf("%.2f", x)
		}
		return fmt.Sprintf("%.3f", x)
	}
	if sd == nil {
		return f(v)
	}
	return f(v) + "±" + f(*sd)
}
