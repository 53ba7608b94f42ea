package capacity

import (
	"fmt"
	"math"
	"slices"

	"gab/client"
	"gab/internal/threshold"
	"gab/report"
)

// StepFigure reports whether a capacity step states the figure m, and so
// whether an --slo objective may test it. A step's figures are its own,
// over its intervals past the settle (gab capacity's step source): the
// latency percentiles (pN), mean, min and max of the requests' total time
// corrected for coordinated omission, and the failed and non-2xx requests.
// The names resolve through report's catalog (report.ParseThreshold) as
// --fail-if's do.
func StepFigure(m threshold.Metric) bool {
	switch {
	case m.Kind == threshold.Latency:
		return m.Percentile >= 0 || m.Key == "mean" || m.Key == "min" || m.Key == "max"
	case m.Kind == threshold.Count:
		return m.Key == "failed" || m.Key == "non2xx"
	}
	return false
}

// The ranges of gab capacity's options, which a document's settings and
// steps hold.
const (
	// MaxRate is the highest rate a search tries (--start and --max-rate:
	// their messages say 1e9).
	MaxRate = 1e9
	// MinStep is the shortest --step.
	MinStep = 0.1 // seconds
	// MinResolution and MaxResolution bound --resolution (per cent).
	MinResolution, MaxResolution = 0.1, 100.0
	// MinAttempts and MaxAttempts bound --attempts.
	MinAttempts, MaxAttempts = 2, 10
	// MaxNoise bounds --noise.
	MaxNoise = 10
	// MaxRepeat bounds --repeat.
	MaxRepeat = 100
	// MaxTargets bounds a document's targets.
	MaxTargets = 100
)

// Validate checks a decoded capacity document as report.ValidateDocument
// checks a run's, before any figure of it is drawn, ranked or compared:
// every number finite, non-negative and within 2^53 (report.CheckNumbers),
// the settings within their options' ranges, every target holding one search
// per repetition, every step's rate one a search tries and its percentiles
// in order, each search's capacity its highest passing step's rate, and each
// target's summary the one its searches give. The error names the first
// field found wrong.
func Validate(d *report.CapacityDocument) error {
	if err := report.CheckNumbers(d); err != nil {
		return err
	}
	bad := func(field, format string, args ...any) error {
		return &report.FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	switch {
	case d.StepS < MinStep:
		return bad("step_s", "%g is below --step's least (%g s)", d.StepS, MinStep)
	case d.SettleS != 0 && d.SettleS < client.MinInterval.Seconds():
		return bad("settle_s", "%g is neither 0 nor --settle's least (%g s)", d.SettleS, client.MinInterval.Seconds())
	case d.ResolutionPercent < MinResolution || d.ResolutionPercent > MaxResolution:
		return bad("resolution_percent", "%g is not --resolution's (%g to %g)", d.ResolutionPercent, MinResolution, MaxResolution)
	case d.MinAchieved <= 0 || d.MinAchieved > 1:
		return bad("min_achieved", "%g is not a share of the rate (above 0, at most 1)", d.MinAchieved)
	case d.MaxConnections < 1 || d.MaxConnections > report.MaxConcurrency:
		return bad("max_connections", "%d is not -c's (1 to %d)", d.MaxConnections, report.MaxConcurrency)
	case d.Repeat < 1 || d.Repeat > MaxRepeat:
		return bad("repeat", "%d is not --repeat's (1 to %d)", d.Repeat, MaxRepeat)
	case d.Attempts < MinAttempts || d.Attempts > MaxAttempts:
		return bad("attempts", "%d is not --attempts' (%d to %d)", d.Attempts, MinAttempts, MaxAttempts)
	case len(d.Objectives) == 0:
		return bad("objectives", "none: a search has at least one")
	case len(d.Targets) == 0 || len(d.Targets) > MaxTargets:
		return bad("targets", "%d targets, a capacity document holds 1 to %d", len(d.Targets), MaxTargets)
	}
	for i, e := range d.Objectives {
		t, err := report.ParseThreshold(e)
		if err != nil || !StepFigure(t.Metric) {
			return bad(fmt.Sprintf("objectives[%d]", i), "%q is not an objective on latency or failures", e)
		}
	}
	for i, t := range d.Targets {
		f := fmt.Sprintf("targets[%d]", i)
		if t == nil {
			return bad(f, "null")
		}
		if err := validateTarget(f, t, d); err != nil {
			return err
		}
	}
	return nil
}

func validateTarget(f string, t *report.CapacityTarget, d *report.CapacityDocument) error {
	bad := func(field, format string, args ...any) error {
		return &report.FieldError{Field: f + field, Problem: fmt.Sprintf(format, args...)}
	}
	if len(t.Runs) != d.Repeat {
		return bad(".searches", "%d searches, but repeat is %d", len(t.Runs), d.Repeat)
	}
	caps := make([]float64, len(t.Runs))
	found, cb, interrupted := true, false, false
	for j := range t.Runs {
		r := &t.Runs[j]
		rf := fmt.Sprintf(".searches[%d]", j)
		if len(r.Steps) > MaxSteps {
			return bad(rf+".steps", "%d steps, a search takes at most %d", len(r.Steps), MaxSteps)
		}
		passed := 0.0
		for k := range r.Steps {
			s := &r.Steps[k]
			sf := fmt.Sprintf("%s.steps[%d]", rf, k)
			switch {
			case s.TargetPerS < MinRate || s.TargetPerS > MaxRate:
				return bad(sf+".target_per_s", "%g is not a rate a search tries (%g to %g)", s.TargetPerS, MinRate, MaxRate)
			case s.Connections < 1 || s.Connections > d.MaxConnections:
				return bad(sf+".connections", "%d is not within 1..max_connections (%d)", s.Connections, d.MaxConnections)
			case s.P50Us > s.P99Us || s.P99Us > s.P999Us:
				return bad(sf, "corrected_p50_us, corrected_p99_us and corrected_p99_9_us (%d, %d, %d) are out of order", s.P50Us, s.P99Us, s.P999Us)
			case s.Pass && (!s.Kept || s.Error != "" || s.ClientBound):
				return bad(sf+".pass", "a passing step that did not keep its rate, ended on an error or was client-bound")
			}
			if s.Pass {
				passed = max(passed, s.TargetPerS)
			}
		}
		res := &r.Result
		switch {
		case res.CapacityPerS != passed:
			return bad(rf+".result.capacity_per_s", "%g, but the highest passing step's rate is %g", res.CapacityPerS, passed)
		case res.FailingPerS != 0 && (res.FailingPerS < MinRate || res.FailingPerS > MaxRate):
			return bad(rf+".result.lowest_failing_per_s", "%g is not a rate a search tries (%g to %g)", res.FailingPerS, MinRate, MaxRate)
		case res.Found && (res.ClientBound || res.ReachedMax || res.Interrupted || res.Disturbed):
			return bad(rf+".result.found", "a capacity found by a search that was client-bound, reached --max-rate, was interrupted or disturbed")
		}
		caps[j] = res.CapacityPerS
		found = found && res.Found
		cb = cb || res.ClientBound
		interrupted = interrupted || res.Interrupted
	}
	if n := t.Noise; n != nil {
		switch {
		case n.RatePerS < MinRate || n.RatePerS > MaxRate:
			return bad(".noise.rate_per_s", "%g is not a rate a search tries (%g to %g)", n.RatePerS, MinRate, MaxRate)
		case len(n.Steps) > MaxNoise:
			return bad(".noise.steps", "%d steps, --noise takes at most %d", len(n.Steps), MaxNoise)
		}
		want := NoiseOf(n.RatePerS, n.Steps)
		if n.P99MinUs != want.P99MinUs || n.P99MaxUs != want.P99MaxUs || n.Inside != want.Inside {
			return bad(".noise", "corrected_p99_min_us, corrected_p99_max_us and objectives_inside (%d, %d, %v), but its steps give %d, %d, %v",
				n.P99MinUs, n.P99MaxUs, n.Inside, want.P99MinUs, want.P99MaxUs, want.Inside)
		}
	}
	c := &t.Capacity
	if d.SchemaVersion >= 2 {
		rs := make([]report.CapacityResult, len(t.Runs))
		for j := range t.Runs {
			rs[j] = t.Runs[j].Result
		}
		want := Summarize(rs)
		switch {
		case c.N != len(t.Runs):
			return bad(".capacity.repetitions", "%d, but the target has %d searches", c.N, len(t.Runs))
		case c.FoundN != want.FoundN:
			return bad(".capacity.found_searches", "%d, but %d of its searches found a capacity", c.FoundN, want.FoundN)
		case !near(c.MeanPerS, want.MeanPerS) || !near(c.LoPerS, want.LoPerS) || !near(c.HiPerS, want.HiPerS):
			return bad(".capacity", "mean_per_s, ci95_lo_per_s and ci95_hi_per_s (%g, %g, %g), but its searches give %g, %g, %g",
				c.MeanPerS, c.LoPerS, c.HiPerS, want.MeanPerS, want.LoPerS, want.HiPerS)
		case !slices.Equal(c.Bounds, want.Bounds):
			return bad(".capacity.bounds", "%v, but its searches give %v", c.Bounds, want.Bounds)
		}
	} else {
		// Version 1: the arithmetic mean of every search's capacity.
		want := summaryV1(caps)
		switch {
		case c.N != len(t.Runs):
			return bad(".capacity.repetitions", "%d, but the target has %d searches", c.N, len(t.Runs))
		case !near(c.MeanPerS, want.Mean) || !near(c.LoPerS, want.Lo) || !near(c.HiPerS, want.Hi):
			return bad(".capacity", "mean_per_s, ci95_lo_per_s and ci95_hi_per_s (%g, %g, %g), but its searches give %g, %g, %g",
				c.MeanPerS, c.LoPerS, c.HiPerS, want.Mean, want.Lo, want.Hi)
		}
	}
	switch {
	case c.Found != found || c.ClientBound != cb || c.Interrupted != interrupted:
		return bad(".capacity", "found, client_bound and interrupted (%v, %v, %v), but its searches give %v, %v, %v",
			c.Found, c.ClientBound, c.Interrupted, found, cb, interrupted)
	case c.Rank > len(d.Targets):
		return bad(".capacity.rank", "%d, below the last of %d targets", c.Rank, len(d.Targets))
	case c.RankRange != nil && (len(c.RankRange) != 2 || c.RankRange[0] != c.Rank || c.RankRange[1] < c.Rank || c.RankRange[1] > len(d.Targets)):
		return bad(".capacity.rank_range", "%v, not [rank, hi] with rank %d ≤ hi ≤ %d targets", c.RankRange, c.Rank, len(d.Targets))
	}
	return nil
}

// summaryV1 is a version 1 document's capacity over the searches'
// capacities, every search's: their mean with its 95 % interval (report's
// Student's t), whose lower end is at least 0 (no rate is below 0).
func summaryV1(caps []float64) report.Interval {
	iv := report.IntervalOf(caps)
	iv.Lo = max(iv.Lo, 0)
	return iv
}

// near reports whether a (read back) is b (computed) up to the rounding of
// a float's printing and of a sum's order.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b), 1)
}
