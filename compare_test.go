package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/internal/sweep"
	"gab/report"
)

func syntheticDoc(rps float64, meanUs int64, failed int) *report.Document {
	return &report.Document{SchemaVersion: report.SchemaVersion, Tool: "gab", Ending: "completed",
		Report: &report.JSONReport{RequestsPerSecond: rps, TimeTakenS: 2, TotalTransferredBytes: int64(rps) * 1000,
			FailedRequests: failed, ConnectionTimes: &report.JSONConnectionTimes{Total: report.JSONColumn{MeanUs: meanUs}}}}
}

func writeJSONTo(t *testing.T, dir, name string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func compareJSON(t *testing.T, a, b string) compareDocument {
	t.Helper()
	status, stdout, stderr := runArgs(t, t.Context(), "gab", "compare", "--format", "json", a, b)
	var doc compareDocument
	if status != 0 || json.Unmarshal([]byte(stdout), &doc) != nil {
		t.Fatalf("compare: %d %s\n%s", status, stderr, stdout)
	}
	return doc
}

func rowNamed(t *testing.T, g compareGroupResult, name string) compareRow {
	t.Helper()
	for _, r := range g.Rows {
		if r.Figure == name {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", name, g.Rows)
	return compareRow{}
}

func TestCompareRuns(t *testing.T) {
	dir := t.TempDir()
	a := writeJSONTo(t, dir, "a.json", syntheticDoc(1000, 2000, 0))
	b := writeJSONTo(t, dir, "b.json", syntheticDoc(1250, 1500, 3))
	doc := compareJSON(t, a, b)
	if len(doc.Groups) != 1 {
		t.Fatalf("groups %+v", doc.Groups)
	}
	g := doc.Groups[0]
	for name, want := range map[string]float64{"Requests per second": 25, "Mean": -25, "Received": 25} {
		r := rowNamed(t, g, name)
		if r.ChangePercent == nil || math.Abs(*r.ChangePercent-want) > 1e-9 || r.OutsideSpread != nil {
			t.Errorf("%s: %+v, want %+v %%", name, r, want)
		}
	}
	if r := rowNamed(t, g, "Failed requests"); r.A != 0 || r.B != 3 || r.ChangePercent != nil {
		t.Errorf("failures %+v", r)
	}
	for _, r := range g.Rows {
		if strings.HasPrefix(r.Figure, "Server CPU") || r.Figure == "p99" {
			t.Errorf("a figure absent from both documents is listed: %+v", r)
		}
	}
	status, stdout, _ := runArgs(t, t.Context(), "gab", "compare", a, b)
	if status != 0 || !strings.Contains(stdout, "Requests per second [#/s]") || !strings.Contains(stdout, "+25.0 %") || strings.Contains(stdout, "outside spread") {
		t.Errorf("text:\n%s", stdout)
	}
}

func sweepWith(label string, rps ...float64) *sweep.Document {
	p := sweep.DocPoint{Label: label, Concurrency: 8, Repeats: len(rps)}
	for i, r := range rps {
		p.Runs = append(p.Runs, sweep.DocRun{Repetition: i + 1, Document: syntheticDoc(r, 1000, 0)})
	}
	return &sweep.Document{Schema: "gab-sweep", SchemaVersion: 1, Tool: "gab", Points: []sweep.DocPoint{p}}
}

func TestCompareSweepsSpread(t *testing.T) {
	dir := t.TempDir()
	a := writeJSONTo(t, dir, "a.json", sweepWith("nginx", 100, 101, 102))
	apart := writeJSONTo(t, dir, "apart.json", sweepWith("nginx", 110, 111, 112))
	overlap := writeJSONTo(t, dir, "overlap.json", sweepWith("nginx", 99, 104, 108))
	r := rowNamed(t, compareJSON(t, a, apart).Groups[0], "Requests per second")
	if r.OutsideSpread == nil || !*r.OutsideSpread || r.A != 101 || r.B != 111 || r.ASD == nil || *r.ASD != 1 {
		t.Errorf("apart: %+v", r)
	}
	r = rowNamed(t, compareJSON(t, a, overlap).Groups[0], "Requests per second")
	if r.OutsideSpread == nil || *r.OutsideSpread {
		t.Errorf("overlapping: %+v", r)
	}
	status, stdout, _ := runArgs(t, t.Context(), "gab", "compare", a, apart)
	if status != 0 || !strings.Contains(stdout, "outside spread") || !strings.Contains(stdout, "101±1") {
		t.Errorf("text:\n%s", stdout)
	}
}

func TestCompareBadInput(t *testing.T) {
	dir := t.TempDir()
	a := writeJSONTo(t, dir, "a.json", syntheticDoc(1000, 2000, 0))
	two := sweepWith("x", 1, 2)
	two.Points = append(two.Points, sweepWith("y", 3, 4).Points...)
	sw := writeJSONTo(t, dir, "sweep.json", two)
	other := sweepWith("z", 1, 2)
	other.Points = append(other.Points, sweepWith("w", 3, 4).Points...)
	sw2 := writeJSONTo(t, dir, "sweep2.json", other)
	trunc := filepath.Join(dir, "t.json")
	raw, _ := os.ReadFile(a)
	os.WriteFile(trunc, raw[:len(raw)/2], 0o644)
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{a}, exitUsage, "want two files"},
		{[]string{a, filepath.Join(dir, "none.json")}, exitError, "none.json: no such file"},
		{[]string{a, trunc}, exitError, "t.json: not a complete JSON document"},
		{[]string{a, sw}, exitError, "a single run compares with a run or a one-point sweep"},
		{[]string{sw, sw2}, exitError, "no point in common"},
	} {
		status, stdout, stderr := runArgs(t, t.Context(), append([]string{"gab", "compare"}, c.args...)...)
		if status != c.status || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: %d %q %q; want %d and %q", c.args, status, stdout, stderr, c.status, c.want)
		}
	}
}

// TestComparePercentileFromSums: a document's total-time percentiles come
// from its sums' histogram by the nearest rank (n·p/100 rounded half up,
// 1-based: HdrHistogram's ValueAtQuantile), clamped to the exact min and max.
func TestComparePercentileFromSums(t *testing.T) {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for v := int64(1); v <= 1000; v++ {
		_ = h.RecordValue(v)
	}
	data, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	d := &report.Document{Sums: &report.JSONSums{Total: report.JSONColumnSums{Count: 1000, MinUs: 1, MaxUs: 1000, SumUs: 500500,
		Histogram: report.JSONHistogram{Encoding: "hdrhistogram-v2-compressed-base64", Data: string(data)}}}}
	for p, want := range map[float64]float64{50: 0.500, 99: 0.990, 99.9: 0.999, 99.95: 1.000, 100: 1.000} {
		if got, ok := percentileMs(p)(d); !ok || got != want {
			t.Errorf("p%v = %v, %v; want %v ms", p, got, ok, want)
		}
	}
}
