package report

import (
	"errors"
	"math"
	"time"

	"gab/client"
)

// A rate schedule's steps (--rate R1,R2,... --step, or a ramp as one step):
// each step's figures from the timeline's intervals that start in it. The
// timeline's interval divides every step boundary within the run
// (StepInterval), so that no interval holds two steps' requests.

// rateStep is one step of a rate schedule.
type rateStep struct {
	StartS  float64 `json:"start_s"`
	LengthS float64 `json:"length_s"`
	// TargetPerS is the step's rate (a ramp's from its start to
	// TargetEndPerS); AchievedPerS its recorded requests over the time of its
	// intervals.
	TargetPerS    float64 `json:"target_per_s"`
	TargetEndPerS float64 `json:"target_end_per_s"`
	AchievedPerS  float64 `json:"achieved_per_s"`
	Requests      int64   `json:"requests"`
	Failures      int64   `json:"failures"`
	// Intervals is how many of the timeline's intervals the figures cover.
	Intervals int `json:"intervals"`
	// Corrected (from the intended send times) and uncorrected latency, µs.
	CorrectedP50Us    int64 `json:"corrected_p50_us"`
	CorrectedP99Us    int64 `json:"corrected_p99_us"`
	CorrectedP999Us   int64 `json:"corrected_p99_9_us"`
	UncorrectedP50Us  int64 `json:"uncorrected_p50_us"`
	UncorrectedP99Us  int64 `json:"uncorrected_p99_us"`
	UncorrectedP999Us int64 `json:"uncorrected_p99_9_us"`
}

// rateStepsOf is the schedule's steps (none for a constant rate, or without
// a timeline with the corrected latencies): each step the run's Window over
// the intervals that start in it, its figures read through the catalog (the
// corrected ones from its FromIntendedSend view). The requests in flight at
// the run's stop count in the step that holds the run's last interval, as
// they count in the run's figures.
func rateStepsOf(phases []client.RatePhase, r *Run) []rateStep {
	if len(phases) == 0 || r.Timeline == nil || !r.Timeline.Corrected {
		return nil
	}
	var out []rateStep
	var at time.Duration
	for _, ph := range phases {
		end := at + ph.For
		st := rateStep{StartS: at.Seconds(), LengthS: ph.For.Seconds(), TargetPerS: ph.From, TargetEndPerS: ph.To}
		w, err := Window(r, at, end)
		switch {
		case errors.Is(err, errEmptyWindow):
		case err != nil:
			return nil // a document's timeline that does not add up: no steps rather than wrong ones
		default:
			st.Intervals = len(w.Timeline.Intervals)
			st.Requests, st.Failures = int64(w.Report.CompleteRequests), int64(w.Report.FailedRequests)
			st.AchievedPerS = w.Report.RequestsPerSecond
			st.UncorrectedP50Us, st.UncorrectedP99Us, st.UncorrectedP999Us = figureUs(w, "p50"), figureUs(w, "p99"), figureUs(w, "p99.9")
			if c := w.FromIntendedSend(); c != nil {
				st.CorrectedP50Us, st.CorrectedP99Us, st.CorrectedP999Us = figureUs(c, "p50"), figureUs(c, "p99"), figureUs(c, "p99.9")
			}
		}
		out = append(out, st)
		at = end
	}
	return out
}

// figureUs is a catalog latency figure of the run in whole µs (0 where the
// run lacks it).
func figureUs(r *Run, key string) int64 {
	f, ok := FigureByKey(key)
	if !ok {
		return 0
	}
	v, ok := f.Value(r)
	if !ok {
		return 0
	}
	return int64(math.Round(msToUs(v)))
}

// writeRateSteps writes the schedule's steps for rate mode's section.
func writeRateSteps(p *errWriter, steps []rateStep) {
	if len(steps) == 0 {
		return
	}
	p.printf("\nRate schedule by step (the timeline's intervals that start in each; latency in ms: corrected from the\n")
	p.printf("  intended send times, uncorrected from the actual ones; nearest rank, bucket tops of HDR histograms)\n")
	p.printf("%9s%9s%11s%11s%10s%8s%9s%9s%10s%9s%9s\n", "start(s)", "length", "target/s", "achvd/s", "requests", "failed",
		"c.p50", "c.p99", "c.p99.9", "u.p50", "u.p99")
	for _, s := range steps {
		target := decimal(s.TargetPerS)
		if s.TargetEndPerS != s.TargetPerS {
			target += ">" + decimal(s.TargetEndPerS)
		}
		p.printf("%9.3f%9.3f%11s%11.1f%10d%8d", s.StartS, s.LengthS, target, s.AchievedPerS, s.Requests, s.Failures)
		if s.Requests == 0 {
			p.printf("%9s%9s%10s%9s%9s\n", "-", "-", "-", "-", "-")
			continue
		}
		p.printf("%9s%9s%10s%9s%9s\n", ms3(float64(s.CorrectedP50Us)), ms3(float64(s.CorrectedP99Us)), ms3(float64(s.CorrectedP999Us)),
			ms3(float64(s.UncorrectedP50Us)), ms3(float64(s.UncorrectedP99Us)))
	}
}

// StepGrain is what every end of the schedule's steps within a run of limit
// is a whole multiple of (0: a run as long as the schedule; the last step's
// end counts when the run goes on past it, at the last rate): their greatest
// common divisor, 0 when no step ends within the run.
func StepGrain(phases []client.RatePhase, limit time.Duration) time.Duration {
	var g, at time.Duration
	for i, p := range phases {
		at += p.For
		if limit > 0 && at >= limit || limit <= 0 && i == len(phases)-1 {
			break
		}
		for b := at; b != 0; {
			g, b = b, g%b
		}
	}
	return g
}

// StepInterval is the longest timeline interval of at most want, at least
// client.MinInterval and in whole µs (the document's unit) that divides the
// schedule's steps within a run of limit (StepGrain): want itself when it
// does (or no step ends within the run), 0 when none does (or want is below
// client.MinInterval).
func StepInterval(want time.Duration, phases []client.RatePhase, limit time.Duration) time.Duration {
	g := StepGrain(phases, limit)
	if want < client.MinInterval {
		return 0
	}
	if g == 0 || g%want == 0 {
		return want
	}
	if g%time.Microsecond != 0 {
		return 0
	}
	// The divisors of g in µs from lo to hi, the largest first: by
	// candidate or by quotient, whichever has fewer to try.
	gu, lo, hi := int64(g/time.Microsecond), int64(client.MinInterval/time.Microsecond), int64(want/time.Microsecond)
	if gu < lo {
		return 0
	}
	hi = min(hi, gu)
	if hi-lo <= gu/lo-gu/hi {
		for d := hi; d >= lo; d-- {
			if gu%d == 0 {
				return time.Duration(d) * time.Microsecond
			}
		}
		return 0
	}
	for k := (gu + hi - 1) / hi; gu/k >= lo; k++ {
		if gu%k == 0 {
			return time.Duration(gu/k) * time.Microsecond
		}
	}
	return 0
}
