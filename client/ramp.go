package client

import "time"

// A ramp-up (Config.RampUp) opens the connections over its length; the
// requests that start meanwhile are sent but left out of every figure, as a
// warm-up's are: their counts (run.finish), their bytes and retries
// (tally.leaveToRamp), the run's time (Runner.result) and what the caller
// measures around the run, its CPU for one (Runner.OnMeasure).

// RampResult is what the requests that started during the ramp-up sent and
// read, left out of every other figure.
type RampResult struct {
	Requests int64         // requests that started during the ramp-up and ended (the server saw them)
	Elapsed  time.Duration // how long the ramp-up lasted (less than Config.RampUp if the run ended in it)
	// TotalRead, BodyRead and TotalSent are the ramp-up's requests' bytes,
	// counted as Counters' are.
	TotalRead, BodyRead, TotalSent int64
	Retries                        int
}

// rampTally is a worker's share of RampResult.
type rampTally struct {
	totalRead, bodyRead, totalSent int64
	retries                        int
}

// leaveToRamp moves what the worker counted so far (bytes, retries) out of
// its counters into its ramp-up tally, when a request that started during
// the ramp-up ends. A worker's requests follow one another, and the
// transports count a request's bytes before it ends, so what is counted by
// then is its requests' of the ramp-up.
func (t *tally) leaveToRamp() {
	t.ramp.totalRead += t.TotalRead
	t.ramp.bodyRead += t.BodyRead
	t.ramp.totalSent += t.TotalSent
	t.ramp.retries += t.Retries
	t.TotalRead, t.BodyRead, t.TotalSent, t.Retries = 0, 0, 0, 0
	// The timeline counts what the worker reads and writes from here on:
	// its marks of the previous recording go back to 0 with the counters
	// (a worker with several requests in flight can end one of the ramp-up
	// after a measured one).
	t.tl.read, t.tl.sent = 0, 0
}

// rampResult sums the workers' ramp-up tallies (they have all stopped); nil
// without a ramp-up.
func (r *run) rampResult() *RampResult {
	if r.rampEnd <= 0 {
		return nil
	}
	rr := &RampResult{Requests: r.rampSent.Load(), Elapsed: time.Duration(min(r.rampEnd, r.stopAt))}
	for _, t := range r.tallies {
		rr.TotalRead += t.ramp.totalRead
		rr.BodyRead += t.ramp.bodyRead
		rr.TotalSent += t.ramp.totalSent
		rr.Retries += t.ramp.retries
	}
	return rr
}

// OnMeasure sets f to be called once, on Run's goroutine, when the
// measured part of a run with a warm-up or a ramp-up begins: at the start
// of the measured run after the warm-up, or at the end of its ramp-up (at
// the run's end if it ends during the ramp-up). The caller takes there again
// the readings it measures the run with (its CPU, the machine's), so that
// the warm-up and the ramp-up are left out of them as they are of every
// figure. Without either, the measured part begins with Run and f is not
// called. Call it before Run.
func (rn *Runner) OnMeasure(f func()) { rn.onMeasure = f }

// measuring calls the OnMeasure function, once.
func (rn *Runner) measuring() {
	if f := rn.onMeasure; f != nil {
		rn.onMeasure = nil
		f()
	}
}

// rampEnds returns a channel that receives when the measured run's
// ramp-up ends (nil without one), and a function that stops its timer and,
// if the run ended before, begins the measured part then (for watch).
func (rn *Runner) rampEnds(r *run) (<-chan time.Time, func()) {
	if rn.warmup || r.rampEnd <= 0 {
		return nil, func() {}
	}
	tm := time.NewTimer(time.Until(r.start.Add(time.Duration(r.rampEnd))))
	return tm.C, func() {
		tm.Stop()
		rn.measuring()
	}
}
