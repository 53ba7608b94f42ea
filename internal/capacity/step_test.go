package capacity

import (
	"testing"
	"time"

	"gab/client"
	"gab/internal/samples"
	"gab/internal/threshold"
	"gab/report"
)

// TestCapacityStepFigures: a step's objectives name figures as --fail-if
// does (through the catalog: median, pN, p(N), avg) and read the step's own
// run through the catalog: the corrected latency's percentiles, mean, min
// and max (from the intended send times: the uncorrected times here are
// half), and its failed and non-2xx requests as a share of its requests.
func TestCapacityStepFigures(t *testing.T) {
	stepRun := func(n int64) (*client.Result, *report.Run) {
		res := &client.Result{Start: time.Now(), Elapsed: time.Second, Complete: int(n), StatusCounts: map[int]int{}, FirstError: map[string]string{}}
		if n > 0 {
			res.Failed = client.Failures{Total: 5, Receive: 5}
		}
		x := &client.ExtraResult{}
		for p := range x.Phases {
			x.Phases[p] = samples.NewDist()
		}
		x.Rate = &client.RateResult{Target: 1000, Sent: n, Corrected: samples.NewDist(), Lag: samples.NewDist()}
		for v := int64(1); v <= n; v++ {
			x.Phases[client.PhaseTotal].Add(v * 50)
			x.Rate.Corrected.Add(v * 100) // 100 µs to 100 ms
		}
		res.Extra = x
		return res, report.Summarize(res, report.Options{Concurrency: 8})
	}
	res, run := stepRun(1000)
	for expr, want := range map[string]string{
		"median<60ms": "median<60ms: passed (p50 = 50.015 ms)",
		"p(95)<=90ms": "p(95)<=90ms: FAILED (p95 = 95.039 ms)",
		"p99.9<1s":    "p99.9<1s: passed (p99.9 = 99.903 ms)",
		"avg<50ms":    "avg<50ms: FAILED (mean = 50.050 ms)",
		"min>=100us":  "min>=100us: passed (min = 0.100 ms)",
		"max<100ms":   "max<100ms: FAILED (max = 100.000 ms)",
		"failed<1%":   "failed<1%: passed (failed = 0.50 %)",
		"non2xx=0":    "non2xx=0: passed (non2xx = 0)",
	} {
		th, err := report.ParseThreshold(expr)
		if err != nil || !StepFigure(th.Metric) {
			t.Fatalf("%s: %v, a step figure %v", expr, err, StepFigure(th.Metric))
		}
		s := &Settings{Objectives: []threshold.Threshold{th}, LatencyMax: time.Second}
		var st report.CapacityStep
		s.figures(&st, run, res)
		if len(st.Objectives) != 1 || st.Objectives[0] != want {
			t.Errorf("%s: %q, want %q", expr, st.Objectives, want)
		}
	}
	th, _ := report.ParseThreshold("p99<1s")
	s := &Settings{Objectives: []threshold.Threshold{th}, LatencyMax: time.Second}
	res, run = stepRun(0)
	var st report.CapacityStep
	if vs, ok := s.figures(&st, run, res); ok || !vs[0].NoData {
		t.Errorf("a step that recorded nothing: %+v", vs)
	}
}
