package report

import (
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/internal/samples"
)

// This file merges runs into one: gab merge's documents, a sweep point's
// repetitions, the runs gab compare and gab plot pool. Counts, failures,
// bytes and status codes add up; ab's Time taken is the last end minus the
// first start; ab's timing columns come from the runs' exact sums (min, max,
// mean and sd with a single run's arithmetic, medians and percentiles from the
// merged HDR histograms); the extended and rate sections' distributions merge
// with samples.Dist.Merge and the timelines by wall-clock interval; the
// APDEX counts add up; then derive computes every figure that follows from these, as Summarize does.

// MergeRuns merges runs that each have a report (of Summarize, or read with
// DecodeDocument) into one. ab's timing tables need every run's sums (a run
// whose JSON document was asked for has them), the extended, rate and
// timeline sections every run's own; a section some run lacks is absent (and
// APDEX where the runs' thresholds differ).
// The runs are not checked for being parts of one run: gab merge's Merge
// does that.
func MergeRuns(runs []*Run) (*Run, error) {
	if len(runs) == 0 {
		return nil, errors.New("nothing to merge")
	}
	names := make([]string, len(runs))
	starts := make([]time.Time, len(runs))
	for i, d := range runs {
		names[i] = fmt.Sprintf("run %d", i+1)
		if d.Report == nil {
			return nil, fmt.Errorf("%s: has no report (ending %s)", names[i], d.Ending)
		}
		t, err := time.Parse(time.RFC3339Nano, d.StartTime)
		if err != nil {
			return nil, fmt.Errorf("%s: start_time %q: %v", names[i], d.StartTime, err)
		}
		starts[i] = t
	}
	return mergeRuns(runs, names, starts)
}

// mergeRuns is MergeRuns of runs that each have a report and started at
// starts, its errors naming the runs by names.
func mergeRuns(runs []*Run, names []string, starts []time.Time) (*Run, error) {
	mg := &merging{runs: runs, names: names, starts: starts, order: startOrder(starts)}
	r := mg.counts()
	t := &tables{}
	if err := mg.columns(r, t); err != nil {
		return nil, err
	}
	r.Extended = mg.extended()
	engineNote := mg.engine(r.Extended)
	r.Rate = mg.rate()
	r.Outstanding = mg.outstanding()
	r.Distributions = mg.distributions()
	targets, err := mergeTargets(runs)
	if err != nil {
		return nil, err
	}
	r.Targets = targets
	var apdexNote string
	r.Apdex, apdexNote = mergeApdex(runs)
	for _, note := range []string{mg.timeline(r), apdexNote, engineNote} {
		if note != "" {
			r.local.mergeNotes = append(r.local.mergeNotes, note)
		}
	}
	r.derive(t, mg.percents())
	return r, nil
}

// merging is a merge under way: the runs and their starts.
type merging struct {
	runs   []*Run
	names  []string
	starts []time.Time
	order  []int // indexes of runs by start time
}

// startOrder is the indexes of starts from the earliest.
func startOrder(starts []time.Time) []int {
	order := make([]int, len(starts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return starts[order[a]].Before(starts[order[b]]) })
	return order
}

// everyRun is each run's section (got by section), by start time, or nil
// when some run lacks it.
func everyRun[T any](mg *merging, section func(*Run) *T) []*T {
	out := make([]*T, 0, len(mg.order))
	for _, i := range mg.order {
		s := section(mg.runs[i])
		if s == nil {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// first is the earliest run.
func (mg *merging) first() *Run { return mg.runs[mg.order[0]] }

// percents is the --percentiles list the earliest run was written with.
func (mg *merging) percents() []float64 {
	var out []float64
	for _, r := range mg.first().Percentiles {
		out = append(out, r.Percent)
	}
	return out
}

// endingRank orders the endings from the best.
var endingRank = map[string]int{endCompleted: 0, endTimeLimit: 1, endInterrupted: 2, endFatal: 3}

// counts starts the merged run: its start, the worst ending, the server's
// figures (from the first run that got answers), the summed counters and
// concurrency, the time from the first start to the last end, and the run
// section with the summed -n, -c and --rate when every run has one.
func (mg *merging) counts() *Run {
	start := mg.starts[mg.order[0]]
	r := newRun(new(Run), nil, start)
	r.Ending = endCompleted
	srv := mg.first()
	for _, i := range mg.order {
		if mg.runs[i].Report.CompleteRequests > 0 {
			srv = mg.runs[i]
			break
		}
	}
	f := srv.Report
	rp := &abReport{ServerSoftware: f.ServerSoftware, ServerHostname: f.ServerHostname, ServerPort: f.ServerPort,
		Protocol: f.Protocol, TLS: f.TLS, DocumentPath: f.DocumentPath, DocumentLengthBytes: f.DocumentLengthBytes,
		VariableLength: f.VariableLength}
	r.Report = rp
	r.local.keepAlive, r.local.bodySent = srv.local.keepAlive, srv.local.bodySent
	r.local.noPercentiles, r.local.noConfidence = srv.local.noPercentiles, srv.local.noConfidence
	if ri := srv.Run; ri != nil {
		r.local.keepAlive, r.local.bodySent = ri.KeepAlive, ri.BodySent
		r.local.noPercentiles, r.local.noConfidence = ri.NoPercentiles, ri.NoConfidence
	}
	end := start
	runs := 0
	for i, d := range mg.runs {
		if endingRank[d.Ending] > endingRank[r.Ending] {
			r.Ending = d.Ending
		}
		rp.counters.add(&d.Report.counters)
		rp.ConcurrencyLevel += d.Report.ConcurrencyLevel
		if e := mg.starts[i].Add(time.Duration(d.Report.TimeTakenUs) * time.Microsecond); e.After(end) {
			end = e
		}
		if d.Run != nil {
			runs++
		}
	}
	r.local.elapsed = end.Sub(start).Truncate(time.Microsecond)
	if runs == len(mg.runs) && srv.Run != nil {
		ri := *srv.Run
		ri.Requests, ri.Concurrency, ri.RatePerS = 0, 0, 0
		for _, d := range mg.runs {
			ri.Requests += d.Run.Requests
			ri.Concurrency += d.Run.Concurrency
			ri.RatePerS += d.Run.RatePerS
		}
		r.Run = &ri
	}
	return r
}

// columns computes ab's timing tables from the runs' sums (none unless every
// run has them): min, max, mean and sd exact, with a single run's
// arithmetic; medians and percentiles from the merged histograms.
func (mg *merging) columns(r *Run, t *tables) error {
	var cols [4]mergedColumn
	prec := precisionHDR
	for c := range cols {
		cols[c] = mergedColumn{sq: new(big.Int), hist: samples.NewHist()}
	}
	for _, i := range mg.order {
		sums := mg.runs[i].Sums
		if sums == nil {
			return nil
		}
		if sums.HistogramPrecision == precisionMs {
			prec = precisionMs
		}
		for c := range cols {
			if err := cols[c].add(sums.column(column(c))); err != nil {
				return fmt.Errorf("%s: %v", mg.names[i], err)
			}
		}
	}
	rp := r.Report
	rp.StatisticsFromHistogram = true
	r.local.precision = mergePrecision(prec)
	r.Sums = &sumsSection{HistogramPrecision: prec}
	for c := range cols {
		col := &cols[c]
		*r.Sums.column(column(c)) = columnSumsOf(col.count, col.sum, col.min, col.max, new(big.Int).Set(col.sq), col.hist)
	}
	n := int(cols[totalColumn].count)
	r.local.count, t.n = n, n
	if n == 0 {
		return nil
	}
	ranks := &mergedRanks{}
	t.ranks = ranks
	ct := &connectionTimes{}
	for c := range cols {
		col := &cols[c]
		if int(col.count) != n {
			return fmt.Errorf("the documents' %s column counts %d requests, their total column %d", columnName(column(c)), col.count, n)
		}
		mean := truncatedMean(col.sum, n)
		sd := sampleSD(squaredDeviationsBig(col.sq, col.sum, uint64(n), mean), n)
		ranks[c] = &hdrRanks{h: col.hist, min: col.min, max: col.max, count: col.count}
		*ct.column(column(c)) = newColumnStats(col.min, col.max, mean, t.median(column(c)), sd)
	}
	rp.ConnectionTimes = ct
	con, tot := &cols[connectColumn], &cols[totalColumn]
	r.local.html = htmlTimesOf(con.min, con.max, con.sum, tot.min, tot.max, tot.sum, n)
	return nil
}

// mergedColumn is one timing column over all runs.
type mergedColumn struct {
	count, sum uint64
	min, max   int64
	sq         *big.Int
	hist       *hdrhistogram.Histogram
}

func (c *mergedColumn) add(s *exactSums) error { return c.addWith(s, s.Histogram.decode) }

// addWith adds one run's (or target's) exact sums s and the histogram that
// hist gives (read only when s counts a request).
func (c *mergedColumn) addWith(s *exactSums, hist func() (*hdrhistogram.Histogram, error)) error {
	if s.Count == 0 {
		return nil
	}
	sq, ok := new(big.Int).SetString(s.SumSquaresUs2, 10)
	if !ok {
		return fmt.Errorf("sum_squares_us2 %q is not an integer", s.SumSquaresUs2)
	}
	h, err := hist()
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

// mergedRanks answers rank queries from the merged histograms.
type mergedRanks [4]*hdrRanks

func (r *mergedRanks) ValueAt(c column, i int) int64 { return r[c].valueAt(uint64(i)) }

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

// mergePrecision is the line that says how exact a merged report is.
func mergePrecision(p string) string {
	within := "3 significant digits, within 0.1%"
	if p == precisionMs {
		within = "1 ms buckets past --sample-limit, within 0.5 ms"
	}
	return "Merged: counts, bytes, min, mean, sd and max exact; medians and percentiles from the merged histograms (" + within + ")."
}

func columnName(c column) string {
	return [...]string{"connect", "processing", "waiting", "total"}[c]
}

// mergeDists combines distributions with samples.Dist's Merge: count, min,
// max and sum exact, the sd by Chan's formula from each part's mean and sd,
// percentiles from the merged histograms (0, and no histogram, where a part
// has none). The merged distribution is returned too where its percentiles
// are known (nil where a part has no histogram or nothing was counted).
func mergeDists(ds []*distFigures) (distFigures, *samples.Dist) {
	acc := samples.NewDist()
	hists := true
	for _, d := range ds {
		if d.Count == 0 {
			continue
		}
		var h *hdrhistogram.Histogram
		if d.Histogram != nil {
			if dh, err := d.Histogram.decode(); err == nil {
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
	if acc.Count == 0 {
		return distFigures{}, nil
	}
	out := distOf(&acc)
	if !hists {
		out.MedianUs, out.P90Us, out.P99Us, out.P999Us, out.Histogram = 0, 0, 0, 0, nil
		return out, nil
	}
	return out, &acc
}

// extended merges the runs' extended sections (none unless every run has
// one): the phases' distributions, DNS, status codes, failure classes, the
// requests of each second (each run's seconds counted from its own start,
// shifted by whole seconds from the first start; none when the runs started
// more than maxStartSpread apart, which gab merge refuses but a sweep point's
// runs read from a document may be) and the client CPU (when
// every run knows it); each failure class's first error is the earliest
// (mergeFailureClasses).
func (mg *merging) extended() *extendedFigures {
	xs := everyRun(mg, func(r *Run) *extendedFigures { return r.Extended })
	if xs == nil {
		return nil
	}
	e := &extendedFigures{StatusCounts: map[string]int{}, FailuresByClass: map[string]failureClass{}}
	merged := e.Phases.list()
	for p := range merged {
		ds := make([]*distFigures, len(xs))
		for i, x := range xs {
			ds[i] = x.Phases.list()[p]
		}
		*merged[p], _ = mergeDists(ds)
	}
	var perSecond []int64
	apart := false // a run started more than maxStartSpread after the first
	cpu := &clientCPU{}
	first := mg.starts[mg.order[0]]
	for k, x := range xs {
		e.DNSUs += x.DNSUs
		e.DNSLookups += x.DNSLookups
		for code, n := range x.StatusCounts {
			e.StatusCounts[code] += n
		}
		since := mg.starts[mg.order[k]].Sub(first)
		mergeFailureClasses(e.FailuresByClass, x.FailuresByClass, since)
		apart = apart || since > maxStartSpread
		off := int(since / time.Second)
		for j, n := range x.Throughput.PerSecond {
			if apart {
				break
			}
			for len(perSecond) <= off+j {
				perSecond = append(perSecond, 0)
			}
			perSecond[off+j] += n
		}
		if x.ClientCPU == nil {
			cpu = nil
		} else if cpu != nil {
			cpu.UserMs += x.ClientCPU.UserMs
			cpu.SysMs += x.ClientCPU.SysMs
		}
	}
	if apart {
		perSecond = nil
	}
	e.Throughput.PerSecond = perSecond
	e.ClientCPU = cpu
	return e
}

// engine sets the merged extended section's I/O engine (--engine) from the
// runs': theirs when they all name the same one; engineMixed when they all
// name one but not the same (shards on hosts with and without io_uring, say),
// with a note that counts them; none, with a note, when only some name one
// (a document of a gab before the field: its engine is unknown). It returns
// the note.
func (mg *merging) engine(x *extendedFigures) string {
	if x == nil {
		return ""
	}
	named := 0
	counts := map[string]int{}
	for _, i := range mg.order {
		if e := mg.runs[i].Extended.Engine; e != "" {
			named++
			counts[e]++
		}
	}
	switch {
	case named == 0:
		return ""
	case named < len(mg.runs):
		return fmt.Sprintf("no I/O engine: only %d of the %d documents name one", named, len(mg.runs))
	case len(counts) == 1:
		x.Engine = mg.first().Extended.Engine
		return ""
	}
	x.Engine = engineMixed
	return "I/O engine:             mixed (" + countsText(counts, "%s in %d") + " documents)"
}

// countsText is counts in its keys' order, each written by format (a key,
// then its count), joined by ", ".
func countsText(counts map[string]int, format string) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf(format, k, counts[k])
	}
	return strings.Join(parts, ", ")
}

// mergeFailureClasses adds the failure classes of a run that started since
// after the merged run into into (the runs come by start time). A class's
// first error is the earliest by first_at_s shifted by since, with its
// message; when a run with an error of the class does not say when (a
// document of an earlier gab), the message is the earliest run's, without
// a time.
func mergeFailureClasses(into, from map[string]failureClass, since time.Duration) {
	for name, f := range from {
		g := into[name]
		g.Count += f.Count
		var at *float64
		if f.FirstAtS != nil {
			s := *f.FirstAtS + since.Seconds()
			at = &s
		}
		switch {
		case f.FirstError == "":
		case g.FirstError == "":
			g.FirstError, g.FirstAtS = f.FirstError, at
		case g.FirstAtS == nil || at == nil:
			g.FirstAtS = nil
		case *at < *g.FirstAtS:
			g.FirstError, g.FirstAtS = f.FirstError, at
		}
		into[name] = g
	}
}

// rate merges the runs' rate sections (none unless every run has one).
func (mg *merging) rate() *rateFigures {
	rs := everyRun(mg, func(r *Run) *rateFigures { return r.Rate })
	if rs == nil {
		return nil
	}
	r := &rateFigures{OnScheduleTolUs: rs[0].OnScheduleTolUs}
	lags, cors := make([]*distFigures, len(rs)), make([]*distFigures, len(rs))
	for i, x := range rs {
		r.TargetPerS += x.TargetPerS
		r.Sent += x.Sent
		r.DueButNotSent += x.DueButNotSent
		r.OnSchedule += x.OnSchedule
		lags[i], cors[i] = &x.Lag, &x.Corrected
	}
	var cor *samples.Dist
	r.Lag, _ = mergeDists(lags)
	r.Corrected, cor = mergeDists(cors)
	if cor != nil {
		r.CorrectedServed = correctedServed(cor, mg.percents())
	}
	return r
}

// timeline merges the runs' timelines by wall-clock interval
// (mergeTimelines): exact counts, failures and bytes and HDR-precision
// percentiles per interval across all runs. It returns a note when the runs
// have timelines that cannot be merged (only some have one, or their
// intervals differ: shards of one run never do, so only a --force merge
// gets there) and the merged run then has none.
func (mg *merging) timeline(r *Run) string {
	have := 0
	for _, d := range mg.runs {
		if d.Timeline != nil {
			have++
		}
	}
	if have == 0 {
		return ""
	}
	if have < len(mg.runs) {
		return fmt.Sprintf("no timeline: only %d of the %d documents have one", have, len(mg.runs))
	}
	if n, most := mergedIntervals(mg.runs, mg.starts); n > most {
		return fmt.Sprintf("no timeline: the documents' timelines span %d intervals, more than %d (they are far apart)", n, most)
	}
	tl, _, err := mergeTimelines(mg.runs, mg.starts)
	if err != nil {
		return "no timeline: " + err.Error()
	}
	r.Timeline = tl
	return ""
}

// mergedIntervals is how many intervals the merged timeline of docs (that
// started at starts) spans, and the most a merge makes: twice the
// documents' intervals and an hour of 1-second ones (the gaps between
// documents become empty intervals).
func mergedIntervals(docs []*Run, starts []time.Time) (n, most int64) {
	base := time.Time{}
	for i, d := range docs {
		if i == 0 || starts[i].Before(base) {
			base = starts[i]
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
