package client

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"gab/internal/samples"
)

// This file holds the figures gab measures beyond ab's when asked
// (Config.Extended, or rate mode): each phase's distribution, the per-second
// throughput series, the name-resolution time (lookup.go) and rate mode's
// corrected latencies and lag (rate.go), gathered in per-worker shards.
//
// Everything here is off (nil) in ab's default run, so it costs nothing then.

// Phase names one part of a request's time, in the order a request goes through them.
type Phase int

const (
	PhaseTCP   Phase = iota // TCP connect: outcome.TCPDone − Start (0 on a reused connection)
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
	// Connect is ab's Connect column (start → connection ready, TCP and TLS
	// together) over the recorded requests, in µs: with Phases[PhaseWait] and
	// Phases[PhaseTotal] it gives ab's columns to 3 significant digits past
	// the exact sample store.
	Connect samples.Dist
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
	connect   samples.Dist
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
func (e *extraStats) state(t *tally) *tallyExtra {
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
		s.connect = samples.NewDist()
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
func (e *extraStats) observe(t *tally, o *outcome) {
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
	s.connect.Add(spanUS(o.Start, o.Connect))
	if e.rate {
		s.corrected.Add(spanUS(o.Intended, o.End))
	}
	for int64(len(s.perSecond)) <= sec {
		s.perSecond = append(s.perSecond, 0)
	}
	s.perSecond[sec]++
	s.mu.Unlock()
}

func (e *extraStats) observeLag(t *tally, us int64) {
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
	x.Connect = samples.NewDist()
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
			x.Connect.Merge(&s.connect)
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
			Target:      r.sched.target(r.stopAt),
			Sent:        r.sched.sent.Load(),
			OnSchedule:  r.sched.onTime.Load(),
			Corrected:   corrected,
			Lag:         lag,
			BehindAtEnd: r.sched.behind(r.stopAt, r.n),
			Phases:      r.cfg.RateSchedule,
		}
	}
	return x
}
