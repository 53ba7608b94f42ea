package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/internal/samples"
	"gab/internal/sweep/sweeptest"
	"gab/report"
)

func TestParseConcurrency(t *testing.T) {
	got, err := ParseConcurrency("1, 10,100,5000")
	if err != nil || len(got) != 4 || got[0] != 1 || got[1] != 10 || got[3] != 5000 {
		t.Fatalf("got %v, %v", got, err)
	}
	for in, want := range map[string]string{
		"10,x":     `"x" is not a number (in "10,x")`,
		"":         `"" is not a number`,
		"1,,2":     `"" is not a number`,
		"0":        "0 is out of range",
		"200001":   "200001 is out of range",
		"5,5":      "5 appears twice",
		"-3":       "-3 is out of range",
		"1.5":      `"1.5" is not a number`,
		"10,100,y": `"y"`,
	} {
		_, err := ParseConcurrency(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseConcurrency(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestParseSizes(t *testing.T) {
	got, err := ParseSizes("--sizes", "4,100b,10k,1m,64KB,1g")
	if err != nil {
		t.Fatal(err)
	}
	want := []Size{{"4", 4}, {"100b", 100}, {"10k", 10240}, {"1m", 1 << 20}, {"64KB", 65536}, {"1g", 1 << 30}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("size %d = %v, want %v", i, got[i], want[i])
		}
	}
	for in, want := range map[string]string{
		"4,x":                 `--post-sizes: "x" is not a size`,
		"10q":                 `unknown unit "q"`,
		"4,4":                 `"4" appears twice`,
		"":                    `"" is not a size`,
		"-1":                  `"-1" is not a size`,
		"99999999999999999g":  "too large",
		"999999999999999999m": "too large",
	} {
		_, err := ParseSizes("--post-sizes", in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSizes(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestParseTargets(t *testing.T) {
	got, err := ParseTargets([]string{"nginx=http://127.0.0.1:8080/f{size}", "http://127.0.0.1:8081/f{size}?a=b", "http://[::1]:80/{size}"}, "--sizes")
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Label != "nginx" || got[0].URL != "http://127.0.0.1:8080/f{size}" {
		t.Errorf("labelled target: %+v", got[0])
	}
	if got[1].Label != "127.0.0.1:8081" || got[1].URL != "http://127.0.0.1:8081/f{size}?a=b" {
		t.Errorf("a URL with = is not a label: %+v", got[1])
	}
	if got[2].Label != "[::1]:80" {
		t.Errorf("IPv6 label: %+v", got[2])
	}
	if u := got[0].URLFor(&Size{Text: "10k", Bytes: 10240}); u != "http://127.0.0.1:8080/f10k" {
		t.Errorf("URLFor = %q", u)
	}
	// Two unlabelled targets on one host:port are named by their URLs.
	got, err = ParseTargets([]string{"http://h:1/a", "http://h:1/b"}, "")
	if err != nil || got[0].Label != "http://h:1/a" || got[1].Label != "http://h:1/b" {
		t.Errorf("same host: %+v, %v", got, err)
	}
	for _, c := range []struct {
		args   []string
		option string
		want   string
	}{
		{nil, "", "no TARGET"},
		{[]string{"a=http://h/", "a=http://g/"}, "", `two targets are named "a"`},
		{[]string{"http://h/{size}"}, "", "neither --sizes nor --post-sizes"},
		{[]string{"http://h/x"}, "--sizes", "holds no {size}"},
		{[]string{"a="}, "", "has no URL"},
	} {
		_, err := ParseTargets(c.args, c.option)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTargets(%q, %q) = %v, want an error with %q", c.args, c.option, err, c.want)
		}
	}
	// --post-sizes: {size} is optional.
	if _, err := ParseTargets([]string{"http://h/x", "http://h/{size}"}, "--post-sizes"); err != nil {
		t.Errorf("--post-sizes: %v", err)
	}
}

func TestPlanInterleaves(t *testing.T) {
	d := Dims{Targets: 3, Sizes: 2, Concurrency: 2, Repeat: 2}
	plan := Plan(d, OrderInterleaved, nil)
	if len(plan) != 3*2*2*2 {
		t.Fatalf("len %d", len(plan))
	}
	code := func(r Run) string {
		return string(rune('A'+r.Target)) + string(rune('0'+r.Size)) + string(rune('0'+r.Point.Concurrency)) + string(rune('0'+r.Rep))
	}
	var got []string
	for _, r := range plan[:14] {
		got = append(got, code(r))
	}
	// Every point's first repetition, then every point's second.
	want := "A000 B000 C000 A010 B010 C010 A100 B100 C100 A110 B110 C110 A001 B001"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("order\n got %s\nwant %s", s, want)
	}
	if last := plan[len(plan)-1]; last != (Run{Point{Target: 2, Size: 1, Concurrency: 1, Param: -1}, 1}) {
		t.Errorf("last run %+v", last)
	}
	for _, r := range Plan(Dims{Targets: 2, Concurrency: 1, Repeat: 2}, OrderInterleaved, nil) {
		if r.Size != -1 || r.Param != -1 {
			t.Errorf("no size list or --param: size %d param %d", r.Size, r.Param)
		}
	}
	// random: each round holds every point once, in its own order.
	d = Dims{Targets: 4, Sizes: 3, Params: 2, Concurrency: 3, Repeat: 3}
	rnd := Plan(d, OrderRandom, rand.New(rand.NewPCG(1, 2)))
	points := Points(d)
	n := len(points)
	if len(rnd) != n*3 || n != 4*3*2*3 {
		t.Fatalf("random plan: %d runs of %d points", len(rnd), n)
	}
	same := 0
	for r := range 3 {
		seen := map[Point]bool{}
		for i, run := range rnd[r*n : (r+1)*n] {
			if run.Rep != r || seen[run.Point] {
				t.Fatalf("round %d: run %+v repeated or out of its round", r, run)
			}
			seen[run.Point] = true
			if run.Point == points[i] {
				same++
			}
		}
	}
	if same > n {
		t.Errorf("random order left %d of %d runs in place", same, 3*n)
	}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestSummarizeRPS(t *testing.T) {
	// Hand-computed: mean 110; deviations -10, 0, 10, so the sample sd is
	// sqrt(200/2) = 10; t(0.975, 2) = 4.302653, CI = 4.302653*10/sqrt(3) = 24.841377;
	// CV = 10/110 = 0.0909.
	r := SummarizeRPS([]float64{100, 120, 110}, 0.05)
	if r.N != 3 || r.Mean != 110 || !near(r.SD, 10, 1e-12) || r.Min != 100 || r.Max != 120 {
		t.Errorf("%+v", r)
	}
	if !near(r.CI95, 24.841377, 1e-6) || !near(r.CV, 0.090909, 1e-6) || !r.Unstable {
		t.Errorf("ci %v cv %v unstable %v", r.CI95, r.CV, r.Unstable)
	}
	if r := SummarizeRPS([]float64{100, 120, 110}, 0.1); r.Unstable {
		t.Error("cv 9.1 % is below a 10 % threshold")
	}
	// One repetition: no spread is measured.
	r = SummarizeRPS([]float64{42}, 0.05)
	if r.Mean != 42 || r.SD != 0 || r.CI95 != 0 || r.CV != 0 || r.Unstable {
		t.Errorf("one run: %+v", r)
	}
	if r := SummarizeRPS(nil, 0.05); r.N != 0 || r.Mean != 0 {
		t.Errorf("no runs: %+v", r)
	}
}

// fakeRun is a run with the given req/s and latencies (µs), and its record
// as Summarize makes it from the engine's result.
func fakeRun(pt Point, rep, order int, rps float64, lat ...int64) *RunResult {
	x := &client.ExtraResult{}
	for p := range x.Phases {
		x.Phases[p] = samples.NewDist()
	}
	for _, v := range lat {
		x.Phases[client.PhaseTotal].Add(v)
	}
	res := &client.Result{Start: time.Unix(int64(order), 0), Elapsed: time.Second, Complete: len(lat), Extra: x,
		StatusCounts: map[int]int{200: len(lat)}, FirstError: map[string]string{}}
	doc := report.Summarize(res, report.Options{Concurrency: 1, CPU: report.CPUUsage{User: 300 * time.Millisecond, Sys: 200 * time.Millisecond, Known: true}})
	// The record says what the run result says (as gab sweep fills one
	// from the other): rps req/s, 125000 bytes in its second.
	doc.Report.RequestsPerSecond, doc.Report.TotalTransferredBytes = rps, 125000
	return &RunResult{Run: Run{pt, rep}, Order: order, URL: "http://h/", Ending: "completed",
		RPS: rps, Complete: len(lat), Seconds: 1, ReadBytes: 125000,
		ClientCPU: 500 * time.Millisecond, ClientCPUKnown: true, Document: doc}
}

// TestPointIsItsRunsMerged: a point's latencies are those of every request
// of its runs together (report.MergeRuns), not an arithmetic of its own:
// {1,2,3} and {4,5} ms pool to mean 3, sd sqrt(10/4) exactly.
func TestPointIsItsRunsMerged(t *testing.T) {
	s := &Settings{Targets: []Target{{"a", "http://h/a"}}, Concurrency: []int{1}, Repeat: 3, MaxCV: 0.05}
	pt := Point{0, -1, 0, -1}
	runs := []*RunResult{fakeRun(pt, 0, 0, 1, 1000, 2000, 3000), fakeRun(pt, 1, 1, 1, 4000, 5000), fakeRun(pt, 2, 2, 1)}
	runs[2].Document = report.NotStarted(nil, time.Unix(2, 0), "refused", 1) // a run without a report counts nowhere
	p := Aggregate(s, runs)[0]
	merged, err := report.MergeRuns([]*report.Run{runs[0].Document, runs[1].Document})
	if err != nil {
		t.Fatal(err)
	}
	tot := &merged.Extended.Phases.Total
	mean, _ := p.Value("mean")
	sd, _ := p.Value("sd")
	p50, _ := p.Value("p50")
	p99, _ := p.Value("p99")
	if p.LatencyCount != 5 || tot.Count != 5 || !near(mean, 3, 1e-12) || mean != tot.MeanUs/1000 ||
		!near(sd, math.Sqrt(2.5), 1e-12) || p50 != float64(tot.MedianUs)/1000 || p99 != 5 || p.Group.Merged == nil || len(p.Group.Runs) != 2 {
		t.Errorf("point %+v, merged total %+v", p, tot)
	}
	mx, _ := report.FigureByKey("max")
	if v, ok := p.Figure(&mx); !ok || v != 5 {
		t.Errorf("max %v %v", v, ok)
	}
}

func testSweep() (*Settings, []*RunResult) {
	s := &Settings{Targets: []Target{{"a", "http://h/a"}, {"b", "http://h/b"}}, Concurrency: []int{1}, Repeat: 2, MaxCV: 0.05}
	a, b := Point{0, -1, 0, -1}, Point{1, -1, 0, -1}
	return s, []*RunResult{
		fakeRun(a, 0, 0, 100, 1000, 2000, 3000),
		fakeRun(b, 0, 1, 300, 500, 500),
		fakeRun(a, 1, 2, 110, 4000, 5000),
		fakeRun(b, 1, 3, 290, 700, 700),
	}
}

func TestAggregateAndRank(t *testing.T) {
	s, runs := testSweep()
	points := Aggregate(s, runs)
	if len(points) != 2 || points[0].Label != "a" || points[1].Label != "b" {
		t.Fatalf("points %+v", points)
	}
	a := points[0]
	if a.RPS.Mean != 105 || a.Complete != 5 || !a.Done() {
		t.Errorf("a: %+v", a)
	}
	// Latencies 1..5 ms: mean 3, sd sqrt(2.5) ms; p50 the 3rd value, p99 the 5th.
	v := func(key string) float64 { x, _ := a.Value(key); return x }
	if !near(v("mean"), 3, 1e-9) || !near(v("sd"), math.Sqrt(2.5), 1e-9) {
		t.Errorf("a latency mean %v sd %v", v("mean"), v("sd"))
	}
	if !near(v("p50"), 3, 0.005) || !near(v("p99"), 5, 0.005) {
		t.Errorf("a p50 %v p99 %v", v("p50"), v("p99"))
	}
	// 2 runs of 1 s with 0.5 s of CPU each, 5 requests: 50 % (the mean of
	// the runs') and 200 ms per request (of every request together).
	_, server := a.Value("server_cpu_us_per_request")
	if !near(v("received_mbit_per_s"), 1, 1e-12) || !near(v("client_cpu_percent"), 50, 1e-9) || !near(v("client_cpu_us_per_request"), 200000, 1e-9) || server {
		t.Errorf("a cpu %v %v server %v", v("client_cpu_percent"), v("client_cpu_us_per_request"), server)
	}
	rs := Rankings(points)
	if len(rs) != 1 || rs[0].ByThroughput[0].Label != "b" || rs[0].ByDeviation[0].Label != "b" || rs[0].ByDeviation[1].Label != "a" {
		t.Errorf("rankings %+v", rs)
	}
	// An interrupted last run leaves its point incomplete.
	runs[3].Ending = "interrupted"
	if Aggregate(s, runs)[1].Done() {
		t.Error("a point with an interrupted run is not done")
	}
	if Aggregate(s, runs[:3])[1].Done() {
		t.Error("a point with one run of two is not done")
	}
}

func TestCSVAndTable(t *testing.T) {
	s, runs := testSweep()
	points := Aggregate(s, runs)
	var buf bytes.Buffer
	if err := WriteCSV(&buf, points); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("rows %v, %v", rows, err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"label", "url", "size", "concurrency", "repeats", "rps_mean", "rps_sd", "rps_ci95",
		"latency_mean_ms", "latency_sd_ms", "p50_ms", "p99_ms", "complete", "failed", "mbit_s", "client_cpu_pct", "client_cpu_us_per_req", "server_cpu_us_per_req"} {
		if _, ok := col[h]; !ok {
			t.Errorf("no column %q", h)
		}
	}
	a := rows[1]
	// rps 100 and 110: mean 105, sd 7.0711, CI 12.706*7.0711/sqrt(2) = 63.53.
	if a[col["label"]] != "a" || a[col["rps_mean"]] != "105.00" || a[col["rps_sd"]] != "7.07" || a[col["rps_ci95"]] != "63.53" ||
		a[col["latency_mean_ms"]] != "3.000" || a[col["size"]] != "" || a[col["server_cpu_us_per_req"]] != "" || a[col["client_cpu_pct"]] != "50.0" {
		t.Errorf("row %v", a)
	}
	buf.Reset()
	if err := WriteTable(&buf, s, points, false); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"Ranking", "INCOMPLETE", "105.0", "63.5", "!"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestDocumentSchema validates a sweep document, with run documents inside,
// against docs/sweep-schema.json and docs/json-schema.json.
func TestDocumentSchema(t *testing.T) {
	s, runs := testSweep()
	s.ServerPIDs = map[string][]int{"a": {1}}
	d := NewDocument(s, Aggregate(s, runs), Meta{CommandLine: []string{"gab", "sweep"}, Start: time.Now(), End: time.Now(), Complete: true,
		Machine: report.SweepMachine{CPUs: 2, LoadStart: []float64{0.5, 0.4, 0.3}}})
	ValidateDocument(t, d, "../../docs")
	if len(d.Rankings) != 1 || d.Rankings[0].ByThroughput[0].Label != "b" || d.Points[0].Runs[1].Order != 3 {
		t.Errorf("document %+v", d)
	}
}

// ValidateDocument checks d against the sweep schema in dir.
func ValidateDocument(t *testing.T, d *report.SweepDocument, dir string) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	if err := sweeptest.Validate(buf.Bytes(), dir); err != nil {
		t.Errorf("the sweep document does not match its schema: %v", err)
	}
	var generic map[string]any
	if err := json.Unmarshal(buf.Bytes(), &generic); err != nil || generic["schema"] != "gab-sweep" {
		t.Errorf("document: %v", err)
	}
	// A document that breaks the schema is caught.
	generic["complete"] = "yes"
	bad, _ := json.Marshal(generic)
	if sweeptest.Validate(bad, dir) == nil {
		t.Error("a string for complete passed the schema")
	}
}

// TestCSVColumnsKeepTheirPlace: the --csv columns of the first versions keep
// their names and order; the catalog's other figures follow, by CSV name,
// the percentiles from the merged histograms as p50_ms and p99_ms are.
func TestCSVColumnsKeepTheirPlace(t *testing.T) {
	first := "label,url,size,size_bytes,concurrency,repeats,complete_point,rps_mean,rps_sd,rps_min,rps_max,rps_ci95,rps_cv,cv_above_max," +
		"latency_mean_ms,latency_sd_ms,p50_ms,p99_ms,complete,failed,error_runs,mbit_s,sent_mbit_s," +
		"client_cpu_pct,client_cpu_us_per_req,server_cpu_us_per_req,server_cpu_pct"
	header := CSVHeader()
	if got := strings.Join(header[:len(csvLayout)], ","); got != first {
		t.Errorf("header %s", got)
	}
	rest := []string{"param", "deviation_ms", "host_busy_us_per_req", "host_user_pct", "host_system_pct", "host_softirq_pct", "host_steal_pct", "flags", "verdicts",
		"rank_rps", "rank_rps_hi", "rank_rps_group", "rank_deviation", "rank_deviation_hi", "rank_deviation_group"}
	for _, f := range report.Catalog {
		if !strings.Contains(","+first+",", ","+f.CSV+",") {
			rest = append(rest, f.CSV)
		}
	}
	if !slices.Equal(header[len(csvLayout):], rest) || !slices.Contains(rest, "p90_ms") {
		t.Errorf("after the first columns %v, want the point's, then the catalog's others %v", header[len(csvLayout):], rest)
	}
	s, runs := testSweep()
	points := Aggregate(s, runs)
	p90, _ := report.FigureByKey("p90")
	if v, ok := points[1].Figure(&p90); !ok || v != float64(points[1].Group.Merged.Extended.Phases.Total.P90Us)/1000 || v != 0.7 {
		t.Errorf("p90 %v %v", v, ok)
	}
	d := NewDocument(s, points, Meta{})
	if fv := d.Points[0].Figures; len(fv) == 0 || fv[0].Key != "rps" || fv[0].Value != 105 {
		t.Errorf("point figures %v", fv)
	}
}
