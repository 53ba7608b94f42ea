package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/internal/threshold"
)

// TestApdex: JMeter's counts over the recorded requests' total times (1000
// requests of 63 to 1062 µs): within T satisfied, within F tolerating, the
// rest frustrated; exact from the store and from the 1 ms buckets past it at
// whole-millisecond thresholds; failed requests make the score a lower bound;
// the section matches the schema and --fail-if tests the catalog's apdex.
func TestApdex(t *testing.T) {
	ap := &Apdex{T: 500 * time.Microsecond, F: 1000 * time.Microsecond}
	th, err := ParseThreshold("apdex>0.6")
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(pastStore(0), Options{Concurrency: 1, Apdex: ap, FailIf: []threshold.Threshold{th}})
	a := s.Apdex
	// Totals 63…1062: ≤ 500 µs are 438, 501…1000 are 500, the other 62.
	if a.Satisfied != 438 || a.Tolerating != 500 || a.Frustrated != 62 || a.Requests != 1000 || a.Bound != "exact" {
		t.Fatalf("apdex %+v", *a)
	}
	apdex, _ := FigureByKey("apdex")
	if v, ok := apdex.Value(s); a.Score != 0.688 || !ok || v != a.Score || !strings.Contains(figureKeys(s), " apdex ") {
		t.Errorf("score %v, figure %v %v (%s), want 0.688", a.Score, v, ok, figureKeys(s))
	}
	if s.ThresholdsFailed() {
		t.Errorf("--fail-if apdex>0.7 failed at %v", a.Score)
	}
	var b bytes.Buffer
	if err := writeApdex(&b, s); err != nil || !strings.Contains(b.String(), "APDEX (T 500µs, F 1ms): 0.688\n  satisfied 438, tolerating 500, frustrated 62 of 1000 requests (0 failed)") {
		t.Errorf("text %q (%v)", b.String(), err)
	}
	b.Reset()
	_ = WriteJSON(&b, s)
	matchesSchema(t, b.Bytes())

	// Past the exact store: from the HDR histogram (exact below 2048 µs).
	past := Summarize(pastStore(100), Options{Concurrency: 1, Apdex: ap})
	if a := past.Apdex; a.Satisfied != 438 || a.Tolerating != 500 || a.Frustrated != 62 || a.Source != "hdr_histogram" {
		t.Errorf("past the store: %+v", *a)
	}

	// 30 Non-2xx and 10 length failures: 40 failed, taken from the satisfied.
	res := pastStore(0)
	res.Non2xx, res.Failed = 30, client.Failures{Total: 10, Length: 10}
	f := Summarize(res, Options{Concurrency: 1, Apdex: ap}).Apdex
	if f.Failed != 40 || f.Satisfied != 398 || f.Tolerating != 500 || f.Frustrated != 102 || f.Bound != "lower" {
		t.Errorf("with failures: %+v", *f)
	}
	// Without --apdex: no section, no figure, no line.
	s = Summarize(pastStore(0), Options{Concurrency: 1})
	b.Reset()
	if s.Apdex != nil || strings.Contains(figureKeys(s), " apdex ") || writeApdex(&b, s) != nil || b.Len() > 0 {
		t.Errorf("without --apdex: %+v, %q", s.Apdex, b.String())
	}
}

// figureKeys are the keys of the run's figures, each with a space either side.
func figureKeys(r *Run) string {
	k := " "
	for _, f := range r.Figures {
		k += f.Key + " "
	}
	return k
}
