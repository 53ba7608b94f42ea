package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/internal/samples"
)

// hostileHistogram is a 52-byte HDR histogram whose header claims 1..2^62 at
// 5 significant digits: a 49 MB counts array if decoded unchecked.
const hostileHistogram = "HISTFAAAAB14nJJpmSzMgACsUJrRAcqw/wChAQEAAP//PksCvA=="

// validShards are the documents of a random run's shards and their merge,
// each written and read back.
func validShards(t *testing.T, seed uint64) (shards []MergeInput, merged *Run) {
	t.Helper()
	r := randomShardedRun(rand.New(rand.NewPCG(seed, 2026)), 300, 3, 0)
	shards = r.shardDocuments(t, "run-v")
	m, _, err := Merge(shards, false, []string{"gab", "merge"})
	if err != nil {
		t.Fatal(err)
	}
	return shards, roundTrip(t, m)
}

// TestValidateAcceptsGabDocuments: what gab writes validates: a run with
// every section (extended, rate, timeline, percentiles), shards, their
// merge, a command line that never ran.
func TestValidateAcceptsGabDocuments(t *testing.T) {
	fixture, raw := fixtureDocument(t)
	if err := ValidateDocument(roundTrip(t, fixture)); err != nil {
		t.Errorf("fixture: %v", err)
	}
	if _, err := DecodeDocument("fixture.json", raw); err != nil {
		t.Errorf("fixture: %v", err)
	}
	for seed := uint64(1); seed <= 5; seed++ {
		shards, merged := validShards(t, seed)
		for _, m := range shards {
			if err := ValidateDocument(m.Doc); err != nil {
				t.Errorf("seed %d, %s: %v", seed, m.Name, err)
			}
		}
		if err := ValidateDocument(merged); err != nil {
			t.Errorf("seed %d, merged: %v", seed, err)
		}
	}
	if err := ValidateDocument(roundTrip(t, NotStarted([]string{"gab", "-n", "x"}, time.Unix(0, 0), "bad -n", 22))); err != nil {
		t.Errorf("not started: %v", err)
	}
}

// TestValidateRefusesInconsistentDocuments: numbers that do not add up are
// refused, the field named.
func TestValidateRefusesInconsistentDocuments(t *testing.T) {
	h := samples.NewHist()
	_ = h.RecordValues(5, 1<<60)
	huge, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	for _, c := range []struct {
		want   string
		mutate func(d *Run)
	}{
		{"report.failed_requests: -50 is negative", func(d *Run) { d.Report.FailedRequests = -50 }},
		{"report.complete_requests: -9223372036854775808 is negative", func(d *Run) { d.Report.CompleteRequests = math.MinInt64 }},
		{"report.complete_requests: 1000000000, but the sums count", func(d *Run) { d.Report.CompleteRequests = 1e9 }},
		{"report.failed_requests: 0, but its classes (connect, receive, length, exceptions) add up to", func(d *Run) {
			d.Report.FailedRequests, d.Report.Failures.Receive = 0, 3
		}},
		{"sums.total.sum_us: 6000000000000 is not within count × [min_us, max_us]", func(d *Run) { d.Sums.Total.SumUs = 6e12 }},
		{"sums.total.min_us:", func(d *Run) { d.Sums.Total.MinUs = d.Sums.Total.MaxUs + 1 }},
		{"sums.total.sum_squares_us2:", func(d *Run) { d.Sums.Total.SumSquaresUs2 = "1" }},
		{"sums.total.histogram: holds 1152921504606846976 values for a count of", func(d *Run) {
			d.Sums.Total.Histogram.Data = string(huge)
		}},
		{"sums.connect.histogram: claims 1..4611686018427387904 at 5 significant digits, beyond gab's", func(d *Run) {
			d.Sums.Connect.Histogram.Data = hostileHistogram
		}},
		{"report.connection_times.total.min_us:", func(d *Run) { d.Report.ConnectionTimes.Total.MinUs = d.Report.ConnectionTimes.Total.MaxUs + 1 }},
		{"report.connection_times.total.mean_us:", func(d *Run) { d.Report.ConnectionTimes.Total.MeanUs++ }},
		{"report.time_taken_us: 9223372036854775807 is beyond what a gab document holds (2^53)", func(d *Run) { d.Report.TimeTakenUs = math.MaxInt64 }},
		{"report.time_taken_s:", func(d *Run) { d.Report.TimeTakenS *= 2 }},
		{"report.requests_per_second:", func(d *Run) { d.Report.RequestsPerSecond = 6e13 }},
		{"report.connection_times.total.sd_us: 1e+300 is beyond", func(d *Run) { d.Report.ConnectionTimes.Total.SDUs = 1e300 }},
		{"shard.count: 2147483648 is not a number of shards (1 to 200000)", func(d *Run) { d.Shard.Count = 1 << 31 }},
		{"shard.index: 3 is not below shard.count 3", func(d *Run) { d.Shard.Index = 3 }},
		{"ending: \"done\" is not one of gab's endings", func(d *Run) { d.Ending = "done" }},
		{"start_time: \"yesterday\" is not an RFC 3339 time", func(d *Run) { d.StartTime = "yesterday" }},
	} {
		shards, _ := validShards(t, 7)
		d := shards[0].Doc
		c.mutate(d)
		err := ValidateDocument(roundTrip(t, d))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}

	fixture, _ := fixtureDocument(t)
	for _, c := range []struct {
		want   string
		mutate func(d *Run)
	}{
		{"extended.phases.total: min_us, median_us, p90_us, p99_us, p99_9_us and max_us (1000, 5007, 9015, 10010, 10009, 10009) are out of order", func(d *Run) { d.Extended.Phases.Total.P99Us = d.Extended.Phases.Total.MaxUs + 1 }},
		{"extended.phases.waiting.sum_us:", func(d *Run) { d.Extended.Phases.Waiting.SumUs = 1 }},
		{"extended.phases.waiting.sd_us:", func(d *Run) { d.Extended.Phases.Waiting.SDUs = 1e9 }},
		{"extended.phases.total.count: 11, but report.complete_requests is 10", func(d *Run) {
			t := &d.Extended.Phases.Total
			t.Count, t.SumUs = 11, t.SumUs+t.MaxUs
			t.MeanUs = float64(t.SumUs) / 11
		}},
		{"extended.status_counts: \"2\\x1b00\" is not a status code", func(d *Run) { d.Extended.StatusCounts["2\x1b00"] = 1 }},
		{"extended.engine: \"turbo\" is not one of gab's I/O engines", func(d *Run) { d.Extended.Engine = "turbo" }},
		{"extended.failures_by_class.connect.count: 7, but the report counts 1", func(d *Run) {
			d.Extended.FailuresByClass["connect"] = failureClass{Count: 7}
		}},
		{"rate.on_schedule: 11, more than the 10 sent", func(d *Run) { d.Rate.OnSchedule = 11 }},
		{"timeline.interval_us: 1 is below gab's shortest --interval", func(d *Run) { d.Timeline.IntervalUs = 1 }},
		{"timeline.intervals[1].start_us: 5000000, but interval 1 starts at 1000000", func(d *Run) { d.Timeline.Intervals[1].StartUs = 5e6 }},
		{"timeline.intervals[0].histogram: holds 4 values for a count of 5", func(d *Run) {
			iv := &d.Timeline.Intervals[0]
			iv.Requests++
		}},
		{"timeline.intervals[0].tls_handshakes: 5 is not within 0..requests (4)", func(d *Run) { d.Timeline.Intervals[0].TLSHandshakes = 5 }},
		{"timeline.intervals[0].tls_handshake_us: 7 is not the time of 0 handshakes", func(d *Run) { d.Timeline.Intervals[0].TLSHandshakeUs = 7 }},
		{"timeline.intervals[1].sent_bytes: -1 is negative", func(d *Run) { d.Timeline.Intervals[1].SentBytes = new(int64(-1)) }},
		{"timeline.intervals[0].sent_bytes: 1152921504606846976 is beyond what a gab document holds (2^53)", func(d *Run) {
			d.Timeline.Intervals[0].SentBytes = new(int64(1 << 60))
		}},
		{"percentiles[0].percent: 101 is above 100", func(d *Run) { d.Percentiles[0].Percent = 101 }},
	} {
		d := roundTrip(t, fixture)
		c.mutate(d)
		err := ValidateDocument(roundTrip(t, d))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
}

// TestValidateHostileHistogramIsCheap: a document whose histogram header
// claims 1..2^62 at 5 digits is refused in about what reading a valid
// document's histograms costs, not the 49 MB its header asks for.
func TestValidateHostileHistogramIsCheap(t *testing.T) {
	shards, _ := validShards(t, 8)
	valid, err := json.Marshal(shards[0].Doc)
	if err != nil {
		t.Fatal(err)
	}
	hostile := bytes.Replace(valid, []byte(shards[0].Doc.Sums.Connect.Histogram.Data), []byte(hostileHistogram), 1)
	var before, after runtime.MemStats
	measure := func(raw []byte) (uint64, error) {
		runtime.ReadMemStats(&before)
		_, err := DecodeDocument("d.json", raw)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, err
	}
	validCost, err := measure(valid)
	if err != nil {
		t.Fatal(err)
	}
	hostileCost, err := measure(hostile)
	if err == nil || !strings.Contains(err.Error(), "d.json: sums.connect.histogram: claims 1..4611686018427387904 at 5") {
		t.Fatalf("hostile histogram: %v", err)
	}
	if hostileCost > validCost {
		t.Errorf("refusing the hostile histogram allocated %d bytes, more than reading a valid document (%d)", hostileCost, validCost)
	}
}

// TestDecodeDocumentEscapesStrings: the strings of a document reach the
// terminal with no control byte: escapes, OSC 52 and newlines are written as
// \xNN, on one line.
func TestDecodeDocumentEscapesStrings(t *testing.T) {
	shards, _ := validShards(t, 9)
	d := shards[0].Doc
	d.Report.ServerSoftware = "evil\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\nComplete requests:      999"
	d.Shard.RunID = "r\x1b]0;title\x07\r\n"
	d.Extended = &extendedFigures{FailuresByClass: map[string]failureClass{"connect": {Count: d.Report.Failures.Connect, FirstError: "a\n\x1bb"}}}
	raw, _ := json.Marshal(d)
	back, err := DecodeDocument("d.json", raw)
	if err == nil {
		t.Fatal("an extended section without phases validated") // the phases' counts differ from the report's
	}
	d.Extended = nil
	raw, _ = json.Marshal(d)
	if back, err = DecodeDocument("d\x1b.json", raw); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{back.Report.ServerSoftware, back.Shard.RunID} {
		if strings.ContainsAny(s, "\x1b\x07\n\r") {
			t.Errorf("%q reaches the terminal raw", s)
		}
	}
	if want := `evil\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\x0aComplete requests:      999`; back.Report.ServerSoftware != want {
		t.Errorf("server_software %q, want %q", back.Report.ServerSoftware, want)
	}
	_, err = DecodeDocument("d\x1b.json", []byte("{"))
	if err == nil || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("the file's name reaches the terminal raw: %v", err)
	}
}

// TestMergeRefusesFarApartStarts: documents that claim to start in years 1
// and 9999 are refused at once, not merged second by second.
func TestMergeRefusesFarApartStarts(t *testing.T) {
	shards, _ := validShards(t, 10)
	shards[0].Doc.StartTime = "0001-01-01T00:00:00Z"
	shards[2].Doc.StartTime = "9999-12-31T23:59:59Z"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := Merge(shards, true, nil)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "start_time: shard-0.json starts at 0001-01-01T00:00:00Z, shard-2.json at 9999-12-31T23:59:59Z: more than 24h0m0s apart") {
		t.Errorf("merge: %v", err)
	}
	if used := after.TotalAlloc - before.TotalAlloc; used > 16<<20 {
		t.Errorf("refusing allocated %d bytes", used)
	}
	shards[0].Doc.StartTime = shards[1].Doc.StartTime
	shards[2].Doc.StartTime = "2026-12-01T23:59:59Z" // within a day: merged
	for _, m := range shards {
		m.Doc.Extended = &extendedFigures{Throughput: throughputFigures{PerSecond: []int64{1}}}
	}
	m, _, err := Merge(shards, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Extended.Throughput.PerSecond); n > 86400+1 {
		t.Errorf("%d seconds of throughput for a day", n)
	}
}

// TestMergeMissingShardsOfAHugeCount: two documents of a run of maxShards
// shards are refused with a short line, the missing ones counted, not
// listed.
func TestMergeMissingShardsOfAHugeCount(t *testing.T) {
	shards, _ := validShards(t, 11)
	for _, m := range shards {
		m.Doc.Shard.Count = maxShards
	}
	_, _, err := Merge(shards[:2], false, nil)
	want := fmt.Sprintf("shard(s) 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, … (%d in all) of %d missing", maxShards-2, maxShards)
	if err == nil || !strings.Contains(err.Error(), want) || len(err.Error()) > 1000 {
		t.Errorf("merge: %.2000v", err)
	}
}

// TestMergeRefusesSumsThatOverflow: figures each below 2^53 but adding up
// past 2^62 over many documents are refused, not wrapped around.
func TestMergeRefusesSumsThatOverflow(t *testing.T) {
	shards, _ := validShards(t, 12)
	shards[0].Doc.Report.TotalTransferredBytes = 1 << 53
	in := make([]MergeInput, 600)
	for i := range in {
		in[i] = MergeInput{Name: fmt.Sprintf("s%d.json", i), Doc: shards[0].Doc}
	}
	_, _, err := Merge(in, true, nil)
	if err == nil || !strings.Contains(err.Error(), "report.total_transferred_bytes: the documents' values add up to") {
		t.Errorf("merge: %v", err)
	}
}

// TestMergeTimelinesFarApart: timelines hours apart are not merged into
// thousands of empty intervals; a note says why.
func TestMergeTimelinesFarApart(t *testing.T) {
	shards, _ := validShards(t, 13)
	for k, m := range shards {
		tl, _ := randomTimeline(2, 100*time.Millisecond, uint64(k))
		m.Doc.Timeline = tl.record()
		m.Doc.StartTime = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(k) * 10 * time.Hour).Format(time.RFC3339Nano)
	}
	m, mNotes, err := Merge(shards, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Timeline != nil || !strings.Contains(strings.Join(mNotes, "\n"), "no timeline: the documents' timelines span 720002 intervals") {
		t.Errorf("notes %q", mNotes)
	}
}

// FuzzDecodeDocument: no input panics the decoder; a document it accepts
// merges (when it has what a merge needs) and prints without NaN, infinite or
// negative figures.
func FuzzDecodeDocument(f *testing.F) {
	_, fixture := extFixture(50, 99.9)
	var seed bytes.Buffer
	_ = WriteJSON(&seed, fixture)
	f.Add(seed.Bytes())
	r := randomShardedRun(rand.New(rand.NewPCG(3, 2026)), 40, 2, 0)
	for _, res := range r.shards {
		o := mergeOptions(2)
		o.Run = &RunInfo{URL: "http://127.0.0.1:8080/x", Method: "GET", Protocol: "http1.0", Requests: res.Complete, Concurrency: 2}
		o.Shard = &Shard{Index: 0, Count: 1, RunID: "f", TotalRequests: res.Complete, TotalConcurrency: 2}
		var b bytes.Buffer
		_ = WriteJSON(&b, Summarize(res, o))
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := DecodeDocument("f.json", raw)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\x1b\n\r\x07") {
				t.Fatalf("a raw control byte in %q", err)
			}
			return
		}
		if err := ValidateDocument(d); err != nil {
			t.Fatalf("validated once, not twice: %v", err)
		}
		if d.Report == nil || d.Sums == nil || d.Run == nil {
			return
		}
		m, _, err := Merge([]MergeInput{{Name: "f.json", Doc: d}}, true, nil)
		if err != nil {
			return
		}
		s := m
		c := &s.Report.counters
		for _, n := range []int{c.CompleteRequests, c.FailedRequests, c.Failures.Connect, c.Failures.Receive, c.Failures.Length, c.Failures.Exceptions, s.local.count} {
			if n < 0 {
				t.Fatalf("negative count in %+v", s)
			}
		}
		var out bytes.Buffer
		if err := WriteText(&out, s); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&out, m); err != nil {
			t.Fatal(err)
		}
		if text := out.String(); strings.Contains(text, "NaN") || strings.Contains(text, "Inf") || strings.Contains(text, "\x1b") {
			t.Fatalf("merged output:\n%s", text)
		}
		if _, err := DocumentChartData(d); err != nil {
			return
		}
	})
}

// TestThroughputOfAnyLength: a document may claim a time taken of centuries;
// the throughput of a merge is computed in time and memory of its
// per-second counts, with the missing seconds as zeros.
func TestThroughputOfAnyLength(t *testing.T) {
	tp := throughputOf([]int64{4, 5, 1}, 5*time.Second)
	if tp.Intervals != 5 || tp.MeanPerS != 2 || math.Abs(tp.SDPerS-math.Sqrt(5.5)) > 1e-12 {
		t.Errorf("%+v, want 5 intervals, mean 2, sd √5.5", tp)
	}
	long := time.Duration(math.MaxInt64)
	if allocs := testing.AllocsPerRun(3, func() { tp = throughputOf([]int64{4, 5, 1}, long) }); allocs != 0 {
		t.Errorf("%v allocations", allocs)
	}
	if n := int(long / time.Second); tp.Intervals != n || tp.MeanPerS != 10/float64(n) {
		t.Errorf("%+v over %d seconds", tp, n)
	}
}
