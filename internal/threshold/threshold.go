// Package threshold parses and checks --fail-if expressions: pass/fail rules
// on a finished run's figures, for CI pipelines (as k6's thresholds).
//
// An expression is METRIC OP VALUE, spaces allowed between the parts:
//
//	p99<50ms   p99.9<=200ms   p(95)<1s   median<2ms   mean<10ms   max<1s   min>=0us
//	failed<1%  failed=0       non2xx=0   non2xx<0.5%  rps>5000    rps>=5000/s
//
// Latency metrics (pN or p(N) with 0 ≤ N ≤ 100, median, mean, min, max) take a
// duration with its unit (us, µs, ms, s); failed and non2xx take a count or a
// percentage of the completed requests; rps takes requests per second. OP is
// one of <, <=, >, >=, = (or ==), !=.
//
// Every other figure of report's catalog is a metric too, by its key
// (sd<5ms, received_mbit_per_s>100, server_cpu_us_per_request<=50): its
// value is a number in the figure's unit (a duration with its unit when that
// is ms or µs).
package threshold

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind says what a metric measures, and so which values it takes.
type Kind int

const (
	Latency Kind = iota // µs
	Count               // requests, or a percentage of the completed ones
	Rate                // requests per second
	Figure              // a figure of the catalog, in its unit (Threshold.FigureUnit)
)

// Named is a figure of the catalog as --fail-if needs it: its unit and the
// decimals it is printed with.
type Named struct {
	Unit     string
	Decimals int
}

// Catalog finds the figures --fail-if knows beyond its own metrics, by key.
// Package report sets it to read its catalog; nil: none.
var Catalog func(key string) (Named, bool)

// Threshold is one parsed expression.
type Threshold struct {
	Expr       string  // the expression as given
	Metric     string  // canonical name: "p99.9", "mean", "failed", "rps", ...
	Kind       Kind    // what Metric measures
	Percentile float64 // for pN (median: 50); -1 for other metrics
	Op         string  // "<", "<=", ">", ">=", "=", "!="
	// Value is the bound: µs for latencies, requests for counts (or a
	// percentage when Percent), requests per second for rps.
	Value   float64
	Percent bool
	// FigureUnit and Decimals are a catalog figure's (Kind Figure).
	FigureUnit string
	Decimals   int
}

// Parse reads one expression. The error says what is wrong, for a usage message.
func Parse(expr string) (Threshold, error) {
	t := Threshold{Expr: expr, Percentile: -1}
	s := strings.TrimSpace(expr)
	i := strings.IndexAny(s, "<>=!")
	if i < 0 {
		return t, fmt.Errorf("--fail-if %q: no comparison (<, <=, >, >=, =, !=)", expr)
	}
	name := strings.ToLower(strings.TrimSpace(s[:i]))
	rest := s[i:]
	for _, op := range []string{"<=", ">=", "==", "!=", "<", ">", "="} {
		if strings.HasPrefix(rest, op) {
			t.Op, rest = op, rest[len(op):]
			break
		}
	}
	if t.Op == "" {
		return t, fmt.Errorf("--fail-if %q: no comparison (<, <=, >, >=, =, !=)", expr)
	}
	if t.Op == "==" {
		t.Op = "="
	}
	if err := t.setMetric(name); err != nil {
		return t, fmt.Errorf("--fail-if %q: %v", expr, err)
	}
	if err := t.setValue(strings.TrimSpace(rest)); err != nil {
		return t, fmt.Errorf("--fail-if %q: %v", expr, err)
	}
	return t, nil
}

func (t *Threshold) setMetric(name string) error {
	switch name {
	case "mean", "avg", "min", "max":
		if name == "avg" {
			name = "mean"
		}
		t.Metric, t.Kind = name, Latency
		return nil
	case "median":
		t.Metric, t.Kind, t.Percentile = "p50", Latency, 50
		return nil
	case "failed", "non2xx":
		t.Metric, t.Kind = name, Count
		return nil
	case "rps":
		t.Metric, t.Kind = name, Rate
		return nil
	case "":
		return errors.New("no metric before the comparison")
	}
	var percentileErr error
	if name[0] == 'p' {
		num := name[1:]
		if strings.HasPrefix(num, "(") && strings.HasSuffix(num, ")") {
			num = num[1 : len(num)-1]
		}
		p, err := strconv.ParseFloat(num, 64)
		if err == nil && !math.IsNaN(p) && p >= 0 && p <= 100 && num != "" && isPlainNumber(num) {
			t.Metric, t.Kind, t.Percentile = "p"+strconv.FormatFloat(p, 'f', -1, 64), Latency, p
			return nil
		}
		percentileErr = fmt.Errorf("percentile %q is not a number from 0 to 100", num)
	}
	if Catalog != nil {
		if n, ok := Catalog(name); ok {
			t.Metric, t.Kind, t.FigureUnit, t.Decimals = name, Figure, n.Unit, n.Decimals
			return nil
		}
	}
	if percentileErr != nil {
		return percentileErr
	}
	return fmt.Errorf("unknown metric %q (pN, median, mean, min, max, failed, non2xx, rps, or a figure's key: gab --extended lists them)", name)
}

// isPlainNumber accepts digits with at most one decimal point: what ParseFloat
// would also take as hex, exponent, Inf or underscores is refused.
func isPlainNumber(s string) bool {
	dot, digits := false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// splitNumber cuts the leading plain number off s.
func splitNumber(s string) (num, unit string) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	return s[:i], strings.TrimSpace(s[i:])
}

func (t *Threshold) setValue(s string) error {
	num, unit := splitNumber(s)
	if !isPlainNumber(num) {
		return fmt.Errorf("%q is not a non-negative number", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) {
		return fmt.Errorf("%q is not a number", num)
	}
	switch t.Kind {
	case Figure:
		return t.setFigureValue(v, num, unit)
	case Latency:
		scale, ok := durationUnits[strings.ToLower(unit)]
		if !ok {
			if unit == "" {
				return fmt.Errorf("%s needs a unit: us, ms or s (e.g. %s%s%sms)", t.Metric, t.Metric, t.Op, num)
			}
			return fmt.Errorf("unknown unit %q (us, ms, s)", unit)
		}
		t.Value = v * scale
	case Count:
		switch unit {
		case "%":
			if v > 100 {
				return fmt.Errorf("%s%% is over 100%%", num)
			}
			t.Percent = true
		case "":
			if v != math.Trunc(v) {
				return fmt.Errorf("a count of requests is a whole number, not %s (or give a percentage: %s%%)", num, num)
			}
		default:
			return fmt.Errorf("%s takes a count or a percentage, not %q", t.Metric, unit)
		}
		t.Value = v
	case Rate:
		if unit != "" && unit != "/s" {
			return fmt.Errorf("rps takes requests per second, not %q", unit)
		}
		t.Value = v
	}
	return nil
}

// durationUnits are the units of a duration, in µs.
var durationUnits = map[string]float64{"us": 1, "µs": 1, "ms": 1e3, "s": 1e6}

// setFigureValue sets a catalog figure's bound: a duration with its unit for
// a figure in ms or µs, else a number with the figure's unit or none.
func (t *Threshold) setFigureValue(v float64, num, unit string) error {
	if us, ok := durationUnits[t.FigureUnit]; ok {
		scale, ok := durationUnits[strings.ToLower(unit)]
		if !ok {
			return fmt.Errorf("%s takes a duration with its unit: us, ms or s (e.g. %s%s%s%s), not %q", t.Metric, t.Metric, t.Op, num, t.FigureUnit, unit)
		}
		t.Value = v * scale / us
		return nil
	}
	if unit != "" && !strings.EqualFold(unit, t.FigureUnit) {
		if t.FigureUnit == "" {
			return fmt.Errorf("%s takes a number, not %q", t.Metric, unit)
		}
		return fmt.Errorf("%s takes a number in %s, not %q", t.Metric, t.FigureUnit, unit)
	}
	t.Value = v
	return nil
}

// Figures are the run's figures a threshold can test.
type Figures struct {
	Complete int64   // requests recorded (the denominator of percentages)
	Failed   int64   // ab's "Failed requests"
	Non2xx   int64   // ab's "Non-2xx responses"
	RPS      float64 // ab's "Requests per second"
	MeanUS   float64 // mean total time, µs
	MinUS    float64
	MaxUS    float64
	// Percentile returns the total time at percentile p in µs, as the report
	// states it (exact or from the histogram).
	Percentile func(p float64) float64
	// Named returns a catalog figure by key (ok false where the run lacks it).
	Named func(key string) (float64, bool)
}

// Verdict is a threshold's outcome.
type Verdict struct {
	Threshold
	Pass   bool
	Actual float64 // the figure tested, in Value's unit (µs, requests or %, req/s)
	// NoData is set when no request completed, so a latency has no value, or
	// the run lacks a catalog figure (a fail).
	NoData bool
}

// Check tests t against f.
func (t Threshold) Check(f Figures) Verdict {
	v := Verdict{Threshold: t}
	switch t.Metric {
	case "mean":
		v.Actual = f.MeanUS
	case "min":
		v.Actual = f.MinUS
	case "max":
		v.Actual = f.MaxUS
	case "failed", "non2xx":
		n := f.Failed
		if t.Metric == "non2xx" {
			n = f.Non2xx
		}
		v.Actual = float64(n)
		if t.Percent {
			v.Actual = percentOf(n, f.Complete)
		}
	case "rps":
		v.Actual = f.RPS
	default:
		if t.Kind == Figure {
			ok := false
			if f.Named != nil {
				v.Actual, ok = f.Named(t.Metric)
			}
			v.NoData = !ok
			v.Pass = ok && t.Holds(v.Actual)
			return v
		}
		if f.Complete > 0 && f.Percentile != nil {
			v.Actual = f.Percentile(t.Percentile)
		}
	}
	if t.Kind == Latency && f.Complete == 0 {
		v.NoData = true
		return v
	}
	v.Pass = t.Holds(v.Actual)
	return v
}

func percentOf(n, of int64) float64 {
	switch {
	case n == 0:
		return 0
	case of <= 0:
		return 100
	}
	return 100 * float64(n) / float64(of)
}

// Holds reports whether value (in Value's unit) meets the threshold.
func (t Threshold) Holds(value float64) bool {
	a, b := value, t.Value
	switch t.Op {
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "=":
		return a == b
	case "!=":
		return a != b
	}
	return false
}

// Line is the verdict as the report prints it, e.g.
// "--fail-if p99<50ms: passed (p99 = 12.345 ms)".
func (v Verdict) Line() string {
	word := "passed"
	if !v.Pass {
		word = "FAILED"
	}
	return fmt.Sprintf("--fail-if %s: %s (%s)", v.Expr, word, v.Figure())
}

// Figure states the tested figure with its unit.
func (v Verdict) Figure() string {
	if v.NoData && v.Kind == Figure {
		return v.Metric + ": not measured in this run"
	}
	if v.NoData {
		return v.Metric + ": no request completed"
	}
	switch v.Kind {
	case Figure:
		s := fmt.Sprintf("%s = %s", v.Metric, strconv.FormatFloat(v.Actual, 'f', v.Decimals, 64))
		if v.FigureUnit != "" {
			s += " " + v.FigureUnit
		}
		return s
	case Latency:
		return fmt.Sprintf("%s = %.3f ms", v.Metric, v.Actual/1e3)
	case Count:
		if v.Percent {
			return fmt.Sprintf("%s = %.2f %%", v.Metric, v.Actual)
		}
		return fmt.Sprintf("%s = %.0f", v.Metric, v.Actual)
	}
	return fmt.Sprintf("%s = %.2f [#/sec]", v.Metric, v.Actual)
}

// CheckAll tests every threshold; ok is false if any failed.
func CheckAll(ts []Threshold, f Figures) (vs []Verdict, ok bool) {
	ok = true
	for _, t := range ts {
		v := t.Check(f)
		vs = append(vs, v)
		ok = ok && v.Pass
	}
	return vs, ok
}

// ExitStatus is gab's exit status when the run went well but a threshold
// failed. ab never exits with it: its statuses are 1, 22 and the errno values
// of network system calls, of which 3 (ESRCH) is none.
const ExitStatus = 3

// Unit names Value's and Actual's unit, as the JSON document states it: a
// catalog figure's own unit, "requests" for a count.
func (t Threshold) Unit() string {
	switch {
	case t.Kind == Figure && t.FigureUnit != "":
		return t.FigureUnit
	case t.Kind == Latency:
		return "us"
	case t.Kind == Rate:
		return "per_s"
	case t.Percent:
		return "percent"
	}
	return "requests"
}
