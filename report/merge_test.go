package report

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/internal/samples"
)

// shardedRun is a random run and the same requests split into shards.
type shardedRun struct {
	whole  *client.Result
	shards []*client.Result
	conc   []int
	values [4][]int64 // every request's column values, for the true ranks
	apdex  *Apdex     // --apdex of the shards' documents
}

func randomShardedRun(rng *rand.Rand, n, shards, limit int) *shardedRun {
	base := time.Date(2026, 12, 1, 2, 3, 4, 0, time.UTC)
	r := &shardedRun{whole: &client.Result{Ending: client.EndCompleted, StatusCounts: map[int]int{}}}
	r.whole.Samples = samples.New(n, limit)
	var first, last time.Time
	for k := 0; k < shards; k++ {
		res := &client.Result{Ending: client.EndCompleted, ServerSoftware: "fixture/1.0", DocLength: 100,
			StatusCounts: map[int]int{}, Samples: samples.New(n, limit)}
		res.Start = base.Add(time.Duration(rng.IntN(50_000)) * time.Microsecond)
		res.Elapsed = time.Duration(100_000+rng.IntN(2_000_000)) * time.Microsecond
		res.Failed.Connect, res.Failed.Receive = rng.IntN(3), rng.IntN(3)
		res.Failed.Total = res.Failed.Connect + res.Failed.Receive
		res.WriteErrors, res.Non2xx = rng.IntN(2), rng.IntN(4)
		if k == 0 || res.Start.Before(first) {
			first = res.Start
		}
		if end := res.Start.Add(res.Elapsed); end.After(last) {
			last = end
		}
		r.shards = append(r.shards, res)
		r.conc = append(r.conc, 1+rng.IntN(4))
	}
	for i := 0; i < n; i++ {
		k := i % shards
		if i >= shards {
			k = rng.IntN(shards)
		}
		conn := uint32(rng.IntN(3000))
		wait := uint32(rng.ExpFloat64() * 20_000)
		if rng.IntN(50) == 0 {
			wait += uint32(rng.IntN(3_000_000)) // a slow tail
		}
		smp := samples.Sample{Start: uint32(i / 10), Connect: conn, Wait: wait, Total: conn + wait + uint32(rng.IntN(2000))}
		res := r.shards[k]
		res.Samples.Put(res.Samples.Len(), smp, nil)
		r.whole.Samples.Put(r.whole.Samples.Len(), smp, nil)
		res.Complete++
		bytes := int64(150 + rng.IntN(50))
		res.TotalRead += bytes
		res.BodyRead += 100 // DocLength: without -l another length is a length failure
		res.TotalSent += 80
		res.KeepAlive++
		res.StatusCounts[200]++
		for c := range r.values {
			r.values[c] = append(r.values[c], int64(smp.Value(column(c))))
		}
	}
	w := r.whole
	w.Start, w.Elapsed, w.ServerSoftware, w.DocLength = first, last.Sub(first), "fixture/1.0", 100
	for _, s := range r.shards {
		w.Complete += s.Complete
		w.Failed.Connect += s.Failed.Connect
		w.Failed.Receive += s.Failed.Receive
		w.Failed.Total += s.Failed.Total
		w.WriteErrors += s.WriteErrors
		w.Non2xx += s.Non2xx
		w.KeepAlive += s.KeepAlive
		w.TotalRead += s.TotalRead
		w.BodyRead += s.BodyRead
		w.TotalSent += s.TotalSent
	}
	for c := range r.values {
		slices.Sort(r.values[c])
	}
	return r
}

func mergeOptions(conc int) Options {
	return Options{Host: "127.0.0.1", Port: 8080, Path: "/x", Concurrency: conc, KeepAlive: true, BodySent: true}
}

// shardDocuments writes each shard's document and reads it back, as gab merge does.
func (r *shardedRun) shardDocuments(t *testing.T, runID string) []MergeInput {
	t.Helper()
	total := 0
	for _, c := range r.conc {
		total += c
	}
	var out []MergeInput
	for k, res := range r.shards {
		o := mergeOptions(r.conc[k])
		o.Apdex = r.apdex
		o.Run = &RunInfo{
			URL: "http://127.0.0.1:8080/x", Method: "GET", RequestSHA256: "ab12", Protocol: "http1.0",
			Requests: res.Complete, Concurrency: r.conc[k],
		}
		o.Shard = &Shard{Index: k, Count: len(r.shards), RunID: runID, TotalRequests: r.whole.Complete, TotalConcurrency: total}
		d := Summarize(res, o)
		out = append(out, MergeInput{Name: "shard-" + string(rune('0'+k)) + ".json", Doc: roundTrip(t, d)})
	}
	return out
}

func roundTrip(t *testing.T, d *Run) *Run {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJSON(&b, d); err != nil {
		t.Fatal(err)
	}
	var back Run
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// trueRank is ab's value at a rank from the exact sorted values.
func trueMedian(v []int64) int64 {
	lo, hi := medianIndexes(len(v))
	return (v[lo] + v[hi]) / 2
}

// TestMergeEqualsSingleRun is the property: for random runs split into N
// shards, the merged report equals the single run's on every exact figure, and
// its medians and percentiles are within the stated precision of the true ones.
func TestMergeEqualsSingleRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2026))
	for trial := 0; trial < 24; trial++ {
		n := 1 + rng.IntN(3000)
		shards := 1 + rng.IntN(min(8, n))
		limit := 0
		if trial%4 == 3 {
			limit = 1 + rng.IntN(n) // past the exact store: 1 ms buckets
		}
		r := randomShardedRun(rng, n, shards, limit)
		conc := 0
		for _, c := range r.conc {
			conc += c
		}
		want := Summarize(r.whole, mergeOptions(conc))
		m, _, err := Merge(r.shardDocuments(t, "run-1"), false, nil)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		got := m
		exact := func(what string, g, w any) {
			if g != w {
				t.Errorf("trial %d (n %d, %d shards, limit %d): %s = %v, single run %v", trial, n, shards, limit, what, g, w)
			}
		}
		gr, wr := got.Report, want.Report
		exact("counters", gr.counters, wr.counters)
		exact("concurrency", gr.ConcurrencyLevel, wr.ConcurrencyLevel)
		exact("time taken", gr.TimeTakenUs, wr.TimeTakenUs)
		exact("rates", [...]float64{gr.RequestsPerSecond, gr.TimePerRequestMs, gr.TimePerRequestAllMs, gr.TransferReceivedKBPerS, gr.TransferSentKBPerS, gr.TransferTotalKBPerS},
			[...]float64{wr.RequestsPerSecond, wr.TimePerRequestMs, wr.TimePerRequestAllMs, wr.TransferReceivedKBPerS, wr.TransferSentKBPerS, wr.TransferTotalKBPerS})
		exact("count", got.local.count, want.local.count)
		exact("html table", got.local.html, want.local.html)
		tol := func(v int64) int64 {
			if limit > 0 {
				return 500 + v/1000 + 1 // 1 ms buckets, then the histogram's 3 digits
			}
			return v/1000 + 1 // 3 significant digits
		}
		for c := column(0); c < 4; c++ {
			g, w := gr.ConnectionTimes.column(c), wr.ConnectionTimes.column(c)
			exact(columnName(c)+" min", g.MinUs, w.MinUs)
			exact(columnName(c)+" max", g.MaxUs, w.MaxUs)
			exact(columnName(c)+" mean", g.MeanUs, w.MeanUs)
			if math.Abs(g.SDUs-w.SDUs) > 1e-9*max(w.SDUs, 1) {
				t.Errorf("trial %d: %s sd %v, single run %v", trial, columnName(c), g.SDUs, w.SDUs)
			}
			truth := trueMedian(r.values[c])
			if d := g.MedianUs - truth; d < -tol(truth) || d > tol(truth) {
				t.Errorf("trial %d: %s median %d µs, true %d", trial, columnName(c), g.MedianUs, truth)
			}
		}
		for i, p := range gr.PercentageServed {
			truth := r.values[totalColumn][percentileIndex(n, int(p.Percent))]
			if d := p.TotalUs - truth; d < -tol(truth) || d > tol(truth) {
				t.Errorf("trial %d: %v%% = %d µs, true %d", trial, p.Percent, p.TotalUs, truth)
			}
			exact("percent row", p.Percent, wr.PercentageServed[i].Percent)
		}
		if !strings.Contains(got.local.precision, "within") {
			t.Errorf("no precision line: %q", got.local.precision)
		}
		// The merged document is a document of the same schema with the same figures.
		d := roundTrip(t, m)
		exact("doc complete", d.Report.CompleteRequests, wr.CompleteRequests)
		exact("doc mean", d.Report.ConnectionTimes.Total.MeanUs, wr.ConnectionTimes.Total.MeanUs)
		exact("doc total count", d.Sums.Total.Count, int64(n))
		exact("doc shards", len(d.Shard.Merged), shards)
	}
}

func TestMergeRefusals(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := randomShardedRun(rng, 200, 4, 0)
	docs := r.shardDocuments(t, "run-1")
	other := randomShardedRun(rng, 200, 4, 0).shardDocuments(t, "run-2")
	cases := []struct {
		name string
		in   []MergeInput
		want string
	}{
		{"missing", docs[:3], "shard(s) 3 of 4 missing"},
		{"duplicate", append(docs[:4:4], docs[1]), "shard 1/4 appears 2 times"},
		{"two runs", []MergeInput{docs[0], docs[1], docs[2], other[3]}, "documents from different runs"},
	}
	url := *docs[2].Doc
	urlRun := *url.Run
	urlRun.URL = "http://127.0.0.1:9/y"
	url.Run = &urlRun
	cases = append(cases, struct {
		name string
		in   []MergeInput
		want string
	}{"url", []MergeInput{docs[0], docs[1], {"u.json", &url}, docs[3]}, "URL http://127.0.0.1:9/y, not http://127.0.0.1:8080/x"})
	for _, c := range cases {
		_, _, err := Merge(c.in, false, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--force") {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
			continue
		}
		m, mNotes, err := Merge(c.in, true, nil)
		if err != nil || !strings.Contains(strings.Join(mNotes, "\n"), "--force: merged although") || !m.Shard.Forced {
			t.Errorf("%s --force: %v", c.name, err)
		}
	}
	newer := *docs[0].Doc
	newer.SchemaVersion = SchemaVersion + 1
	empty := *docs[1].Doc
	empty.Report, empty.Ending = nil, "not_started"
	_, _, err := Merge([]MergeInput{{"new.json", &newer}, {"empty.json", &empty}, docs[2], docs[3]}, true, nil)
	if err == nil || !strings.Contains(err.Error(), "new.json: schema_version") || !strings.Contains(err.Error(), "empty.json: has no report") {
		t.Errorf("hard refusals: %v", err)
	}
}

// TestShardAndMergedDocumentsMatchSchema: a shard's document (run, shard and
// sums sections) and a merged one (with its inputs and merged extended
// figures) are documents of docs/json-schema.json.
func TestShardAndMergedDocumentsMatchSchema(t *testing.T) {
	schema := loadSchema(t)
	rng := rand.New(rand.NewPCG(3, 4))
	r := randomShardedRun(rng, 300, 3, 0)
	for _, res := range r.shards {
		x := &client.ExtraResult{PerSecond: []int64{int64(res.Complete)}}
		for p := range x.Phases {
			x.Phases[p] = samples.NewDist()
			x.Phases[p].Add(int64(100 * p))
		}
		res.Extra = x
	}
	docs := r.shardDocuments(t, "run-s")
	at := time.Date(2026, 12, 1, 2, 3, 3, 0, time.UTC).Format(time.RFC3339Nano)
	delay := int64(1234)
	for _, d := range docs {
		d.Doc.Shard.StartAt, d.Doc.Shard.StartDelayUs = at, &delay
	}
	m, _, err := Merge(docs, false, []string{"gab", "merge", "a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Extended == nil || m.Extended.Phases.Total.Count != 3 || m.Shard.Merged[0].File == "" {
		t.Errorf("merged document: %+v", m)
	}
	for name, d := range map[string]*Run{"shard": docs[0].Doc, "merged": m} {
		var b bytes.Buffer
		if err := WriteJSON(&b, d); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"run": {`, `"shard": {`, `"sums": {`, `"sum_squares_us2": "`} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s document lacks %s", name, want)
			}
		}
		var errs []string
		validate(schema, schema, decodeGeneric(t, b.Bytes()), "$", &errs)
		for _, e := range errs {
			t.Errorf("%s: %s", name, e)
		}
	}
}

// gab merge carries the shards' timelines into the merged document, merged
// by wall-clock interval, their requests and bytes read and sent summed;
// when only some documents' intervals count the bytes sent (one of an
// earlier gab) no merged interval has them; when only some documents have a
// timeline (a --force merge of different runs) the merged document has none
// and a note says why.
func TestMergeCarriesTimelines(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 2026))
	r := randomShardedRun(rng, 600, 3, 0)
	in := r.shardDocuments(t, "run-tl")
	var want, wantRead, wantSent int64
	for k := range in {
		tl, _ := randomTimeline(3+k, time.Second, uint64(40+k))
		in[k].Doc.StartTime = tl.Start.Add(time.Duration(k) * 100 * time.Millisecond).Format(time.RFC3339Nano)
		in[k].Doc.Timeline = roundTrip(t, &Run{Timeline: tl.record()}).Timeline
		for _, iv := range in[k].Doc.Timeline.Intervals {
			want += iv.Requests
			wantRead += iv.Bytes
			wantSent += *iv.SentBytes
		}
	}
	m, mNotes, err := Merge(in, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl := roundTrip(t, m).Timeline
	if tl == nil {
		t.Fatalf("merged document has no timeline; notes %q", mNotes)
	}
	var got, read, sent int64
	for i, iv := range tl.Intervals {
		got += iv.Requests
		read += iv.Bytes
		if iv.SentBytes == nil {
			t.Fatalf("merged interval %d has no sent_bytes", i)
		}
		sent += *iv.SentBytes
	}
	if got != want || read != wantRead || sent != wantSent || tl.IntervalUs != 1_000_000 || len(tl.Intervals) != 5 {
		t.Errorf("merged timeline: %d requests, %d bytes read and %d sent in %d intervals of %d µs, want %d, %d and %d in 5 of 1 s",
			got, read, sent, len(tl.Intervals), tl.IntervalUs, want, wantRead, wantSent)
	}
	for _, n := range mNotes {
		if strings.Contains(n, "timeline") {
			t.Errorf("note %q on a clean merge", n)
		}
	}

	in[2].Doc.Timeline.Intervals[1].SentBytes = nil
	if m, _, err = Merge(in, false, nil); err != nil {
		t.Fatal(err)
	}
	for i, iv := range m.Timeline.Intervals {
		if iv.SentBytes != nil {
			t.Errorf("merged interval %d: sent_bytes %d, though a document's interval lacks them", i, *iv.SentBytes)
		}
	}

	in[1].Doc.Timeline = nil
	m, mNotes, err = Merge(in, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Timeline != nil {
		t.Error("merged a timeline that one document lacks")
	}
	if !slices.ContainsFunc(mNotes, func(n string) bool { return strings.Contains(n, "only 2 of the 3 documents") }) {
		t.Errorf("no note on the missing timeline: %q", mNotes)
	}
}

// gab merge carries the documents' I/O engine (--engine): theirs when they
// agree, "mixed" with a note that counts them when they differ, none with
// a note when only some name one; the merged document validates and
// matches the schema either way.
func TestMergeCarriesEngine(t *testing.T) {
	schema := loadSchema(t)
	for _, c := range []struct {
		engines []string
		want    string
		note    string
	}{
		{[]string{"epoll", "epoll", "epoll"}, "epoll", ""},
		{[]string{"uring", "epoll", "uring"}, "mixed", "I/O engine:             mixed (epoll in 1, uring in 2 documents)"},
		{[]string{"epoll", "", "epoll"}, "", "no I/O engine: only 2 of the 3 documents name one"},
		{[]string{"", "", ""}, "", ""},
	} {
		r := randomShardedRun(rand.New(rand.NewPCG(5, 6)), 300, 3, 0)
		for k, res := range r.shards {
			x := &client.ExtraResult{PerSecond: []int64{int64(res.Complete)}}
			for p := range x.Phases {
				x.Phases[p] = samples.NewDist()
				for _, smp := range res.Samples.Exact() {
					x.Phases[p].Add(int64(smp.Total))
				}
			}
			res.Extra, res.Engine = x, c.engines[k]
		}
		m, notes, err := Merge(r.shardDocuments(t, "run-e"), false, nil)
		if err != nil {
			t.Fatal(err)
		}
		back := roundTrip(t, m)
		if back.Extended == nil {
			t.Fatalf("%q: no extended section merged", c.engines)
		}
		if back.Extended.Engine != c.want {
			t.Errorf("%q: merged engine %q, want %q", c.engines, back.Extended.Engine, c.want)
		}
		var engineNotes []string
		for _, n := range notes {
			if strings.Contains(n, "engine") {
				engineNotes = append(engineNotes, n)
			}
		}
		if c.note == "" && len(engineNotes) > 0 || c.note != "" && !slices.Equal(engineNotes, []string{c.note}) {
			t.Errorf("%q: notes %q, want %q", c.engines, engineNotes, c.note)
		}
		if err := ValidateDocument(back); err != nil {
			t.Errorf("%q: %v", c.engines, err)
		}
		var b bytes.Buffer
		if err := WriteJSON(&b, m); err != nil {
			t.Fatal(err)
		}
		var errs []string
		validate(schema, schema, decodeGeneric(t, b.Bytes()), "$", &errs)
		for _, e := range errs {
			t.Errorf("%q: %s", c.engines, e)
		}
	}
}
