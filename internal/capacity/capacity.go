// Package capacity is gab capacity's search for the highest constant rate a
// server sustains within latency objectives, and its document: a geometric
// climb from a start rate until a step fails, then a bisection between the
// highest passing and the lowest failing rate to a stated resolution. A step
// that the client itself could not drive ends the search: the capacity is
// then at least the highest passing rate, limited by the client, and is never
// reported as the server's.
package capacity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gab/report"
)

// Step is one measured step: a constant rate held for the step's time.
type Step struct {
	TargetPerS   float64 `json:"target_per_s"`
	AchievedPerS float64 `json:"achieved_per_s"`
	Connections  int     `json:"connections"`
	// Corrected latencies (from each request's intended send time), µs.
	P50Us  int64 `json:"corrected_p50_us"`
	P99Us  int64 `json:"corrected_p99_us"`
	P999Us int64 `json:"corrected_p99_9_us"`
	// UncorrectedP99Us is the p99 of the requests' own times (send → end).
	UncorrectedP99Us int64 `json:"uncorrected_p99_us"`
	// UncorrectedMeanUs is their mean, for the knee chart and the rule that
	// tells busy connections from a late client.
	UncorrectedMeanUs float64 `json:"uncorrected_mean_us"`
	// Complete, Failed and Non2xx count the requests of the step's window,
	// the one its latencies and achieved rate cover: its whole intervals past
	// the settle (the whole run when the run ended early on an error).
	// Complete counts the recorded requests; Failed ab's Failed requests and
	// write errors, and the requests unanswered at the step's end older than
	// the largest latency objective or -s; Non2xx the answers whose status is
	// not 2xx.
	Complete int64 `json:"complete"`
	Failed   int64 `json:"failed"`
	// Outstanding counts the requests unanswered at the step's end: each
	// counts in the latencies at its age (from its intended send time in
	// the corrected ones).
	Outstanding int64 `json:"outstanding,omitempty"`
	Non2xx      int64 `json:"non2xx"`
	// Objectives are the --slo checks, each "EXPR: passed|FAILED (figure)".
	Objectives []string `json:"objectives"`
	// Kept says whether the achieved rate reached MinAchieved of the target.
	Kept bool `json:"kept_rate"`
	// ClientBound and ClientReasons: the step failed with gab itself at its
	// limit (a passing step passes whatever the client's limits).
	ClientBound   bool     `json:"client_bound"`
	ClientReasons []string `json:"client_reasons,omitempty"`
	// Error is what ended the step's run early, if anything.
	Error string `json:"error,omitempty"`
	// Pass: every objective held, the rate was kept, no error.
	Pass bool `json:"pass"`
	// Retry: the step measures again a rate whose first step failed (a
	// rate fails only when it fails twice in a row).
	Retry bool `json:"retry,omitempty"`
	// AtMaxConnections: a failing step opened -c's connections and kept them
	// busy (80 % or more) while the server answered within the largest
	// latency objective: more connections might have carried the rate.
	AtMaxConnections bool `json:"at_max_connections,omitempty"`
	// BusyMachine and KernelDrops: the step's run carried a single run's
	// busy_machine verdict (processes other than gab and the server used
	// the machine's CPU) or kernel_drops (the kernel dropped or resent
	// connections or segments); Verdicts are their lines.
	BusyMachine bool     `json:"busy_machine,omitempty"`
	KernelDrops bool     `json:"kernel_drops,omitempty"`
	Verdicts    []string `json:"verdicts,omitempty"`
	// ServerCPUPercent and ServerCPUUsPerRequest are the server's CPU over
	// the step's run, settle included (--server-pid's processes, or those
	// found listening on a loopback URL's port): over its time, in % of one
	// core, and per request completed (nil: not measured).
	ServerCPUPercent      *float64 `json:"server_cpu_percent_of_one_core,omitempty"`
	ServerCPUUsPerRequest *float64 `json:"server_cpu_us_per_request,omitempty"`
}

// Verdict is the step's verdict in a word.
func (s *Step) Verdict() string {
	switch {
	case s.ClientBound:
		return "client-bound"
	case s.Pass:
		return "pass"
	case s.Error != "":
		return "error"
	case !s.Kept:
		return "fail (rate)"
	}
	return "fail (slo)"
}

// Machine is the step's machine verdicts in a word ("busy", "drops",
// "busy, drops"; "" for none).
func (s *Step) Machine() string {
	var w []string
	if s.BusyMachine {
		w = append(w, "busy")
	}
	if s.KernelDrops {
		w = append(w, "drops")
	}
	return strings.Join(w, ", ")
}

// MinAchieved is the share of the target rate a passing step must achieve.
const MinAchieved = 0.98

// Limits of a search.
const (
	// MaxSteps bounds one search's steps.
	MaxSteps = 60
	// MinRate is the lowest rate a search tries (requests per second).
	MinRate = 1.0
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
	Steps  []Step

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
func (s *Search) Record(st Step) {
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

// Result is a search's outcome.
type Result struct {
	// CapacityPerS is the highest passing rate (0: none passed).
	CapacityPerS float64 `json:"capacity_per_s"`
	// Found: a failing rate bounds it from above within the resolution (or
	// the search met a failing rate only). False when the client limited the
	// search (ClientBound), the search reached MaxRate or ran out of steps.
	Found bool `json:"found"`
	// ClientBound: a step was limited by gab itself; the capacity is at least
	// CapacityPerS.
	ClientBound bool `json:"client_bound"`
	// ReachedMax: every step passed up to --max-rate.
	ReachedMax  bool    `json:"reached_max_rate"`
	FailingPerS float64 `json:"lowest_failing_per_s,omitempty"`
	// Interrupted: the search was interrupted before it ended; the capacity
	// is at least CapacityPerS (nothing was measured when it is 0).
	Interrupted bool `json:"interrupted,omitempty"`
	// Disturbed: the lowest failing rate failed only in steps on a busy
	// machine (each with the busy-machine verdict): the capacity is at
	// least CapacityPerS, never found.
	Disturbed bool `json:"disturbed,omitempty"`
}

// Result is the search's outcome so far.
func (s *Search) Result() Result {
	// The failing rate that bounds the capacity failed only on a busy
	// machine: the search is disturbed, the capacity at least what passed.
	disturbed := s.hi > 0 && !s.interrupted && !s.clientBound && s.busyFailures(s.hi)
	r := Result{CapacityPerS: s.lo, ClientBound: s.clientBound, ReachedMax: s.reachedMax, FailingPerS: s.hi, Interrupted: s.interrupted, Disturbed: disturbed}
	r.Found = !s.interrupted && !s.clientBound && !s.reachedMax && !disturbed && s.hi > 0 && (s.lo == 0 || s.hi-s.lo <= s.Resolution*s.lo)
	return r
}

// Line says the result in words.
func (r Result) Line(fmtRate func(float64) string) string {
	switch {
	case r.Interrupted && r.CapacityPerS > 0:
		return "at least " + fmtRate(r.CapacityPerS) + " req/s (interrupted)"
	case r.Interrupted:
		return "interrupted: not measured"
	case r.Disturbed && r.CapacityPerS > 0:
		return "disturbed: the machine was busy (at least " + fmtRate(r.CapacityPerS) + " req/s passed; " + fmtRate(r.FailingPerS) + " failed only on a busy machine)"
	case r.Disturbed:
		return "disturbed: the machine was busy (" + fmtRate(r.FailingPerS) + " failed only on a busy machine, no rate passed)"
	case r.ClientBound && r.CapacityPerS > 0:
		return "at least " + fmtRate(r.CapacityPerS) + " req/s: limited by the client (gab), not measured to the server's limit"
	case r.ClientBound:
		return "not measured: the client (gab) could not drive the first rate"
	case r.ReachedMax:
		return "at least " + fmtRate(r.CapacityPerS) + " req/s: every step passed up to --max-rate"
	case !r.Found && r.CapacityPerS > 0:
		return "at least " + fmtRate(r.CapacityPerS) + " req/s: the search ran out of steps"
	case r.CapacityPerS == 0:
		return "below " + fmtRate(max(r.FailingPerS, MinRate)) + " req/s: no rate met the objectives"
	}
	return fmtRate(r.CapacityPerS) + " req/s"
}

// Target is one target's searches (one per repetition).
type Target struct {
	Label string `json:"label"`
	URL   string `json:"url"`
	Runs  []Run  `json:"searches"`
	// Noise is the latency noise measured before the searches (nil: not
	// measured, --noise 0).
	Noise *Noise `json:"noise,omitempty"`
	// Capacity is the geometric mean of the capacities the searches found
	// with its 95 % interval on a log scale; the other searches' bounds
	// beside it (Summary).
	Capacity Summary `json:"capacity"`
}

// Noise is the machine's latency noise at a low rate, measured before the
// searches: Steps steps at RatePerS, judged as a search's steps are.
type Noise struct {
	RatePerS float64 `json:"rate_per_s"`
	Steps    []Step  `json:"steps"`
	// P99MinUs and P99MaxUs are the range of the steps' corrected p99.
	P99MinUs int64 `json:"corrected_p99_min_us"`
	P99MaxUs int64 `json:"corrected_p99_max_us"`
	// Inside: some steps met the objectives and some failed them at the
	// same low rate: the objectives lie inside the machine's noise and a
	// capacity against them cannot be judged here.
	Inside bool `json:"objectives_inside"`
}

// NoiseOf judges the steps measured at one low rate.
func NoiseOf(rate float64, steps []Step) *Noise {
	n := &Noise{RatePerS: rate, Steps: steps}
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

// Line says the noise in words.
func (n *Noise) Line(fmtRate func(float64) string, ms func(int64) string, objectives string) string {
	l := fmt.Sprintf("p99 at %s req/s ranged %s to %s ms over %d steps", fmtRate(n.RatePerS), ms(n.P99MinUs), ms(n.P99MaxUs), len(n.Steps))
	if n.Inside {
		return l + ": " + objectives + " passed in some and failed in others: the objectives lie inside this machine's noise and cannot be judged here"
	}
	return l
}

// Run is one search as the document holds it.
type Run struct {
	Steps  []Step `json:"steps"`
	Result Result `json:"result"`
}

// Summary is a target's capacity over its repetitions. Only the capacities
// the searches found count in it: a search limited by the client,
// interrupted, stopped at --max-rate or out of steps gives a lower bound
// ("at least"), and one where no rate passed an upper bound ("below");
// those are listed in Bounds, never averaged in. Over the found capacities
// it is their mean on a log scale (the geometric mean) with the 95 %
// interval of Student's t on the logarithms, taken back: both ends above 0,
// the interval as wide in ratio on either side (a capacity is a rate: a
// search at 100 and one at 19200 req/s differ by a factor, not a sum).
type Summary struct {
	N int `json:"repetitions"`
	// FoundN is how many searches found the capacity (above 0): the
	// values of MeanPerS, LoPerS and HiPerS (all 0 when none).
	FoundN int `json:"found_searches"`
	// MeanPerS is their geometric mean; LoPerS and HiPerS its 95 % interval
	// (both MeanPerS with one found capacity).
	MeanPerS    float64 `json:"mean_per_s"`
	LoPerS      float64 `json:"ci95_lo_per_s"`
	HiPerS      float64 `json:"ci95_hi_per_s"`
	Bounds      []Bound `json:"bounds,omitempty"`
	ClientBound bool    `json:"client_bound"`          // some repetition was limited by the client
	Found       bool    `json:"found"`                 // every repetition found the capacity
	Interrupted bool    `json:"interrupted,omitempty"` // some repetition was interrupted
	Rank        int     `json:"rank,omitempty"`
	// RankRange is the rank range [lo, hi] by report.TieRule (lo = Rank);
	// absent in documents from before it.
	RankRange []int `json:"rank_range,omitempty"`
	Tied      bool  `json:"tied,omitempty"`
	// RankRangeLoose: see report.Place's Loose.
	RankRangeLoose bool `json:"rank_range_loose,omitempty"`
	// Group: the letters of the target's tie groups (report.TieRule).
	Group string `json:"group,omitempty"`
}

// RankText is the capacity's rank text (report.RankText), from Rank and
// RankRange.
func (c Summary) RankText() string {
	hi := c.Rank
	if len(c.RankRange) == 2 {
		hi = c.RankRange[1]
	}
	return report.RankText(c.Rank, hi, c.Tied) + report.LooseMark(c.RankRangeLoose)
}

// Interval is the target's capacity over its searches as the tie rule (report.TieRule)
// tests it (report.Apart, the ratio of two capacities on the log scale): the
// mean of the capacities its searches found (bounds left out, as Summarize
// leaves them) with their sd, known when a search found one: a target whose
// searches found none ranks after every target with a capacity found.
func (t *Target) Interval() report.Interval {
	var caps []float64
	for i, r := range t.Runs {
		if _, bound := boundOf(i, r.Result); !bound {
			caps = append(caps, r.Result.CapacityPerS)
		}
	}
	iv := report.IntervalOf(caps)
	iv.Known = len(caps) > 0
	return iv
}

// Bound is a search that found no capacity: at least PerS (its highest
// passing rate) or, when no rate passed, below PerS (its lowest failing
// rate, at least MinRate).
type Bound struct {
	Search int     `json:"search"` // its index among the target's searches
	PerS   float64 `json:"per_s"`
	// Why is BoundClient, BoundInterrupted, BoundDisturbed, BoundMaxRate,
	// BoundSteps or BoundBelow.
	Why string `json:"why"`
}

// The kinds of Bound.
const (
	BoundClient      = "client-bound"
	BoundInterrupted = "interrupted"
	BoundMaxRate     = "at --max-rate"
	BoundSteps       = "out of steps"
	BoundBelow       = "below: no rate passed"
	BoundDisturbed   = "disturbed: the machine was busy"
)

// boundOf is the bound a search's result gives, ok false when it found a
// capacity above 0.
func boundOf(i int, r Result) (b Bound, ok bool) {
	b = Bound{Search: i, PerS: r.CapacityPerS}
	switch {
	case r.Interrupted:
		b.Why = BoundInterrupted
	case r.Disturbed:
		b.Why = BoundDisturbed
	case r.ClientBound:
		b.Why = BoundClient
	case r.ReachedMax:
		b.Why = BoundMaxRate
	case !r.Found:
		b.Why = BoundSteps
	case r.CapacityPerS == 0:
		b.Why, b.PerS = BoundBelow, max(r.FailingPerS, MinRate)
	default:
		return Bound{}, false
	}
	return b, true
}

// Summarize is the summary of a target's searches' results (rank and tie
// left to Rank).
func Summarize(rs []Result) Summary {
	c := Summary{N: len(rs), Found: len(rs) > 0}
	var caps []float64
	for i, r := range rs {
		if b, ok := boundOf(i, r); ok {
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
func Finish(t *Target, searches ...Search) {
	for i := range searches {
		t.Runs = append(t.Runs, Run{Steps: searches[i].Steps, Result: searches[i].Result()})
	}
	rs := make([]Result, 0, len(t.Runs))
	for _, r := range t.Runs {
		rs = append(rs, r.Result)
	}
	t.Capacity = Summarize(rs)
}

// Line says the summary in words: the capacity found over the searches,
// then the bounds of those that found none.
func (c Summary) Line(fmtRate func(float64) string) string {
	var b strings.Builder
	switch c.FoundN {
	case 0:
		b.WriteString("not found by any search")
	case 1:
		fmt.Fprintf(&b, "%s req/s (one search found it: no interval)", fmtRate(c.MeanPerS))
	default:
		fmt.Fprintf(&b, "%s req/s (geometric mean of %d found, 95 %% interval %s to %s)", fmtRate(c.MeanPerS), c.FoundN, fmtRate(c.LoPerS), fmtRate(c.HiPerS))
	}
	groups := map[string][]float64{}
	var order []string
	for _, x := range c.Bounds {
		if _, ok := groups[x.Why]; !ok {
			order = append(order, x.Why)
		}
		groups[x.Why] = append(groups[x.Why], x.PerS)
	}
	for i, why := range order {
		v := groups[why]
		sep := "; and "
		if i > 0 {
			sep = ", "
		}
		b.WriteString(sep)
		n := "1 search"
		if len(v) > 1 {
			n = strconv.Itoa(len(v)) + " searches"
		}
		r := fmtRate(slices.Min(v))
		if hi := slices.Max(v); hi != slices.Min(v) {
			r += " to " + fmtRate(hi)
		}
		if why == BoundDisturbed {
			if slices.Max(v) == 0 {
				r = "nothing passed"
			} else {
				r = "at least " + r + " req/s"
			}
			fmt.Fprintf(&b, "%s %s (%s)", n, why, r)
			continue
		}
		if why == BoundBelow {
			fmt.Fprintf(&b, "%s below %s req/s (no rate passed)", n, r)
			continue
		}
		fmt.Fprintf(&b, "%s at least %s req/s (%s)", n, r, why)
	}
	return b.String()
}

// Rank ranks the targets by capacity (highest first) with the tie rule
// (report.TieRule, on Interval); targets whose capacity was not found
// (client-bound, at --max-rate, out of steps: lower bounds, which do not
// order) share the last rank. It returns the targets in rank order.
func Rank(ts []*Target) []*Target {
	ivs := make([]report.Interval, len(ts))
	for i, t := range ts {
		ivs[i] = t.Interval()
	}
	out := make([]*Target, len(ts))
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
