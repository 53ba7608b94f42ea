package report

import (
	"io"

	"gab/internal/samples"
	"gab/internal/threshold"
)

// This file holds the figures of two extensions around the run: the warm-up
// sent before it (--warmup) and the --fail-if thresholds checked after it.

// checkThresholds tests the --fail-if thresholds against the run's figures.
func (r *Run) checkThresholds(t *tables, ts []threshold.Threshold) {
	if len(ts) == 0 {
		return
	}
	vs, ok := threshold.CheckAll(ts, r.thresholdFigures(t))
	r.local.verdicts = vs
	th := &thresholdVerdicts{Passed: ok, Checks: []thresholdCheck{}}
	if !ok {
		th.ExitCode = threshold.ExitStatus
	}
	for _, v := range vs {
		c := thresholdCheck{Expression: v.Expr, Metric: v.Metric, Comparison: v.Op, Bound: v.Value, Unit: v.Unit(), Passed: v.Pass}
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

// thresholdFigures are the figures a threshold tests, as the report states
// them: ab's counts and requests per second, the Total column's exact mean,
// min and max, and its percentiles as the --percentiles table states them
// (finePercentile).
//
// Requests in flight at the stop count as the catalog counts them
// (outstanding.go): each a request of its age, exact to the µs, a failure
// when older than -s.
func (r *Run) thresholdFigures(t *tables) threshold.Figures {
	rp := r.Report
	f := threshold.Figures{
		Complete: int64(rp.CompleteRequests),
		Failed:   int64(rp.FailedRequests),
		Non2xx:   int64(rp.Non2xxResponses),
		RPS:      rp.RequestsPerSecond,
	}
	if ct := rp.ConnectionTimes; ct != nil {
		f.MeanUS, f.MinUS, f.MaxUS = float64(ct.Total.MeanUs), float64(ct.Total.MinUs), float64(ct.Total.MaxUs)
		f.Percentile = func(p float64) float64 { return float64(t.finePercentile(totalColumn, p)) }
	}
	if ages := r.local.outstandingUs; len(ages) > 0 {
		n, k := t.n, len(ages)
		if rp.ConnectionTimes == nil {
			n = 0
		}
		sum := f.MeanUS * float64(n) // ab's truncated mean, unless the exact sum is known
		if x := r.Extended; x != nil && x.Phases.Total.Count == int64(n) {
			sum = float64(x.Phases.Total.SumUs)
		}
		for _, a := range ages {
			sum += float64(a)
		}
		f.MeanUS = sum / float64(n+k)
		if n == 0 {
			f.MinUS, f.MaxUS = float64(ages[0]), float64(ages[k-1])
		} else {
			f.MinUS, f.MaxUS = min(f.MinUS, float64(ages[0])), max(f.MaxUS, float64(ages[k-1]))
		}
		at := func(i int) int64 { return t.finePercentileAt(i) }
		f.Percentile = func(p float64) float64 {
			return float64(unionAt(n, at, ages, int(samples.NearestRank(int64(n+k), p))-1))
		}
		f.Complete += int64(k)
		f.Failed += r.outstandingFailed()
	}
	f.Named = r.catalogFigure
	return f
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
