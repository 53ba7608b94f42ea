package capacity

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gab/internal/chart"
	"gab/internal/printable"
	"gab/report"
)

// Figure is the knee of every target's searches: a panel per search, its
// steps passing and failing apart, the target's capacity and its interval.
func Figure(d *report.CapacityDocument) *chart.Figure {
	var ts []chart.KneeTarget
	for _, t := range d.Targets {
		c := t.Capacity
		kt := chart.KneeTarget{Label: t.Label, CapacityPerS: c.MeanPerS}
		if c.FoundN > 1 { // an interval over the capacities found (bounds apart)
			kt.LoPerS, kt.HiPerS = c.LoPerS, c.HiPerS
		}
		for _, r := range t.Runs {
			ks := chart.KneeSearch{Result: r.Result.Line(Rate)}
			for _, s := range r.Steps {
				if s.Complete == 0 {
					continue
				}
				ks.Steps = append(ks.Steps, chart.KneeStep{AchievedPerS: s.AchievedPerS, CorrectedP50Ms: float64(s.P50Us) / 1e3,
					CorrectedP99Ms: float64(s.P99Us) / 1e3, UncorrectedP99Ms: float64(s.UncorrectedP99Us) / 1e3,
					Pass: s.Pass, ClientBound: s.ClientBound})
			}
			kt.Searches = append(kt.Searches, ks)
		}
		ts = append(ts, kt)
	}
	return chart.CapacityFigure("gab capacity: "+strings.Join(d.Objectives, ", "), ts, d.LatencyObjectiveMs)
}

// Page is the HTML report of the document: its settings, the knee, the
// ranking and every target's steps.
func Page(d *report.CapacityDocument) *report.Page {
	page := &report.Page{Title: "gab capacity", Command: d.CommandLine, Figure: Figure(d),
		Environment: []report.PageRow{
			{Name: "Started", Value: d.Start.Format(time.RFC3339)}, {Name: "Ended", Value: d.End.Format(time.RFC3339)},
			{Name: "Complete", Value: strconv.FormatBool(d.Complete)},
			{Name: "Objectives", Value: strings.Join(d.Objectives, ", ")},
			{Name: "Steps", Value: fmt.Sprintf("%gs after a %gs settle; a rate fails when %d in a row fail; bisected to %g %%", d.StepS, d.SettleS, d.Attempts, d.ResolutionPercent)},
			{Name: "CPUs", Value: strconv.Itoa(d.Machine.CPUs)},
		}}
	rank := [][]string{{"rank", "target", "capacity req/s", "95 % interval", "searches", "result"}}
	for _, t := range d.Targets {
		c := t.Capacity
		iv := "-"
		result := t.Runs[len(t.Runs)-1].Result.Line(Rate)
		if c.N > 1 {
			result = c.Line(Rate)
		}
		if c.FoundN > 1 {
			iv = Rate(c.LoPerS) + " to " + Rate(c.HiPerS)
		}
		group := ""
		if c.Group != "" {
			group = " (" + c.Group + ")"
		}
		rank = append(rank, []string{c.RankText() + group, t.Label, Rate(c.MeanPerS), iv, strconv.Itoa(c.N), result})
		page.Tables = append(page.Tables, report.PageTable{Title: "Steps: " + t.Label + " (" + t.URL + ")", Rows: stepRows(t)})
	}
	page.Tables = append([]report.PageTable{{Title: "Capacity", Note: d.TieRule, Rows: rank}}, page.Tables...)
	return page
}

// stepRows are the HTML table of a target's steps.
func stepRows(t *report.CapacityTarget) [][]string {
	steps := [][]string{{"target/s", "achieved/s", "conns", "p50 ms", "p99 ms", "p99.9 ms", "uncorrected p99 ms", "failed", "non-2xx", "verdict", "client", "machine"}}
	for _, run := range t.Runs {
		for _, s := range run.Steps {
			steps = append(steps, []string{Rate(s.TargetPerS), Rate(s.AchievedPerS), strconv.Itoa(s.Connections),
				Ms(s.P50Us), Ms(s.P99Us), Ms(s.P999Us), Ms(s.UncorrectedP99Us),
				strconv.FormatInt(s.Failed, 10), strconv.FormatInt(s.Non2xx, 10), s.Verdict(), strings.Join(s.ClientReasons, "; "), strings.Join(s.Verdicts, "; ")})
		}
	}
	return steps
}

// Change is one target's capacity in two capacity documents.
type Change struct {
	Target        string  `json:"target"`
	APerS         float64 `json:"a_per_s"`
	BPerS         float64 `json:"b_per_s"`
	ChangePercent float64 `json:"change_percent"`
	// Apart: the 95 % interval of the capacities' ratio excludes 1
	// (report.Apart, report.TieRule's test);
	// Found: both capacities were found (none is a client's "at least").
	Apart bool `json:"apart"`
	Found bool `json:"found"`
}

// Compare is b's capacities against a's, target by target (by label): none
// when they have no target in common.
func Compare(a, b *report.CapacityDocument) []Change {
	var rows []Change
	for _, ta := range a.Targets {
		for _, tb := range b.Targets {
			if ta.Label != tb.Label {
				continue
			}
			ca, cb := ta.Capacity, tb.Capacity
			r := Change{Target: ta.Label, APerS: ca.Stated(), BPerS: cb.Stated(), Found: ca.Found && cb.Found,
				Apart: ca.Found && cb.Found && report.Apart(ta.Interval(), tb.Interval())}
			if r.APerS > 0 {
				r.ChangePercent = 100 * (r.BPerS - r.APerS) / r.APerS
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// WriteChanges writes Compare's rows of b (named nameB) against a (nameA)
// as text.
func WriteChanges(w io.Writer, nameA, nameB string, rows []Change) error {
	fmt.Fprintf(w, "Capacity: %s (A) against %s (B)\n", printable.String(nameA), printable.String(nameB))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tA req/s\tB req/s\tchange %\t\t")
	for _, r := range rows {
		note := "not apart (the ratio's 95 % interval holds 1)"
		switch {
		case !r.Found:
			note = "a capacity not found (client-bound, --max-rate, out of steps or interrupted): at least"
		case r.Apart:
			note = "apart"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%+.1f\t%s\t\n", printable.String(r.Target), Rate(r.APerS), Rate(r.BPerS), r.ChangePercent, note)
	}
	return tw.Flush()
}

// WriteComparison writes gab compare's rows of each document after the
// first against the first (names[0]): JSON (format "json") or text.
func WriteComparison(w io.Writer, format string, names []string, all [][]Change) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	}
	for i, rows := range all {
		if err := WriteChanges(w, names[0], names[i+1], rows); err != nil {
			return err
		}
	}
	return nil
}

// Combine is several documents drawn as one: their targets as
// LABEL:target, their labels and paths as its command line (the document
// itself when there is one).
func Combine(docs []*report.CapacityDocument, labels, paths []string) *report.CapacityDocument {
	if len(docs) == 1 {
		return docs[0]
	}
	c := *docs[0]
	c.Targets, c.CommandLine = nil, nil
	for i, x := range docs {
		c.CommandLine = append(c.CommandLine, labels[i]+"="+paths[i])
		for _, t := range x.Targets {
			tt := *t
			tt.Label = labels[i] + ":" + t.Label
			c.Targets = append(c.Targets, &tt)
		}
	}
	return &c
}
