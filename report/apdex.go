package report

import (
	"fmt"
	"io"
	"time"
)

// This file is APDEX (--apdex T[,F]), as JMeter's dashboard computes it:
// a request is satisfied when it succeeded within T, tolerating when it
// succeeded within F, frustrated otherwise (a failed request always), and
// the score is (satisfied + tolerating/2) / requests.

// Apdex are the --apdex thresholds.
type Apdex struct{ T, F time.Duration }

// apdexSection is the run's APDEX: its thresholds, the recorded requests
// counted, and the score. gab does not keep which recorded request failed, so
// its failed ones (ab's Failed requests less the connect failures, which are
// not recorded, and the Non-2xx responses, which JMeter counts as failures)
// are taken from the satisfied first, then the tolerating: with failures the
// score is a lower bound (Bound "lower"), without it is exact.
type apdexSection struct {
	SatisfiedUs int64   `json:"satisfied_us"`
	ToleratedUs int64   `json:"tolerated_us"`
	Requests    int     `json:"requests"`
	Satisfied   int     `json:"satisfied"`
	Tolerating  int     `json:"tolerating"`
	Frustrated  int     `json:"frustrated"`
	Failed      int     `json:"failed"`
	Score       float64 `json:"score"`
	Bound       string  `json:"bound"` // "exact" or "lower"
	// Source says how the requests were counted: "exact" (every sample),
	// "hdr_histogram" (past the exact store: by their HDR bucket's lowest
	// value, 3 significant digits) or "1ms_buckets".
	Source string `json:"source"`
}

func newApdex(a *Apdex) *apdexSection {
	if a == nil {
		return nil
	}
	return &apdexSection{SatisfiedUs: a.T.Microseconds(), ToleratedUs: a.F.Microseconds()}
}

// deriveApdex counts the recorded requests by their total time (the ranks of
// the Total column: exact, or 1 ms buckets past the exact store, or merged
// histograms) and computes the score.
func (r *Run) deriveApdex(t *tables) {
	a := r.Apdex
	if a == nil || t.n == 0 {
		return
	}
	a.Source = "exact"
	if r.Report.StatisticsFromHistogram {
		a.Source = "1ms_buckets"
	}
	within := func(us int64) int { // requests with a total time of at most us
		if t.hdr != nil {
			a.Source = "hdr_histogram"
			n := int64(0)
			for _, b := range t.hdr.total.Hist.Distribution() {
				if b.From <= us {
					n += b.Count
				}
			}
			return int(n)
		}
		lo, hi := 0, t.n // ranks below lo are within, from hi on are not
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if t.valueAt(totalColumn, m) <= us {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return lo
	}
	s := within(a.SatisfiedUs)
	tol := within(a.ToleratedUs) - s
	rp := r.Report
	failed := min(t.n, rp.FailedRequests-rp.Failures.Connect+rp.Non2xxResponses)
	a.Requests, a.Failed, a.Bound = t.n, max(failed, 0), "exact"
	if a.Failed > 0 {
		a.Bound = "lower"
	}
	take := min(a.Failed, s)
	s -= take
	tol -= min(a.Failed-take, tol)
	a.Satisfied, a.Tolerating, a.Frustrated = s, tol, t.n-s-tol
	a.Score = (float64(s) + float64(tol)/2) / float64(t.n)
}

// WriteApdex writes the APDEX line of --extended (nothing without --apdex).
func writeApdex(w io.Writer, r *Run) error {
	a := r.Apdex
	if a == nil || a.Requests == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "\nAPDEX (T %v, F %v): %.3f%s\n  %s\n", time.Duration(a.SatisfiedUs)*time.Microsecond,
		time.Duration(a.ToleratedUs)*time.Microsecond, a.Score, a.boundNote(), a.counts())
	return err
}

// counts says how the requests were counted.
func (a *apdexSection) counts() string {
	return fmt.Sprintf("satisfied %d, tolerating %d, frustrated %d of %d requests (%d failed)",
		a.Satisfied, a.Tolerating, a.Frustrated, a.Requests, a.Failed)
}

// boundNote says when the score is a lower bound.
func (a *apdexSection) boundNote() string {
	if a.Bound == "lower" {
		return " (at least: gab does not keep which requests failed, and takes them from the satisfied first)"
	}
	return ""
}
