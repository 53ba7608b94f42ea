package client

// schedule paces requests in rate mode (--rate): the k-th request is due at
// start + k/rate. (Filled in by the rate-mode work.)
type schedule struct{}

func (s *schedule) wait(r *run, t *Tally) bool { return true }

// extraStats collects the figures beyond ab's (phase breakdown, corrected
// latencies, HDR histograms) when an extension asks for them.
type extraStats struct{}

func (e *extraStats) observe(o *Outcome) {}
