package sweep

import (
	"fmt"
	"strings"

	"gab/internal/printable"
)

// This file is what a sweep says about how far its points can be trusted:
// each point's flags (its runs' verdicts, report/verdicts.go, and an
// interval wider than --ci's share of its mean), the verdicts' lines for
// stderr, and --repeat auto's rule for when a point has enough repetitions.

// VerdictWideInterval flags a point whose req/s 95 % interval's half-width
// is more than Settings.CI of its mean.
const VerdictWideInterval = "wide_interval"

// Flags are the short codes of a point's verdicts in the table, the CSV and
// on the charts, in the order they are listed, with the words of the
// legend. The kinds are the run verdicts' (report/verdicts.go) and
// VerdictWideInterval.
var Flags = []Flag{
	{Kind: "client_bound", Code: "C", Name: "client-bound"},
	{Kind: "busy_machine", Code: "B", Name: "busy machine"},
	{Kind: "kernel_drops", Code: "D", Name: "kernel drops"},
	{Kind: "too_short", Code: "S", Name: "too short"},
	{Kind: "too_few", Code: "F", Name: "too few requests for a percentile"},
	{Kind: VerdictWideInterval, Code: "W", Name: "wide interval"},
}

// Flag is a verdict kind's code and its words.
type Flag struct{ Kind, Code, Name string }

// FlagOf is kind's flag; a kind without a code (a document of another gab)
// is its own code and name, made printable.
func FlagOf(kind string) Flag {
	for _, f := range Flags {
		if f.Kind == kind {
			return f
		}
	}
	k := printable.String(kind)
	return Flag{Kind: kind, Code: k, Name: strings.ReplaceAll(k, "_", " ")}
}

// FlagCodes are a point's verdicts as codes, in Flags' order, kinds without
// a code last, each after a space ("CB", "" for none).
func FlagCodes(kinds []string) string {
	var b strings.Builder
	for _, f := range flagsOf(kinds) {
		if len(f.Code) > 1 && b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f.Code)
	}
	return b.String()
}

// flagsOf are the flags of kinds, each once, in Flags' order, kinds
// without a code last in their order.
func flagsOf(kinds []string) []Flag {
	var out []Flag
	for _, f := range Flags {
		for _, k := range kinds {
			if k == f.Kind {
				out = append(out, f)
				break
			}
		}
	}
	seen := map[string]bool{}
	for _, k := range kinds {
		if f := FlagOf(k); f.Code != "" && !seen[k] && !isKnownFlag(k) {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

func isKnownFlag(kind string) bool {
	for _, f := range Flags {
		if f.Kind == kind {
			return true
		}
	}
	return false
}

// FlagLegend is the legend of the flags the points carry ("" when none
// does): "C client-bound, B busy machine".
func FlagLegend(pointKinds [][]string) string {
	var all []string
	for _, ks := range pointKinds {
		all = append(all, ks...)
	}
	var parts []string
	for _, f := range flagsOf(all) {
		parts = append(parts, f.Code+" "+f.Name)
	}
	return strings.Join(parts, ", ")
}

// Repetitions --repeat auto takes at least (the interval needs two degrees
// of freedom to mean much), and at most without a maximum given.
const (
	AutoMinRepeat     = 3
	AutoDefaultRepeat = 20
)

// Settled reports whether runs (one point's, in order) are enough for
// --repeat auto: at least AutoMinRepeat ran, and the req/s 95 % interval's
// half-width is within ci of their mean.
func Settled(ci float64, runs []*RunResult) bool {
	if len(runs) < AutoMinRepeat {
		return false
	}
	rps := make([]float64, 0, len(runs))
	for _, r := range runs {
		rps = append(rps, r.RPS)
	}
	st := SummarizeRPS(rps, 0)
	return st.Mean > 0 && st.CI95 <= ci*st.Mean
}

// judge sets the point's flags and, with --repeat auto, whether it settled
// before its maximum or stopped there.
func (p *PointResult) judge(s *Settings) {
	p.Verdicts = nil
	seen := map[string]bool{}
	for _, r := range p.Runs {
		if r.Document == nil {
			continue
		}
		for _, k := range r.Document.VerdictKinds() {
			if !seen[k] {
				seen[k] = true
				p.Verdicts = append(p.Verdicts, k)
			}
		}
	}
	if p.wideInterval(s) {
		p.Verdicts = append(p.Verdicts, VerdictWideInterval)
	}
	if s.Auto {
		if Settled(s.CI, p.Runs) {
			p.Planned = len(p.Runs) // it needed no more
		} else if len(p.Runs) >= s.Repeat {
			p.StoppedAtMax = true
		}
	}
}

// VerdictLines are the point's verdicts for stderr, one line each: a kind
// with how many of its runs found it and the first run's words.
func VerdictLines(s *Settings, p *PointResult) []string {
	var out []string
	type found struct {
		n    int
		line string
	}
	byKind := map[string]*found{}
	var kinds []string
	for _, r := range p.Runs {
		if r.Document == nil {
			continue
		}
		ks, ls := r.Document.VerdictKinds(), r.Document.VerdictLines()
		for i, k := range ks {
			f := byKind[k]
			if f == nil {
				f = &found{line: ls[i]}
				byKind[k] = f
				kinds = append(kinds, k)
			}
			f.n++
		}
	}
	for _, k := range kinds {
		f := byKind[k]
		out = append(out, fmt.Sprintf("  [%d of %d runs] %s", f.n, len(p.Runs), f.line))
	}
	if p.wideInterval(s) {
		out = append(out, fmt.Sprintf("  wide-interval: req/s ±%.1f %% (95 %% interval over %d runs) is wider than ±%s %% of the mean.",
			100*p.RPS.CI95/p.RPS.Mean, len(p.Runs), percentText(s.CI)))
	}
	return out
}

// StoppedAtMax lists the points --repeat auto ran to their maximum without
// their interval narrowing to --ci ("" when none did).
func StoppedAtMax(s *Settings, points []*PointResult) string {
	var names []string
	for _, p := range points {
		if p.StoppedAtMax {
			names = append(names, fmt.Sprintf("%s size=%s c=%d (±%.1f %%)", p.Label, sizeText(p.Size), p.Concurrency, 100*p.RPS.CI95/max(p.RPS.Mean, 1e-300)))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("--repeat auto: %d of %d points stopped at the maximum of %d runs with their 95 %% interval wider than ±%s %%: %s",
		len(names), len(points), s.Repeat, percentText(s.CI), strings.Join(names, "; "))
}

func percentText(share float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", 100*share), "0"), ".")
}

// wideInterval reports whether the point's req/s 95 % interval is wider
// than --ci's share of its mean.
func (p *PointResult) wideInterval(s *Settings) bool {
	return len(p.Runs) > 1 && s.CI > 0 && p.RPS.Mean > 0 && p.RPS.CI95 > s.CI*p.RPS.Mean
}
