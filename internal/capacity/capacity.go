// Package capacity is gab capacity's search for the highest constant rate a
// server sustains within latency objectives, and its document: a geometric
// climb from a start rate until a step fails, then a bisection between the
// highest passing and the lowest failing rate to a stated resolution. A step
// that the client itself could not drive ends the search: the capacity is
// then at least the highest passing rate, limited by the client, and is never
// reported as the server's.
package capacity

import (
	"math"

	"gab/report"
)

// MinAchieved is the share of the target rate a passing step must achieve.
const MinAchieved = 0.98

// Limits of a search.
const (
	// MaxSteps bounds one search's steps.
	MaxSteps = 60
	// MinRate is the lowest rate a search tries (requests per second).
	MinRate = report.CapacityMinRate
)

// Search is one search's state: Next gives the rate of its next step,
// Record takes the step's outcome. A step that fails (on the objectives, the
// rate or the client's limits, not by an error) is measured again at once,
// and the rate fails only if it fails Attempts times in a row: a stall of
// the machine in one step does not end the climb.
type Search struct {
	Start      float64 // the first step's rate
	MaxRate    float64 // no step above it (0: no limit)
	Resolution float64 // stop when (failing − passing) ≤ Resolution × passing
	// Attempts is how many steps in a row a rate must fail to fail (0: 2).
	// Noise only fails a step (a rate above the server's capacity cannot pass
	// it), so one passing attempt shows the rate sustained.
	Attempts int
	// Passed is the highest rate an earlier search of the same target
	// passed (0: none). Noise fails steps but never passes a rate, so a rate
	// that fails Attempts times below it (or below one this search passed)
	// is measured once more before it fails: passing then, the search goes
	// on from it.
	Passed float64
	Steps  []report.CapacityStep

	lo, hi      float64 // highest passing rate, lowest failing (0: none yet)
	retry       float64 // a rate that failed, measured again next
	failures    int     // its failed steps so far
	extra       float64 // a rate below a pass measured once more already
	done        bool
	clientBound bool
	reachedMax  bool
	interrupted bool
}

// Next is the next step's rate; ok is false when the search is over.
func (s *Search) Next() (rate float64, ok bool) {
	if s.done {
		return 0, false
	}
	switch {
	case s.retry > 0:
		return s.retry, true
	case len(s.Steps) == 0:
		return s.Start, true
	case s.hi == 0:
		r := s.lo * 2
		if s.MaxRate > 0 && r > s.MaxRate {
			r = s.MaxRate
		}
		return r, true
	case s.lo == 0:
		return s.hi / 2, true
	}
	return (s.lo + s.hi) / 2, true
}

// Record takes the outcome of the step at Next's rate.
func (s *Search) Record(st report.CapacityStep) {
	r := st.TargetPerS
	st.Retry = s.retry > 0
	if !st.Retry {
		s.failures = 0
	}
	s.retry = 0
	s.Steps = append(s.Steps, st)
	if !st.Pass && st.Error == "" {
		s.failures++
		if s.failures < max(s.Attempts, 2) && len(s.Steps) < MaxSteps {
			s.retry = r // a failure on a busy machine may be a stall of a passing rate: measure it again
			return
		}
		if r < max(s.Passed, s.lo) && s.extra != r && len(s.Steps) < MaxSteps {
			s.retry, s.extra = r, r // below a rate that passed: noise until measured once more
			return
		}
	}
	switch {
	case st.ClientBound:
		s.clientBound, s.done = true, true
		return
	case st.Pass:
		s.lo = max(s.lo, r)
		if s.hi == 0 && s.MaxRate > 0 && r >= s.MaxRate {
			s.reachedMax, s.done = true, true
		}
	default:
		if s.hi == 0 || r < s.hi {
			s.hi = r
		}
	}
	switch {
	case len(s.Steps) >= MaxSteps:
		s.done = true
	case s.hi > 0 && s.lo > 0 && s.hi-s.lo <= s.Resolution*s.lo:
		s.done = true
	case s.hi > 0 && s.lo == 0 && s.hi/2 < MinRate:
		s.done = true
	}
}

// busyFailures reports whether every failing step at rate r carried a
// busy-machine verdict: its failure may be the machine's, not the
// server's.
func (s *Search) busyFailures(r float64) bool {
	n := 0
	for i := range s.Steps {
		st := &s.Steps[i]
		if st.TargetPerS != r || st.Pass {
			continue
		}
		if !st.BusyMachine {
			return false
		}
		n++
	}
	return n > 0
}

// Done reports whether the search is over.
func (s *Search) Done() bool { return s.done }

// Interrupt ends a search that is not over (SIGINT): its result says so, a
// lower bound at most, never a capacity found.
func (s *Search) Interrupt() {
	if !s.done {
		s.done, s.interrupted, s.retry = true, true, 0
	}
}

// Result is the search's outcome so far.
func (s *Search) Result() report.CapacityResult {
	// The failing rate that bounds the capacity failed only on a busy
	// machine: the search is disturbed, the capacity at least what passed.
	disturbed := s.hi > 0 && !s.interrupted && !s.clientBound && s.busyFailures(s.hi)
	r := report.CapacityResult{CapacityPerS: s.lo, ClientBound: s.clientBound, ReachedMax: s.reachedMax, FailingPerS: s.hi, Interrupted: s.interrupted, Disturbed: disturbed}
	r.Found = !s.interrupted && !s.clientBound && !s.reachedMax && !disturbed && s.hi > 0 && (s.lo == 0 || s.hi-s.lo <= s.Resolution*s.lo)
	return r
}

// NoiseOf judges the steps measured at one low rate.
func NoiseOf(rate float64, steps []report.CapacityStep) *report.CapacityNoise {
	n := &report.CapacityNoise{RatePerS: rate, Steps: steps}
	pass, fail := false, false
	for i, st := range steps {
		if i == 0 || st.P99Us < n.P99MinUs {
			n.P99MinUs = st.P99Us
		}
		n.P99MaxUs = max(n.P99MaxUs, st.P99Us)
		if st.Error != "" {
			continue
		}
		pass, fail = pass || st.Pass, fail || !st.Pass
	}
	n.Inside = pass && fail
	return n
}

// Summarize is the summary of a target's searches' results (rank and tie
// left to Rank).
func Summarize(rs []report.CapacityResult) report.CapacitySummary {
	c := report.CapacitySummary{N: len(rs), Found: len(rs) > 0}
	var caps []float64
	for i, r := range rs {
		if b, ok := report.CapacityBoundOf(i, r); ok {
			c.Bounds = append(c.Bounds, b)
		} else {
			caps = append(caps, r.CapacityPerS)
		}
		c.Found = c.Found && r.Found
		c.ClientBound = c.ClientBound || r.ClientBound
		c.Interrupted = c.Interrupted || r.Interrupted
	}
	c.FoundN = len(caps)
	c.MeanPerS, c.LoPerS, c.HiPerS = GeoInterval(caps)
	return c
}

// GeoInterval is the geometric mean of values (each above 0) with its 95 %
// interval: Student's t on their logarithms, taken back. With one value
// all three are it; with none, 0.
func GeoInterval(values []float64) (mean, lo, hi float64) {
	if len(values) == 0 {
		return 0, 0, 0
	}
	logs := make([]float64, len(values))
	for i, v := range values {
		logs[i] = math.Log(v)
	}
	iv := report.IntervalOf(logs)
	// Two searches at 1 and 1e9 req/s put the upper end near 1e61: it is
	// kept within 2^53, a document's largest figure (report.CheckNumbers).
	return math.Exp(iv.Mean), math.Exp(iv.Lo), min(math.Exp(iv.Hi), 1<<53)
}

// Finish adds the searches to the target's Runs and summarizes its
// capacity over them all.
func Finish(t *report.CapacityTarget, searches ...Search) {
	for i := range searches {
		t.Runs = append(t.Runs, report.CapacityRun{Steps: searches[i].Steps, Result: searches[i].Result()})
	}
	rs := make([]report.CapacityResult, 0, len(t.Runs))
	for _, r := range t.Runs {
		rs = append(rs, r.Result)
	}
	t.Capacity = Summarize(rs)
}

// Rank ranks the targets by capacity (highest first) with the tie rule
// (report.TieRule, on Interval); targets whose capacity was not found
// (client-bound, at --max-rate, out of steps: lower bounds, which do not
// order) share the last rank. It returns the targets in rank order.
func Rank(ts []*report.CapacityTarget) []*report.CapacityTarget {
	ivs := make([]report.Interval, len(ts))
	for i, t := range ts {
		ivs[i] = t.Interval()
	}
	out := make([]*report.CapacityTarget, len(ts))
	unknown, unknownRank := 0, 0
	for i, p := range report.RankIntervals(ivs, true) {
		t := ts[p.Index]
		t.Capacity.Rank, t.Capacity.Tied, t.Capacity.Group, t.Capacity.RankRangeLoose = p.Rank, p.Tied, p.Group, p.Loose
		t.Capacity.RankRange = []int{p.Rank, p.RankHi}
		if !ivs[p.Index].Known {
			if unknown == 0 {
				unknownRank = p.Rank
			}
			unknown++
			t.Capacity.Rank = unknownRank
			t.Capacity.RankRange = []int{unknownRank, unknownRank}
		}
		out[i] = t
	}
	for _, t := range out {
		if !t.Capacity.Found && unknown > 1 {
			t.Capacity.Tied = true
		}
	}
	return out
}
