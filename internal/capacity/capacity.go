// Package capacity is gab capacity's search for the highest constant rate a
// server sustains within latency objectives, and its document: a geometric
// climb from a start rate until a step fails, then a bisection between the
// highest passing and the lowest failing rate to a stated resolution. A step
// that the client itself could not drive ends the search: the capacity is
// then at least the highest passing rate, limited by the client, and is never
// reported as the server's.
package capacity

import "gab/internal/sweep"

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
	Steps    []Step

	lo, hi      float64 // highest passing rate, lowest failing (0: none yet)
	retry       float64 // a rate that failed, measured again next
	failures    int     // its failed steps so far
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
}

// Result is the search's outcome so far.
func (s *Search) Result() Result {
	r := Result{CapacityPerS: s.lo, ClientBound: s.clientBound, ReachedMax: s.reachedMax, FailingPerS: s.hi, Interrupted: s.interrupted}
	r.Found = !s.interrupted && !s.clientBound && !s.reachedMax && s.hi > 0 && (s.lo == 0 || s.hi-s.lo <= s.Resolution*s.lo)
	return r
}

// Line says the result in words.
func (r Result) Line(fmtRate func(float64) string) string {
	switch {
	case r.Interrupted && r.CapacityPerS > 0:
		return "at least " + fmtRate(r.CapacityPerS) + " req/s (interrupted)"
	case r.Interrupted:
		return "interrupted: not measured"
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
	Label    string   `json:"label"`
	URL      string   `json:"url"`
	Searches []Search `json:"-"`
	Runs     []Run    `json:"searches"`
	// Capacity is the mean of the repetitions' capacities with its 95 %
	// interval (sweep's Student's t; none with one repetition).
	Capacity Summary `json:"capacity"`
}

// Run is one search as the document holds it.
type Run struct {
	Steps  []Step `json:"steps"`
	Result Result `json:"result"`
}

// Summary is a target's capacity over its repetitions.
type Summary struct {
	N           int     `json:"repetitions"`
	MeanPerS    float64 `json:"mean_per_s"`
	LoPerS      float64 `json:"ci95_lo_per_s"`
	HiPerS      float64 `json:"ci95_hi_per_s"`
	ClientBound bool    `json:"client_bound"`          // some repetition was limited by the client
	Found       bool    `json:"found"`                 // every repetition found the capacity
	Interrupted bool    `json:"interrupted,omitempty"` // some repetition was interrupted
	Rank        int     `json:"rank,omitempty"`
	// RankRange is the rank range [lo, hi] by sweep.TieRule (lo = Rank);
	// absent in documents from before it.
	RankRange []int `json:"rank_range,omitempty"`
	Tied      bool  `json:"tied,omitempty"`
	// RankRangeLoose: see sweep.Place's Loose.
	RankRangeLoose bool `json:"rank_range_loose,omitempty"`
	// Group: the letters of the target's tie groups (sweep.TieRule).
	Group string `json:"group,omitempty"`
}

// RankText is the capacity's rank text (sweep.RankText), from Rank and
// RankRange.
func (c Summary) RankText() string {
	hi := c.Rank
	if len(c.RankRange) == 2 {
		hi = c.RankRange[1]
	}
	return sweep.RankText(c.Rank, hi, c.Tied) + sweep.LooseMark(c.RankRangeLoose)
}

// Interval is the target's capacity over its searches as sweep's tie rule
// tests it (sweep.Apart, the ratio of two capacities on the log scale): the
// mean of the searches' capacities with their sd, known when every search
// found the capacity.
func (t *Target) Interval() sweep.Interval {
	caps := make([]float64, len(t.Runs))
	for i, r := range t.Runs {
		caps[i] = r.Result.CapacityPerS
	}
	iv := sweep.IntervalOf(caps)
	iv.Known = t.Capacity.Found
	return iv
}

// Finish fills Runs and Capacity from the searches.
func (t *Target) Finish() {
	t.Runs = t.Runs[:0]
	var caps []float64
	found := len(t.Searches) > 0
	cb, interrupted := false, false
	for i := range t.Searches {
		s := &t.Searches[i]
		r := s.Result()
		t.Runs = append(t.Runs, Run{Steps: s.Steps, Result: r})
		caps = append(caps, r.CapacityPerS)
		found = found && r.Found
		cb = cb || r.ClientBound
		interrupted = interrupted || r.Interrupted
	}
	iv := summaryOf(caps)
	t.Capacity = Summary{N: iv.N, MeanPerS: iv.Mean, LoPerS: iv.Lo, HiPerS: iv.Hi, ClientBound: cb, Found: found, Interrupted: interrupted}
}

// Rank ranks the targets by capacity (highest first) with sweep's tie rule
// (sweep.TieRule, on Interval); targets whose capacity was not found
// (client-bound, at --max-rate, out of steps: lower bounds, which do not
// order) share the last rank. It returns the targets in rank order.
func Rank(ts []*Target) []*Target {
	ivs := make([]sweep.Interval, len(ts))
	for i, t := range ts {
		ivs[i] = t.Interval()
	}
	out := make([]*Target, len(ts))
	unknown, unknownRank := 0, 0
	for i, p := range sweep.RankIntervals(ivs, true) {
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
