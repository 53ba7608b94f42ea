package client

import (
	"math/bits"
	"sync/atomic"
)

// This file is what a live status line reads while a run goes on
// (Config.Live): each worker counts its recorded requests' total times in a
// log-linear histogram of its own (single writer: a plain load and store, no
// lock, no read-modify-write, nothing allocated per request), and
// Runner.Live sums them with the run's atomic counters when a timer asks.

// liveBuckets is the number of log-linear buckets: 8 per power of two
// (values within 12.5 %) from 1 µs to 2^32 µs.
const liveBuckets = 8 + 29*8

// liveHist is one worker's histogram of total times in µs.
type liveHist [liveBuckets]atomic.Uint64

// liveBucket is the bucket of a value in µs.
func liveBucket(us uint32) int {
	if us < 8 {
		return int(us)
	}
	e := bits.Len32(us) - 1 // 3..31
	return 8 + (e-3)*8 + int(us>>(e-3)&7)
}

// liveBucketHigh is the highest value in µs of bucket i.
func liveBucketHigh(i int) uint64 {
	if i < 8 {
		return uint64(i)
	}
	e := (i-8)/8 + 3
	sub := uint64((i - 8) % 8)
	return (8+sub+1)<<(e-3) - 1
}

// add counts one value; only the worker that owns h calls it.
func (h *liveHist) add(us uint32) {
	b := &h[liveBucket(us)]
	b.Store(b.Load() + 1)
}

// LiveStats is a snapshot of a run in progress.
type LiveStats struct {
	Done   int64 // requests recorded (ab's done)
	Failed int64 // ab's Failed requests so far
	hist   [liveBuckets]uint64
	count  uint64
}

// Percentile returns an upper bound in µs of the total time at percent p of
// the requests recorded so far (within 12.5 % above the true value), and
// false when none was recorded.
func (s *LiveStats) Percentile(p float64) (uint64, bool) {
	if s.count == 0 {
		return 0, false
	}
	rank := uint64(float64(s.count) * p / 100)
	if rank >= s.count {
		rank = s.count - 1
	}
	var seen uint64
	for i, c := range s.hist {
		seen += c
		if seen > rank {
			return liveBucketHigh(i), true
		}
	}
	return liveBucketHigh(liveBuckets - 1), true
}

// openConns is the number of connections open now.
func (r *run) openConns() int64 {
	n := r.conns.Load()
	r.mu.Lock()
	for _, t := range r.tallies {
		n += t.conns.Load()
	}
	r.mu.Unlock()
	return max(n, 0)
}

// Live returns the run's progress so far; safe to call during Run from any
// goroutine (a status line calls it a few times a second). Without
// Config.Live the snapshot has no latencies.
func (rn *Runner) Live() LiveStats {
	var s LiveStats
	r := rn.cur.Load()
	if r == nil {
		return s
	}
	s.Done, s.Failed = r.done.Load(), r.bad.Load()
	r.mu.Lock()
	for _, t := range r.tallies {
		if t.live == nil {
			continue
		}
		for i := range t.live {
			c := t.live[i].Load()
			s.hist[i] += c
			s.count += c
		}
	}
	r.mu.Unlock()
	return s
}
