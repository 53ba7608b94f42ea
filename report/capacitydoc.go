package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The capacity document (gab capacity --json FILE;
// docs/capacity-schema.json): a set of runs' record; internal/capacity
// searches, writes and validates it.

// CapacityMinRate is the lowest rate a capacity search tries (requests per
// second).
const CapacityMinRate = 1.0

// CapacityStep is one measured step: a constant rate held for the step's time.
type CapacityStep struct {
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
func (s *CapacityStep) Verdict() string {
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
func (s *CapacityStep) Machine() string {
	var w []string
	if s.BusyMachine {
		w = append(w, "busy")
	}
	if s.KernelDrops {
		w = append(w, "drops")
	}
	return strings.Join(w, ", ")
}

// CapacityResult is a search's outcome.
type CapacityResult struct {
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

// Line says the result in words.
func (r CapacityResult) Line(fmtRate func(float64) string) string {
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
		return "below " + fmtRate(max(r.FailingPerS, CapacityMinRate)) + " req/s: no rate met the objectives"
	}
	return fmtRate(r.CapacityPerS) + " req/s"
}

// CapacityTarget is one target's searches (one per repetition).
type CapacityTarget struct {
	Label string        `json:"label"`
	URL   string        `json:"url"`
	Runs  []CapacityRun `json:"searches"`
	// Noise is the latency noise measured before the searches (nil: not
	// measured, --noise 0).
	Noise *CapacityNoise `json:"noise,omitempty"`
	// Capacity is the geometric mean of the capacities the searches found
	// with its 95 % interval on a log scale; the other searches' bounds
	// beside it (Summary).
	Capacity CapacitySummary `json:"capacity"`
}

// CapacityNoise is the machine's latency noise at a low rate, measured before the
// searches: Steps steps at RatePerS, judged as a search's steps are.
type CapacityNoise struct {
	RatePerS float64        `json:"rate_per_s"`
	Steps    []CapacityStep `json:"steps"`
	// P99MinUs and P99MaxUs are the range of the steps' corrected p99.
	P99MinUs int64 `json:"corrected_p99_min_us"`
	P99MaxUs int64 `json:"corrected_p99_max_us"`
	// Inside: some steps met the objectives and some failed them at the
	// same low rate: the objectives lie inside the machine's noise and a
	// capacity against them cannot be judged here.
	Inside bool `json:"objectives_inside"`
}

// Line says the noise in words.
func (n *CapacityNoise) Line(fmtRate func(float64) string, ms func(int64) string, objectives string) string {
	l := fmt.Sprintf("p99 at %s req/s ranged %s to %s ms over %d steps", fmtRate(n.RatePerS), ms(n.P99MinUs), ms(n.P99MaxUs), len(n.Steps))
	if n.Inside {
		return l + ": " + objectives + " passed in some and failed in others: the objectives lie inside this machine's noise and cannot be judged here"
	}
	return l
}

// CapacityRun is one search as the document holds it.
type CapacityRun struct {
	Steps  []CapacityStep `json:"steps"`
	Result CapacityResult `json:"result"`
}

// CapacitySummary is a target's capacity over its repetitions. Only the capacities
// the searches found count in it: a search limited by the client,
// interrupted, stopped at --max-rate or out of steps gives a lower bound
// ("at least"), and one where no rate passed an upper bound ("below");
// those are listed in Bounds, never averaged in. Over the found capacities
// it is their mean on a log scale (the geometric mean) with the 95 %
// interval of Student's t on the logarithms, taken back: both ends above 0,
// the interval as wide in ratio on either side (a capacity is a rate: a
// search at 100 and one at 19200 req/s differ by a factor, not a sum).
type CapacitySummary struct {
	N int `json:"repetitions"`
	// FoundN is how many searches found the capacity (above 0): the
	// values of MeanPerS, LoPerS and HiPerS (all 0 when none).
	FoundN int `json:"found_searches"`
	// MeanPerS is their geometric mean; LoPerS and HiPerS its 95 % interval
	// (both MeanPerS with one found capacity).
	MeanPerS    float64         `json:"mean_per_s"`
	LoPerS      float64         `json:"ci95_lo_per_s"`
	HiPerS      float64         `json:"ci95_hi_per_s"`
	Bounds      []CapacityBound `json:"bounds,omitempty"`
	ClientBound bool            `json:"client_bound"`          // some repetition was limited by the client
	Found       bool            `json:"found"`                 // every repetition found the capacity
	Interrupted bool            `json:"interrupted,omitempty"` // some repetition was interrupted
	Rank        int             `json:"rank,omitempty"`
	// RankRange is the rank range [lo, hi] by TieRule (lo = Rank);
	// absent in documents from before it.
	RankRange []int `json:"rank_range,omitempty"`
	Tied      bool  `json:"tied,omitempty"`
	// RankRangeLoose: see Place's Loose.
	RankRangeLoose bool `json:"rank_range_loose,omitempty"`
	// Group: the letters of the target's tie groups (TieRule).
	Group string `json:"group,omitempty"`
}

// RankText is the capacity's rank text (RankText), from Rank and
// RankRange.
func (c CapacitySummary) RankText() string {
	return rankRangeText(c.Rank, c.RankRange, c.Tied, c.RankRangeLoose)
}

// Interval is the target's capacity over its searches as the tie rule (TieRule)
// tests it (Apart, the ratio of two capacities on the log scale): the
// mean of the capacities its searches found (bounds left out, as Summarize
// leaves them) with their sd, known when a search found one: a target whose
// searches found none ranks after every target with a capacity found.
func (t *CapacityTarget) Interval() Interval {
	var caps []float64
	for i, r := range t.Runs {
		if _, bound := CapacityBoundOf(i, r.Result); !bound {
			caps = append(caps, r.Result.CapacityPerS)
		}
	}
	iv := IntervalOf(caps)
	iv.Known = len(caps) > 0
	return iv
}

// CapacityBound is a search that found no capacity: at least PerS (its highest
// passing rate) or, when no rate passed, below PerS (its lowest failing
// rate, at least CapacityMinRate).
type CapacityBound struct {
	Search int     `json:"search"` // its index among the target's searches
	PerS   float64 `json:"per_s"`
	// Why is CapacityBoundClient, CapacityBoundInterrupted, CapacityBoundDisturbed, CapacityBoundMaxRate,
	// CapacityBoundSteps or CapacityBoundBelow.
	Why string `json:"why"`
}

// The kinds of CapacityBound.
const (
	CapacityBoundClient      = "client-bound"
	CapacityBoundInterrupted = "interrupted"
	CapacityBoundMaxRate     = "at --max-rate"
	CapacityBoundSteps       = "out of steps"
	CapacityBoundBelow       = "below: no rate passed"
	CapacityBoundDisturbed   = "disturbed: the machine was busy"
)

// CapacityBoundOf is the bound a search's result gives, ok false when it found a
// capacity above 0.
func CapacityBoundOf(i int, r CapacityResult) (b CapacityBound, ok bool) {
	b = CapacityBound{Search: i, PerS: r.CapacityPerS}
	switch {
	case r.Interrupted:
		b.Why = CapacityBoundInterrupted
	case r.Disturbed:
		b.Why = CapacityBoundDisturbed
	case r.ClientBound:
		b.Why = CapacityBoundClient
	case r.ReachedMax:
		b.Why = CapacityBoundMaxRate
	case !r.Found:
		b.Why = CapacityBoundSteps
	case r.CapacityPerS == 0:
		b.Why, b.PerS = CapacityBoundBelow, max(r.FailingPerS, CapacityMinRate)
	default:
		return CapacityBound{}, false
	}
	return b, true
}

// Line says the summary in words: the capacity found over the searches,
// then the bounds of those that found none.
func (c CapacitySummary) Line(fmtRate func(float64) string) string {
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
		if why == CapacityBoundDisturbed {
			if slices.Max(v) == 0 {
				r = "nothing passed"
			} else {
				r = "at least " + r + " req/s"
			}
			fmt.Fprintf(&b, "%s %s (%s)", n, why, r)
			continue
		}
		if why == CapacityBoundBelow {
			fmt.Fprintf(&b, "%s below %s req/s (no rate passed)", n, r)
			continue
		}
		fmt.Fprintf(&b, "%s at least %s req/s (%s)", n, r, why)
	}
	return b.String()
}

// CapacityDocument is gab capacity's result: its settings, every target's searches
// with every step, and the capacities ranked.
type CapacityDocument struct {
	Tool          string    `json:"tool"` // "gab"
	Schema        string    `json:"schema"`
	SchemaVersion int       `json:"schema_version"`
	CommandLine   []string  `json:"command_line"`
	Start         time.Time `json:"start"`
	End           time.Time `json:"end"`
	Complete      bool      `json:"complete"`
	Objectives    []string  `json:"objectives"`
	// LatencyObjectiveMs is the largest latency objective's bound (the
	// knee chart's flat line; 0 without one).
	LatencyObjectiveMs float64           `json:"latency_objective_ms,omitempty"`
	StepS              float64           `json:"step_s"`
	SettleS            float64           `json:"settle_s"`
	ResolutionPercent  float64           `json:"resolution_percent"`
	MinAchieved        float64           `json:"min_achieved"`
	MaxConnections     int               `json:"max_connections"`
	Repeat             int               `json:"repeat"`
	Attempts           int               `json:"attempts"`
	TieRule            string            `json:"tie_rule"`
	Machine            CapacityMachine   `json:"machine"`
	Targets            []*CapacityTarget `json:"targets"`
}

// CapacityMachine is where the search ran.
type CapacityMachine struct {
	CPUs      int       `json:"cpus"`
	Cores     float64   `json:"cores_usable"`
	LoadStart []float64 `json:"load_start,omitempty"`
	LoadEnd   []float64 `json:"load_end,omitempty"`
}

// Stated is the capacity gab compare states: the found capacities'
// geometric mean, or when no search found one the highest of its searches'
// bounds (the row then says "at least").
func (c CapacitySummary) Stated() float64 {
	if c.FoundN > 0 || len(c.Bounds) == 0 {
		return c.MeanPerS
	}
	v := 0.0
	for _, b := range c.Bounds {
		v = max(v, b.PerS)
	}
	return v
}
