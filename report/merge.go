package report

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file is gab merge: the report of a run measured as several documents
// (the shards of --shard, or with force any documents), checked before
// their Group merges them (group.go, MergeRuns in mergeruns.go), with a shard section that lists
// them and notes that say what was merged.

// MergeInput is one document and the file it was read from.
type MergeInput struct {
	Name string
	Doc  *Run
}

// mergeError is a refusal to merge, with every reason found.
type mergeError struct {
	Reasons []string
	// Forceable says --force would merge anyway.
	Forceable bool
}

func (e *mergeError) Error() string {
	msg := "cannot merge: " + e.Reasons[0]
	if len(e.Reasons) > 1 {
		msg = "cannot merge:\n  " + strings.Join(e.Reasons, "\n  ")
	}
	if e.Forceable {
		msg += "\n(--force merges them anyway and says so in the report)"
	}
	return msg
}

// Merge combines documents (read with DecodeDocument, which checks each). It
// refuses, with every reason, documents of a newer schema or without a
// report or sums, documents that started more than maxStartSpread apart, and
// documents whose figures add up past what the arithmetic holds; and, unless
// force, documents of different runs, URLs or options (--apdex's thresholds
// too), missing or duplicated shards, and runs that ended in an error or were
// interrupted.
func Merge(in []MergeInput, force bool, commandLine []string) (run *Run, notes []string, err error) {
	if len(in) == 0 {
		return nil, nil, &mergeError{Reasons: []string{"no documents"}}
	}
	starts := make([]time.Time, len(in))
	var hard []string
	for i, m := range in {
		d := m.Doc
		switch {
		case d.Tool != "gab":
			hard = append(hard, fmt.Sprintf("%s: not a gab document", m.Name))
			continue
		case d.SchemaVersion > SchemaVersion:
			hard = append(hard, fmt.Sprintf("%s: schema_version %d is newer than this gab's %d: merge with the gab that wrote it", m.Name, d.SchemaVersion, SchemaVersion))
			continue
		case d.Report == nil:
			why := "ending " + d.Ending
			if d.Error != nil {
				why += ": " + d.Error.Message
			}
			hard = append(hard, fmt.Sprintf("%s: has no report (%s)", m.Name, why))
			continue
		case d.Sums == nil || d.Run == nil:
			hard = append(hard, fmt.Sprintf("%s: has no sums/run sections (written by an older gab): it cannot be merged exactly", m.Name))
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, d.StartTime)
		if err != nil {
			hard = append(hard, fmt.Sprintf("%s: start_time %q: %v", m.Name, d.StartTime, err))
		}
		starts[i] = t
	}
	if len(hard) == 0 {
		hard = append(checkSpread(in, starts), checkTotals(in)...)
	}
	if len(hard) > 0 {
		return nil, nil, &mergeError{Reasons: hard}
	}
	soft := append(checkEndings(in), checkShards(in)...)
	soft = append(soft, checkRuns(in)...)
	soft = append(soft, checkApdex(in)...)
	if len(soft) > 0 && !force {
		return nil, nil, &mergeError{Reasons: soft, Forceable: true}
	}
	docs, names := make([]*Run, len(in)), make([]string, len(in))
	for i, m := range in {
		docs[i], names[i] = m.Doc, m.Name
	}
	g, err := groupOf(docs, names, starts) // the shards as one group: their merge is the run
	if err != nil {
		return nil, nil, &mergeError{Reasons: []string{err.Error()}}
	}
	r := g.Merged
	if commandLine != nil {
		r.CommandLine = commandLine
	}
	order := startOrder(starts)
	r.Shard = mergedShard(in, order, r.Run, force && len(soft) > 0)
	notes = mergeNotes(in, starts, order)
	notes = append(notes, r.local.mergeNotes...)
	for _, reason := range soft {
		notes = append(notes, "--force: merged although "+reason)
	}
	return r, notes, nil
}

// maxStartSpread is the longest time between the documents' starts that a
// merge takes: a run's shards start together (--start-at) or nearly, and the
// merged figures per second and per interval span the whole time.
const maxStartSpread = 24 * time.Hour

func checkSpread(in []MergeInput, starts []time.Time) []string {
	first, last := 0, 0
	for i, t := range starts {
		if t.Before(starts[first]) {
			first = i
		}
		if t.After(starts[last]) {
			last = i
		}
	}
	if spread := starts[last].Sub(starts[first]); spread > maxStartSpread || spread < 0 {
		return []string{fmt.Sprintf("start_time: %s starts at %s, %s at %s: more than %v apart, not shards of one run",
			in[first].Name, in[first].Doc.StartTime, in[last].Name, in[last].Doc.StartTime, maxStartSpread)}
	}
	return nil
}

// checkTotals refuses documents whose figures of one kind (each below 2^53
// once validated) add up past 2^62, so that no sum of the merge overflows
// however many documents there are.
func checkTotals(in []MergeInput) []string {
	totals := map[string]float64{}
	for _, m := range in {
		walkDocument(reflect.ValueOf(m.Doc), &docPath{}, func(p *docPath, x reflect.Value) {
			switch x.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				totals[p.Key()] += math.Abs(float64(x.Int()))
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				totals[p.Key()] += float64(x.Uint())
			}
		})
	}
	var out []string
	for k, t := range totals {
		if t > 1<<62 {
			out = append(out, fmt.Sprintf("%s: the documents' values add up to %.4g, past what gab merge adds up (2^62)", k, t))
		}
	}
	sort.Strings(out)
	return out
}

func checkEndings(in []MergeInput) []string {
	var out []string
	for _, m := range in {
		switch m.Doc.Ending {
		case "completed", "time_limit":
		default:
			why := m.Doc.Ending
			if m.Doc.Error != nil {
				why += ": " + m.Doc.Error.Message
			}
			out = append(out, fmt.Sprintf("%s: the run did not finish (%s)", m.Name, why))
		}
	}
	return out
}

// checkShards: every document a shard of one run, each shard exactly once.
func checkShards(in []MergeInput) []string {
	var out []string
	byRun := map[string][]string{}
	var runs []string
	for _, m := range in {
		sh := m.Doc.Shard
		if sh == nil {
			out = append(out, fmt.Sprintf("%s: not a shard (written without --shard)", m.Name))
			continue
		}
		if len(sh.Merged) > 0 {
			out = append(out, fmt.Sprintf("%s: already a merged document", m.Name))
			continue
		}
		if _, ok := byRun[sh.RunID]; !ok {
			runs = append(runs, sh.RunID)
		}
		byRun[sh.RunID] = append(byRun[sh.RunID], m.Name)
	}
	if len(runs) > 1 {
		var parts []string
		for _, r := range runs {
			parts = append(parts, fmt.Sprintf("run id %q (%s)", r, strings.Join(byRun[r], ", ")))
		}
		out = append(out, "documents from different runs: "+strings.Join(parts, "; "))
		return out
	}
	if len(runs) == 0 {
		return out
	}
	var first *Shard
	seen := map[int][]string{}
	for _, m := range in {
		sh := m.Doc.Shard
		if sh == nil || len(sh.Merged) > 0 {
			continue
		}
		if first == nil {
			first = sh
		}
		if sh.Count != first.Count || sh.TotalRequests != first.TotalRequests ||
			sh.TotalConcurrency != first.TotalConcurrency || sh.TotalRatePerS != first.TotalRatePerS || sh.StartAt != first.StartAt {
			out = append(out, fmt.Sprintf("%s: shard %d/%d of -n %d -c %d --rate %g --start-at %q differs from %d/%d of -n %d -c %d --rate %g --start-at %q",
				m.Name, sh.Index, sh.Count, sh.TotalRequests, sh.TotalConcurrency, sh.TotalRatePerS, sh.StartAt,
				first.Index, first.Count, first.TotalRequests, first.TotalConcurrency, first.TotalRatePerS, first.StartAt))
		}
		seen[sh.Index] = append(seen[sh.Index], m.Name)
	}
	indexes := make([]int, 0, len(seen))
	present := 0
	for i := range seen {
		indexes = append(indexes, i)
		if i < first.Count {
			present++
		}
	}
	sort.Ints(indexes)
	for _, i := range indexes {
		if names := seen[i]; len(names) > 1 {
			out = append(out, fmt.Sprintf("shard %d/%d appears %d times: %s", i, first.Count, len(names), strings.Join(names, ", ")))
		}
	}
	// The missing ones: the first few by number (a count of shards is up to
	// maxShards), and how many in all.
	const listed = 10
	var missing []string
	for i := 0; i < first.Count && len(missing) < listed; i++ {
		if len(seen[i]) == 0 {
			missing = append(missing, strconv.Itoa(i))
		}
	}
	if n := first.Count - present; n > len(missing) {
		missing = append(missing, fmt.Sprintf("… (%d in all)", n))
	}
	if len(missing) > 0 {
		out = append(out, fmt.Sprintf("shard(s) %s of %d missing (run id %q): a shard that failed or never ran, or a file not given",
			strings.Join(missing, ", "), first.Count, first.RunID))
	}
	return out
}

// checkRuns: the same URL, request and report options everywhere, and shares
// that add up to the run's totals.
func checkRuns(in []MergeInput) []string {
	var out []string
	ref := *in[0].Doc.Run
	ref.Requests, ref.Concurrency, ref.RatePerS = 0, 0, 0
	reqs, conc := 0, 0
	for _, m := range in[1:] {
		r := *m.Doc.Run
		r.Requests, r.Concurrency, r.RatePerS = 0, 0, 0
		if r != ref {
			out = append(out, fmt.Sprintf("%s: a different run than %s: %s", m.Name, in[0].Name, runDifference(&r, &ref)))
		}
	}
	for _, m := range in {
		reqs += m.Doc.Run.Requests
		conc += m.Doc.Run.Concurrency
	}
	if sh := in[0].Doc.Shard; sh != nil && len(out) == 0 {
		if conc != sh.TotalConcurrency {
			out = append(out, fmt.Sprintf("the shards' -c add up to %d, not the run's %d", conc, sh.TotalConcurrency))
		}
		if sh.TotalRequests < math.MaxInt32 && reqs != sh.TotalRequests {
			out = append(out, fmt.Sprintf("the shards' -n add up to %d, not the run's %d", reqs, sh.TotalRequests))
		}
	}
	return out
}

// checkApdex: every document with the same --apdex thresholds, or none
// with any.
func checkApdex(in []MergeInput) []string {
	ref := in[0]
	var out []string
	for _, m := range in[1:] {
		a, b := m.Doc.Apdex, ref.Doc.Apdex
		switch {
		case a == nil && b == nil:
		case a == nil || b == nil:
			with, without := ref.Name, m.Name
			if a != nil {
				with, without = without, with
			}
			out = append(out, fmt.Sprintf("%s: written without --apdex, %s with it", without, with))
		case a.SatisfiedUs != b.SatisfiedUs || a.ToleratedUs != b.ToleratedUs:
			out = append(out, fmt.Sprintf("%s: --apdex %s, not %s as in %s", m.Name, a.thresholds(), b.thresholds(), ref.Name))
		}
	}
	return out
}

func runDifference(a, b *RunInfo) string {
	var d []string
	add := func(what string, x, y any) {
		if x != y {
			d = append(d, fmt.Sprintf("%s %v, not %v", what, x, y))
		}
	}
	add("URL", a.URL, b.URL)
	add("method", a.Method, b.Method)
	add("request SHA-256", a.RequestSHA256, b.RequestSHA256)
	add("protocol", a.Protocol, b.Protocol)
	add("time limit (s)", a.TimeLimitS, b.TimeLimitS)
	add("-k", a.KeepAlive, b.KeepAlive)
	add("body sent", a.BodySent, b.BodySent)
	add("-l", a.VariableLength, b.VariableLength)
	add("-d", a.NoPercentiles, b.NoPercentiles)
	add("-S", a.NoConfidence, b.NoConfidence)
	add("TLS", a.TLS, b.TLS)
	return strings.Join(d, ", ")
}

// mergedShard is a merged document's shard section: the inputs, by start.
func mergedShard(in []MergeInput, order []int, run *RunInfo, forced bool) *Shard {
	sh := &Shard{Count: len(in), Forced: forced, TotalRequests: run.Requests,
		TotalConcurrency: run.Concurrency, TotalRatePerS: run.RatePerS}
	if s0 := in[order[0]].Doc.Shard; s0 != nil {
		sh.RunID, sh.StartAt = s0.RunID, s0.StartAt
		sh.TotalRequests, sh.TotalConcurrency, sh.TotalRatePerS = s0.TotalRequests, s0.TotalConcurrency, s0.TotalRatePerS
	}
	for _, i := range order {
		m := in[i]
		ms := mergedInput{Index: i, File: m.Name, StartTime: m.Doc.StartTime}
		if x := m.Doc.Shard; x != nil {
			ms.Index, ms.StartDelayUs = x.Index, x.StartDelayUs
		}
		sh.Merged = append(sh.Merged, ms)
	}
	return sh
}

// mergeNotes are the lines after the merged report.
func mergeNotes(in []MergeInput, starts []time.Time, order []int) []string {
	var out []string
	d0 := in[order[0]].Doc
	what := fmt.Sprintf("%d documents", len(in))
	if sh := d0.Shard; sh != nil {
		what = fmt.Sprintf("%d shards of run %s", len(in), sh.RunID)
	}
	out = append(out, "Merged:                 "+what)
	first, last := starts[order[0]], starts[order[len(order)-1]]
	out = append(out, fmt.Sprintf("Start spread:           %.3f ms from the first shard's start to the last's", float64(last.Sub(first).Microseconds())/1000))
	var delays []string
	for _, i := range order {
		if sh := in[i].Doc.Shard; sh != nil && sh.StartDelayUs != nil {
			delays = append(delays, fmt.Sprintf("%d: %.3f", sh.Index, float64(*sh.StartDelayUs)/1000))
		}
	}
	if len(delays) > 0 {
		out = append(out, "Start delays [ms]:      "+strings.Join(delays, ", ")+" (after --start-at, by each host's clock)")
	}
	codes := map[string]int{}
	for _, m := range in {
		if x := m.Doc.Extended; x != nil {
			for k, v := range x.StatusCounts {
				codes[k] += v
			}
		}
	}
	if len(codes) > 0 {
		out = append(out, "Status codes:           "+countsText(codes, "%s: %d"))
	}
	return out
}
