package client

import (
	"math"
	"sort"
	"sync/atomic"
	"time"

	"gab/internal/samples"
)

// Rate mode (--rate): an open-model schedule that sends requests at a fixed
// rate whatever the responses do, and the corrected latencies (from each
// request's intended send time) that tell the truth about tails a closed loop
// hides (coordinated omission).

// RateResult is what rate mode (--rate) measured.
type RateResult struct {
	// Target is the requested rate in requests per second.
	Target float64
	// Sent is the number of requests dispatched on the schedule (retries of
	// unrecorded attempts take a new slot, so it may exceed the recorded count).
	Sent int64
	// OnSchedule is how many of them were dispatched within ScheduleTolerance
	// of their intended send time.
	OnSchedule int64
	// Corrected is the latency from each recorded request's intended send time
	// to its end, in µs: what a user arriving on schedule would have waited.
	Corrected samples.Dist
	// Lag is how late each request was dispatched (actual send − intended) in µs.
	Lag samples.Dist
	// BehindAtEnd is the number of requests the schedule had due by the time
	// the run stopped that were never sent (0 when the client kept up).
	BehindAtEnd int64
	// Phases is the schedule's phases (Config.RateSchedule; nil for a
	// constant rate).
	Phases []RatePhase
}

// RatePhase is one part of a rate schedule (--rate 100:5000/60s, --rate
// 1000,2000 --step 10s): the rate goes linearly from From to To requests per
// second over For (a step has From == To). After a schedule's last phase its
// last rate holds.
type RatePhase struct {
	From, To float64
	For      time.Duration
}

// MinRate and MaxRate bound every rate of rate mode, constant, ramp or step,
// in requests per second: below MinRate a slot is due more than 16 minutes
// after the previous one, above MaxRate one every nanosecond, the monotonic
// clock's unit, and a schedule's counts and due times leave float64's and
// int64's exact range.
const (
	MinRate = 0.001
	MaxRate = 1e9
)

// MaxRatePhases bounds a schedule's phases (a lookup per request walks them
// by bisection).
const MaxRatePhases = 1000

// ScheduleLength is the sum of the phases' lengths.
func ScheduleLength(ps []RatePhase) time.Duration {
	var d time.Duration
	for _, p := range ps {
		d += p.For
	}
	return d
}

// schedule paces requests in rate mode (--rate): the k-th request (from 0) is
// due when the schedule's cumulative count reaches k (k/rate seconds after
// the start at a constant rate), whichever connection is free to send it (an
// open model over the -c connections; a change of rate opens no connection).
// A request that finds no free connection at its due time waits for one, and
// its corrected latency counts from the due time.
type schedule struct {
	rate   float64      // the constant rate, or the last phase's last rate
	phases []phaseStart // nil: a constant rate
	replay []int64      // Config.Replay: each slot's due time (replay.go); nil otherwise
	next   atomic.Int64 // next slot to hand out
	sent   atomic.Int64 // slots whose request was dispatched
	onTime atomic.Int64 // of those, dispatched within ScheduleTolerance of their due time
	// end is -t's limit in ns since the start (0: none): no slot due at
	// or after it is sent, however late the limit's timer stops the run.
	end int64
}

// phaseStart is a phase with where it starts: at ns since the run's start,
// with count requests due before it.
type phaseStart struct {
	RatePhase
	at    int64
	count float64
}

// ScheduleTolerance is how late a request may be dispatched in rate mode and
// still count as sent on schedule.
const ScheduleTolerance = time.Millisecond

// AchievedShortfall is the fraction of the target rate below which rate mode's
// report warns that the achieved rate fell short (achieved < 95 % of target).
const AchievedShortfall = 0.95

// newSchedule paces rate requests per second, or the phases when there are
// any (then rate is unused).
func newSchedule(rate float64, phases []RatePhase) *schedule {
	s := &schedule{rate: rate}
	if len(phases) == 0 {
		return s
	}
	var at int64
	var count float64
	for _, p := range phases {
		s.phases = append(s.phases, phaseStart{RatePhase: p, at: at, count: count})
		at += int64(p.For)
		count += (p.From + p.To) / 2 * p.For.Seconds()
	}
	s.rate = phases[len(phases)-1].To
	s.phases = append(s.phases, phaseStart{RatePhase: RatePhase{From: s.rate, To: s.rate}, at: at, count: count})
	return s
}

// due is slot k's intended send time in ns since the start.
func (s *schedule) due(k int64) int64 {
	if s.replay != nil {
		return replayDue(s.replay, k)
	}
	if s.phases == nil {
		return int64(float64(k) * 1e9 / s.rate)
	}
	x := float64(k)
	// The last phase whose count is at most x (the first's is 0).
	p := &s.phases[sort.Search(len(s.phases), func(i int) bool { return s.phases[i].count > x })-1]
	x -= p.count
	// count(τ) = From·τ + a·τ²/2 with a = (To − From)/For; τ for count x,
	// in the form that keeps its precision when a is near 0.
	var tau float64
	if p.For > 0 && p.To != p.From {
		a := (p.To - p.From) / p.For.Seconds()
		tau = 2 * x / (p.From + math.Sqrt(max(p.From*p.From+2*a*x, 0)))
	} else {
		tau = x / p.From
	}
	return p.at + int64(tau*1e9)
}

// countAt is the number of requests due before t ns since the start.
func (s *schedule) countAt(t int64) float64 {
	if s.replay != nil {
		return replayCount(s.replay, t)
	}
	if s.phases == nil {
		return float64(t) * s.rate / 1e9
	}
	// The last phase that starts by t (or the first).
	p := &s.phases[max(sort.Search(len(s.phases), func(i int) bool { return s.phases[i].at > t })-1, 0)]
	tau := float64(t-p.at) / 1e9
	a := 0.0
	if p.For > 0 {
		a = (p.To - p.From) / p.For.Seconds()
	}
	return p.count + p.From*tau + a*tau*tau/2
}

// target is the mean rate the schedule asked for over the first t ns.
func (s *schedule) target(t int64) float64 {
	if s.phases == nil && s.replay == nil || t <= 0 {
		return s.rate
	}
	return s.countAt(t) * 1e9 / float64(t)
}

// wait blocks until the next slot's due time (a timer, no polling), stores it
// in t.Intended and records the dispatch lag. It returns false if the run
// stopped meanwhile, or, waiting for the stop, if the slot is due at or after
// the schedule's end.
func (s *schedule) wait(r *run, t *tally) bool {
	k := s.next.Add(1) - 1
	due := s.due(k)
	if s.end > 0 && due >= s.end {
		// Past the last slot: the -t timer, however late it fires, ends
		// the run; nothing more is sent.
		t.state.Store(tallyPacing)
		<-r.stopCh
		t.state.Store(tallyWorking)
		r.unclaim()
		return false
	}
	te := r.extra.state(t)
	if d := due - r.clock(); d > 0 {
		// A worker waiting for its slot waits on no socket: -s's watchdog
		// leaves it out (run.idleFor) until the slot is due, when its
		// request starts (rates below one request per -s), and still
		// watches the other workers' requests meanwhile.
		t.state.Store(tallyPacing)
		if te.timer == nil {
			te.timer = time.NewTimer(time.Duration(d))
		} else {
			te.timer.Reset(time.Duration(d))
		}
		select {
		case <-te.timer.C:
		case <-r.stopCh:
			te.timer.Stop()
			t.state.Store(tallyWorking)
			r.unclaim()
			return false
		}
		t.touch(r)
		t.state.Store(tallyWorking)
	}
	if r.isStopped() {
		r.unclaim()
		return false
	}
	s.sent.Add(1)
	now := r.clock()
	t.Intended, t.Sent, t.slot = due, max(now, due), k
	late := now - due
	if late <= int64(ScheduleTolerance) {
		s.onTime.Add(1)
	}
	r.extra.observeLag(t, spanUS(due, due+late))
	return true
}

// tryWait takes the next slot if it is due (true), else returns when it is
// due, or -1 past the schedule's end (see wait, which blocks instead).
func (s *schedule) tryWait(r *run, t *tally) (bool, int64) {
	for {
		k := s.next.Load()
		due := s.due(k)
		if s.end > 0 && due >= s.end {
			return false, -1
		}
		now := r.clock()
		if due > now {
			return false, due
		}
		if s.next.CompareAndSwap(k, k+1) {
			s.sent.Add(1)
			t.Intended, t.Sent, t.slot = due, now, k
			if now-due <= int64(ScheduleTolerance) {
				s.onTime.Add(1)
			}
			r.extra.observeLag(t, spanUS(due, now))
			return true, due
		}
	}
}

// stamp gives a recorded outcome its intended time and makes its start the
// actual send time: on a kept-alive connection a transport starts the next
// request when the previous response ended, but in rate mode it then waited
// for its slot (and for the timer's lateness past it), and ab's
// (uncorrected) tables must not count that wait.
func (s *schedule) stamp(t *tally, o *outcome) {
	o.Intended = t.Intended
	if o.Start < t.Sent {
		o.Start = t.Sent
		if o.TCPDone < o.Start {
			o.TCPDone = o.Start
		}
		if o.Connect < o.Start {
			o.Connect = o.Start
		}
	}
}

// behind is the number of requests due by stopAt (at most n) that were not
// sent. Slots due in the last millisecond before the stop are left out: such a
// slot races with the -t timer rather than showing a client that fell behind.
func (s *schedule) behind(stopAt, n int64) int64 {
	until := stopAt - int64(time.Millisecond)
	if until < 0 {
		return 0
	}
	dueBy := int64(math.Floor(s.countAt(until))) + 1
	if dueBy > n {
		dueBy = n
	}
	if b := dueBy - s.sent.Load(); b > 0 {
		return b
	}
	return 0
}

// fillDue sets each interval's Due: the requests the schedule had due in it.
func (s *schedule) fillDue(tl *Timeline) {
	if tl == nil {
		return
	}
	for i := range tl.Intervals {
		iv := &tl.Intervals[i]
		iv.Due = s.countAt(int64(iv.Start+iv.Length)) - s.countAt(int64(iv.Start))
	}
}
