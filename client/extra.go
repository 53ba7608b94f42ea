package client

import (
	"context"
	"math"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"gab/internal/samples"
)

// This file holds what gab measures beyond ab (issue 7): the phase breakdown,
// the per-second throughput series, the name-resolution time, and rate mode
// (--rate), whose open-model schedule and corrected latencies tell the truth
// about tails that ab's closed loop hides (coordinated omission).
//
// Everything here is off (nil) in ab's default run, so it costs nothing then.

// Phase names one part of a request's time, in the order a request goes through them.
type Phase int

const (
	PhaseTCP   Phase = iota // TCP connect: Outcome.TCPDone − Start (0 on a reused connection)
	PhaseTLS                // TLS handshake: Connect − TCPDone (0 without TLS or on reuse)
	PhaseWrite              // request write: WriteEnd − Connect
	PhaseWait               // waiting for the first byte (TTFB): FirstByte − WriteEnd, ab's "Waiting"
	PhaseBody               // body transfer: End − FirstByte
	PhaseTotal              // total: End − Start, ab's "Total"
	// PhaseCount is the number of phases.
	PhaseCount
)

// String is the phase's name as the extended report prints it.
func (p Phase) String() string {
	switch p {
	case PhaseTCP:
		return "TCP connect"
	case PhaseTLS:
		return "TLS handshake"
	case PhaseWrite:
		return "Request write"
	case PhaseWait:
		return "Waiting (TTFB)"
	case PhaseBody:
		return "Body transfer"
	case PhaseTotal:
		return "Total"
	}
	return "?"
}

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
}

// ExtraResult holds the figures beyond ab's, gathered when Config.Extended or
// Config.Rate asks for them.
type ExtraResult struct {
	// DNS is the time spent in name resolution before the run (the target, the
	// proxy, -B), DNSLookups the number of names resolved; both 0 when every
	// address was a literal (then nothing is resolved).
	DNS        time.Duration
	DNSLookups int
	// Phases holds each phase's distribution over the recorded requests, in µs.
	Phases [PhaseCount]samples.Dist
	// PerSecond[i] is the number of requests recorded with an end time in
	// second i of the run (i from 0). The last entry is usually a partial second.
	PerSecond []int64
	// Rate is set in rate mode only.
	Rate *RateResult
}

// extraStats gathers the extra figures. Workers write into shards, each with
// its own lock, so concurrent workers rarely meet on one lock; a shard's
// histograms are allocated when a worker first uses it.
type extraStats struct {
	shards  []extraShard
	next    atomic.Uint32 // round-robin shard assignment
	lookups *lookupTimer
	rate    bool
}

type extraShard struct {
	mu        sync.Mutex
	used      bool
	phases    [PhaseCount]samples.Dist
	corrected samples.Dist
	lag       samples.Dist
	perSecond []int64
	_         [64]byte // keep neighbouring shards' locks off one cache line
}

// tallyExtra is a worker's link to its shard and, in rate mode, its reusable timer.
type tallyExtra struct {
	shard *extraShard
	timer *time.Timer
}

func newExtraStats(rate bool, lookups *lookupTimer) *extraStats {
	n := 2 * runtime.GOMAXPROCS(0)
	if n > 16 {
		n = 16
	}
	return &extraStats{shards: make([]extraShard, n), lookups: lookups, rate: rate}
}

// state returns the worker's extra state, assigning it a shard on first use.
// Only t's own worker calls it.
func (e *extraStats) state(t *Tally) *tallyExtra {
	if t.extra != nil {
		return t.extra
	}
	i := int(e.next.Add(1)-1) % len(e.shards)
	s := &e.shards[i]
	s.mu.Lock()
	if !s.used {
		s.used = true
		for p := range s.phases {
			s.phases[p] = samples.NewDist()
		}
		if e.rate {
			s.corrected, s.lag = samples.NewDist(), samples.NewDist()
		}
	}
	s.mu.Unlock()
	t.extra = &tallyExtra{shard: s}
	return t.extra
}

func spanUS(from, to int64) int64 {
	if to <= from {
		return 0
	}
	return (to - from) / 1000
}

// observe records one recorded attempt (called from run.record, concurrently
// from every worker).
func (e *extraStats) observe(t *Tally, o *Outcome) {
	s := e.state(t).shard
	sec := o.End / int64(time.Second)
	if sec < 0 {
		sec = 0
	}
	s.mu.Lock()
	s.phases[PhaseTCP].Add(spanUS(o.Start, o.TCPDone))
	s.phases[PhaseTLS].Add(spanUS(o.TCPDone, o.Connect))
	s.phases[PhaseWrite].Add(spanUS(o.Connect, o.WriteEnd))
	s.phases[PhaseWait].Add(spanUS(o.WriteEnd, o.FirstByte))
	s.phases[PhaseBody].Add(spanUS(o.FirstByte, o.End))
	s.phases[PhaseTotal].Add(spanUS(o.Start, o.End))
	if e.rate {
		s.corrected.Add(spanUS(o.Intended, o.End))
	}
	for int64(len(s.perSecond)) <= sec {
		s.perSecond = append(s.perSecond, 0)
	}
	s.perSecond[sec]++
	s.mu.Unlock()
}

func (e *extraStats) observeLag(t *Tally, us int64) {
	s := e.state(t).shard
	s.mu.Lock()
	s.lag.Add(us)
	s.mu.Unlock()
}

// result merges the shards. The workers have stopped.
func (e *extraStats) result(r *run) *ExtraResult {
	x := &ExtraResult{}
	for p := range x.Phases {
		x.Phases[p] = samples.NewDist()
	}
	var corrected, lag samples.Dist
	if e.rate {
		corrected, lag = samples.NewDist(), samples.NewDist()
	}
	for i := range e.shards {
		s := &e.shards[i]
		s.mu.Lock()
		if s.used {
			for p := range s.phases {
				x.Phases[p].Merge(&s.phases[p])
			}
			if e.rate {
				corrected.Merge(&s.corrected)
				lag.Merge(&s.lag)
			}
			for len(x.PerSecond) < len(s.perSecond) {
				x.PerSecond = append(x.PerSecond, 0)
			}
			for j, c := range s.perSecond {
				x.PerSecond[j] += c
			}
		}
		s.mu.Unlock()
	}
	if e.lookups != nil {
		x.DNS = time.Duration(e.lookups.total.Load())
		x.DNSLookups = int(e.lookups.count.Load())
	}
	if e.rate && r.sched != nil {
		x.Rate = &RateResult{
			Target:      r.sched.rate,
			Sent:        r.sched.sent.Load(),
			OnSchedule:  r.sched.onTime.Load(),
			Corrected:   corrected,
			Lag:         lag,
			BehindAtEnd: r.sched.behind(r.stopAt, r.n),
		}
	}
	return x
}

// schedule paces requests in rate mode (--rate): the k-th request (from 0) is
// due at k/rate seconds after the start, whichever connection is free to send
// it (an open model over the -c connections). A request that finds no free
// connection at its due time waits for one, and its corrected latency counts
// from the due time.
type schedule struct {
	rate   float64
	next   atomic.Int64 // next slot to hand out
	sent   atomic.Int64 // slots whose request was dispatched
	onTime atomic.Int64 // of those, dispatched within ScheduleTolerance of their due time
}

// ScheduleTolerance is how late a request may be dispatched in rate mode and
// still count as sent on schedule.
const ScheduleTolerance = time.Millisecond

// AchievedShortfall is the fraction of the target rate below which rate mode's
// report warns that the achieved rate fell short (achieved < 95 % of target).
const AchievedShortfall = 0.95

func newSchedule(rate float64) *schedule { return &schedule{rate: rate} }

// due is slot k's intended send time in ns since the start.
func (s *schedule) due(k int64) int64 {
	return int64(float64(k) * 1e9 / s.rate)
}

// wait blocks until the next slot's due time (a timer, no polling), stores it
// in t.Intended and records the dispatch lag. It returns false if the run
// stopped meanwhile.
func (s *schedule) wait(r *run, t *Tally) bool {
	k := s.next.Add(1) - 1
	due := s.due(k)
	te := r.extra.state(t)
	if d := due - r.clock(); d > 0 {
		// A worker waiting for its slot is not idle: keep ab's -s watchdog
		// quiet until the slot is due (rates below one request per -s).
		for {
			a := t.activity.Load()
			if a >= due || t.activity.CompareAndSwap(a, due) {
				break
			}
		}
		if te.timer == nil {
			te.timer = time.NewTimer(time.Duration(d))
		} else {
			te.timer.Reset(time.Duration(d))
		}
		select {
		case <-te.timer.C:
		case <-r.stopCh:
			te.timer.Stop()
			r.unclaim()
			return false
		}
	}
	if r.isStopped() {
		r.unclaim()
		return false
	}
	s.sent.Add(1)
	t.Intended = due
	late := r.clock() - due
	if late <= int64(ScheduleTolerance) {
		s.onTime.Add(1)
	}
	r.extra.observeLag(t, spanUS(due, due+late))
	return true
}

// stamp gives a recorded outcome its intended time and makes its start the
// actual send time: on a kept-alive connection a transport starts the next
// request when the previous response ended, but in rate mode it then waited
// for its slot, and ab's (uncorrected) tables must not count that wait.
func (s *schedule) stamp(t *Tally, o *Outcome) {
	o.Intended = t.Intended
	if o.Start < o.Intended {
		o.Start = o.Intended
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
	dueBy := int64(math.Floor(float64(until)*s.rate/1e9)) + 1
	if dueBy > n {
		dueBy = n
	}
	if b := dueBy - s.sent.Load(); b > 0 {
		return b
	}
	return 0
}

// lookupTimer wraps the resolver to time name resolution (the extended
// report's DNS figure). Literal addresses never reach it.
type lookupTimer struct {
	inner Resolver
	total atomic.Int64 // ns
	count atomic.Int64
}

func (l *lookupTimer) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	start := time.Now()
	ips, err := l.inner.LookupIPAddr(ctx, host)
	l.total.Add(int64(time.Since(start)))
	l.count.Add(1)
	return ips, err
}

// timeLookups installs a lookupTimer in cfg when extra figures are wanted.
func timeLookups(cfg *Config) *lookupTimer {
	if !cfg.Extended && cfg.Rate <= 0 {
		return nil
	}
	inner := cfg.Resolver
	if inner == nil {
		inner = net.DefaultResolver
	}
	l := &lookupTimer{inner: inner}
	cfg.Resolver = l
	return l
}
