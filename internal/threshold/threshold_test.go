package threshold

import (
	"strings"
	"testing"
)

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
		{" p(95) <= 1.5s ", "p95", Latency, 95, "<=", 1.5e6, false},
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
		th, err := Parse(c.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.expr, err)
			continue
		}
		if th.Metric != c.metric || th.Kind != c.kind || th.Percentile != c.pct || th.Op != c.op || th.Value != c.value || th.Percent != c.percent || th.Expr != c.expr {
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
		"p101<5ms":    "not a number from 0 to 100",
		"p-1<5ms":     "not a number from 0 to 100",
		"pNaN<5ms":    "not a number from 0 to 100",
		"p0x10<5ms":   "not a number from 0 to 100",
		"p<5ms":       "not a number from 0 to 100",
		"latency<5ms": "unknown metric",
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
		_, err := Parse(expr)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", expr, err, want)
		}
	}
}

func figures() Figures {
	return Figures{
		Complete: 1000, Failed: 5, Non2xx: 0, RPS: 6000.5,
		MeanUS: 1234, MinUS: 80, MaxUS: 70000,
		Percentile: func(p float64) float64 {
			switch {
			case p >= 99.9:
				return 60000
			case p >= 99:
				return 45000
			}
			return 1000
		},
	}
}

func TestCheck(t *testing.T) {
	f := figures()
	for expr, want := range map[string]string{
		"p99<50ms":    "--fail-if p99<50ms: passed (p99 = 45.000 ms)",
		"p99.9<50ms":  "--fail-if p99.9<50ms: FAILED (p99.9 = 60.000 ms)",
		"mean<1ms":    "--fail-if mean<1ms: FAILED (mean = 1.234 ms)",
		"mean<10ms":   "--fail-if mean<10ms: passed (mean = 1.234 ms)",
		"max<=70ms":   "--fail-if max<=70ms: passed (max = 70.000 ms)",
		"min>100us":   "--fail-if min>100us: FAILED (min = 0.080 ms)",
		"failed<1%":   "--fail-if failed<1%: passed (failed = 0.50 %)",
		"failed=0":    "--fail-if failed=0: FAILED (failed = 5)",
		"non2xx=0":    "--fail-if non2xx=0: passed (non2xx = 0)",
		"rps>5000":    "--fail-if rps>5000: passed (rps = 6000.50 [#/sec])",
		"rps>7000":    "--fail-if rps>7000: FAILED (rps = 6000.50 [#/sec])",
		"non2xx!=0":   "--fail-if non2xx!=0: FAILED (non2xx = 0)",
		"failed>=5":   "--fail-if failed>=5: passed (failed = 5)",
		"median>=1ms": "--fail-if median>=1ms: passed (p50 = 1.000 ms)",
	} {
		th, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := th.Check(f).Line(); got != want {
			t.Errorf("%s: %q, want %q", expr, got, want)
		}
	}
}

func TestCheckNoRequests(t *testing.T) {
	f := Figures{Failed: 3}
	th, _ := Parse("p99<50ms")
	v := th.Check(f)
	if v.Pass || v.Line() != "--fail-if p99<50ms: FAILED (p99: no request completed)" {
		t.Errorf("latency with no request: %+v %q", v, v.Line())
	}
	th, _ = Parse("failed<1%")
	if v := th.Check(f); v.Pass || v.Actual != 100 {
		t.Errorf("failures with no completed request: %+v", v)
	}
}

func TestCheckAll(t *testing.T) {
	var ts []Threshold
	for _, e := range []string{"p99<50ms", "rps>5000"} {
		th, _ := Parse(e)
		ts = append(ts, th)
	}
	if vs, ok := CheckAll(ts, figures()); !ok || len(vs) != 2 {
		t.Errorf("all pass: ok=%v %v", ok, vs)
	}
	th, _ := Parse("failed=0")
	if _, ok := CheckAll(append(ts, th), figures()); ok {
		t.Error("one failing threshold must fail the whole")
	}
}

// FuzzParse: Parse never panics, and what it accepts is a complete, valid
// threshold that parses again to the same thing from its expression.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"p99<50ms", "p99.9<200ms", "mean<10ms", "failed<1%", "non2xx=0", "rps>5000", "p(95)<=1s", "min>=3µs", "x", "<", "p1e3<5ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := Parse(s)
		if err != nil {
			return
		}
		if th.Op == "" || th.Metric == "" || th.Value < 0 || th.Value != th.Value {
			t.Fatalf("Parse(%q) accepted %+v", s, th)
		}
		if th.Kind == Latency && (th.Percentile < -1 || th.Percentile > 100) {
			t.Fatalf("Parse(%q): percentile %v", s, th.Percentile)
		}
		if th.Percent && th.Value > 100 {
			t.Fatalf("Parse(%q): %v%%", s, th.Value)
		}
		_ = th.Check(figures()).Line()
	})
}

// withCatalog makes --fail-if know two catalog figures for the test.
func withCatalog(t *testing.T) {
	old := Catalog
	Catalog = func(key string) (Named, bool) {
		n, ok := map[string]Named{"sd": {"ms", 3}, "received_mbit_per_s": {"Mbit/s", 3}, "complete": {"", 0}, "p99": {"ms", 3}}[key]
		return n, ok
	}
	t.Cleanup(func() { Catalog = old })
}

// TestCatalogFigures: a catalog figure's key is a metric; its bound is in
// the figure's unit (a duration for ms and µs); the built-in metrics keep
// their meaning where a key is also one (p99).
func TestCatalogFigures(t *testing.T) {
	withCatalog(t)
	for expr, want := range map[string]Threshold{
		"sd<5ms":                           {Metric: "sd", Kind: Figure, Op: "<", Value: 5, FigureUnit: "ms", Decimals: 3},
		"sd <= 1500us":                     {Metric: "sd", Kind: Figure, Op: "<=", Value: 1.5, FigureUnit: "ms", Decimals: 3},
		"SD>1s":                            {Metric: "sd", Kind: Figure, Op: ">", Value: 1000, FigureUnit: "ms", Decimals: 3},
		"received_mbit_per_s>100":          {Metric: "received_mbit_per_s", Kind: Figure, Op: ">", Value: 100, FigureUnit: "Mbit/s", Decimals: 3},
		"received_mbit_per_s > 100 mbit/s": {Metric: "received_mbit_per_s", Kind: Figure, Op: ">", Value: 100, FigureUnit: "Mbit/s", Decimals: 3},
		"complete>=1000":                   {Metric: "complete", Kind: Figure, Op: ">=", Value: 1000},
	} {
		th, err := Parse(expr)
		want.Expr, want.Percentile = expr, -1
		if err != nil || th != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", expr, th, err, want)
		}
	}
	if th, err := Parse("p99<5ms"); err != nil || th.Kind != Latency || th.Value != 5000 {
		t.Errorf("p99 is the built-in metric: %+v %v", th, err)
	}
	for expr, want := range map[string]string{
		"sd<5":                         "sd takes a duration with its unit: us, ms or s (e.g. sd<5ms)",
		"sd<5min":                      `not "min"`,
		"received_mbit_per_s>100KB/s":  `received_mbit_per_s takes a number in Mbit/s, not "KB/s"`,
		"complete>=1000%":              `complete takes a number, not "%"`,
		"sent_mbit_per_s>1":            "unknown metric",
		"received_mbit_per_s>-1":       "not a non-negative number",
		"received_mbit_per_s>1e3":      `takes a number in Mbit/s, not "e3"`,
		"received_mbit_per_s>Infinity": "not a non-negative number",
	} {
		if _, err := Parse(expr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v; want %q", expr, err, want)
		}
	}
}

func TestCheckCatalogFigure(t *testing.T) {
	withCatalog(t)
	figures := Figures{Complete: 10, Named: func(key string) (float64, bool) {
		v, ok := map[string]float64{"sd": 1.25, "complete": 10}[key]
		return v, ok
	}}
	for expr, want := range map[string]string{
		"sd<2ms":                  "--fail-if sd<2ms: passed (sd = 1.250 ms)",
		"sd<1ms":                  "--fail-if sd<1ms: FAILED (sd = 1.250 ms)",
		"complete>=10":            "--fail-if complete>=10: passed (complete = 10)",
		"received_mbit_per_s>100": "--fail-if received_mbit_per_s>100: FAILED (received_mbit_per_s: not measured in this run)",
	} {
		th, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		v := th.Check(figures)
		if v.Line() != want {
			t.Errorf("%s: %q, want %q", expr, v.Line(), want)
		}
	}
	if th, _ := Parse("received_mbit_per_s>100"); th.Unit() != "Mbit/s" {
		t.Errorf("unit %q", th.Unit())
	}
	if th, _ := Parse("complete>1"); th.Unit() != "requests" {
		t.Errorf("unit %q", th.Unit())
	}
}
