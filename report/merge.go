package report

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/client"
	"gab/internal/samples"
)

// This file is gab merge's arithmetic: the report of a run measured as several
// documents (the shards of --shard, or with force any documents). Counts,
// failures, bytes, status codes, min, max, mean and sd are computed from the
// documents' exact sums with a single run's arithmetic; ab's Time taken is the
// last end minus the first start; medians and percentiles come from the
// documents' HDR histograms, merged.

// MergeInput is one document and the file it was read from.
type MergeInput struct {
	Name string
	Doc  *Document
}

// Merged is the combined run.
type Merged struct {
	Summary  *Summary
	Document *Document
	// Percentiles is the --percentiles list the documents were written with.
	Percentiles []float64
	// Notes are gab merge's lines after ab's report: what was merged, the
	// shards' start delays, status codes, and anything --force overrode.
	Notes []string
}

// MergeError is a refusal to merge, with every reason found.
type MergeError struct {
	Reasons []string
	// Forceable says --force would merge anyway.
	Forceable bool
}

func (e *MergeError) Error() string {
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
// force, documents of different runs, URLs or options, missing or duplicated
// shards, and runs that ended in an error or were interrupted.
func Merge(in []MergeInput, force bool, commandLine []string) (*Merged, error) {
	if len(in) == 0 {
		return nil, &MergeError{Reasons: []string{"no documents"}}
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
		return nil, &MergeError{Reasons: hard}
	}
	soft := append(checkEndings(in), checkShards(in)...)
	soft = append(soft, checkRuns(in)...)
	if len(soft) > 0 && !force {
		return nil, &MergeError{Reasons: soft, Forceable: true}
	}
	order := make([]int, len(in))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return starts[order[a]].Before(starts[order[b]]) })
	mg := &mergeState{in: in, starts: starts, order: order}
	out := &Merged{}
	for _, r := range in[order[0]].Doc.Percentiles {
		out.Percentiles = append(out.Percentiles, r.Percent)
	}
	s, err := mg.summary(commandLine, out.Percentiles)
	if err != nil {
		return nil, &MergeError{Reasons: []string{err.Error()}}
	}
	out.Summary = s
	out.Document = mg.document(s, out.Percentiles, force && len(soft) > 0)
	out.Notes = mg.notes(s)
	if mg.timelineNote != "" {
		out.Notes = append(out.Notes, mg.timelineNote)
	}
	for _, r := range soft {
		out.Notes = append(out.Notes, "--force: merged although "+r)
	}
	return out, nil
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
	var first *JSONShard
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
	// MaxShards), and how many in all.
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

func runDifference(a, b *JSONRun) string {
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

type mergeState struct {
	in     []MergeInput
	starts []time.Time
	order  []int // indexes of in by start time
	start  time.Time
	cols   [4]mergedColumn
	prec   string
	ending string
	// timelineNote says why the merged document has no timeline (see
	// mergeTimelines); "" when it has one or no document had one.
	timelineNote string
}

// mergedColumn is one timing column over all documents.
type mergedColumn struct {
	count, sum uint64
	min, max   int64
	sq         *big.Int
	hist       *hdrhistogram.Histogram
}

func (c *mergedColumn) add(s *JSONColumnSums) error {
	if s.Count == 0 {
		return nil
	}
	sq, ok := new(big.Int).SetString(s.SumSquaresUs2, 10)
	if !ok {
		return fmt.Errorf("sum_squares_us2 %q is not an integer", s.SumSquaresUs2)
	}
	h, err := decodeHistogram(&s.Histogram)
	if err != nil {
		return err
	}
	if c.count == 0 || s.MinUs < c.min {
		c.min = s.MinUs
	}
	c.max = max(c.max, s.MaxUs)
	c.count += uint64(s.Count)
	c.sum += s.SumUs
	c.sq.Add(c.sq, sq)
	c.hist.Merge(h)
	return nil
}

// mergedRanks answers the Summary's rank queries from the merged histograms.
type mergedRanks [4]*hdrRanks

func (r *mergedRanks) ValueAt(c Column, i int) int64 { return r[c].valueAt(uint64(i)) }

// hdrRanks answers rank queries from a merged histogram: the highest value of
// the bucket holding the rank, clamped to the exact min and max (so the first
// and the last rank are exact).
type hdrRanks struct {
	h        *hdrhistogram.Histogram
	min, max int64
	count    uint64
}

func (r *hdrRanks) valueAt(i uint64) int64 {
	switch {
	case i == 0:
		return r.min
	case i+1 >= r.count:
		return r.max
	}
	return min(max(samples.HistAtIndex(r.h, int64(i)), r.min), r.max)
}

func (mg *mergeState) summary(commandLine []string, percents []float64) (*Summary, error) {
	first := mg.in[mg.order[0]].Doc
	for _, i := range mg.order { // the server's figures come from the first shard that got answers
		if mg.in[i].Doc.Report.CompleteRequests > 0 {
			first = mg.in[i].Doc
			break
		}
	}
	r, run := first.Report, first.Run
	s := &Summary{
		CommandLine: commandLine, Started: true, Ending: client.EndCompleted,
		Run: &RunInfo{URL: run.URL, Method: run.Method, RequestSHA256: run.RequestSHA256, Protocol: run.Protocol,
			TimeLimit: time.Duration(run.TimeLimitS * float64(time.Second)), TLS: run.TLS},
		ServerSoftware: r.ServerSoftware, Host: r.ServerHostname, Port: r.ServerPort, Protocol: r.Protocol,
		Path: r.DocumentPath, DocLength: r.DocumentLengthBytes, VariableLength: r.VariableLength,
		KeepAlive: run.KeepAlive, BodySent: run.BodySent, NoPercentiles: run.NoPercentiles, NoConfidence: run.NoConfidence,
	}
	if t := r.TLS; t != nil {
		s.TLS = &client.TLSInfo{Protocol: t.Protocol, Cipher: t.Cipher, PeerKeyBits: t.PeerKeyBits,
			CipherBits: t.CipherBits, TempKey: t.ServerTempKey, ServerName: t.ServerName}
	}
	mg.start = mg.starts[mg.order[0]]
	s.Start = mg.start
	rank := map[string]int{"completed": 0, "time_limit": 1, "interrupted": 2, "fatal": 3}
	endings := [...]client.Ending{client.EndCompleted, client.EndTimeLimit, client.EndInterrupted, client.EndFatal}
	mg.ending = "completed"
	for _, m := range mg.in {
		if rank[m.Doc.Ending] > rank[mg.ending] {
			mg.ending = m.Doc.Ending
		}
		s.Run.Requests += m.Doc.Run.Requests
		s.Run.Concurrency += m.Doc.Run.Concurrency
		s.Run.RatePerS += m.Doc.Run.RatePerS
	}
	s.Ending = endings[rank[mg.ending]]
	end := mg.start
	mg.prec = PrecisionHDR
	for c := range mg.cols {
		mg.cols[c] = mergedColumn{sq: new(big.Int), hist: samples.NewHist()}
	}
	for i, m := range mg.in {
		d := m.Doc.Report
		end = maxTime(end, mg.starts[i].Add(time.Duration(d.TimeTakenUs)*time.Microsecond))
		s.Concurrency += d.ConcurrencyLevel
		s.Complete += d.CompleteRequests
		s.Failed.Total += d.FailedRequests
		s.Failed.Connect += d.Failures.Connect
		s.Failed.Receive += d.Failures.Receive
		s.Failed.Length += d.Failures.Length
		s.Failed.Exceptions += d.Failures.Exceptions
		s.WriteErrors += d.WriteErrors
		s.Non2xx += d.Non2xxResponses
		s.KeepAliveRequests += d.KeepAliveReqs
		s.TotalRead += d.TotalTransferredBytes
		s.TotalSent += d.TotalBodySentBytes
		s.BodyRead += d.HTMLTransferredBytes
		sums := m.Doc.Sums
		if sums.HistogramPrecision == PrecisionMs {
			mg.prec = PrecisionMs
		}
		for c, cs := range [4]*JSONColumnSums{&sums.Connect, &sums.Processing, &sums.Waiting, &sums.Total} {
			if err := mg.cols[c].add(cs); err != nil {
				return nil, fmt.Errorf("%s: %v", m.Name, err)
			}
		}
	}
	s.Elapsed = end.Sub(mg.start).Truncate(time.Microsecond)
	s.Seconds = secondsTaken(s.Elapsed)
	if s.Seconds > 0 {
		s.Rates = computeRates(s)
	}
	n := int(mg.cols[TotalColumn].count)
	s.Count = n
	s.FromHistograms = true
	s.Precision = mergePrecision(mg.prec)
	s.SampleStore = s.Precision
	s.Sums = &ColumnSums{Precision: mg.prec}
	for c := range mg.cols {
		col := &mg.cols[c]
		s.Sums.Columns[c] = ColumnSum{Count: col.count, Sum: col.sum, Min: col.min, Max: col.max,
			SumSquares: new(big.Int).Set(col.sq), Hist: col.hist}
	}
	if n == 0 {
		return s, nil
	}
	ranks := &mergedRanks{}
	s.ranks = ranks
	for c := range mg.cols {
		col := &mg.cols[c]
		if int(col.count) != n {
			return nil, fmt.Errorf("the documents' %s column counts %d requests, their total column %d", columnName(Column(c)), col.count, n)
		}
		mean := truncatedMean(col.sum, n)
		sd := sampleSD(squaredDeviationsBig(col.sq, col.sum, uint64(n), mean), n)
		ranks[c] = &hdrRanks{h: col.hist, min: col.min, max: col.max, count: col.count}
		lo, hi := medianIndexes(n)
		median := (ranks[c].valueAt(uint64(lo)) + ranks[c].valueAt(uint64(hi))) / 2
		*s.stats(Column(c)) = newColumnStats(col.min, col.max, mean, median, sd)
	}
	con, tot := &mg.cols[ConnectColumn], &mg.cols[TotalColumn]
	s.HTML = htmlTimes(con.min, con.max, con.sum, tot.min, tot.max, tot.sum, n)
	s.Percentiles = s.percentileRows()
	if len(percents) > 0 {
		s.PercentileTable = percentileRows(s, percents)
	}
	return s, nil
}

// mergePrecision is the line that says how exact a merged report is.
func mergePrecision(p string) string {
	within := "3 significant digits, within 0.1%"
	if p == PrecisionMs {
		within = "1 ms buckets past --sample-limit, within 0.5 ms"
	}
	return "Merged: counts, bytes, min, mean, sd and max exact; medians and percentiles from the merged histograms (" + within + ")."
}

func columnName(c Column) string {
	return [...]string{"connect", "processing", "waiting", "total"}[c]
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// notes are the lines after the merged report.
func (mg *mergeState) notes(s *Summary) []string {
	var out []string
	d0 := mg.in[mg.order[0]].Doc
	what := fmt.Sprintf("%d documents", len(mg.in))
	if sh := d0.Shard; sh != nil {
		what = fmt.Sprintf("%d shards of run %s", len(mg.in), sh.RunID)
	}
	out = append(out, "Merged:                 "+what)
	last := mg.starts[mg.order[len(mg.order)-1]]
	out = append(out, fmt.Sprintf("Start spread:           %.3f ms from the first shard's start to the last's", float64(last.Sub(mg.start).Microseconds())/1000))
	var delays []string
	for _, i := range mg.order {
		if sh := mg.in[i].Doc.Shard; sh != nil && sh.StartDelayUs != nil {
			delays = append(delays, fmt.Sprintf("%d: %.3f", sh.Index, float64(*sh.StartDelayUs)/1000))
		}
	}
	if len(delays) > 0 {
		out = append(out, "Start delays [ms]:      "+strings.Join(delays, ", ")+" (after --start-at, by each host's clock)")
	}
	codes := map[string]int{}
	for _, m := range mg.in {
		if x := m.Doc.Extended; x != nil {
			for k, v := range x.StatusCounts {
				codes[k] += v
			}
		}
	}
	if len(codes) > 0 {
		keys := make([]string, 0, len(codes))
		for k := range codes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s: %d", k, codes[k])
		}
		out = append(out, "Status codes:           "+strings.Join(parts, ", "))
	}
	return out
}

// mergeTimelines combines the documents' per-interval timelines by
// wall-clock interval (MergeTimelines): the merged document has exact counts,
// failures and bytes and HDR-precision percentiles per interval across all
// shards. It returns a note when the documents have timelines that cannot be
// merged (only some have one, or their intervals differ: shards of one run
// never do, so only a --force merge gets there) and the merged document then
// has none.
func mergeTimelines(d *Document, in []MergeInput) string {
	docs := make([]*Document, 0, len(in))
	for _, m := range in {
		if m.Doc.Timeline != nil {
			docs = append(docs, m.Doc)
		}
	}
	if len(docs) == 0 {
		return ""
	}
	if len(docs) < len(in) {
		return fmt.Sprintf("no timeline: only %d of the %d documents have one", len(docs), len(in))
	}
	if n, most := mergedIntervals(docs); n > most {
		return fmt.Sprintf("no timeline: the documents' timelines span %d intervals, more than %d (they are far apart)", n, most)
	}
	tl, _, err := MergeTimelines(docs)
	if err != nil {
		return "no timeline: " + err.Error()
	}
	d.Timeline = tl
	return ""
}

// mergedIntervals is how many intervals the merged timeline of docs spans,
// and the most a merge makes: twice the documents' intervals and an hour of
// 1-second ones (the gaps between documents become empty intervals).
func mergedIntervals(docs []*Document) (n, most int64) {
	var starts []time.Time
	base := time.Time{}
	for i, d := range docs {
		t, _ := time.Parse(time.RFC3339Nano, d.StartTime) // parsed by Merge already
		starts = append(starts, t)
		if i == 0 || t.Before(base) {
			base = t
		}
		most += 2 * int64(len(d.Timeline.Intervals))
	}
	for i, d := range docs {
		if iv := d.Timeline.IntervalUs; iv > 0 {
			n = max(n, starts[i].Sub(base).Microseconds()/iv+int64(len(d.Timeline.Intervals)))
		}
	}
	return n, most + 3600
}

// document is the merged run as a JSON document of the same schema: the
// summary's, with the shard section listing the inputs and the extended and
// rate sections merged from the documents' own.
func (mg *mergeState) document(s *Summary, percents []float64, forced bool) *Document {
	d := NewDocument(s)
	d.Ending = mg.ending
	d0 := mg.in[mg.order[0]].Doc
	sh := &JSONShard{Count: len(mg.in), Forced: forced, TotalRequests: s.Run.Requests,
		TotalConcurrency: s.Run.Concurrency, TotalRatePerS: s.Run.RatePerS}
	if s0 := d0.Shard; s0 != nil {
		sh.RunID, sh.StartAt = s0.RunID, s0.StartAt
		sh.TotalRequests, sh.TotalConcurrency, sh.TotalRatePerS = s0.TotalRequests, s0.TotalConcurrency, s0.TotalRatePerS
	}
	for _, i := range mg.order {
		m := mg.in[i]
		ms := JSONMergedShard{Index: i, File: m.Name, StartTime: m.Doc.StartTime}
		if x := m.Doc.Shard; x != nil {
			ms.Index, ms.StartDelayUs = x.Index, x.StartDelayUs
		}
		sh.Merged = append(sh.Merged, ms)
	}
	d.Shard = sh
	d.Extended = mg.extended(s)
	d.Rate = mg.rate(s, percents)
	mg.timelineNote = mergeTimelines(d, mg.in)
	d.Figures = FiguresOf(d)
	return d
}

// mergeDists combines distributions with samples.Dist's Merge: count, min,
// max and sum exact, the sd by Chan's formula from each part's mean and sd,
// percentiles from the merged histograms (0, and no histogram, where a part
// has none). The merged distribution is returned too where its percentiles
// are known (nil where a part has no histogram or nothing was counted).
func mergeDists(ds []*JSONDist) (JSONDist, *samples.Dist) {
	acc := samples.NewDist()
	hists := true
	for _, d := range ds {
		if d.Count == 0 {
			continue
		}
		var h *hdrhistogram.Histogram
		if d.Histogram != nil {
			if dh, err := decodeHistogram(d.Histogram); err == nil {
				h = dh
			}
		}
		if h == nil {
			hists = false
			h = samples.NewHist()
		}
		part := samples.DistOf(d.Count, d.MinUs, d.MaxUs, d.SumUs, d.SDUs, h)
		acc.Merge(&part)
	}
	f := distFigures(&acc)
	if f.Count == 0 {
		return JSONDist{}, nil
	}
	if !hists {
		f.MedianUs, f.P90Us, f.P99Us, f.P999Us, f.Hist = 0, 0, 0, 0, nil
		return jsonDist(&f), nil
	}
	return jsonDist(&f), &acc
}

func (mg *mergeState) extended(s *Summary) *JSONExtended {
	var xs []*JSONExtended
	for _, i := range mg.order {
		if x := mg.in[i].Doc.Extended; x != nil {
			xs = append(xs, x)
		}
	}
	if len(xs) != len(mg.in) {
		return nil
	}
	e := &JSONExtended{StatusCounts: map[string]int{}, FailuresByClass: map[string]JSONFailureClass{},
		ReceivedMbitPerS: MbitPerSecond(s.TotalRead, s.Seconds), SentMbitPerS: MbitPerSecond(s.TotalSent, s.Seconds),
		SampleStore: s.Precision}
	phase := func(f func(*JSONPhases) *JSONDist) JSONDist {
		ds := make([]*JSONDist, len(xs))
		for i, x := range xs {
			ds[i] = f(&x.Phases)
		}
		j, _ := mergeDists(ds)
		return j
	}
	e.Phases = JSONPhases{
		TCPConnect:   phase(func(p *JSONPhases) *JSONDist { return &p.TCPConnect }),
		TLSHandshake: phase(func(p *JSONPhases) *JSONDist { return &p.TLSHandshake }),
		RequestWrite: phase(func(p *JSONPhases) *JSONDist { return &p.RequestWrite }),
		Waiting:      phase(func(p *JSONPhases) *JSONDist { return &p.Waiting }),
		BodyTransfer: phase(func(p *JSONPhases) *JSONDist { return &p.BodyTransfer }),
		Total:        phase(func(p *JSONPhases) *JSONDist { return &p.Total }),
	}
	if e.Phases.Total.Histogram != nil {
		e.LatencyHistogram = *e.Phases.Total.Histogram
	}
	var perSecond []int64
	cpuKnown := true
	var cpu JSONCPU
	for k, x := range xs {
		e.DNSUs += x.DNSUs
		e.DNSLookups += x.DNSLookups
		for code, n := range x.StatusCounts {
			e.StatusCounts[code] += n
		}
		for name, f := range x.FailuresByClass {
			g := e.FailuresByClass[name]
			g.Count += f.Count
			if g.FirstError == "" {
				g.FirstError = f.FirstError
			}
			e.FailuresByClass[name] = g
		}
		// Each document counts seconds from its own start: shift by whole
		// seconds from the first start.
		off := int(mg.starts[mg.order[k]].Sub(mg.start) / time.Second)
		for j, n := range x.Throughput.PerSecond {
			for len(perSecond) <= off+j {
				perSecond = append(perSecond, 0)
			}
			perSecond[off+j] += n
		}
		if x.ClientCPU == nil {
			cpuKnown = false
		} else {
			cpu.UserMs += x.ClientCPU.UserMs
			cpu.SysMs += x.ClientCPU.SysMs
		}
	}
	tp := ThroughputOf(perSecond, s.Elapsed)
	if perSecond == nil {
		perSecond = []int64{}
	}
	e.Throughput = JSONThroughput{Intervals: tp.Intervals, MeanPerS: tp.Mean, SDPerS: tp.SD, PerSecond: perSecond}
	if s.Count > 0 {
		e.ResponseTimeMeanMs = float64(s.Total.MeanUs) / 1000
		e.ResponseTimeSDMs = s.Total.SDUs / 1000
	}
	if cpuKnown && s.Seconds > 0 {
		if s.Elapsed >= MinCPUShareRun { // as a single run's: no share of a core for short runs
			cores := (cpu.UserMs + cpu.SysMs) / 1000 / s.Seconds
			pct := cores * 100
			cpu.CoresBusy, cpu.PercentOfOneCore = &cores, &pct
		}
		e.ClientCPU = &cpu
	}
	return e
}

func (mg *mergeState) rate(s *Summary, percents []float64) *JSONRate {
	var rs []*JSONRate
	for _, m := range mg.in {
		if r := m.Doc.Rate; r != nil {
			rs = append(rs, r)
		}
	}
	if len(rs) != len(mg.in) {
		return nil
	}
	r := &JSONRate{}
	lags, cors := make([]*JSONDist, len(rs)), make([]*JSONDist, len(rs))
	for i, x := range rs {
		r.TargetPerS += x.TargetPerS
		r.Sent += x.Sent
		r.DueButNotSent += x.DueButNotSent
		lags[i], cors[i] = &x.Lag, &x.Corrected
	}
	var cor *samples.Dist
	r.Lag, _ = mergeDists(lags)
	r.Corrected, cor = mergeDists(cors)
	if s.Seconds > 0 {
		r.AchievedPerS = float64(s.Complete) / s.Seconds
	}
	if cor != nil {
		r.CorrectedHistogram = *r.Corrected.Histogram
		r.CorrectedServed = jsonServed(correctedServed(cor, percents))
	}
	return r
}
