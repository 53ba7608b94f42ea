package threshold

import (
	"errors"
	"strings"
	"testing"
)

// lookup resolves the names of the tests as report's catalog does (report's
// tests check the catalog's own resolution).
func lookup(name string) (Metric, error) {
	switch name {
	case "median":
		name = "p50"
	case "avg":
		name = "mean"
	}
	pct := map[string]float64{"p0": 0, "p50": 50, "p95": 95, "p99": 99, "p99.9": 99.9, "p100": 100}
	if p, ok := pct[name]; ok {
		return Metric{Key: name, Kind: Latency, Unit: "ms", Decimals: 3, Percentile: p}, nil
	}
	m, ok := map[string]Metric{
		"mean":                {Key: "mean", Kind: Latency, Unit: "ms", Decimals: 3},
		"min":                 {Key: "min", Kind: Latency, Unit: "ms", Decimals: 3},
		"max":                 {Key: "max", Kind: Latency, Unit: "ms", Decimals: 3},
		"failed":              {Key: "failed", Kind: Count},
		"non2xx":              {Key: "non2xx", Kind: Count},
		"rps":                 {Key: "rps", Kind: Rate, Unit: "#/s", Decimals: 2},
		"received_mbit_per_s": {Key: "received_mbit_per_s", Kind: Figure, Unit: "Mbit/s", Decimals: 3},
		"cpu_us":              {Key: "cpu_us", Kind: Figure, Unit: "µs", Decimals: 1},
		"complete":            {Key: "complete", Kind: Figure},
	}[name]
	if !ok {
		return Metric{}, errors.New("unknown metric " + name)
	}
	m.Percentile = -1
	return m, nil
}

func TestParse(t *testing.T) {
	cases := []struct {
		expr    string
		metric  string
		kind    Kind
		pct     float64
		op      string
		value   float64
		percent bool
	}{
		{"p99<50ms", "p99", Latency, 99, "<", 50000, false},
		{"p99.9<200ms", "p99.9", Latency, 99.9, "<", 200000, false},
		{" p95 <= 1.5s ", "p95", Latency, 95, "<=", 1.5e6, false},
		{"median<2ms", "p50", Latency, 50, "<", 2000, false},
		{"mean<10ms", "mean", Latency, -1, "<", 10000, false},
		{"avg<10ms", "mean", Latency, -1, "<", 10000, false},
		{"MAX<250us", "max", Latency, -1, "<", 250, false},
		{"min>=3µs", "min", Latency, -1, ">=", 3, false},
		{"failed<1%", "failed", Count, -1, "<", 1, true},
		{"failed=0", "failed", Count, -1, "=", 0, false},
		{"non2xx=0", "non2xx", Count, -1, "=", 0, false},
		{"non2xx==0", "non2xx", Count, -1, "=", 0, false},
		{"non2xx != 3", "non2xx", Count, -1, "!=", 3, false},
		{"rps>5000", "rps", Rate, -1, ">", 5000, false},
		{"rps>=5000/s", "rps", Rate, -1, ">=", 5000, false},
		{"p100<1s", "p100", Latency, 100, "<", 1e6, false},
		{"p0>0us", "p0", Latency, 0, ">", 0, false},
	}
	for _, c := range cases {
		th, err := Parse(c.expr, lookup)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.expr, err)
			continue
		}
		if th.Key != c.metric || th.Kind != c.kind || th.Percentile != c.pct || th.Op != c.op || th.Value != c.value || th.Percent != c.percent || th.Expr != c.expr {
			t.Errorf("Parse(%q) = %+v", c.expr, th)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for expr, want := range map[string]string{
		"":            "no comparison",
		"p99":         "no comparison",
		"p99 50ms":    "no comparison",
		"<50ms":       "no metric",
		"p99<50":      "needs a unit",
		"p99<50min":   "unknown unit",
		"latency<5ms": "unknown metric latency",
		"failed<101%": "over 100%",
		"failed<1.5":  "whole number",
		"failed<3ms":  "count or a percentage",
		"rps>5k":      "requests per second",
		"rps>-5":      "not a non-negative number",
		"rps>":        "not a non-negative number",
		"rps>1e3":     "requests per second",
		"mean<=>5ms":  "not a non-negative number",
		"mean!5ms":    "no comparison",
		"rps>Inf":     "not a non-negative number",
	} {
		_, err := Parse(expr, lookup)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", expr, err, want)
		}
	}
}

// figures are a run's: 1000 requests, 5 failed.
func figures() Figures {
	return Figures{Requests: 1000, Value: func(m Metric) (float64, bool) {
		switch {
		case m.Percentile >= 99.9:
			return 60000, true
		case m.Percentile >= 99:
			return 45000, true
		case m.Percentile >= 0:
			return 1000, true
		}
		v, ok := map[string]float64{"mean": 1234, "min": 80, "max": 70000, "failed": 5, "non2xx": 0, "rps": 6000.5, "cpu_us": 12.25, "complete": 1000}[m.Key]
		return v, ok
	}}
}

func TestCheck(t *testing.T) {
	f := figures()
	for expr, want := range map[string]string{
		"p99<50ms":                "--fail-if p99<50ms: passed (p99 = 45.000 ms)",
		"p99.9<50ms":              "--fail-if p99.9<50ms: FAILED (p99.9 = 60.000 ms)",
		"mean<1ms":                "--fail-if mean<1ms: FAILED (mean = 1.234 ms)",
		"mean<10ms":               "--fail-if mean<10ms: passed (mean = 1.234 ms)",
		"max<=70ms":               "--fail-if max<=70ms: passed (max = 70.000 ms)",
		"min>100us":               "--fail-if min>100us: FAILED (min = 0.080 ms)",
		"failed<1%":               "--fail-if failed<1%: passed (failed = 0.50 %)",
		"failed=0":                "--fail-if failed=0: FAILED (failed = 5)",
		"non2xx=0":                "--fail-if non2xx=0: passed (non2xx = 0)",
		"rps>5000":                "--fail-if rps>5000: passed (rps = 6000.50 [#/sec])",
		"rps>7000":                "--fail-if rps>7000: FAILED (rps = 6000.50 [#/sec])",
		"non2xx!=0":               "--fail-if non2xx!=0: FAILED (non2xx = 0)",
		"failed>=5":               "--fail-if failed>=5: passed (failed = 5)",
		"median>=1ms":             "--fail-if median>=1ms: passed (p50 = 1.000 ms)",
		"cpu_us<20us":             "--fail-if cpu_us<20us: passed (cpu_us = 12.2 µs)",
		"complete>=1000":          "--fail-if complete>=1000: passed (complete = 1000)",
		"received_mbit_per_s>100": "--fail-if received_mbit_per_s>100: FAILED (received_mbit_per_s: not measured in this run)",
	} {
		th, err := Parse(expr, lookup)
		if err != nil {
			t.Fatal(err)
		}
		if got := th.Check(f).Line(); got != want {
			t.Errorf("%s: %q, want %q", expr, got, want)
		}
	}
}

func TestCheckNoRequests(t *testing.T) {
	f := Figures{Value: func(m Metric) (float64, bool) { return 3, m.Key == "failed" }}
	th, _ := Parse("p99<50ms", lookup)
	v := th.Check(f)
	if v.Pass || v.Line() != "--fail-if p99<50ms: FAILED (p99: no request completed)" {
		t.Errorf("latency with no request: %+v %q", v, v.Line())
	}
	th, _ = Parse("failed<1%", lookup)
	if v := th.Check(f); v.Pass || v.Actual != 100 {
		t.Errorf("failures with no completed request: %+v", v)
	}
}

func TestCheckAll(t *testing.T) {
	var ts []Threshold
	for _, e := range []string{"p99<50ms", "rps>5000"} {
		th, _ := Parse(e, lookup)
		ts = append(ts, th)
	}
	if vs, ok := CheckAll(ts, figures()); !ok || len(vs) != 2 {
		t.Errorf("all pass: ok=%v %v", ok, vs)
	}
	th, _ := Parse("failed=0", lookup)
	if _, ok := CheckAll(append(ts, th), figures()); ok {
		t.Error("one failing threshold must fail the whole")
	}
}

// FuzzParse: Parse never panics, and what it accepts is a complete, valid
// threshold.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"p99<50ms", "p99.9<200ms", "mean<10ms", "failed<1%", "non2xx=0", "rps>5000", "p95<=1s", "min>=3µs", "x", "<", "p1e3<5ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := Parse(s, lookup)
		if err != nil {
			return
		}
		if th.Op == "" || th.Key == "" || th.Value < 0 || th.Value != th.Value {
			t.Fatalf("Parse(%q) accepted %+v", s, th)
		}
		if th.Percent && th.Value > 100 {
			t.Fatalf("Parse(%q): %v%%", s, th.Value)
		}
		_ = th.Check(figures()).Line()
	})
}

// TestFigureBounds: a figure's bound is in its unit (a duration for ms and
// µs), a number in its unit or none otherwise.
func TestFigureBounds(t *testing.T) {
	for expr, want := range map[string]float64{
		"cpu_us<5us":                       5,
		"cpu_us <= 1.5ms":                  1500,
		"received_mbit_per_s>100":          100,
		"received_mbit_per_s > 100 mbit/s": 100,
		"complete>=1000":                   1000,
	} {
		th, err := Parse(expr, lookup)
		if err != nil || th.Kind != Figure || th.Value != want {
			t.Errorf("Parse(%q) = %+v, %v; want the bound %v", expr, th, err, want)
		}
	}
	for expr, want := range map[string]string{
		"cpu_us<5":                     "cpu_us takes a duration with its unit: us, ms or s (e.g. cpu_us<5µs)",
		"cpu_us<5min":                  `not "min"`,
		"received_mbit_per_s>100KB/s":  `received_mbit_per_s takes a number in Mbit/s, not "KB/s"`,
		"complete>=1000%":              `complete takes a number, not "%"`,
		"received_mbit_per_s>-1":       "not a non-negative number",
		"received_mbit_per_s>1e3":      `takes a number in Mbit/s, not "e3"`,
		"received_mbit_per_s>Infinity": "not a non-negative number",
	} {
		if _, err := Parse(expr, lookup); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v; want %q", expr, err, want)
		}
	}
	for expr, want := range map[string]string{"received_mbit_per_s>100": "Mbit/s", "complete>1": "requests", "p99<1ms": "us", "failed<1%": "percent", "rps>1": "per_s"} {
		if th, _ := Parse(expr, lookup); th.ValueUnit() != want {
			t.Errorf("%s: unit %q, want %q", expr, th.ValueUnit(), want)
		}
	}
}
