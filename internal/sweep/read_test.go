package sweep

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"gab/report"
)

// notStartedSweep is a sweep of two targets whose runs never started (no
// request, so every figure is 0 and consistent).
func notStartedSweep(t *testing.T) []byte {
	t.Helper()
	s := &Settings{Targets: []Target{{"a\x1b]52;c;eA==\x07", "http://h/a"}, {"b", "http://h/b"}}, Concurrency: []int{1}, Repeat: 1, MaxCV: 0.05}
	var runs []*RunResult
	for i := range s.Targets {
		runs = append(runs, &RunResult{Run: Run{Point{i, -1, 0, -1}, 0}, Order: i, URL: s.Targets[i].URL, Ending: "not_started",
			Document: report.NotStarted([]string{"gab", s.Targets[i].URL}, time.Unix(0, 0), "", 0)})
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, NewDocument(s, Aggregate(s, runs), Meta{CommandLine: []string{"gab", "sweep"}})); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDecodeDocumentChecksSweeps: a sweep document gab wrote decodes, its
// labels made printable; a point or run document whose figures do not add up
// is refused, the field named.
func TestDecodeDocumentChecksSweeps(t *testing.T) {
	raw := notStartedSweep(t)
	d, err := report.DecodeSweep("s.json", raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Points[0].Label; got != `a\x1b]52;c;eA==\x07` {
		t.Errorf("label %q", got)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"requests_complete": 0`, `"requests_complete": 5`, "s.json: points[0].requests_complete: 5, but its runs' documents count 0"},
		{`"concurrency": 1,`, `"concurrency": 0,`, "s.json: points[0].concurrency: 0 is not a concurrency"},
		{`"repeats": 1`, `"repeats": -1`, "s.json: points[0].repeats: -1 is negative"},
		{`"document": {`, `"document": {"report": {"failed_requests": -50},`, "s.json: points[0].runs[0].document.report.failed_requests: -50 is negative"},
		{`"schema": "gab-sweep"`, `"schema": "gab-sweeps"`, "s.json: not a gab sweep document"},
		{`"schema_version": 2`, `"schema_version": 99`, "s.json: sweep schema_version 99 is newer"},
		{`"cv_above_max": false`, `"cv_above_max": 0`, "s.json: points[0].requests_per_second.cv_above_max: not of its type"},
		{`"p50_ms": 0`, `"p50_ms": "0"`, "s.json: points[0].latency.p50_ms: not of its type"},
	} {
		bad := bytes.Replace(raw, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(bad, raw) {
			t.Fatalf("%q is not in the document", c.from)
		}
		if _, err := report.DecodeSweep("s.json", bad); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s → %s: %v; want %q", c.from, c.to, err, c.want)
		}
	}
}
