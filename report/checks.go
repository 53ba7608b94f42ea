package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gab/internal/threshold"
)

// This file holds the figures of two extensions around the run: the warm-up
// sent before it (--warmup) and the --fail-if thresholds checked after it.

// checkThresholds tests the --fail-if thresholds against the run's figures.
func (r *Run) checkThresholds(ts []threshold.Threshold) {
	if len(ts) == 0 {
		return
	}
	vs, ok := threshold.CheckAll(ts, r.thresholdFigures())
	r.local.verdicts = vs
	th := &thresholdVerdicts{Passed: ok, Checks: []thresholdCheck{}}
	if !ok {
		th.ExitCode = threshold.ExitStatus
	}
	for _, v := range vs {
		c := thresholdCheck{Expression: v.Expr, Metric: v.Key, Comparison: v.Op, Bound: v.Value, Unit: v.ValueUnit(), Passed: v.Pass}
		if !v.NoData {
			val := v.Actual
			c.Value = &val
		}
		th.Checks = append(th.Checks, c)
	}
	r.Thresholds = th
}

// ThresholdsFailed reports whether a --fail-if threshold failed.
func (r *Run) ThresholdsFailed() bool { return r.Thresholds != nil && !r.Thresholds.Passed }

// thresholdFigures are the figures a threshold tests: the catalog's, as
// every output states them (Figure.Value), a latency in µs. A count's
// percentage is of the requests recorded and those in flight at the stop
// (which the catalog counts as requests of their age, a failure when older
// than -s: outstanding.go).
func (r *Run) thresholdFigures() threshold.Figures {
	f := threshold.Figures{Value: r.thresholdValue}
	if rp := r.Report; rp != nil {
		f.Requests = int64(rp.CompleteRequests)
		if o := r.Outstanding; o != nil {
			f.Requests += o.Requests
		}
	}
	return f
}

// thresholdValue is a resolved metric's figure of the run in the
// threshold's unit.
func (r *Run) thresholdValue(m threshold.Metric) (float64, bool) {
	f, ok := figureNamed(m.Key)
	if !ok {
		return 0, false
	}
	v, ok := f.Value(r)
	if ok && m.Kind == threshold.Latency {
		v = msToUs(v)
	}
	return v, ok
}

// msToUs is a latency figure (ms) in µs, rounded to 10⁻⁶ µs so that a whole
// number of µs stays whole.
func msToUs(ms float64) float64 { return math.Round(ms*1e9) / 1e6 }

// ParseThreshold reads a --fail-if (or --slo) expression, its figure's name
// resolved through the catalog (LookupFigure).
func ParseThreshold(expr string) (threshold.Threshold, error) {
	return threshold.Parse(expr, LookupFigure)
}

// LookupFigure resolves a figure's name as --fail-if and gab capacity's
// --slo take it: a catalog key ("p99", "rps", "server_cpu_us_per_request"),
// an alias (median: p50, avg: mean), or any percentile of the total time
// (pN or p(N), 0 ≤ N ≤ 100: p95, p99.99), which reads like the catalog's
// own percentiles.
func LookupFigure(name string) (threshold.Metric, error) {
	f, ok, err := resolveFigure(name)
	if err != nil {
		return threshold.Metric{}, err
	}
	if !ok {
		return threshold.Metric{}, fmt.Errorf("unknown metric %q (pN, median, mean, min, max, failed, non2xx, rps, or a figure's key: gab --extended lists them)", name)
	}
	m := threshold.Metric{Key: f.Key, Unit: f.Unit, Decimals: f.Decimals, Percentile: -1, Kind: threshold.Figure}
	if p, ok := percentileName(f.Key); ok {
		m.Percentile = p
	}
	switch {
	case f.Key == "rps":
		m.Kind = threshold.Rate
	case f.Key == "failed" || f.Key == "non2xx":
		m.Kind = threshold.Count
	case f.Unit == "ms":
		m.Kind = threshold.Latency
	}
	return m, nil
}

// figureNamed is the figure of a key LookupFigure gave.
func figureNamed(key string) (Figure, bool) {
	f, ok, _ := resolveFigure(key)
	return f, ok
}

// resolveFigure finds the figure of a name: the catalog's entry, or a
// percentile of the total time read as the catalog's percentiles are.
// err says why a name that looks like a percentile is not one.
func resolveFigure(name string) (Figure, bool, error) {
	switch name {
	case "median":
		name = "p50"
	case "avg":
		name = "mean"
	}
	if f, ok := FigureByKey(name); ok {
		return f, true, nil
	}
	if len(name) == 0 || name[0] != 'p' {
		return Figure{}, false, nil
	}
	num := name[1:]
	if strings.HasPrefix(num, "(") && strings.HasSuffix(num, ")") {
		num = num[1 : len(num)-1]
	}
	p, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(p) || p < 0 || p > 100 || !threshold.IsPlainNumber(num) {
		return Figure{}, false, fmt.Errorf("percentile %q is not a number from 0 to 100", num)
	}
	key := "p" + strconv.FormatFloat(p, 'f', -1, 64)
	if f, ok := FigureByKey(key); ok {
		return f, true, nil
	}
	return Figure{Key: key, Title: key, Unit: "ms", Better: lower, Decimals: 3, Pool: Pooled, Needs: NeedsExtended, Of: percentileMs(p)}, true, nil
}

// percentileName is p of a percentile's key ("p99.9": 99.9).
func percentileName(key string) (float64, bool) {
	if len(key) < 2 || key[0] != 'p' || !threshold.IsPlainNumber(key[1:]) {
		return 0, false
	}
	p, err := strconv.ParseFloat(key[1:], 64)
	return p, err == nil
}

// ThresholdNeeds is what the thresholds' figures need measured (the
// catalog's Needs of each), each once.
func ThresholdNeeds(ts []threshold.Threshold) []Needs {
	var out []Needs
	for _, t := range ts {
		if f, ok := figureNamed(t.Key); ok && f.Needs != NeedsNothing && !slices.Contains(out, f.Needs) {
			out = append(out, f.Needs)
		}
	}
	return out
}

// writeWarmup says how many warm-up requests were sent and left out (nothing
// without --warmup).
func writeWarmup(w io.Writer, r *Run) error {
	if r.Warmup == nil {
		return nil
	}
	e := newErrWriter(w)
	e.printf("\nWarm-up requests:       %d (%d failed) in %.3f seconds, sent before the run and left out of every figure\n",
		r.Warmup.Requests, r.Warmup.Failed, r.Warmup.TimeS)
	return e.flush()
}

// writeThresholds writes one verdict line per --fail-if threshold, after a
// blank line (nothing without the option).
func writeThresholds(w io.Writer, r *Run) error {
	if len(r.local.verdicts) == 0 {
		return nil
	}
	e := newErrWriter(w)
	e.printf("\n")
	for _, v := range r.local.verdicts {
		e.printf("%s\n", v.Line())
	}
	return e.flush()
}

// warmupFigures is the warm-up (--warmup): requests sent before the run, in no
// other figure.
type warmupFigures struct {
	Requests int     `json:"requests"`
	Failed   int     `json:"failed"`
	TimeS    float64 `json:"time_s"`
}

// rampFigures are the requests that started during a ramp-up
// (client.RampResult): none of them, their bytes or the CPU of the ramp-up
// is in another figure.
type rampFigures struct {
	Requests int64   `json:"requests"`
	TimeS    float64 `json:"time_s"`
}

// thresholdVerdicts are the --fail-if verdicts.
type thresholdVerdicts struct {
	Passed bool `json:"passed"`
	// ExitCode is the exit status the thresholds give: 0 when all passed,
	// 3 when any failed (a fatal error or an interruption takes precedence).
	ExitCode int              `json:"exit_code"`
	Checks   []thresholdCheck `json:"checks"`
}

// thresholdCheck is one --fail-if verdict. Bound and value share the unit:
// us (latencies), requests or percent (failed, non2xx), per_s (rps).
type thresholdCheck struct {
	Expression string  `json:"expression"`
	Metric     string  `json:"metric"`
	Comparison string  `json:"comparison"`
	Bound      float64 `json:"bound"`
	Unit       string  `json:"unit"`
	// Value is the measured figure; absent when no request completed (a
	// latency then has none, and the check fails).
	Value  *float64 `json:"value,omitempty"`
	Passed bool     `json:"passed"`
}
