package report

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gab/internal/threshold"
)

// TestMergeApdexIsOneRunsOverTheSameRequests is the property: for random runs
// split into shards, each written with --apdex, the merged APDEX has the
// counts, score, bound and source of one run over the same requests; where
// a shard failed more requests than it satisfied, the merged score is a
// closer lower bound (each shard's failures come from its own satisfied
// requests) with the same requests and failures.
func TestMergeApdexIsOneRunsOverTheSameRequests(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 2026))
	ap := &Apdex{T: 15 * time.Millisecond, F: 60 * time.Millisecond}
	tighter := 0
	for trial := 0; trial < 24; trial++ {
		n := 1 + rng.IntN(2000)
		r := randomShardedRun(rng, n, 1+rng.IntN(min(6, n)), 0)
		r.apdex = ap
		conc := 0
		for _, c := range r.conc {
			conc += c
		}
		o := mergeOptions(conc)
		o.Apdex = ap
		want := Summarize(r.whole, o).Apdex
		docs := r.shardDocuments(t, "run-a")
		m, _, err := Merge(docs, false, nil)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		got := m.Apdex
		if got == nil {
			t.Fatalf("trial %d: the merged run has no APDEX", trial)
		}
		own := true // every shard had at least as many satisfied requests as failures
		for _, d := range docs {
			rp, a := d.Doc.Report, d.Doc.Apdex
			if rp.FailedRequests-rp.Failures.Connect+rp.Non2xxResponses > a.Satisfied+a.Failed {
				own = false
			}
		}
		switch {
		case got.Requests != want.Requests || got.Source != "exact" || got.SatisfiedUs != want.SatisfiedUs || got.ToleratedUs != want.ToleratedUs:
			t.Errorf("trial %d: merged %+v, one run %+v", trial, *got, *want)
		case *got == *want:
		case own:
			t.Errorf("trial %d: merged %+v, one run %+v", trial, *got, *want)
		case got.Score < want.Score || got.Failed > want.Failed:
			t.Errorf("trial %d: merged %+v, not a closer bound than one run's %+v", trial, *got, *want)
		default:
			tighter++
		}
		if v, ok := m.thresholdValue(threshold.Metric{Key: "apdex", Kind: threshold.Figure}); !ok || v != got.Score {
			t.Errorf("trial %d: the apdex figure %v %v, the section's score %v", trial, v, ok, got.Score)
		}
		if err := ValidateDocument(roundTrip(t, m)); err != nil {
			t.Errorf("trial %d: the merged document: %v", trial, err)
		}
	}
	t.Logf("%d of 24 trials had a closer lower bound than one run's", tighter)
}

// TestMergeApdexThresholdsDiffer: documents with other thresholds, or without
// --apdex beside some with it, are refused unless --force, which merges them
// without an APDEX and says why.
func TestMergeApdexThresholdsDiffer(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	r := randomShardedRun(rng, 300, 3, 0)
	r.apdex = &Apdex{T: 15 * time.Millisecond, F: 60 * time.Millisecond}
	docs := r.shardDocuments(t, "run-a")
	r.apdex = &Apdex{T: 20 * time.Millisecond, F: 60 * time.Millisecond}
	other := r.shardDocuments(t, "run-a")
	r.apdex = nil
	none := r.shardDocuments(t, "run-a")
	for _, c := range []struct {
		in         []MergeInput
		want, note string
	}{
		{[]MergeInput{docs[0], other[1], docs[2]}, "shard-1.json: --apdex T 20ms, F 60ms, not T 15ms, F 60ms as in shard-0.json",
			"no APDEX: the documents' thresholds differ (T 15ms, F 60ms and T 20ms, F 60ms)"},
		{[]MergeInput{docs[0], docs[1], none[2]}, "shard-2.json: written without --apdex, shard-0.json with it",
			"no APDEX: only some of the documents have one"},
		{[]MergeInput{none[0], docs[1], none[2]}, "shard-0.json: written without --apdex, shard-1.json with it",
			"no APDEX: only some of the documents have one"},
	} {
		_, _, err := Merge(c.in, false, nil)
		var me *mergeError
		if !errors.As(err, &me) || !me.Forceable || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v; want a forceable refusal with %q", err, c.want)
		}
		m, notes, err := Merge(c.in, true, nil)
		if err != nil || m.Apdex != nil || !strings.Contains(strings.Join(notes, "\n"), c.note) {
			t.Errorf("--force: %v, apdex %v, notes %q; want none and %q", err, m.Apdex, notes, c.note)
		}
		if _, ok := m.thresholdValue(threshold.Metric{Key: "apdex", Kind: threshold.Figure}); ok {
			t.Errorf("--force: an apdex figure without the section")
		}
	}
	if m, notes, err := Merge(none, false, nil); err != nil || m.Apdex != nil || strings.Contains(strings.Join(notes, "\n"), "APDEX") {
		t.Errorf("without --apdex: %v, %v, %q", err, m.Apdex, notes)
	}
}

// TestMergeFirstErrorIsEarliest: a failure class's first error in a merged
// run is the earliest by each document's first_at_s plus its start's offset
// from the merged run's start (not the smallest first_at_s, nor the first
// document's), with its message; a document that does not say when leaves
// the time unknown and the earliest document's message.
func TestMergeFirstErrorIsEarliest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	docs := randomShardedRun(rng, 300, 3, 0).shardDocuments(t, "run-a")
	base := time.Date(2026, 12, 1, 2, 3, 4, 0, time.UTC)
	at := func(s float64) *float64 { return &s }
	for k, c := range []struct {
		start               time.Duration
		receive, exceptions failureClass
	}{
		{0, failureClass{Count: 1, FirstError: "late", FirstAtS: at(0.040)}, failureClass{Count: 1, FirstError: "first document", FirstAtS: at(0.001)}},
		{25 * time.Millisecond, failureClass{Count: 2, FirstError: "earliest", FirstAtS: at(0.010)}, failureClass{Count: 1, FirstError: "no time"}},
		{30 * time.Millisecond, failureClass{Count: 3, FirstError: "smallest first_at_s", FirstAtS: at(0.008)}, failureClass{}},
	} {
		d := docs[k].Doc
		d.StartTime = base.Add(c.start).Format(time.RFC3339Nano)
		d.Extended = &extendedFigures{StatusCounts: map[string]int{}, FailuresByClass: map[string]failureClass{
			"receive": c.receive, "exceptions": c.exceptions, "connect": {}}}
	}
	m, _, err := Merge(docs, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	fc := m.Extended.FailuresByClass
	if r := fc["receive"]; r.Count != 6 || r.FirstError != "earliest" || r.FirstAtS == nil || *r.FirstAtS != 0.035 {
		t.Errorf("receive: %+v (at %v); want 6, \"earliest\" at 0.035 s", r, deref(r.FirstAtS))
	}
	if e := fc["exceptions"]; e.Count != 2 || e.FirstError != "first document" || e.FirstAtS != nil {
		t.Errorf("exceptions: %+v (at %v); want 2, \"first document\", no time", e, deref(e.FirstAtS))
	}
	if c := fc["connect"]; c.Count != 0 || c.FirstError != "" || c.FirstAtS != nil {
		t.Errorf("connect: %+v", c)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestValidateApdexAndFirstErrorTime: a document's APDEX section and a
// failure class's first_at_s that no gab run writes are refused, naming the
// field.
func TestValidateApdexAndFirstErrorTime(t *testing.T) {
	res := pastStore(0)
	res.Non2xx = 30
	res.Failed.Total, res.Failed.Receive = 2, 2
	res.FirstError["receive"], res.FirstErrorAt = "reset", map[string]time.Duration{"receive": 300 * time.Millisecond}
	fixture := Summarize(res, Options{Concurrency: 1, Apdex: &Apdex{T: 500 * time.Microsecond, F: time.Millisecond}})
	if err := ValidateDocument(roundTrip(t, fixture)); err != nil {
		t.Fatalf("the valid document: %v", err)
	}
	if at := fixture.Extended.FailuresByClass["receive"].FirstAtS; at == nil || *at != 0.3 {
		t.Fatalf("first_at_s %v", deref(at))
	}
	for _, c := range []struct {
		want   string
		mutate func(d *Run)
	}{
		{"apdex.satisfied_us: 0: T must be above 0", func(d *Run) { d.Apdex.SatisfiedUs = 0 }},
		{"apdex.satisfied_us: -5 is negative", func(d *Run) { d.Apdex.SatisfiedUs = -5 }},
		{"apdex.tolerated_us: 500: F must be above T (500)", func(d *Run) { d.Apdex.ToleratedUs = 500 }},
		{"apdex.satisfied: -1 is negative", func(d *Run) { d.Apdex.Satisfied = -1 }},
		{"apdex.requests: 1000, but satisfied, tolerating and frustrated add up to 1001", func(d *Run) { d.Apdex.Frustrated++ }},
		{"apdex.requests: 2000, but report.complete_requests is 1000", func(d *Run) {
			a := d.Apdex
			a.Requests, a.Frustrated = 2*a.Requests, a.Frustrated+a.Requests
			a.Score = (float64(a.Satisfied) + float64(a.Tolerating)/2) / float64(a.Requests)
		}},
		{"apdex.requests: 1099511627776 is more than a gab document can count", func(d *Run) { d.Apdex.Requests = 1 << 40 }},
		{"apdex.failed: 532, more than the 94 frustrated", func(d *Run) { d.Apdex.Failed += 500 }},
		{"apdex.score: 2 is not within 0..1", func(d *Run) { d.Apdex.Score = 2 }},
		{"apdex.score: 0.9, but (satisfied + tolerating/2) / requests is 0.656", func(d *Run) { d.Apdex.Score = 0.9 }},
		{"apdex.bound: \"exact\", but 32 requests failed", func(d *Run) { d.Apdex.Bound = "exact" }},
		{"apdex.source: \"\\x1b[2J\" is not exact", func(d *Run) { d.Apdex.Source = "\x1b[2J" }},
		{"extended.failures_by_class.receive.first_at_s: -0.5 is negative", func(d *Run) {
			*d.Extended.FailuresByClass["receive"].FirstAtS = -0.5
		}},
		{"extended.failures_by_class.receive.first_at_s: 3600 s, after the run's end (time_taken_s 1)", func(d *Run) {
			*d.Extended.FailuresByClass["receive"].FirstAtS = 3600
		}},
	} {
		d := roundTrip(t, fixture)
		c.mutate(d)
		err := ValidateDocument(d)
		var fe *FieldError
		if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v; want %q", err, c.want)
		}
	}
}
