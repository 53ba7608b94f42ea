package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gab/client"
	"gab/internal/printable"
	"gab/internal/samples"
)

// This file checks the documents gab reads back (gab merge, gab compare, gab
// plot, and through internal/sweep the runs of a sweep document) before any
// figure of them is used: every number is non-negative (but the few that may
// not be) and below 2^53, every count is one a gab document can hold, and
// the figures agree with each other (counts with the sums and histograms,
// min ≤ mean ≤ max, the failure classes with the failures). Every string is
// made safe to print first (printable.String). A refusal names the field:
// "report.failed_requests: -50 is negative".

// MaxConcurrency is ab's limit on -c ("Invalid Concurrency [Range
// 0..200000]"): the most connections of a run, a sweep's point or a capacity
// search.
const MaxConcurrency = 200000

// maxShards is the most shards a run can have: each shard needs a connection
// of its own, and -c is at most MaxConcurrency.
const maxShards = MaxConcurrency

// maxNumber bounds every number of a document: 2^53, beyond which JSON
// readers that hold numbers as doubles lose digits (what gab writes stays far
// below), so that no sum of a few hundred documents' figures overflows.
const maxNumber = 1 << 53

// maxRunRequests is the most requests one gab process records (-n is an int
// of ab's, and -t alone stops at math.MaxInt32).
const maxRunRequests = math.MaxInt32

// DecodeDocument decodes a gab run document (of a run, a shard or gab merge)
// read from the file name: its strings made safe to print, then checked by
// ValidateDocument. Errors start with name.
func DecodeDocument(name string, raw []byte) (*Run, error) {
	name = printable.String(name)
	if len(raw) > MaxDocumentBytes {
		return nil, DocumentTooLarge(name, "run document", MaxDocumentBytes)
	}
	var head struct {
		Schema        string `json:"schema"`
		SchemaVersion int    `json:"schema_version"`
		Tool          string `json:"tool"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, JSONError(name, "gab JSON document", err)
	}
	if head.Tool != "gab" {
		return nil, fmt.Errorf("%s: not a gab JSON document (no \"tool\": \"gab\")", name)
	}
	if head.Schema != "" {
		return nil, fmt.Errorf("%s: a %s document, not a run's", name, printable.String(head.Schema))
	}
	if head.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d is newer than this gab's %d: use the gab that wrote it", name, head.SchemaVersion, SchemaVersion)
	}
	var d Run
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("%s: not a gab JSON document: %s", name, printable.String(err.Error()))
	}
	EscapeStrings(&d)
	if err := ValidateDocument(&d); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return &d, nil
}

// JSONError is the error for a document name (printable already) that
// json.Unmarshal refused with err: an incomplete one (a syntax error, or
// the input's end) says it may be truncated or still being written, any
// other says it is not a what.
func JSONError(name, what string, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) || err.Error() == "unexpected end of JSON input" {
		return fmt.Errorf("%s: not a complete JSON document (truncated or still being written?): %s", name, printable.String(err.Error()))
	}
	return fmt.Errorf("%s: not a %s: %s", name, what, printable.String(err.Error()))
}

// EscapeStrings replaces every string reachable from v (a pointer to a
// decoded document), map keys included, by printable.String's form; error
// messages become one line first.
func EscapeStrings(v any) {
	walkDocument(reflect.ValueOf(v), &docPath{}, func(p *docPath, x reflect.Value) {
		if x.Kind() != reflect.String || x.Len() == 0 {
			return
		}
		s := x.String()
		if n := p.last(); n == "message" || n == "first_error" || n == "error" {
			s = OneLine(s)
		}
		if t := printable.String(s); t != x.String() {
			x.SetString(t)
		}
	})
}

// ValidateDocument checks a decoded run document; the error names the first
// field found wrong.
func ValidateDocument(d *Run) error {
	c := &checker{}
	c.document(d)
	return c.err
}

// FieldError is a document's field and what is wrong with it.
type FieldError struct {
	Field, Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// checker keeps the first problem found.
type checker struct{ err error }

func (c *checker) fail(field, format string, args ...any) {
	if c.err == nil {
		c.err = &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
	}
}

// CheckNumbers checks every number reachable from v (a pointer to a decoded
// document): finite, non-negative (but start delays and --fail-if bounds),
// at most 2^53 in size. internal/sweep checks its documents with it too.
func CheckNumbers(v any) error {
	c := &checker{}
	c.numbers(v)
	return c.err
}

func (c *checker) numbers(v any) {
	walkDocument(reflect.ValueOf(v), &docPath{}, func(p *docPath, x reflect.Value) {
		if c.err != nil {
			return
		}
		var f float64
		switch x.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f = float64(x.Int())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			f = float64(x.Uint())
		case reflect.Float32, reflect.Float64:
			f = x.Float()
			if math.IsNaN(f) || math.IsInf(f, 0) {
				c.fail(p.String(), "%v is not a number", f)
				return
			}
		default:
			return
		}
		switch {
		case f < 0 && !p.mayBeNegative():
			c.fail(p.String(), "%s is negative", number(x))
		case math.Abs(f) > maxNumber:
			c.fail(p.String(), "%s is beyond what a gab document holds (2^53)", number(x))
		}
	})
}

func number(x reflect.Value) string {
	switch x.Kind() {
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(x.Float(), 'g', -1, 64)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(x.Uint(), 10)
	}
	return strconv.FormatInt(x.Int(), 10)
}

func (c *checker) document(d *Run) {
	if d.Tool != "gab" {
		c.fail("tool", "%q is not gab", d.Tool)
	}
	if d.SchemaVersion < 1 || d.SchemaVersion > SchemaVersion {
		c.fail("schema_version", "%d is not one of this gab's (1 to %d)", d.SchemaVersion, SchemaVersion)
	}
	switch d.Ending {
	case "completed", "time_limit", "interrupted", "fatal", "not_started":
	default:
		c.fail("ending", "%q is not one of gab's endings", d.Ending)
	}
	if d.Report != nil {
		if _, err := time.Parse(time.RFC3339Nano, d.StartTime); err != nil {
			c.fail("start_time", "%q is not an RFC 3339 time", d.StartTime)
		}
	}
	c.bounds(d)
	if c.err != nil {
		return
	}
	c.numbers(d)
	if c.err != nil {
		return
	}
	// A merged document holds its shards' requests; one run at most
	// maxRunRequests.
	limit := int64(maxRunRequests)
	if sh := d.Shard; sh != nil && len(sh.Merged) > 1 {
		limit *= int64(len(sh.Merged))
	}
	if d.Shard != nil {
		c.shard(d.Shard)
	}
	if d.Report != nil && d.Sums != nil && d.Sums.Total.Count != int64(d.Report.CompleteRequests) {
		c.fail("report.complete_requests", "%d, but the sums count %d requests", d.Report.CompleteRequests, d.Sums.Total.Count)
	}
	if d.Report != nil {
		c.report(d.Report, limit)
	}
	if d.Sums != nil {
		c.sums(d.Sums, d.Report, limit)
	}
	for i, r := range d.Percentiles {
		if r.Percent > 100 {
			c.fail(fmt.Sprintf("percentiles[%d].percent", i), "%g is above 100", r.Percent)
		}
	}
	if d.Extended != nil {
		c.extended(d.Extended, d.Report, limit)
	}
	if d.Rate != nil {
		c.rate(d.Rate, limit)
		intervals := 0
		if d.Timeline != nil {
			intervals = len(d.Timeline.Intervals)
		}
		c.rateSteps(d.Rate.Steps, intervals, limit)
	}
	if d.Outstanding != nil {
		c.outstanding(d.Outstanding, limit)
	}
	if d.Apdex != nil {
		c.apdex(d.Apdex, d.Report, limit)
	}
	if d.Timeline != nil {
		c.timeline(d.Timeline, d.Report, limit)
	}
	if g := d.CGI; g != nil {
		c.count("cgi.count", int64(g.Count), limit)
		for _, col := range []namedColumn{{"spawn", &g.Spawn}, {"first_byte", &g.FirstByte}, {"output", &g.Output},
			{"reap", &g.Reap}, {"child_cpu", &g.ChildCPU}} {
			c.column("cgi."+col.name, col.col)
		}
	}
	c.distributions(d.Distributions, limit)
	c.plausible(d) // plausible.go
}

// count checks a count against what the document can hold.
func (c *checker) count(field string, n, limit int64) {
	if n > limit {
		c.fail(field, "%d is more than a gab document can count (%d)", n, limit)
	}
}

func (c *checker) shard(sh *Shard) {
	switch {
	case sh.Count < 1 || sh.Count > maxShards:
		c.fail("shard.count", "%d is not a number of shards (1 to %d)", sh.Count, maxShards)
	case sh.Index >= sh.Count:
		c.fail("shard.index", "%d is not below shard.count %d", sh.Index, sh.Count)
	case len(sh.Merged) > 0 && len(sh.Merged) != sh.Count:
		c.fail("shard.merged", "%d shards, but shard.count is %d", len(sh.Merged), sh.Count)
	}
}

func (c *checker) report(r *abReport, limit int64) {
	for _, f := range []struct {
		name string
		n    int
	}{
		{"complete_requests", r.CompleteRequests}, {"failed_requests", r.FailedRequests},
		{"write_errors", r.WriteErrors}, {"non_2xx_responses", r.Non2xxResponses},
		{"keep_alive_requests", r.KeepAliveReqs}, {"exact_samples", r.ExactSamples},
		{"concurrency_level", r.ConcurrencyLevel},
	} {
		c.count("report."+f.name, int64(f.n), limit)
	}
	f := r.Failures
	if classes := int64(f.Connect) + int64(f.Receive) + int64(f.Length) + int64(f.Exceptions); int64(r.FailedRequests) < classes {
		c.fail("report.failed_requests", "%d, but its classes (connect, receive, length, exceptions) add up to %d", r.FailedRequests, classes)
	}
	if r.ExactSamples > r.CompleteRequests {
		c.fail("report.exact_samples", "%d, more than the %d complete requests", r.ExactSamples, r.CompleteRequests)
	}
	if r.ServerPort > math.MaxUint16 {
		c.fail("report.server_port", "%d is not a port", r.ServerPort)
	}
	if s := float64(r.TimeTakenUs) / 1e6; !near(r.TimeTakenS, s) {
		c.fail("report.time_taken_s", "%g, but time_taken_us is %d", r.TimeTakenS, r.TimeTakenUs)
	}
	rps := 0.0
	if r.TimeTakenS > 0 {
		rps = float64(r.CompleteRequests) / r.TimeTakenS
	}
	if !near(r.RequestsPerSecond, rps) {
		c.fail("report.requests_per_second", "%g, but %d requests in %g s are %g", r.RequestsPerSecond, r.CompleteRequests, r.TimeTakenS, rps)
	}
	if r.HTMLTransferredBytes > r.TotalTransferredBytes {
		c.fail("report.html_transferred_bytes", "%d, more than total_transferred_bytes %d", r.HTMLTransferredBytes, r.TotalTransferredBytes)
	}
	ct := r.ConnectionTimes
	switch {
	case ct == nil && r.CompleteRequests > 0:
		c.fail("report.connection_times", "absent, with %d complete requests", r.CompleteRequests)
	case ct != nil && r.CompleteRequests == 0:
		c.fail("report.connection_times", "present, with no complete request")
	case ct != nil:
		for col := range column(4) {
			c.column("report.connection_times."+columnName(col), ct.column(col))
		}
	}
	c.served("report.percentage_served", r.PercentageServed, ct)
}

type namedColumn struct {
	name string
	col  *columnStats
}

// near reports whether a figure equals what it is computed from, but for the
// float rounding of its computation.
func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// column checks one row of ab's timing table: min ≤ mean, median ≤ max, in
// µs and in ms.
func (c *checker) column(field string, col *columnStats) {
	switch {
	case col.MinUs > col.MaxUs:
		c.fail(field+".min_us", "%d is above max_us %d", col.MinUs, col.MaxUs)
	case col.MeanUs < col.MinUs || col.MeanUs > col.MaxUs:
		c.fail(field+".mean_us", "%d is outside min_us..max_us (%d..%d)", col.MeanUs, col.MinUs, col.MaxUs)
	case col.MedianUs < col.MinUs || col.MedianUs > col.MaxUs:
		c.fail(field+".median_us", "%d is outside min_us..max_us (%d..%d)", col.MedianUs, col.MinUs, col.MaxUs)
	case col.MinMs > col.MaxMs || col.MeanMs < col.MinMs || col.MeanMs > col.MaxMs || col.MedianMs < col.MinMs || col.MedianMs > col.MaxMs:
		c.fail(field, "min_ms, mean_ms, median_ms and max_ms (%d, %d, %d, %d) are out of order", col.MinMs, col.MeanMs, col.MedianMs, col.MaxMs)
	case col.SDUs > float64(col.MaxUs-col.MinUs)+1:
		c.fail(field+".sd_us", "%g is more than max_us − min_us (%d) allows", col.SDUs, col.MaxUs-col.MinUs)
	}
	switch col.Confidence {
	case "reliable", "warning", "error":
	default:
		c.fail(field+".confidence", "%q is not reliable, warning or error", col.Confidence)
	}
}

// served checks a percentile table (ab's, or rate mode's corrected one):
// percents up to 100, times ascending, within the total column's min and
// max when ct is given.
func (c *checker) served(field string, rows []served, ct *connectionTimes) {
	var prev int64
	for i, r := range rows {
		f := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case r.Percent > 100:
			c.fail(f+".percent", "%g is above 100", r.Percent)
		case r.TotalUs < prev:
			c.fail(f+".total_us", "%d is below the row before (%d)", r.TotalUs, prev)
		case ct != nil && (r.TotalUs < ct.Total.MinUs || r.TotalUs > ct.Total.MaxUs):
			c.fail(f+".total_us", "%d is outside the total column's min_us..max_us (%d..%d)", r.TotalUs, ct.Total.MinUs, ct.Total.MaxUs)
		}
		prev = r.TotalUs
	}
}

func (c *checker) sums(s *sumsSection, r *abReport, limit int64) {
	if s.HistogramPrecision != precisionHDR && s.HistogramPrecision != precisionMs {
		c.fail("sums.histogram_precision", "%q is not %q or %q", s.HistogramPrecision, precisionHDR, precisionMs)
	}
	for i := range column(4) {
		cs := s.column(i)
		field := "sums." + columnName(i)
		c.columnSums(field, cs, limit)
		if cs.Count != s.Total.Count {
			c.fail(field+".count", "%d, but sums.total.count is %d", cs.Count, s.Total.Count)
		}
		if r == nil {
			continue
		}
		if ct := r.ConnectionTimes; ct != nil && cs.Count > 0 {
			col := ct.column(i)
			name := "report.connection_times." + columnName(i)
			mean := truncatedMean(cs.SumUs, int(cs.Count))
			switch {
			case col.MinUs != cs.MinUs:
				c.fail(name+".min_us", "%d, but %s.min_us is %d", col.MinUs, field, cs.MinUs)
			case col.MaxUs != cs.MaxUs:
				c.fail(name+".max_us", "%d, but %s.max_us is %d", col.MaxUs, field, cs.MaxUs)
			case col.MeanUs != mean:
				c.fail(name+".mean_us", "%d, but %s gives %d", col.MeanUs, field, mean)
			}
		}
	}
}

// columnSums checks one column's sums: min ≤ max within a sample's 32 bits,
// the sum within count × [min, max], the sum of squares possible for that
// count and sum (n·Σx² ≥ (Σx)², Σx² ≤ max·Σx), and a histogram of count
// values.
func (c *checker) columnSums(field string, s *exactSums, limit int64) {
	c.count(field+".count", s.Count, limit)
	sq, ok := new(big.Int).SetString(s.SumSquaresUs2, 10)
	if !ok || sq.Sign() < 0 || len(s.SumSquaresUs2) > 40 {
		c.fail(field+".sum_squares_us2", "%q is not a non-negative integer of up to 40 digits", s.SumSquaresUs2)
		return
	}
	n := uint64(s.Count)
	if n == 0 {
		if s.MinUs != 0 || s.MaxUs != 0 || s.SumUs != 0 || sq.Sign() != 0 {
			c.fail(field, "min_us, max_us, sum_us or sum_squares_us2 set with count 0")
		}
		s.Histogram.check(c, field+".histogram", 0, unitUs)
		return
	}
	lo, hi, ok := countRange(n, s.MinUs, s.MaxUs)
	switch {
	case s.MinUs > s.MaxUs:
		c.fail(field+".min_us", "%d is above max_us %d", s.MinUs, s.MaxUs)
		return
	case s.MaxUs > math.MaxUint32:
		c.fail(field+".max_us", "%d is beyond a sample's 32 bits", s.MaxUs)
		return
	case !ok || s.SumUs < lo || s.SumUs > hi:
		c.fail(field+".sum_us", "%d is not within count × [min_us, max_us] (%d × [%d, %d])", s.SumUs, n, s.MinUs, s.MaxUs)
		return
	}
	sum := new(big.Int).SetUint64(s.SumUs)
	nsq := new(big.Int).Mul(new(big.Int).SetUint64(n), sq)
	top := new(big.Int).Mul(big.NewInt(s.MaxUs), sum)
	if nsq.Cmp(new(big.Int).Mul(sum, sum)) < 0 || sq.Cmp(top) > 0 {
		c.fail(field+".sum_squares_us2", "%s is impossible for %d values summing to %d, none above %d", s.SumSquaresUs2, n, s.SumUs, s.MaxUs)
		return
	}
	s.Histogram.check(c, field+".histogram", s.Count, unitUs)
}

// countRange is count × min and count × max, ok false if they pass 2^64.
func countRange(n uint64, minV, maxV int64) (lo, hi uint64, ok bool) {
	h1, lo := bits.Mul64(n, uint64(minV))
	h2, hi := bits.Mul64(n, uint64(maxV))
	return lo, hi, h1 == 0 && h2 == 0
}

// firstErrorSlack is how far past time_taken_s a failure class's first_at_s
// may be: an attempt that fails while the run is ending (after the last
// recorded request, before the workers see the stop) still counts.
const firstErrorSlack = time.Second

func (c *checker) extended(x *extendedFigures, r *abReport, limit int64) {
	p := &x.Phases
	if r != nil && p.Total.Count != int64(r.CompleteRequests) {
		c.fail("extended.phases.total.count", "%d, but report.complete_requests is %d", p.Total.Count, r.CompleteRequests)
	}
	for _, ph := range []struct {
		name string
		d    *distFigures
	}{{"tcp_connect", &p.TCPConnect}, {"tls_handshake", &p.TLSHandshake}, {"request_write", &p.RequestWrite},
		{"waiting", &p.Waiting}, {"body_transfer", &p.BodyTransfer}, {"total", &p.Total}} {
		ph.d.check(c, "extended.phases."+ph.name, limit, unitUs)
	}
	if _, ok := engineNames[x.Engine]; !ok && x.Engine != "" {
		c.fail("extended.engine", "%q is not one of gab's I/O engines", x.Engine)
	}
	for code, n := range x.StatusCounts {
		if k, err := strconv.Atoi(code); err != nil || k < 0 || k > 999 || strconv.Itoa(k) != code {
			c.fail("extended.status_counts", "%q is not a status code", code)
		}
		c.count("extended.status_counts."+code, int64(n), limit)
	}
	for name, f := range x.FailuresByClass {
		class := slices.Index(failureClassNames[:], name)
		if class < 0 {
			c.fail("extended.failures_by_class", "%q is not a failure class", name)
			continue
		}
		if r == nil {
			continue
		}
		if at := f.FirstAtS; at != nil {
			field := "extended.failures_by_class." + name + ".first_at_s"
			switch {
			case math.IsNaN(*at) || math.IsInf(*at, 0) || *at < 0:
				c.fail(field, "%g is not a time since start_time", *at)
			case *at > r.TimeTakenS+firstErrorSlack.Seconds():
				c.fail(field, "%g s, after the run's end (time_taken_s %g)", *at, r.TimeTakenS)
			}
		}
		if want := r.failureCounts()[class]; f.Count != want {
			c.fail("extended.failures_by_class."+name+".count", "%d, but the report counts %d", f.Count, want)
		}
	}
	var perSecond int64
	for _, n := range x.Throughput.PerSecond {
		perSecond += n // each below 2^53: no overflow within a document's length
	}
	if r != nil && perSecond > int64(r.CompleteRequests) {
		c.fail("extended.throughput.per_second", "adds up to %d, more than the %d complete requests", perSecond, r.CompleteRequests)
	}
	if r != nil && int64(x.Throughput.Intervals) != r.TimeTakenUs/1e6 {
		c.fail("extended.throughput.intervals", "%d, but the run took %d whole seconds", x.Throughput.Intervals, r.TimeTakenUs/1e6)
	}
}

// apdex checks the APDEX section: thresholds 0 < T < F, counts of the
// recorded requests that add up, and the score they give.
func (c *checker) apdex(a *apdexSection, r *abReport, limit int64) {
	c.count("apdex.requests", int64(a.Requests), limit)
	n := int64(a.Satisfied) + int64(a.Tolerating) + int64(a.Frustrated)
	want := *a
	want.score() // the score and bound the counts give
	switch {
	case a.SatisfiedUs <= 0:
		c.fail("apdex.satisfied_us", "%d: T must be above 0", a.SatisfiedUs)
	case a.ToleratedUs <= a.SatisfiedUs:
		c.fail("apdex.tolerated_us", "%d: F must be above T (%d)", a.ToleratedUs, a.SatisfiedUs)
	case a.Satisfied < 0 || a.Tolerating < 0 || a.Frustrated < 0 || a.Failed < 0:
		c.fail("apdex", "satisfied, tolerating, frustrated and failed (%d, %d, %d, %d) must not be negative",
			a.Satisfied, a.Tolerating, a.Frustrated, a.Failed)
	case n != int64(a.Requests):
		c.fail("apdex.requests", "%d, but satisfied, tolerating and frustrated add up to %d", a.Requests, n)
	case r != nil && a.Requests != 0 && a.Requests != r.CompleteRequests:
		c.fail("apdex.requests", "%d, but report.complete_requests is %d", a.Requests, r.CompleteRequests)
	case a.Failed > a.Frustrated:
		c.fail("apdex.failed", "%d, more than the %d frustrated", a.Failed, a.Frustrated)
	case math.IsNaN(a.Score) || a.Score < 0 || a.Score > 1:
		c.fail("apdex.score", "%g is not within 0..1", a.Score)
	case a.Requests > 0 && !near(a.Score, want.Score):
		c.fail("apdex.score", "%g, but (satisfied + tolerating/2) / requests is %g", a.Score, want.Score)
	case a.Requests == 0 && (a.Score != 0 || a.Bound != "" || a.Source != ""):
		c.fail("apdex", "score, bound or source set with no request")
	case a.Requests > 0 && a.Bound != want.Bound:
		c.fail("apdex.bound", "%q, but %d requests failed (exact without failures, lower with)", a.Bound, a.Failed)
	case a.Requests > 0 && !slices.Contains(apdexSources[:], a.Source):
		c.fail("apdex.source", "%q is not exact, hdr_histogram or 1ms_buckets", a.Source)
	}
}

func (c *checker) rate(r *rateFigures, limit int64) {
	c.count("rate.sent", r.Sent, limit)
	c.count("rate.due_but_not_sent", r.DueButNotSent, limit)
	if r.OnSchedule > r.Sent {
		c.fail("rate.on_schedule", "%d, more than the %d sent", r.OnSchedule, r.Sent)
	}
	r.Lag.check(c, "rate.lag", limit, unitUs)
	r.Corrected.check(c, "rate.corrected", limit, unitUs)
	c.served("rate.corrected_percentage_served", r.CorrectedServed, nil)
}

// outstanding checks the requests in flight at the stop: as many ages as
// requests, no more failed than requests.
func (c *checker) outstanding(o *outstandingFigures, limit int64) {
	c.count("outstanding.requests", o.Requests, limit)
	o.Age.check(c, "outstanding.age", limit, unitUs)
	if o.CorrectedAge != nil {
		o.CorrectedAge.check(c, "outstanding.corrected_age", limit, unitUs)
	}
	switch {
	case o.Failed > o.Requests:
		c.fail("outstanding.failed", "%d, more than the %d requests", o.Failed, o.Requests)
	case o.Age.Count != o.Requests:
		c.fail("outstanding.age.count", "%d, but outstanding.requests is %d", o.Age.Count, o.Requests)
	case o.CorrectedAge != nil && o.CorrectedAge.Count != o.Requests:
		c.fail("outstanding.corrected_age.count", "%d, but outstanding.requests is %d", o.CorrectedAge.Count, o.Requests)
	}
}

// timeline checks the intervals: consecutive from the start, of gab's
// --interval at least, their requests adding up to the complete requests,
// each interval's latency in order with a histogram of its requests.
func (c *checker) timeline(tl *timelineSection, r *abReport, limit int64) {
	if min := client.MinInterval.Microseconds(); tl.IntervalUs < min {
		c.fail("timeline.interval_us", "%d is below gab's shortest --interval (%d µs)", tl.IntervalUs, min)
		return
	}
	var requests int64
	for j := range tl.Intervals {
		iv := &tl.Intervals[j]
		f := fmt.Sprintf("timeline.intervals[%d]", j)
		switch {
		case iv.StartUs != int64(j)*tl.IntervalUs:
			c.fail(f+".start_us", "%d, but interval %d starts at %d", iv.StartUs, j, int64(j)*tl.IntervalUs)
		case iv.LengthUs > tl.IntervalUs:
			c.fail(f+".length_us", "%d is longer than interval_us %d", iv.LengthUs, tl.IntervalUs)
		case tl.Corrected && iv.Corrected == nil:
			c.fail(f+".corrected", "absent in a corrected timeline")
		}
		c.count(f+".requests", iv.Requests, limit)
		c.count(f+".failures", iv.Failures, limit)
		switch {
		case iv.TLSHandshakes < 0 || iv.TLSHandshakes > iv.Requests:
			c.fail(f+".tls_handshakes", "%d is not within 0..requests (%d)", iv.TLSHandshakes, iv.Requests)
		case iv.TLSHandshakeUs < 0 || iv.TLSHandshakes == 0 && iv.TLSHandshakeUs != 0 ||
			iv.TLSHandshakeUs/max(iv.TLSHandshakes, 1) > samples.HistHighestUS:
			c.fail(f+".tls_handshake_us", "%d is not the time of %d handshakes", iv.TLSHandshakeUs, iv.TLSHandshakes)
		}
		if c.err != nil {
			return
		}
		requests += iv.Requests
		c.intervalLatency(f, &iv.IntervalLatency, iv.Requests)
		if iv.Corrected != nil {
			c.intervalLatency(f+".corrected", iv.Corrected, iv.Requests)
		}
	}
	if r != nil && requests != int64(r.CompleteRequests) {
		c.fail("timeline.intervals", "their requests add up to %d, but report.complete_requests is %d", requests, r.CompleteRequests)
	}
}

func (c *checker) intervalLatency(field string, l *IntervalLatency, requests int64) {
	if l.HistogramSameAs != "" {
		c.fail(field+".histogram_same_as", "%q is not the sums column of the interval's requests", l.HistogramSameAs)
		return
	}
	if requests == 0 {
		l.Histogram.check(c, field+".histogram", 0, unitUs)
		return
	}
	if l.MinUs > l.P50Us || l.P50Us > l.P90Us || l.P90Us > l.P99Us || l.P99Us > l.P999Us || l.P999Us > l.MaxUs {
		c.fail(field, "min_us, p50_us, p90_us, p99_us, p99_9_us and max_us (%d, %d, %d, %d, %d, %d) are out of order",
			l.MinUs, l.P50Us, l.P90Us, l.P99Us, l.P999Us, l.MaxUs)
		return
	}
	l.Histogram.check(c, field+".histogram", requests, unitUs)
}

// docPath is the path of a field while a document is walked.
type docPath struct {
	seg []pathSeg
}

type pathSeg struct {
	name  string // a field's JSON name or a map key; "" for a slice index
	index int
}

func (p *docPath) push(s pathSeg) { p.seg = append(p.seg, s) }
func (p *docPath) pop()           { p.seg = p.seg[:len(p.seg)-1] }

// last is the innermost field's name.
func (p *docPath) last() string {
	for i := len(p.seg) - 1; i >= 0; i-- {
		if p.seg[i].name != "" {
			return p.seg[i].name
		}
	}
	return ""
}

// String is the path as a refusal names it: report.failed_requests,
// timeline.intervals[3].requests.
func (p *docPath) String() string { return p.format(true) }

// Key is the path without slice indexes: every interval's requests share
// timeline.intervals.requests.
func (p *docPath) Key() string { return p.format(false) }

func (p *docPath) format(indexes bool) string {
	var b strings.Builder
	for _, s := range p.seg {
		switch {
		case s.name == "" && indexes:
			fmt.Fprintf(&b, "[%d]", s.index)
		case s.name != "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.name)
		}
	}
	return b.String()
}

// mayBeNegative: a shard's start delay (a clock ahead of --start-at's) and
// --fail-if's bounds and values.
func (p *docPath) mayBeNegative() bool {
	return p.last() == "start_delay_us" || len(p.seg) > 0 && p.seg[0].name == "thresholds"
}

// walkDocument calls leaf for every string and number reachable from v, a
// pointer to a decoded document (structs by their JSON names, slices, maps,
// pointers), with the leaf's path; strings and map values can be set.
func walkDocument(v reflect.Value, p *docPath, leaf func(*docPath, reflect.Value)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkDocument(v.Elem(), p, leaf)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous { // an embedded section's fields are the struct's
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" { // embedded: its fields are the struct's
				walkDocument(v.Field(i), p, leaf)
				continue
			}
			if name == "" {
				name = f.Name
			}
			p.push(pathSeg{name: name})
			walkDocument(v.Field(i), p, leaf)
			p.pop()
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			p.push(pathSeg{index: i})
			walkDocument(v.Index(i), p, leaf)
			p.pop()
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return
		}
		iter := v.MapRange()
		type entry struct{ key, val reflect.Value }
		var entries []entry
		for iter.Next() {
			entries = append(entries, entry{iter.Key(), iter.Value()})
		}
		for _, e := range entries {
			key := reflect.New(e.key.Type()).Elem()
			key.Set(e.key)
			leaf(p, key) // a key is a string of its map's field
			val := reflect.New(e.val.Type()).Elem()
			val.Set(e.val)
			p.push(pathSeg{name: key.String()})
			walkDocument(val, p, leaf)
			p.pop()
			if key.String() != e.key.String() {
				v.SetMapIndex(e.key, reflect.Value{})
			}
			v.SetMapIndex(key, val)
		}
	default:
		leaf(p, v)
	}
}
