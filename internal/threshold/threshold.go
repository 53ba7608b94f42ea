// Package threshold parses and checks --fail-if expressions: pass/fail rules
// on a finished run's figures, for CI pipelines (as k6's thresholds). It
// parses and compares only: a figure's name is resolved, and its value read,
// by the caller (report's catalog: report.ParseThreshold and the run's
// figures), so that a rule reads the very number every output shows.
//
// An expression is METRIC OP VALUE, spaces allowed between the parts:
//
//	p99<50ms   p99.9<=200ms   p(95)<1s   median<2ms   mean<10ms   max<1s   min>=0us
//	failed<1%  failed=0       non2xx=0   non2xx<0.5%  rps>5000    rps>=5000/s
//
// What the value takes follows the metric's Kind: a latency takes a duration
// with its unit (us, µs, ms, s); a count takes a count or a percentage of
// the requests; a rate takes requests per second; any other figure a number
// in its unit (a duration with its unit when that is ms or µs). OP is one of
// <, <=, >, >=, = (or ==), !=.
package threshold

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind says what a metric measures, and so which values it takes.
type Kind int

const (
	Latency Kind = iota // a duration; Value and Actual in µs
	Count               // requests, or a percentage of the requests
	Rate                // requests per second
	Figure              // any other figure, in its unit (Metric.Unit)
)

// Metric is a figure's name resolved by a Lookup: what Parse needs to read
// a bound, and what Figures.Value needs to find the value.
type Metric struct {
	// Key is the canonical name: "p99", "p95", "mean", "failed", "rps",
	// "client_cpu_us_per_request".
	Key  string
	Kind Kind
	// Unit is the figure's unit as its source states it ("ms", "µs", "",
	// "Mbit/s"), and Decimals the digits a verdict prints it with.
	Unit     string
	Decimals int
	// Percentile is p for the total time's percentile pN; -1 otherwise.
	Percentile float64
}

// Lookup resolves a figure's name (lower-case, trimmed); the error says why
// a name is not one (shown after "--fail-if EXPR: ").
type Lookup func(name string) (Metric, error)

// Threshold is one parsed expression.
type Threshold struct {
	Expr string // the expression as given
	Metric
	Op string // "<", "<=", ">", ">=", "=", "!="
	// Value is the bound: µs for a latency, requests (or a percentage when
	// Percent) for a count, requests per second for a rate, the figure's
	// unit otherwise.
	Value   float64
	Percent bool
}

// Parse reads one expression, resolving its metric's name with lookup. The
// error says what is wrong, for a usage message.
func Parse(expr string, lookup Lookup) (Threshold, error) {
	t := Threshold{Expr: expr}
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
	if name == "" {
		return t, fmt.Errorf("--fail-if %q: no metric before the comparison", expr)
	}
	m, err := lookup(name)
	if err != nil {
		return t, fmt.Errorf("--fail-if %q: %v", expr, err)
	}
	t.Metric = m
	if err := t.setValue(strings.TrimSpace(rest)); err != nil {
		return t, fmt.Errorf("--fail-if %q: %v", expr, err)
	}
	return t, nil
}

// IsPlainNumber accepts digits with at most one decimal point: what
// ParseFloat would also take as hex, exponent, Inf or underscores is
// refused. It is the rule for a bound, and for a percentile's name.
func IsPlainNumber(s string) bool {
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
	if !IsPlainNumber(num) {
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
				return fmt.Errorf("%s needs a unit: us, ms or s (e.g. %s%s%sms)", t.Key, t.Key, t.Op, num)
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
			return fmt.Errorf("%s takes a count or a percentage, not %q", t.Key, unit)
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
	if us, ok := durationUnits[t.Unit]; ok {
		scale, ok := durationUnits[strings.ToLower(unit)]
		if !ok {
			return fmt.Errorf("%s takes a duration with its unit: us, ms or s (e.g. %s%s%s%s), not %q", t.Key, t.Key, t.Op, num, t.Unit, unit)
		}
		t.Value = v * scale / us
		return nil
	}
	if unit != "" && !strings.EqualFold(unit, t.Unit) {
		if t.Unit == "" {
			return fmt.Errorf("%s takes a number, not %q", t.Key, unit)
		}
		return fmt.Errorf("%s takes a number in %s, not %q", t.Key, t.Unit, unit)
	}
	t.Value = v
	return nil
}

// Figures are what a threshold is checked against: a run's figures, or a
// capacity step's.
type Figures struct {
	// Value reads the metric's figure in the threshold's unit (µs for a
	// latency, requests for a count, requests per second for a rate, else
	// Metric.Unit); ok is false where the source lacks it (no request
	// completed, or the figure was not measured).
	Value func(m Metric) (v float64, ok bool)
	// Requests is the denominator of a count's percentage.
	Requests int64
}

// Verdict is a threshold's outcome.
type Verdict struct {
	Threshold
	Pass   bool
	Actual float64 // the figure tested, in Value's unit (µs, requests or %, req/s, Unit)
	// NoData is set when the source lacks the figure (a fail): a latency of
	// a run that completed no request, or a figure not measured.
	NoData bool
}

// Check tests t against f.
func (t Threshold) Check(f Figures) Verdict {
	v := Verdict{Threshold: t}
	ok := false
	if f.Value != nil {
		v.Actual, ok = f.Value(t.Metric)
	}
	if !ok {
		v.Actual, v.NoData = 0, true
		return v
	}
	if t.Kind == Count && t.Percent {
		v.Actual = percentOf(int64(v.Actual), f.Requests)
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
	switch {
	case v.NoData && (v.Kind == Latency || v.Kind == Count):
		return v.Key + ": no request completed"
	case v.NoData:
		return v.Key + ": not measured in this run"
	}
	switch v.Kind {
	case Figure:
		s := fmt.Sprintf("%s = %s", v.Key, strconv.FormatFloat(v.Actual, 'f', v.Decimals, 64))
		if v.Unit != "" {
			s += " " + v.Unit
		}
		return s
	case Latency:
		return fmt.Sprintf("%s = %.3f ms", v.Key, v.Actual/1e3)
	case Count:
		if v.Percent {
			return fmt.Sprintf("%s = %.2f %%", v.Key, v.Actual)
		}
		return fmt.Sprintf("%s = %.0f", v.Key, v.Actual)
	}
	return fmt.Sprintf("%s = %.2f [#/sec]", v.Key, v.Actual)
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

// ValueUnit names Value's and Actual's unit, as the JSON document states it: a
// catalog figure's own unit, "requests" for a count.
func (t Threshold) ValueUnit() string {
	switch {
	case t.Kind == Figure && t.Unit != "":
		return t.Unit
	case t.Kind == Latency:
		return "us"
	case t.Kind == Rate:
		return "per_s"
	case t.Percent:
		return "percent"
	}
	return "requests"
}
