package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/internal/samples"
	"gab/internal/sweep"
	"gab/internal/testtool"
	"gab/report"
)

// syntheticDoc is the document of a 2-second run at rps requests per
// second, each taking meanUs, with failed exceptions, made by gab's own
// pipeline (report.Summarize).
func syntheticDoc(rps float64, meanUs int64, failed int) *report.Run {
	return syntheticRun(rps, failed, func(int) uint32 { return uint32(meanUs) }, false, nil)
}

// syntheticRun is syntheticDoc with request i taking total(i) µs, with the
// extended figures (the total phase) if extended, and opt changing the
// report options.
func syntheticRun(rps float64, failed int, total func(i int) uint32, extended bool, opt func(*report.Options)) *report.Run {
	n := int(rps * 2)
	res := &client.Result{Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Ending: client.EndCompleted,
		Complete: n, Elapsed: 2 * time.Second, Samples: samples.New(n, 0), Counters: client.Counters{TotalRead: int64(rps) * 1000},
		StatusCounts: map[int]int{}, FirstError: map[string]string{}}
	res.Failed.Total, res.Failed.Exceptions = failed, failed
	if extended {
		res.Extra = &client.ExtraResult{}
		for p := range res.Extra.Phases {
			res.Extra.Phases[p] = samples.NewDist()
		}
	}
	for i := 0; i < n; i++ {
		res.Samples.Put(i, samples.Sample{Total: total(i)}, nil)
		if extended {
			res.Extra.Phases[client.PhaseTotal].Add(int64(total(i)))
		}
	}
	o := report.Options{Host: "127.0.0.1", Port: 80, Path: "/", Concurrency: 1}
	if opt != nil {
		opt(&o)
	}
	return report.Summarize(res, o)
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

func compareJSON(t *testing.T, a, b string) report.Comparison {
	t.Helper()
	status, stdout, stderr := runArgs(t, t.Context(), "gab", "compare", "--format", "json", a, b)
	var doc report.Comparison
	if status != 0 || json.Unmarshal([]byte(stdout), &doc) != nil {
		t.Fatalf("compare: %d %s\n%s", status, stderr, stdout)
	}
	return doc
}

// compareText is gab compare's text report of a and b; it fails the test
// unless the exit status is 0 and the text holds every want.
func compareText(t *testing.T, a, b string, want ...string) string {
	t.Helper()
	status, stdout, stderr := runArgs(t, t.Context(), "gab", "compare", a, b)
	if status != 0 {
		t.Errorf("compare: %d %s", status, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stdout, w) {
			t.Errorf("compare's text lacks %q:\n%s", w, stdout)
		}
	}
	return stdout
}

func rowNamed(t *testing.T, g report.ComparisonGroup, name string) report.ComparisonRow {
	t.Helper()
	for _, r := range g.Rows {
		if r.Figure == name {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", name, g.Rows)
	return report.ComparisonRow{}
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
	if stdout := compareText(t, a, b, "Requests per second [#/s]", "+25.0 %"); strings.Contains(stdout, "outside spread") {
		t.Errorf("text:\n%s", stdout)
	}
}

func sweepWith(label string, rps ...float64) *report.SweepDocument {
	docs := make([]*report.Run, len(rps))
	for i, r := range rps {
		docs[i] = syntheticDoc(r, 1000, 0)
	}
	return sweepOf(label, docs...)
}

// sweepOf is the document of a sweep of one point (label at -c 8) whose
// repetitions' documents are docs, made by gab sweep's own pipeline
// (sweep.Aggregate, sweep.NewDocument).
func sweepOf(label string, docs ...*report.Run) *report.SweepDocument {
	s := &sweep.Settings{Targets: []sweep.Target{{Label: label, URL: "http://127.0.0.1/"}}, Concurrency: []int{8},
		Repeat: len(docs), MaxCV: 0.1}
	var runs []*sweep.RunResult
	for i, d := range docs {
		r := &sweep.RunResult{Run: sweep.Run{Point: sweep.Point{Size: -1}, Rep: i}, Order: i, URL: "http://127.0.0.1/",
			Ending: d.Ending, Document: d}
		if rep := d.Report; rep != nil {
			r.RPS, r.Complete, r.Failed, r.Seconds = rep.RequestsPerSecond, rep.CompleteRequests, rep.FailedRequests, rep.TimeTakenS
		}
		runs = append(runs, r)
	}
	return sweep.NewDocument(s, sweep.Aggregate(s, runs), sweep.Meta{CommandLine: []string{"gab", "sweep"}, Complete: true})
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
	compareText(t, a, apart, "outside spread", "101±1")
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
		{[]string{a}, exitUsage, "want two files or more"},
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

// spreadRun is a run at rps whose requests take base + (i mod 100)·step µs.
func spreadRun(rps float64, base, step uint32) *report.Run {
	return syntheticRun(rps, 0, func(i int) uint32 { return base + uint32(i%100)*step }, true, nil)
}

// TestCompareSweepPercentilesAreTheTables: a sweep point's mean and
// percentiles in gab compare are its table's (all repetitions' requests
// together), marked so; their sd is the runs' own.
func TestCompareSweepPercentilesAreTheTables(t *testing.T) {
	dir := t.TempDir()
	swA := sweepOf("x", spreadRun(100, 1000, 10), spreadRun(101, 1000, 50), spreadRun(102, 3000, 7))
	swB := sweepOf("x", spreadRun(110, 900, 10), spreadRun(111, 900, 90), spreadRun(112, 2000, 3))
	a, b := writeJSONTo(t, dir, "a.json", swA), writeJSONTo(t, dir, "b.json", swB)
	g := compareJSON(t, a, b).Groups[0]
	ms := func(d *report.SweepDocument, name string) float64 { v, _ := d.Points[0].Latency.Float(name); return v }
	for _, c := range []struct {
		figure string
		a, b   float64
	}{
		{"Mean", ms(swA, "mean_ms"), ms(swB, "mean_ms")},
		{"p50", ms(swA, "p50_ms"), ms(swB, "p50_ms")},
		{"p99", ms(swA, "p99_ms"), ms(swB, "p99_ms")},
	} {
		r := rowNamed(t, g, c.figure)
		if r.A != c.a || r.B != c.b || !r.APooled || !r.BPooled || r.ASD == nil || *r.ASD == 0 {
			t.Errorf("%s: %+v, want the tables' %v and %v, pooled, with the runs' sd", c.figure, r, c.a, c.b)
		}
	}
	if r := rowNamed(t, g, "Requests per second"); r.A != 101 || r.APooled {
		t.Errorf("req/s: %+v", r)
	}
	compareText(t, a, b, "*  ", "Sweeps (*): a point's runs together, as gab sweep's table prints them: mean, sd, percentiles")
}

// TestCompareSweepOneEstimatorPerRow: every latency row of a sweep point is
// of its runs' requests together, so that they stay in order (min <= p50 <=
// p99 <= p99.9 <= max): one run's long tail made the pooled p99.9 stand
// above the mean of the runs' maxima.
func TestCompareSweepOneEstimatorPerRow(t *testing.T) {
	dir := t.TempDir()
	swA := sweepOf("x", spreadRun(100, 1000, 10), spreadRun(101, 1000, 50), spreadRun(102, 3000, 7))
	swB := sweepOf("x", spreadRun(110, 900, 10), spreadRun(111, 900, 90), spreadRun(112, 2000, 3))
	g := compareJSON(t, writeJSONTo(t, dir, "a.json", swA), writeJSONTo(t, dir, "b.json", swB)).Groups[0]
	var prev [2]float64
	for _, name := range []string{"min", "p50", "p90", "p99", "p99.9", "max"} {
		r := rowNamed(t, g, name)
		if !r.APooled || !r.BPooled || r.A < prev[0] || r.B < prev[1] {
			t.Errorf("%s: %+v, pooled and at least %v", name, r, prev)
		}
		prev = [2]float64{r.A, r.B}
	}
	if r := rowNamed(t, g, "max"); r.A != 5.95 || r.B != 9.81 {
		t.Errorf("max: %+v, want the slowest request of every run, 5.95 and 9.81 ms", r)
	}
	if r := rowNamed(t, g, "sd"); !r.APooled || r.A <= 0 {
		t.Errorf("sd: %+v", r)
	}
}

// TestCompareSweepIsTheSweepsFigures: a sweep point's value on every row of
// gab compare is the point's own figure in the sweep document ("figures",
// the point's report.Group by the catalog's Pool rule): counts summed, CPU
// per request of every request; the rows of a pooled value are marked.
func TestCompareSweepIsTheSweepsFigures(t *testing.T) {
	dir := t.TempDir()
	swA := sweepOf("x", spreadRun(100, 1000, 10), spreadRun(101, 1000, 50), spreadRun(102, 3000, 7))
	swB := sweepOf("x", spreadRun(110, 900, 10), spreadRun(111, 900, 90))
	g := compareJSON(t, writeJSONTo(t, dir, "a.json", swA), writeJSONTo(t, dir, "b.json", swB)).Groups[0]
	byTitle := map[string]report.Figure{}
	for _, f := range report.Catalog {
		byTitle[f.Title] = f
	}
	figure := func(p report.SweepPoint, key string) (float64, bool) {
		for _, v := range p.Figures {
			if v.Key == key {
				return v.Value, true
			}
		}
		return 0, false
	}
	sums := 0
	for _, r := range g.Rows {
		f := byTitle[r.Figure]
		a, aok := figure(swA.Points[0], f.Key)
		b, bok := figure(swB.Points[0], f.Key)
		if !aok || !bok || r.A != a || r.B != b {
			t.Errorf("%s: compare %v and %v, the sweeps' figures %v and %v", f.Key, r.A, r.B, a, b)
		}
		if pooled := f.Pool != report.MeanOfRuns; r.APooled != pooled || r.BPooled != pooled {
			t.Errorf("%s: marked %v %v, pool %d", f.Key, r.APooled, r.BPooled, f.Pool)
		}
		if f.Pool == report.SumOfRuns {
			sums++
		}
	}
	if c := rowNamed(t, g, "Complete requests"); sums == 0 || c.A != float64(swA.Points[0].RequestsComplete) || c.B != float64(swB.Points[0].RequestsComplete) {
		t.Errorf("complete: %+v, want the points' sums %d and %d", c, swA.Points[0].RequestsComplete, swB.Points[0].RequestsComplete)
	}
}

// TestCompareMeanIsExact: the Mean row is the exact mean, not ab's mean
// truncated to the µs: 10.5 µs against 86.5 µs is +723.8 %, not +760 %.
func TestCompareMeanIsExact(t *testing.T) {
	dir := t.TempDir()
	alternate := func(lo uint32) func(int) uint32 { return func(i int) uint32 { return lo + uint32(i%2) } }
	runA := syntheticRun(100, 0, alternate(10), true, nil)
	runB := syntheticRun(100, 0, alternate(86), true, nil)
	want := (86.5/10.5 - 1) * 100
	for name, pair := range map[string][2]any{
		"runs":   {runA, runB},
		"sweeps": {sweepOf("x", runA, runA), sweepOf("x", runB, runB)},
	} {
		r := rowNamed(t, compareJSON(t, writeJSONTo(t, dir, name+"-a.json", pair[0]), writeJSONTo(t, dir, name+"-b.json", pair[1])).Groups[0], "Mean")
		if r.ChangePercent == nil || math.Abs(*r.ChangePercent-want) > 1e-9 || r.A != 0.0105 {
			t.Errorf("%s: %+v, want %.4f %%", name, r, want)
		}
	}
}

// TestCompareNotesDifferingSettings: documents measured with other settings
// are compared with a note naming each: from the run sections, or from the
// command lines of a sweep's runs.
func TestCompareNotesDifferingSettings(t *testing.T) {
	dir := t.TempDir()
	run := func(n int, keepAlive bool) *report.Run {
		return syntheticRun(100, 0, func(int) uint32 { return 100 }, false, func(o *report.Options) {
			o.KeepAlive = keepAlive
			o.Run = &report.RunInfo{URL: "http://127.0.0.1/", Method: "GET", Protocol: "http1.0", Requests: n, Concurrency: 1}
		})
	}
	a, b := writeJSONTo(t, dir, "a.json", run(200, true)), writeJSONTo(t, dir, "b.json", run(500, false))
	compareText(t, a, b, "Note: the settings differ: -k: yes (A), no (B); -n: 200 (A), 500 (B)\n")
	if g := compareJSON(t, a, a).Groups[0]; g.SettingsDiffer != nil {
		t.Errorf("a run against itself: %q", g.SettingsDiffer)
	}

	point := func(argv ...string) *report.Run {
		return syntheticRun(100, 0, func(int) uint32 { return 100 }, true, func(o *report.Options) { o.CommandLine = argv })
	}
	swA := sweepOf("x", point("gab", "-n", "200", "-c", "8", "-v", "2", "http://127.0.0.1/"))
	swB := sweepOf("x", point("gab", "-kn300", "--http1.1", "--json", "b.json", "-c", "8", "http://127.0.0.1:8080/"))
	compareText(t, writeJSONTo(t, dir, "sa.json", swA), writeJSONTo(t, dir, "sb.json", swB),
		"Note: the settings differ: URL: http://127.0.0.1/ (A), http://127.0.0.1:8080/ (B); --http1.1: not given (A), yes (B); -k: not given (A), yes (B); -n: 200 (A), 300 (B)\n")
}

// TestCompareHostileDocuments: compare reads documents through the same
// checks as merge: a sweep whose figures do not add up is refused, the
// field named; a label's control bytes reach the terminal escaped.
func TestCompareHostileDocuments(t *testing.T) {
	dir := t.TempDir()
	good := sweepOf("x", spreadRun(100, 1000, 10))
	bad := sweepOf("x", spreadRun(100, 1000, 10))
	bad.Points[0].Runs[0].Document.Report.FailedRequests = -50
	a, b := writeJSONTo(t, dir, "a.json", good), writeJSONTo(t, dir, "b.json", bad)
	status, stdout, stderr := runArgs(t, t.Context(), "gab", "compare", a, b)
	if want := "b.json: points[0].runs[0].document.report.failed_requests: -50 is negative\n"; status != exitError || stdout != "" || !strings.HasSuffix(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("%d %q %q; want %q", status, stdout, stderr, want)
	}
	bad = sweepOf("x", spreadRun(100, 1000, 10))
	bad.Points[0].RequestsComplete = 1e9
	status, _, stderr = runArgs(t, t.Context(), "gab", "compare", a, writeJSONTo(t, dir, "c.json", bad))
	if want := "c.json: points[0].requests_complete: 1000000000, but its runs' documents count 200\n"; status != exitError || !strings.HasSuffix(stderr, want) {
		t.Errorf("%d %q; want %q", status, stderr, want)
	}
	evilA, evilB := sweepOf("x\x1b]52;c;eA==\x07", spreadRun(100, 1000, 10)), sweepOf("x\x1b]52;c;eA==\x07", spreadRun(100, 1000, 10))
	if stdout := compareText(t, writeJSONTo(t, dir, "ea.json", evilA), writeJSONTo(t, dir, "eb.json", evilB), `x\x1b]52;c;eA==\x07 -c 8`); strings.ContainsAny(stdout, "\x1b\x07") {
		t.Errorf("a label's control bytes reach the terminal:\n%q", stdout)
	}
}

// TestCompareSeveral: gab compare A B C compares B and C each with A: two
// comparisons in the text, an array of two in the JSON.
func TestCompareSeveral(t *testing.T) {
	dir := t.TempDir()
	a := writeJSONTo(t, dir, "a.json", sweepWith("nginx", 100, 101, 102))
	b := writeJSONTo(t, dir, "b.json", sweepWith("nginx", 110, 111, 112))
	c := writeJSONTo(t, dir, "c.json", sweepWith("nginx", 90, 91, 92))
	status, stdout, stderr := runGab(t, "gab", "compare", a, b, c)
	if status != exitOK || strings.Count(stdout, "b.json") == 0 || strings.Count(stdout, "c.json") == 0 || strings.Count(stdout, "a.json") < 2 {
		t.Fatalf("status %d\n%s\n%s", status, stdout, stderr)
	}
	status, stdout, _ = runGab(t, "gab", "compare", "--format", "json", a, b, c)
	var docs []json.RawMessage
	if status != exitOK || json.Unmarshal([]byte(stdout), &docs) != nil || len(docs) != 2 {
		t.Errorf("JSON: status %d, %d comparisons\n%s", status, len(docs), stdout)
	}
}

// TestPlotSweepConfigurations: gab plot nic=A.json toe=B.json draws two
// sweeps as configurations of one study, each target as LABEL:target.
func TestPlotSweepConfigurations(t *testing.T) {
	dir := t.TempDir()
	a := writeJSONTo(t, dir, "a.json", sweepWith("nginx", 100, 101, 102))
	b := writeJSONTo(t, dir, "b.json", sweepWith("nginx", 110, 111, 112))
	out := filepath.Join(dir, "cfg.html")
	status, stdout, stderr := runGab(t, "gab", "plot", "-o", out, "nic="+a, "toe="+b)
	if status != exitOK {
		t.Fatalf("status %d\n%s\n%s", status, stdout, stderr)
	}
	testtool.WantInFile(t, out, "nic:nginx", "toe:nginx")
	if status, _, stderr := runGab(t, "gab", "plot", "-o", out, "x="+a, "x="+b); status != exitUsage || !strings.Contains(stderr, `two sweeps are labelled "x"`) {
		t.Errorf("same label: %d %q", status, stderr)
	}
	run := writeJSONTo(t, dir, "run.json", syntheticDoc(1000, 2000, 0))
	if status, _, stderr := runGab(t, "gab", "plot", "-o", out, a, run); status != exitUsage || !strings.Contains(stderr, "not with runs") {
		t.Errorf("a sweep with a run: %d %q", status, stderr)
	}
}
