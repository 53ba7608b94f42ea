package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/montanaflynn/stats"
)

// This file is gab compare's arithmetic and text: one table of the
// catalog's figures for two runs, merged runs or sweeps, with the change from
// A to B in per cent and, where both sides have repetitions (sweeps), whether
// the difference is outside the spread: every repetition of one side beyond
// every repetition of the other. comparefiles.go reads the documents into
// CompareGroups.

// CompareGroup is one comparable unit of a side of gab compare: a run, or a
// sweep's point with its repetitions.
type CompareGroup struct {
	Key  string // "" for a single run
	Runs []*Run
	// Pooled: a sweep's point, whose mean and percentiles are of its runs'
	// requests together, as its table prints them.
	Pooled bool
}

// spread is a figure across repetitions: gab compare's rows, and gab
// sweep's req/s (internal/sweep adds its confidence interval).
type spread struct {
	Mean, SD, Min, Max float64 // SD: the sample sd (n - 1), 0 for one value
}

// SpreadOf is the spread of values (zero for none).
func SpreadOf(values []float64) spread {
	var s spread
	if len(values) == 0 {
		return s
	}
	data := stats.Float64Data(values)
	s.Mean, _ = stats.Mean(data) // the errors are for empty input only
	s.Min, _ = stats.Min(data)
	s.Max, _ = stats.Max(data)
	if len(values) > 1 {
		s.SD, _ = stats.StandardDeviationSample(data)
	}
	return s
}

// ComparisonRow is one figure of one group, A against B.
type ComparisonRow struct {
	Figure string `json:"figure"`
	Unit   string `json:"unit"`
	// Better says which way the figure is better: "higher", "lower", or
	// absent for neither.
	Better        Better   `json:"better,omitempty"`
	A             float64  `json:"a"`
	B             float64  `json:"b"`
	ChangePercent *float64 `json:"change_percent"` // null when A is 0
	// ASD and BSD are the sds across repetitions (absent for a single run);
	// OutsideSpread is set where both sides have repetitions.
	ASD           *float64 `json:"a_sd,omitempty"`
	BSD           *float64 `json:"b_sd,omitempty"`
	OutsideSpread *bool    `json:"outside_spread,omitempty"`
	// APooled and BPooled: the side's value is of its runs together by the
	// figure's Pool rule (a sweep point's, as its table prints it: the
	// latencies of every request, counts summed, the extremes), not the
	// mean of the runs' own; its sd is still the runs'.
	APooled bool `json:"a_pooled,omitempty"`
	BPooled bool `json:"b_pooled,omitempty"`
}

// ComparisonGroup is the comparison of one group.
type ComparisonGroup struct {
	Key   string          `json:"key,omitempty"`
	ARuns int             `json:"a_runs"`
	BRuns int             `json:"b_runs"`
	Rows  []ComparisonRow `json:"rows"`
	// SettingsDiffer names each setting in which A's runs differ from B's
	// (such as "-n: 1000 (A), 500 (B)").
	SettingsDiffer []string `json:"settings_differ,omitempty"`
	// Targets compare the results per target both sides have (--urls,
	// --targets), each side's runs merged.
	Targets []TargetComparison `json:"targets,omitempty"`
}

// Comparison is gab compare --format json.
type Comparison struct {
	Schema string            `json:"schema"` // "gab-compare"
	A      string            `json:"a"`
	B      string            `json:"b"`
	Groups []ComparisonGroup `json:"groups"`
}

// compareGroups compares one group of A with one of B.
func compareGroups(a, b CompareGroup, commandSettings func([]string) map[string]string) ComparisonGroup {
	out := ComparisonGroup{Key: a.Key, ARuns: len(a.Runs), BRuns: len(b.Runs),
		SettingsDiffer: settingsDiffer(a.Runs[0], b.Runs[0], commandSettings)}
	ga, gb := NewGroup(a.Runs), NewGroup(b.Runs)
	for _, f := range Catalog {
		sa, sb := ga.Stat(&f), gb.Stat(&f)
		if !sa.Known || !sb.Known {
			continue // absent on a side: not comparable
		}
		r := ComparisonRow{Figure: f.Title, Unit: f.Unit, Better: f.Better}
		r.A, r.APooled = sideValue(a, &f, sa)
		r.B, r.BPooled = sideValue(b, &f, sb)
		if r.A != 0 {
			c := (r.B - r.A) / math.Abs(r.A) * 100
			r.ChangePercent = &c
		}
		if sa.Runs.N > 1 {
			r.ASD = &sa.Runs.SD
		}
		if sb.Runs.N > 1 {
			r.BSD = &sb.Runs.SD
		}
		if sa.Runs.N > 1 && sb.Runs.N > 1 {
			outside := sb.Min > sa.Max || sb.Max < sa.Min
			r.OutsideSpread = &outside
		}
		out.Rows = append(out.Rows, r)
	}
	out.Targets = compareTargets(a.Runs, b.Runs)
	return out
}

// sideValue is a side's value of f: a sweep point's (g.Pooled) by the
// figure's Pool rule where that is not the mean of its runs' own (pooled
// is then true), else the mean of the runs' own.
func sideValue(g CompareGroup, f *Figure, s Stat) (v float64, pooled bool) {
	if g.Pooled && (s.FromMerged || f.Pool == SumOfRuns || f.Pool == MinOfRuns || f.Pool == MaxOfRuns) {
		return s.Value, true
	}
	return s.Runs.Mean, false
}

// Compare compares side A (read from nameA) with side B: a run with a run
// (or a one-point sweep), a sweep's points with the other sweep's points of
// the same key. commandSettings reads the settings of a run document without
// a run section (a sweep's runs) from its command line.
func Compare(nameA, nameB string, ga, gb []CompareGroup, commandSettings func(argv []string) map[string]string) (*Comparison, error) {
	doc := &Comparison{Schema: "gab-compare", A: nameA, B: nameB}
	if len(ga) == 1 && len(gb) == 1 {
		res := compareGroups(ga[0], gb[0], commandSettings)
		if ga[0].Key != gb[0].Key {
			res.Key = strings.Trim(ga[0].Key+" | "+gb[0].Key, " |")
		}
		doc.Groups = append(doc.Groups, res)
		return doc, nil
	}
	if len(ga) == 1 && ga[0].Key == "" || len(gb) == 1 && gb[0].Key == "" {
		return nil, fmt.Errorf("%s has %d points, %s %d: a single run compares with a run or a one-point sweep", nameA, len(ga), nameB, len(gb))
	}
	byKey := map[string]CompareGroup{}
	for _, g := range gb {
		byKey[g.Key] = g
	}
	var unmatched []string
	for _, g := range ga {
		if h, ok := byKey[g.Key]; ok {
			doc.Groups = append(doc.Groups, compareGroups(g, h, commandSettings))
		} else {
			unmatched = append(unmatched, g.Key)
		}
	}
	if len(doc.Groups) == 0 {
		return nil, fmt.Errorf("the sweeps have no point in common (%s's: %s)", nameA, strings.Join(unmatched, "; "))
	}
	return doc, nil
}

// WriteText writes the comparison as gab compare prints it.
func (doc *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s\nB: %s\n", doc.A, doc.B)
	spreadNote, pooledNote := false, false
	for _, g := range doc.Groups {
		b.WriteString("\n")
		if g.Key != "" {
			fmt.Fprintf(&b, "%s\n", g.Key)
		}
		fmt.Fprintf(&b, "%-36s %14s %14s %9s", fmt.Sprintf("(A: %s, B: %s)", runCount(g.ARuns), runCount(g.BRuns)), "A", "B", "change")
		both := g.ARuns > 1 && g.BRuns > 1
		if both {
			b.WriteString("  outside spread")
			spreadNote = true
		}
		b.WriteString("\n")
		for _, r := range g.Rows {
			name := unitLabel(r.Figure, r.Unit)
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
		writeTargetComparison(&b, g.Targets)
	}
	b.WriteString("\nLatencies (mean, sd, min, max, percentiles) are of the total time; percentiles from HDR histograms (3 significant digits).\n")
	if pooledNote {
		b.WriteString("Sweeps (*): a point's runs together, as gab sweep's table prints them: mean, sd, percentiles and CPU per request of all its runs' requests (exact mean and sd, merged histograms), counts summed, min and max the extremes.\n")
	}
	if spreadNote {
		b.WriteString("With repetitions: the mean ± sd of the runs (*: ± the sd of the runs' own figures); outside spread means every run of one side is beyond every run of the other.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// runCount is n runs in words.
func runCount(n int) string {
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
func settingsDiffer(a, b *Run, commandSettings func([]string) map[string]string) []string {
	sa, runA := runSettings(a, commandSettings)
	sb, runB := runSettings(b, commandSettings)
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
func runSettings(d *Run, commandSettings func([]string) map[string]string) (settings map[string]string, fromRun bool) {
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
