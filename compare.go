package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"gab/internal/chart"
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
from gab sweep --json): the figures gab --extended lists (req/s, latency,
failures, bandwidth, the client's and server's CPU where present), with the
change from A to B in per cent. Where both sides have repetitions it says whether the
difference is outside the spread (the repetitions' ranges do not overlap).
Sweeps are compared point by point (same target label, size and concurrency).
`

// pooledFigures are the figures whose value for a sweep's point is of its
// runs' requests together (their records merged, report.MergeRuns), as gab
// sweep's table prints them; every other figure of a point is the mean of
// its runs' own.
var pooledFigures = map[string]bool{"mean": true, "p50": true, "p90": true, "p99": true, "p99.9": true}

// compareGroup is one comparable unit of a side: a run, or a sweep's point
// with its repetitions.
type compareGroup struct {
	key  string // "" for a single run
	runs []*report.Document
	// sweep: a sweep's point, whose latency figures are its table's.
	sweep bool
}

// readCompareSide reads a run document or a sweep.
func readCompareSide(name string) ([]compareGroup, error) {
	raw, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file", chart.Printable(name))
	}
	if err != nil {
		return nil, err
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("%s: not a complete JSON document: %s", chart.Printable(name), chart.Printable(err.Error()))
	}
	if head.Schema == "gab-sweep" {
		sw, err := sweep.DecodeDocument(name, raw)
		if err != nil {
			return nil, err
		}
		var groups []compareGroup
		for _, p := range sw.Points {
			g := compareGroup{key: fmt.Sprintf("%s -c %d", p.Label, p.Concurrency), sweep: true}
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
	return []compareGroup{{runs: []*report.Document{d}}}, nil
}

// compareRow is one figure of one group, A against B.
type compareRow struct {
	Figure string `json:"figure"`
	Unit   string `json:"unit"`
	// Better says which way the figure is better: "higher", "lower", or
	// absent for neither.
	Better        report.Better `json:"better,omitempty"`
	A             float64       `json:"a"`
	B             float64       `json:"b"`
	ChangePercent *float64      `json:"change_percent"` // null when A is 0
	// ASD and BSD are the sds across repetitions (absent for a single run);
	// OutsideSpread is set where both sides have repetitions.
	ASD           *float64 `json:"a_sd,omitempty"`
	BSD           *float64 `json:"b_sd,omitempty"`
	OutsideSpread *bool    `json:"outside_spread,omitempty"`
	// APooled and BPooled: the side's value is of its runs' requests
	// together (a sweep point's mean and percentiles, as its table prints
	// them), not the mean of the runs' own; its sd is still the runs'.
	APooled bool `json:"a_pooled,omitempty"`
	BPooled bool `json:"b_pooled,omitempty"`
}

// compareGroupResult is the comparison of one group.
type compareGroupResult struct {
	Key   string       `json:"key,omitempty"`
	ARuns int          `json:"a_runs"`
	BRuns int          `json:"b_runs"`
	Rows  []compareRow `json:"rows"`
	// SettingsDiffer names each setting in which A's runs differ from B's
	// (such as "-n: 1000 (A), 500 (B)").
	SettingsDiffer []string `json:"settings_differ,omitempty"`
}

// compareDocument is gab compare --format json.
type compareDocument struct {
	Schema string               `json:"schema"` // "gab-compare"
	A      string               `json:"a"`
	B      string               `json:"b"`
	Groups []compareGroupResult `json:"groups"`
}

func compareGroups(a, b compareGroup) compareGroupResult {
	out := compareGroupResult{Key: a.key, ARuns: len(a.runs), BRuns: len(b.runs),
		SettingsDiffer: settingsDiffer(a.runs[0], b.runs[0])}
	pa, pb := pooledRun(a), pooledRun(b)
	for _, f := range report.Catalog {
		xa, xb := figureOf(&f, a.runs), figureOf(&f, b.runs)
		if len(xa) == 0 || len(xb) == 0 {
			continue // absent on a side: not comparable
		}
		// The statistics across repetitions are the sweep's (any figure,
		// not only req/s; the CV warning is not used here).
		sa, sb := sweep.SummarizeRPS(xa, math.Inf(1)), sweep.SummarizeRPS(xb, math.Inf(1))
		ma, mb := sa.Mean, sb.Mean
		r := compareRow{Figure: f.Title, Unit: f.Unit, Better: f.Better, A: ma, B: mb}
		if v, ok := pooledFigure(&f, pa); ok {
			r.A, r.APooled = v, true
		}
		if v, ok := pooledFigure(&f, pb); ok {
			r.B, r.BPooled = v, true
		}
		ma, mb = r.A, r.B
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

// figureOf is f of each run that has it.
func figureOf(f *report.Figure, runs []*report.Document) []float64 {
	var out []float64
	for _, d := range runs {
		if v, ok := f.Value(d); ok {
			out = append(out, v)
		}
	}
	return out
}

// pooledRun is a sweep point's runs merged (nil for a single run, or runs
// that do not merge).
func pooledRun(g compareGroup) *report.Run {
	if !g.sweep {
		return nil
	}
	m, err := report.MergeRuns(g.runs)
	if err != nil {
		return nil
	}
	return m
}

// pooledFigure is f of a sweep point's runs together (pooled), where f has one.
func pooledFigure(f *report.Figure, pooled *report.Run) (float64, bool) {
	if pooled == nil || !pooledFigures[f.Key] {
		return 0, false
	}
	return f.Value(pooled)
}

// runCompare is gab compare; argv[1] is "compare".
func runCompare(_ context.Context, argv []string, stdout, stderr io.Writer) int {
	sc, status, done := parseSubcommand(argv, "compare", compareUsage, stdout, stderr, nil)
	if done {
		return status
	}
	fset, format, usage := sc.fset, sc.format, sc.usage
	if fset.NArg() != 2 {
		fmt.Fprintf(stderr, "gab compare: want two files, A and B, not %d\n", fset.NArg())
		usage(stderr)
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
	spreadNote, pooledNote := false, false
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
			va, vb := compareValue(r.A, r.ASD), compareValue(r.B, r.BSD)
			if r.APooled {
				va += "*"
			}
			if r.BPooled {
				vb += "*"
			}
			pooledNote = pooledNote || r.APooled || r.BPooled
			fmt.Fprintf(&b, "%-36s %14s %14s %9s", name, va, vb, change)
			if r.OutsideSpread != nil {
				if *r.OutsideSpread {
					b.WriteString("  yes")
				} else {
					b.WriteString("  no")
				}
			}
			b.WriteString("\n")
		}
		if len(g.SettingsDiffer) > 0 {
			fmt.Fprintf(&b, "Note: the settings differ: %s\n", strings.Join(g.SettingsDiffer, "; "))
		}
	}
	b.WriteString("\nLatencies (mean, sd, min, max, percentiles) are of the total time; percentiles from HDR histograms (3 significant digits).\n")
	if pooledNote {
		b.WriteString("Sweeps (*): mean and percentiles of all a point's runs together (exact mean, merged histograms), as gab sweep's table prints them.\n")
	}
	if spreadNote {
		b.WriteString("With repetitions: the mean ± sd of the runs (*: ± the sd of the runs' own figures); outside spread means every run of one side is beyond every run of the other.\n")
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

// settingsDiffer names each setting in which run a differs from run b, as
// "-n: 1000 (A), 500 (B)": the run sections' settings where both documents
// have one, else the options of their command lines that change what is
// measured (a sweep's runs have no run section), and only the settings both
// name when one document has a run section and the other not.
func settingsDiffer(a, b *report.Document) []string {
	sa, runA := runSettings(a)
	sb, runB := runSettings(b)
	keys := map[string]bool{}
	for k := range sa {
		if _, ok := sb[k]; ok || runA == runB {
			keys[k] = true
		}
	}
	for k := range sb {
		if _, ok := sa[k]; ok || runA == runB {
			keys[k] = true
		}
	}
	var out []string
	for k := range keys {
		va, oka := sa[k]
		vb, okb := sb[k]
		if oka && okb && va == vb {
			continue
		}
		if !oka {
			va = "not given"
		}
		if !okb {
			vb = "not given"
		}
		out = append(out, fmt.Sprintf("%s: %s (A), %s (B)", k, va, vb))
	}
	sort.Slice(out, func(i, j int) bool { // the URL first, then by name
		ui, uj := strings.HasPrefix(out[i], "URL:"), strings.HasPrefix(out[j], "URL:")
		if ui != uj {
			return ui
		}
		return out[i] < out[j]
	})
	return out
}

// runSettings are the settings a run document says it measured with: its
// run section's (fromRun), or the options of its command line that change
// what is measured, with the URL.
func runSettings(d *report.Document) (settings map[string]string, fromRun bool) {
	r := d.Run
	if r == nil {
		return commandSettings(d.CommandLine), false
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	request := r.RequestSHA256
	if len(request) > 12 {
		request = "SHA-256 " + request[:12] + "…"
	}
	return map[string]string{
		"URL": r.URL, "method": r.Method, "request (head and body)": request, "protocol": r.Protocol,
		"-n": strconv.Itoa(r.Requests), "-c": strconv.Itoa(r.Concurrency),
		"--rate": strconv.FormatFloat(r.RatePerS, 'g', -1, 64), "-t": strconv.FormatFloat(r.TimeLimitS, 'g', -1, 64),
		"-k": yes(r.KeepAlive), "body sent": yes(r.BodySent), "-l": yes(r.VariableLength), "TLS": yes(r.TLS),
	}, true
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
