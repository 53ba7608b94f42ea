package report

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/internal/threshold"
)

// TestCatalogReadsTheDocument checks each figure of the fixture's document
// against the section it comes from.
func TestCatalogReadsTheDocument(t *testing.T) {
	d, _ := fixtureDocument(t)
	x := &d.Extended.Phases.Total
	want := map[string]float64{
		"rps": 4, "mean": 5.5045, "min": 1, "max": 10.009, "p50": 5.007, "p90": 9.015, "p99": 10.009, "p99.9": 10.009,
		"complete": 10, "failed": 4, "non2xx": 3, "received_mbit_per_s": 0.4, "sent_mbit_per_s": 0.08,
		"client_cpu_percent": 80, "client_cpu_us_per_request": 2e6 / 10,
	}
	got := map[string]float64{}
	for _, v := range figuresOf(d) {
		got[v.Key] = v.Value
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, w)
		}
	}
	// The sd from the exact sums is the phase table's (Welford's) to 1e-9.
	if g := got["sd"]; math.Abs(g-x.SDUs/1000) > 1e-9 {
		t.Errorf("sd = %v, want the extended total's %v", g, x.SDUs/1000)
	}
	for _, k := range []string{"server_cpu_percent", "server_cpu_us_per_request"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s present without --server-pid", k)
		}
	}
	// Without sums or extended figures, the latencies are ab's.
	d.Sums, d.Extended = nil, nil
	if v, ok := figureValue("mean", d); !ok || v != 5.504 {
		t.Errorf("mean from ab's table = %v, %v; want 5.504", v, ok)
	}
	if v, ok := figureValue("sd", d); !ok || math.Abs(v-3.0306780502792514) > 1e-12 {
		t.Errorf("sd from ab's table = %v, %v", v, ok)
	}
	if _, ok := figureValue("p99", d); ok {
		t.Error("p99 without a histogram")
	}
	// A run that never started has no figure, and no block.
	ns := NotStarted([]string{"gab"}, time.Unix(0, 0), "x\n", 22)
	var b bytes.Buffer
	if err := writeFigureBlock(&b, ns); err != nil || len(ns.Figures) != 0 || b.Len() != 0 {
		t.Errorf("not started: %v %q %v", ns.Figures, b.String(), err)
	}
}

// figureValue is the catalog's figure key of d.
func figureValue(key string, d *Run) (float64, bool) {
	f, ok := FigureByKey(key)
	if !ok {
		return 0, false
	}
	return f.Value(d)
}

func TestCatalogKeysAreUnique(t *testing.T) {
	keys, csv := map[string]bool{}, map[string]bool{}
	for _, f := range Catalog {
		if f.Key == "" || f.Title == "" || f.CSV == "" || f.Of == nil || keys[f.Key] || csv[f.CSV] {
			t.Errorf("%+v: empty or repeated key, title or CSV name", f)
		}
		if strings.ContainsAny(f.Key+f.CSV, " ,\"<>=!") {
			t.Errorf("%s: key or CSV name %q with a character --fail-if or CSV would split on", f.Key, f.CSV)
		}
		keys[f.Key], csv[f.CSV] = true, true
	}
}

func TestFigureValuesJSON(t *testing.T) {
	in := FigureValues{{"z", 1.5}, {"a", 2}, {"p99.9", 0.001}}
	b, err := json.Marshal(struct {
		F FigureValues `json:"figures"`
	}{in})
	if err != nil || string(b) != `{"figures":{"z":1.5,"a":2,"p99.9":0.001}}` {
		t.Fatalf("%s %v", b, err)
	}
	var out struct {
		F FigureValues `json:"figures"`
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.F) != 3 || out.F[0] != in[0] || out.F[2] != in[2] {
		t.Fatalf("%v %v", out.F, err)
	}
	for _, bad := range []string{`{"figures":[1]}`, `{"figures":{"a":"1"}}`, `{"figures":{"a":null}}`, `{"figures":3}`} {
		if err := json.Unmarshal([]byte(bad), &out); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestFigureValueIsFinite: a figure that reads NaN or ±Inf is absent (JSON
// has no such numbers).
func TestFigureValueIsFinite(t *testing.T) {
	d, _ := fixtureDocument(t)
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		f := Figure{Key: "x", Of: func(*Run) (float64, bool) { return v, true }}
		if _, ok := f.Value(d); ok {
			t.Errorf("%v: present", v)
		}
	}
}

func TestSDOfSums(t *testing.T) {
	// 1, 2, 3, 4: sd √(5/3); one value: 0; equal values: 0.
	if got := sdOfSums(4, 10, big.NewInt(30)); math.Abs(got-math.Sqrt(5.0/3)) > 1e-12 {
		t.Errorf("sd = %v", got)
	}
	if got := sdOfSums(1, 7, big.NewInt(49)); got != 0 {
		t.Errorf("one value: %v", got)
	}
	// 10^6 values of 2^40 µs: Σx² passes 2^64 and the variance is 0 exactly.
	v := uint64(1) << 40
	sq := new(big.Int).Mul(new(big.Int).SetUint64(v), new(big.Int).SetUint64(v))
	sq.Mul(sq, big.NewInt(1e6))
	if got := sdOfSums(1e6, v*1e6, sq); got != 0 {
		t.Errorf("equal values: %v", got)
	}
}

// TestCatalogPercentileFromSums: a document's total-time percentiles come
// from its sums' histogram by the nearest rank (n·p/100 rounded half up,
// 1-based: HdrHistogram's ValueAtQuantile), clamped to the exact min and max.
func TestCatalogPercentileFromSums(t *testing.T) {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for v := int64(1); v <= 1000; v++ {
		_ = h.RecordValue(v)
	}
	data, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	d := &Run{Sums: &sumsSection{Total: exactSums{Count: 1000, MinUs: 1, MaxUs: 1000, SumUs: 500500,
		Histogram: histogramData{Encoding: "hdrhistogram-v2-compressed-base64", Data: string(data)}}}}
	for p, want := range map[float64]float64{50: 0.500, 99: 0.990, 99.9: 0.999, 99.95: 1.000, 100: 1.000} {
		if got, ok := percentileMs(p)(d); !ok || got != want {
			t.Errorf("p%v = %v, %v; want %v ms", p, got, ok, want)
		}
	}
}

// TestFailIfCatalogFigure: --fail-if tests any catalog figure by its key, in
// the figure's unit (a latency's in µs, as every latency's); a figure the
// run lacks fails the check.
func TestFailIfCatalogFigure(t *testing.T) {
	var ts []threshold.Threshold
	for _, e := range []string{"sd<3ms", "received_mbit_per_s>=0.4", "server_cpu_percent<50"} {
		th, err := ParseThreshold(e)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, th)
	}
	res, _ := extFixture()
	s := Summarize(res, Options{Concurrency: 2, FailIf: ts})
	var b bytes.Buffer
	if err := writeThresholds(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "\n--fail-if sd<3ms: FAILED (sd = 3.031 ms)\n--fail-if received_mbit_per_s>=0.4: passed (received_mbit_per_s = 0.400 Mbit/s)\n" +
		"--fail-if server_cpu_percent<50: FAILED (server_cpu_percent: not measured in this run)\n"
	if b.String() != want || !s.ThresholdsFailed() {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	d := s
	if c := d.Thresholds.Checks; len(c) != 3 || c[0].Unit != "us" || c[0].Bound != 3000 || c[1].Unit != "Mbit/s" || c[2].Value != nil {
		t.Errorf("JSON checks: %+v", c)
	}
}

// TestHTMLPageReadsTheCatalog: each run's figures table and the comparison
// of several runs list the catalog's figures; a figure no run has is left out.
func TestHTMLPageReadsTheCatalog(t *testing.T) {
	d, _ := fixtureDocument(t)
	var b bytes.Buffer
	page := &Page{Title: "t", Runs: []PageRun{{Label: "one", Doc: d}, {Label: "two", Doc: d}}}
	if err := WriteHTMLPage(&b, page); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"<h3>Figures</h3>", "<th>Received [Mbit/s]</th>", "<td>Received [Mbit/s]</td><td>0.400</td><td>received_mbit_per_s</td>",
		"<td>1</td><td>one</td><td>100.0%</td><td>4.00</td><td>5.505</td>"} {
		if !strings.Contains(html, want) {
			t.Errorf("no %s in\n%s", want, html)
		}
	}
	if strings.Contains(html, "Server CPU") {
		t.Error("a column for a figure no run has")
	}
}

// TestLookupFigure: the catalog resolves every name --fail-if and --slo
// take: its keys, the aliases, any percentile of the total time (read by
// the catalog's own percentile rule), and refuses the rest.
func TestLookupFigure(t *testing.T) {
	for name, want := range map[string]threshold.Metric{
		"p99":                       {Key: "p99", Kind: threshold.Latency, Unit: "ms", Decimals: 3, Percentile: 99},
		"median":                    {Key: "p50", Kind: threshold.Latency, Unit: "ms", Decimals: 3, Percentile: 50},
		"p(95)":                     {Key: "p95", Kind: threshold.Latency, Unit: "ms", Decimals: 3, Percentile: 95},
		"p99.90":                    {Key: "p99.9", Kind: threshold.Latency, Unit: "ms", Decimals: 3, Percentile: 99.9},
		"p100":                      {Key: "p100", Kind: threshold.Latency, Unit: "ms", Decimals: 3, Percentile: 100},
		"avg":                       {Key: "mean", Kind: threshold.Latency, Unit: "ms", Decimals: 3, Percentile: -1},
		"sd":                        {Key: "sd", Kind: threshold.Latency, Unit: "ms", Decimals: 3, Percentile: -1},
		"failed":                    {Key: "failed", Kind: threshold.Count, Percentile: -1},
		"rps":                       {Key: "rps", Kind: threshold.Rate, Unit: "#/s", Decimals: 2, Percentile: -1},
		"client_cpu_us_per_request": {Key: "client_cpu_us_per_request", Kind: threshold.Figure, Unit: "µs", Decimals: 1, Percentile: -1},
	} {
		if got, err := LookupFigure(name); err != nil || got != want {
			t.Errorf("LookupFigure(%q) = %+v, %v; want %+v", name, got, err, want)
		}
	}
	for name, want := range map[string]string{
		"p101": "not a number from 0 to 100", "p-1": "not a number from 0 to 100", "pnan": "not a number from 0 to 100",
		"p0x10": "not a number from 0 to 100", "p": "not a number from 0 to 100", "p1e3": "not a number from 0 to 100",
		"latency": "unknown metric", "": "unknown metric",
	} {
		if _, err := LookupFigure(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LookupFigure(%q): %v, want %q", name, err, want)
		}
	}
	// A percentile outside the catalog's list reads by the same rule as theirs.
	d, _ := fixtureDocument(t)
	for _, p := range []string{"p95", "p99"} {
		m, _ := LookupFigure(p)
		f, _, _ := resolveFigure(p)
		v, ok := f.Value(d)
		if us, ok2 := d.thresholdValue(m); !ok || !ok2 || us != msToUs(v) {
			t.Errorf("%s: figure %v %v, --fail-if %v µs %v", p, v, ok, us, ok2)
		}
	}
}
