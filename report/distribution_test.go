package report

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"gab/client"
	"gab/internal/samples"
)

// sameAsSums is the fixture's run with its total phase's histogram the sums'
// total column's, as a run whose phases and ab's columns hold the same
// requests has it.
func sameAsSums(t *testing.T) *Run {
	t.Helper()
	res, _ := extFixture(50, 99.9)
	r := Summarize(res, Options{Host: "127.0.0.1", Port: 8080, Path: "/x", Concurrency: 2, Percentiles: []float64{50, 99.9},
		CPU: fixtureCPU(), CommandLine: fixtureCommandLine, Run: &RunInfo{URL: "http://127.0.0.1:8080/x", Method: "GET", Protocol: "http1.0"}})
	tot := &r.Extended.Phases.Total
	if tot.Count != r.Sums.Total.Count || tot.Count == 0 {
		t.Fatalf("fixture: %d requests in the phase, %d in the sums", tot.Count, r.Sums.Total.Count)
	}
	h := r.Sums.Total.Histogram
	tot.Histogram = &h
	return r
}

// outsideTimeline is the document without its timeline, whose intervals
// hold histograms of their own requests.
func outsideTimeline(t *testing.T, doc []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "timeline")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDocumentEncodesEachHistogramOnce: the total time's histogram was
// written three times (extended.phases.total, extended.latency_histogram,
// sums.total) and rate mode's corrected one twice; each is written once,
// and reading the document puts every distribution's histogram back.
func TestDocumentEncodesEachHistogramOnce(t *testing.T) {
	r := sameAsSums(t)
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	doc := outsideTimeline(t, withoutLegacyNames(t, b.Bytes(), r))
	for _, c := range []struct {
		name string
		data string
	}{{"total", r.Sums.Total.Histogram.Data}, {"corrected", r.Rate.Corrected.Histogram.Data}} {
		if n := strings.Count(doc, c.data); n != 1 {
			t.Errorf("the %s histogram is encoded %d times outside the timeline", c.name, n)
		}
	}
	if !strings.Contains(doc, `"histogram_same_as":"sums.total"`) {
		t.Error("the total phase does not name sums.total")
	}
	if r.Extended.Phases.Total.Histogram == nil || r.Extended.Phases.Total.HistogramSameAs != "" {
		t.Error("writing the document changed the run")
	}
	back, err := DecodeDocument("run.json", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	got, want := back.Extended.Phases.Total.Histogram, r.Extended.Phases.Total.Histogram
	if got == nil || *got != *want || back.Extended.Phases.Total.HistogramSameAs != "" {
		t.Errorf("total phase's histogram read back: %+v, want %+v", got, want)
	}
	if got := back.Rate.Corrected.Histogram; got == nil || *got != *r.Rate.Corrected.Histogram {
		t.Errorf("corrected histogram read back: %+v", got)
	}
	want99 := r.Extended.Phases.Total.decoded().Percentile(99)
	if d, ok := totalDist(back); !ok || d.Percentile(99) != want99 {
		t.Errorf("the catalog's total distribution read back: p99 %d (%v), want %d", d.Percentile(99), ok, want99)
	}
}

// TestSchemaV3DocumentLoads: a document of schema version 3, which kept
// copies of the total and corrected histograms under their old names, is
// read with each histogram in its distribution (from the old name when the
// distribution has none of its own), and written again in this version's
// form, the old names gone.
func TestSchemaV3DocumentLoads(t *testing.T) {
	raw, err := os.ReadFile("testdata/doc-v3.json")
	if err != nil {
		t.Fatal(err)
	}
	var old struct {
		Extended struct {
			LatencyHistogram histogramData `json:"latency_histogram"`
		} `json:"extended"`
		Rate struct {
			CorrectedHistogram histogramData `json:"corrected_histogram"`
		} `json:"rate"`
	}
	if err := json.Unmarshal(raw, &old); err != nil || old.Extended.LatencyHistogram.Data == "" || old.Rate.CorrectedHistogram.Data == "" {
		t.Fatalf("testdata/doc-v3.json has no copies to read: %v", err)
	}
	// The old names alone: each distribution's own histogram taken out.
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m["extended"].(map[string]any)["phases"].(map[string]any)["total"].(map[string]any), "histogram")
	delete(m["rate"].(map[string]any)["corrected"].(map[string]any), "histogram")
	oldNamesOnly, _ := json.Marshal(m)

	for _, in := range []struct {
		name string
		raw  []byte
	}{{"as written", raw}, {"old names only", oldNamesOnly}} {
		d, err := DecodeDocument(in.name, in.raw)
		if err != nil {
			t.Fatalf("%s: %v", in.name, err)
		}
		if d.SchemaVersion != 3 {
			t.Errorf("%s: schema_version %d", in.name, d.SchemaVersion)
		}
		if h := d.Extended.Phases.Total.Histogram; h == nil || *h != old.Extended.LatencyHistogram {
			t.Errorf("%s: total phase's histogram %+v", in.name, h)
		}
		if h := d.Rate.Corrected.Histogram; h == nil || *h != old.Rate.CorrectedHistogram {
			t.Errorf("%s: corrected histogram %+v", in.name, h)
		}
		var b bytes.Buffer
		if err := WriteJSON(&b, d); err != nil {
			t.Fatal(err)
		}
		// Version 4 writes the old names once more, as copies (legacyNames).
		if s := b.String(); strings.Count(s, `"latency_histogram"`) != 1 || strings.Count(s, `"corrected_histogram"`) != 1 ||
			!strings.Contains(s, `"schema_version": 4`) {
			t.Errorf("%s: written again without the old names' copies or in another version:\n%.300s", in.name, s)
		}
		if _, err := DecodeDocument(in.name+" again", b.Bytes()); err != nil {
			t.Errorf("%s: written again, then read: %v", in.name, err)
		}
	}
}

// TestHistogramSameAsChecked: a phase naming something other than a sums
// column of the same requests is refused, by its field.
func TestHistogramSameAsChecked(t *testing.T) {
	r := sameAsSums(t)
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"sums.bogus", "report.total", "sums."} {
		raw := strings.Replace(b.String(), `"histogram_same_as": "sums.total"`, `"histogram_same_as": "`+bad+`"`, 1)
		_, err := DecodeDocument("run.json", []byte(raw))
		if err == nil || !strings.Contains(err.Error(), "extended.phases.total.histogram_same_as") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestDistributionInBytes: a distribution in bytes names its figures and
// its histogram's bounds in bytes, reads back as it was written, and is
// refused where a distribution in µs is expected.
func TestDistributionInBytes(t *testing.T) {
	s := samples.NewDist()
	for _, v := range []int64{100, 2000, 2000, 65536} {
		s.Add(v)
	}
	d := distIn(&s, unitBytes)
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"unit":"bytes"`, `"min_bytes":100`, `"max_bytes":65536`, `"sum_bytes":69636`, `"lowest_bytes":1`, `"p99_9_bytes":`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("no %s in %s", want, b)
		}
	}
	if strings.Contains(string(b), "_us") {
		t.Errorf("µs names in a distribution of bytes: %s", b)
	}
	var back distFigures
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Unit != unitBytes || back.MaxUs != 65536 || back.SumUs != 69636 || back.Histogram == nil || *back.Histogram != *d.Histogram {
		t.Errorf("read back: %+v", back)
	}
	c := &checker{}
	back.check(c, "x", 100, unitBytes)
	if c.err != nil {
		t.Errorf("checked in bytes: %v", c.err)
	}
	c = &checker{}
	back.check(c, "x", 100, unitUs)
	if c.err == nil || !strings.Contains(c.err.Error(), "x.unit") {
		t.Errorf("checked in µs: %v", c.err)
	}
}

// TestMeasuredDistribution: a measured distribution is one entry of
// measuredDists (here response body sizes, in bytes, that the engine would
// keep), and a figure of it one catalog entry: Summarize fills it, the
// document writes it in bytes, reads and checks it, MergeRuns merges it, and
// the figure reaches the document's figures.
func TestMeasuredDistribution(t *testing.T) {
	savedDists, savedCatalog := measuredDists, Catalog
	t.Cleanup(func() { measuredDists, Catalog = savedDists, savedCatalog })
	body := samples.NewDist()
	for _, v := range []int64{100, 100, 4096, 1 << 20} {
		body.Add(v)
	}
	measuredDists = append(slices.Clip(measuredDists), measuredDist{"response_body_bytes", unitBytes,
		func(*client.ExtraResult) *samples.Dist { return &body }})
	Catalog = append(slices.Clip(Catalog), Figure{Key: "body_p50", Title: "Response body p50", Unit: "bytes", CSV: "body_p50_bytes",
		Decimals: 0, Pool: Pooled, Needs: NeedsExtended, Of: func(d *Run) (float64, bool) {
			if b := distributionOf(d, "response_body_bytes"); b != nil && b.Count > 0 {
				return float64(b.MedianUs), true
			}
			return 0, false
		}})

	var runs []*Run
	for range 2 {
		res, _ := extFixture()
		r := Summarize(res, Options{Host: "127.0.0.1", Port: 8080, Path: "/x", Concurrency: 2,
			CPU: fixtureCPU(), CommandLine: fixtureCommandLine, Run: &RunInfo{URL: "http://127.0.0.1:8080/x", Method: "GET", Protocol: "http1.0"}})
		var b bytes.Buffer
		if err := WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
		doc := b.String()
		for _, want := range []string{`"response_body_bytes": {`, `"unit": "bytes"`, `"max_bytes": 1048576`, `"lowest_bytes": 1`, `"body_p50": 100`} {
			if !strings.Contains(doc, want) {
				t.Fatalf("document lacks %s:\n%s", want, doc)
			}
		}
		matchesSchema(t, b.Bytes())
		back, err := DecodeDocument("run.json", b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if d := back.Distributions["response_body_bytes"]; d == nil || d.Count != 4 || d.Unit != unitBytes || d.Histogram == nil {
			t.Fatalf("read back: %+v", d)
		}
		runs = append(runs, back)
	}
	m, err := MergeRuns(runs)
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Distributions["response_body_bytes"]; d == nil || d.Count != 8 || d.Unit != unitBytes || d.MaxUs != 1<<20 ||
		d.Histogram == nil || d.Histogram.Unit != unitBytes {
		t.Errorf("merged: %+v", d)
	}
	if i := slices.IndexFunc(m.Figures, func(f FigureValue) bool { return f.Key == "body_p50" }); i < 0 || m.Figures[i].Value != 100 {
		t.Errorf("merged figures: %v", m.Figures)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, m); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeDocument("merged.json", b.Bytes()); err != nil {
		t.Errorf("merged document: %v", err)
	}
	// In µs where the entry says bytes: refused.
	bad := strings.Replace(b.String(), `"unit": "bytes"`, `"unit": "us"`, 1)
	if _, err := DecodeDocument("bad.json", []byte(bad)); err == nil || !strings.Contains(err.Error(), "distributions.response_body_bytes") {
		t.Errorf("a distribution in the wrong unit: %v", err)
	}
}

// TestDistributionReadErrorNamesField: a figure of the wrong type in a
// distribution or its histogram is refused with its whole path, as
// encoding/json names any other field.
func TestDistributionReadErrorNamesField(t *testing.T) {
	for _, c := range []struct{ total, field string }{
		{`{"count": "x"}`, "extended.phases.total.count"},
		{`{"count": 1, "histogram": {"unit": "us", "lowest_us": "x"}}`, "extended.phases.total.histogram.lowest_us"},
		{`{"unit": 5}`, "extended.phases.total.unit"},
	} {
		raw := `{"schema_version": 4, "tool": "gab", "command_line": [], "start_time": "2026-12-02T00:00:00Z", "ending": "not_started",
			"extended": {"phases": {"total": ` + c.total + `}}}`
		_, err := DecodeDocument("run.json", []byte(raw))
		if err == nil || !strings.Contains(err.Error(), " "+c.field+" ") && !strings.Contains(err.Error(), "."+c.field+" ") {
			t.Errorf("%s: %v", c.total, err)
		}
	}
}

// TestOneIntervalNamesSums: a timeline of one interval, which holds every
// request of the run, wrote the total time's histogram a second time; it
// names sums.total instead, and reading puts the histogram back.
func TestOneIntervalNamesSums(t *testing.T) {
	r := sameAsSums(t)
	iv := r.Timeline.Intervals[0]
	iv.Requests, iv.Histogram = r.Sums.Total.Count, r.Sums.Total.Histogram
	iv.Corrected, r.Timeline.Corrected = nil, false // the one interval's own latency only
	for _, o := range r.Timeline.Intervals[1:] {
		iv.Failures += o.Failures
		iv.Bytes += o.Bytes
	}
	r.Timeline.Intervals = []intervalFigures{iv}
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(withoutLegacyNames(t, b.Bytes(), r)), r.Sums.Total.Histogram.Data); n != 1 {
		t.Errorf("the total histogram is encoded %d times", n)
	}
	var doc struct {
		Timeline struct {
			Intervals []map[string]any `json:"intervals"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil || len(doc.Timeline.Intervals) != 1 ||
		doc.Timeline.Intervals[0]["histogram_same_as"] != "sums.total" || r.Timeline.Intervals[0].HistogramSameAs != "" {
		t.Errorf("the interval does not name sums.total, or the run changed (%v)", err)
	}
	matchesSchema(t, b.Bytes())
	back, err := DecodeDocument("run.json", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Timeline.Intervals[0]; got.Histogram != r.Sums.Total.Histogram || got.HistogramSameAs != "" {
		t.Errorf("interval read back: %+v", got.IntervalLatency)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	m["timeline"].(map[string]any)["intervals"].([]any)[0].(map[string]any)["histogram_same_as"] = "sums.connect"
	bad, _ := json.Marshal(m)
	if _, err := DecodeDocument("bad.json", bad); err == nil || !strings.Contains(err.Error(), "timeline.intervals[0].histogram_same_as") {
		t.Errorf("an interval naming another column: %v", err)
	}
}

// withoutLegacyNames is a document without the copies schema version 4
// still writes under the old names, after checking that they are the copies
// (the total phase's and the corrected distribution's histograms).
func withoutLegacyNames(t *testing.T, doc []byte, r *Run) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		section, name string
		want          *histogramData
	}{{"extended", "latency_histogram", r.Extended.Phases.Total.Histogram}, {"rate", "corrected_histogram", r.Rate.Corrected.Histogram}} {
		sec, _ := m[c.section].(map[string]any)
		h, _ := sec[c.name].(map[string]any)
		if h == nil || h["data"] != c.want.Data {
			t.Errorf("%s.%s: %v, want the copy of its distribution's histogram (for schema version 4)", c.section, c.name, h)
		}
		delete(sec, c.name)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
