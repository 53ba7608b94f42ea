package capacity

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"gab/internal/printable"
	"gab/report"
)

// Schema names the document's kind (as a sweep's "gab-sweep"),
// SchemaVersion its version (docs/capacity-schema.json): 2 summarizes the
// found capacities only, on a log scale, with the other searches' bounds
// beside them; 1 (still read) averaged every search's capacity.
const (
	Schema        = "gab-capacity"
	SchemaVersion = 2
)

// maxDocument bounds a document read back.
const maxDocument = 64 << 20

// Decode reads a capacity document, checking its kind and version, making
// its strings safe to print (report.EscapeStrings) and checking every
// figure (Validate).
func Decode(raw []byte) (*report.CapacityDocument, error) {
	if len(raw) > maxDocument {
		return nil, fmt.Errorf("a capacity document of %d bytes, at most %d", len(raw), maxDocument)
	}
	var d report.CapacityDocument
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, errors.New(printable.String(err.Error()))
	}
	report.EscapeStrings(&d)
	switch {
	case d.Tool != "gab" || d.Schema != Schema:
		return nil, fmt.Errorf("not a gab capacity document (tool %q, schema %q)", d.Tool, d.Schema)
	case d.SchemaVersion < 1 || d.SchemaVersion > SchemaVersion:
		return nil, fmt.Errorf("capacity schema version %d, this gab reads 1 to %d", d.SchemaVersion, SchemaVersion)
	}
	// An earlier gab wrote an interval's lower end below 0 where its
	// searches' capacities were far apart; Validate checks the end at 0
	// against the searches.
	for _, t := range d.Targets {
		if t != nil && t.Capacity.LoPerS < 0 {
			t.Capacity.LoPerS = 0
		}
	}
	if err := Validate(&d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Rate formats a rate in requests per second.
func Rate(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// Ms is a time in microseconds as milliseconds, 3 decimals (the steps' tables).
func Ms(us int64) string { return strconv.FormatFloat(float64(us)/1e3, 'f', 3, 64) }

// WriteText writes every search's steps, the capacity lines and the ranking.
func WriteText(w io.Writer, d *report.CapacityDocument) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Capacity search: the highest constant rate meeting %s on the corrected latencies, achieving >= %.0f %% of the target\n",
		printable.String(strings.Join(d.Objectives, ", ")), 100*d.MinAchieved)
	fmt.Fprintf(&b, "Steps of %gs after a %gs settle (a rate fails when %d in a row fail), bisected to %g %%, at most %d connections (kept alive)\n",
		d.StepS, d.SettleS, d.Attempts, d.ResolutionPercent, d.MaxConnections)
	for _, t := range d.Targets {
		if n := t.Noise; n != nil && len(n.Steps) > 0 {
			fmt.Fprintf(&b, "\nLatency noise of %s before the search: %s\n", printable.String(t.Label),
				n.Line(Rate, Ms, printable.String(strings.Join(d.Objectives, ", "))))
		}
		for i, r := range t.Runs {
			fmt.Fprintf(&b, "\n%s (%s)", printable.String(t.Label), printable.String(t.URL))
			if len(t.Runs) > 1 {
				fmt.Fprintf(&b, ", search %d of %d", i+1, len(t.Runs))
			}
			b.WriteString(":\n")
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "target/s\tachieved/s\tconns\tp50 ms\tp99 ms\tp99.9 ms\tuncorr. p99 ms\tfailed\tnon-2xx\tverdict\tmachine\t")
			for _, s := range r.Steps {
				machine := s.Machine()
				if machine == "" {
					machine = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t\n", Rate(s.TargetPerS), Rate(s.AchievedPerS), s.Connections,
					Ms(s.P50Us), Ms(s.P99Us), Ms(s.P999Us), Ms(s.UncorrectedP99Us), s.Failed, s.Non2xx, s.Verdict()+map[bool]string{true: ", again", false: ""}[s.Retry], machine)
			}
			tw.Flush()
			for _, s := range r.Steps {
				for _, v := range s.Verdicts {
					fmt.Fprintf(&b, "  %s/s: %s\n", Rate(s.TargetPerS), printable.String(v))
				}
			}
			for _, s := range r.Steps {
				if s.Error != "" {
					fmt.Fprintf(&b, "  %s/s: %s\n", Rate(s.TargetPerS), printable.String(s.Error))
				}
				if s.ClientBound {
					fmt.Fprintf(&b, "  %s/s: client-bound: %s\n", Rate(s.TargetPerS), printable.String(strings.Join(s.ClientReasons, "; ")))
				}
			}
			atMax := 0
			for _, s := range r.Steps {
				if s.AtMaxConnections {
					atMax++
				}
			}
			var open, openSteps int64
			for _, s := range r.Steps {
				if s.Outstanding > 0 {
					open, openSteps = open+s.Outstanding, openSteps+1
				}
			}
			if openSteps > 0 {
				fmt.Fprintf(&b, "  %d step(s) ended with requests unanswered (%d in all): each counts in the latencies at its age, and in failed when older than the largest latency objective or -s\n",
					openSteps, open)
			}
			if atMax > 0 {
				fmt.Fprintf(&b, "  %d failing step(s) kept all %d connections (-c) busy while the server answered within the objective: a larger -c might carry more\n",
					atMax, d.MaxConnections)
			}
			fmt.Fprintf(&b, "Capacity: %s\n", r.Result.Line(Rate))
			if at := atCapacity(&r); at != nil && at.ServerCPUPercent != nil && at.ServerCPUUsPerRequest != nil {
				fmt.Fprintf(&b, "Server CPU at the capacity (the %s/s step): %.1f %% of one core, %.1f µs per request\n",
					Rate(at.TargetPerS), *at.ServerCPUPercent, *at.ServerCPUUsPerRequest)
			}
		}
		if c := t.Capacity; c.N > 1 {
			fmt.Fprintf(&b, "Capacity of %s over %d searches: %s\n", printable.String(t.Label), c.N, c.Line(Rate))
		}
	}
	if len(d.Targets) > 1 {
		fmt.Fprintf(&b, "\nRanking by capacity (1 = highest); %s:\n", d.TieRule)
		for _, t := range Rank(d.Targets) { // sets each target's Capacity.Rank; in rank order
			rank := t.Capacity.RankText()
			if g := t.Capacity.Group; g != "" {
				rank += " (" + g + ")"
			}
			if t.Capacity.N > 1 {
				fmt.Fprintf(&b, "  %3s  %s  %s\n", rank, printable.String(t.Label), t.Capacity.Line(Rate))
				continue
			}
			note := ""
			if !t.Capacity.Found {
				note = " (not found: " + t.Runs[len(t.Runs)-1].Result.Line(Rate) + ")"
			}
			fmt.Fprintf(&b, "  %3s  %s  %s req/s%s\n", rank, printable.String(t.Label), Rate(t.Capacity.MeanPerS), note)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// atCapacity is the search's last passing step at its capacity (nil: none).
func atCapacity(r *report.CapacityRun) *report.CapacityStep {
	var at *report.CapacityStep
	for i := range r.Steps {
		if s := &r.Steps[i]; s.Pass && s.TargetPerS == r.Result.CapacityPerS {
			at = s
		}
	}
	return at
}
