package report

import (
	"io"

	"gab/internal/threshold"
)

// This file holds the figures of two extensions around the run: the warm-up
// sent before it (--warmup) and the --fail-if thresholds checked after it.

// checkThresholds tests the --fail-if thresholds against the summary's figures.
func (s *Summary) checkThresholds(ts []threshold.Threshold) {
	if len(ts) == 0 {
		return
	}
	vs, ok := threshold.CheckAll(ts, s.thresholdFigures())
	s.Thresholds, s.ThresholdsFailed = vs, !ok
}

// thresholdFigures are the figures a threshold tests, as the report states
// them: ab's counts and requests per second, the Total column's exact mean,
// min and max, and its percentiles as the --percentiles table states them
// (FinePercentile).
func (s *Summary) thresholdFigures() threshold.Figures {
	f := threshold.Figures{
		Complete: int64(s.Complete),
		Failed:   int64(s.Failed.Total),
		Non2xx:   int64(s.Non2xx),
		RPS:      s.Rates.RequestsPerSecond,
	}
	if s.Count > 0 {
		f.MeanUS, f.MinUS, f.MaxUS = float64(s.Total.MeanUs), float64(s.Total.MinUs), float64(s.Total.MaxUs)
		f.Percentile = func(p float64) float64 { return float64(s.FinePercentile(TotalColumn, p)) }
	}
	f.Named = s.catalogFigure()
	return f
}

// WriteWarmup says how many warm-up requests were sent and left out (nothing
// without --warmup).
func WriteWarmup(w io.Writer, s *Summary) error {
	if s.Warmup == nil {
		return nil
	}
	e := newErrWriter(w)
	e.printf("\nWarm-up requests:       %d (%d failed) in %.3f seconds, sent before the run and left out of every figure\n",
		s.Warmup.Complete, s.Warmup.Failed, s.Warmup.Elapsed.Seconds())
	return e.flush()
}

// WriteThresholds writes one verdict line per --fail-if threshold, after a
// blank line (nothing without the option).
func WriteThresholds(w io.Writer, s *Summary) error {
	if len(s.Thresholds) == 0 {
		return nil
	}
	e := newErrWriter(w)
	e.printf("\n")
	for _, v := range s.Thresholds {
		e.printf("%s\n", v.Line())
	}
	return e.flush()
}

// JSONWarmup is the warm-up (--warmup): requests sent before the run, in no
// other figure.
type JSONWarmup struct {
	Requests int     `json:"requests"`
	Failed   int     `json:"failed"`
	TimeS    float64 `json:"time_s"`
}

// JSONThresholds are the --fail-if verdicts.
type JSONThresholds struct {
	Passed bool `json:"passed"`
	// ExitCode is the exit status the thresholds give: 0 when all passed,
	// 3 when any failed (a fatal error or an interruption takes precedence).
	ExitCode int             `json:"exit_code"`
	Checks   []JSONThreshold `json:"checks"`
}

// JSONThreshold is one --fail-if verdict. Bound and value share the unit:
// us (latencies), requests or percent (failed, non2xx), per_s (rps).
type JSONThreshold struct {
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

func jsonWarmup(s *Summary) *JSONWarmup {
	if s.Warmup == nil {
		return nil
	}
	return &JSONWarmup{Requests: s.Warmup.Complete, Failed: s.Warmup.Failed, TimeS: s.Warmup.Elapsed.Seconds()}
}

func jsonThresholds(s *Summary) *JSONThresholds {
	if len(s.Thresholds) == 0 {
		return nil
	}
	t := &JSONThresholds{Passed: !s.ThresholdsFailed, Checks: []JSONThreshold{}}
	if s.ThresholdsFailed {
		t.ExitCode = threshold.ExitStatus
	}
	for _, v := range s.Thresholds {
		c := JSONThreshold{Expression: v.Expr, Metric: v.Metric, Comparison: v.Op, Bound: v.Value, Unit: v.Unit(), Passed: v.Pass}
		if !v.NoData {
			val := v.Actual
			c.Value = &val
		}
		t.Checks = append(t.Checks, c)
	}
	return t
}
