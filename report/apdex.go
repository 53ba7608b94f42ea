package report

import (
	"fmt"
	"io"
	"slices"
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
// A merged run's section arrives counted (mergeApdex: its runs' counts
// added up, Source set) and only gets its score.
func (r *Run) deriveApdex(t *tables) {
	a := r.Apdex
	if a == nil {
		return
	}
	if a.Source != "" {
		a.score()
		return
	}
	if t.n == 0 {
		return
	}
	a.Source = t.source(r.Report)
	within := func(us int64) int { // requests with a total time of at most us
		if t.hdr != nil {
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
	a.Requests, a.Failed = t.n, max(failed, 0)
	take := min(a.Failed, s)
	s -= take
	tol -= min(a.Failed-take, tol)
	a.Satisfied, a.Tolerating, a.Frustrated = s, tol, t.n-s-tol
	a.score()
}

// score computes the score and its bound from the counts (a run's, or the
// sums of a merged run's).
func (a *apdexSection) score() {
	if a.Requests == 0 {
		return
	}
	a.Bound = "exact"
	if a.Failed > 0 {
		a.Bound = "lower"
	}
	a.Score = (float64(a.Satisfied) + float64(a.Tolerating)/2) / float64(a.Requests)
}

// apdexSources are the ways of counting from the most exact: a merged run's
// is the least exact of its runs'.
var apdexSources = [...]string{"exact", "hdr_histogram", "1ms_buckets"}

// mergeApdex adds up the runs' APDEX counts (each run's failed requests
// were taken from its own satisfied ones, so the sums are what one run over
// the same requests counts, or a closer lower bound); deriveApdex then
// scores them. It is nil, with why when the runs have sections that cannot
// be added up: only some have one, or their T or F differ.
func mergeApdex(runs []*Run) (*apdexSection, string) {
	var m *apdexSection
	source := -1
	for _, d := range runs {
		a := d.Apdex
		switch {
		case (a == nil) != (runs[0].Apdex == nil):
			return nil, "no APDEX: only some of the documents have one"
		case a == nil:
			continue
		case m == nil:
			m = &apdexSection{SatisfiedUs: a.SatisfiedUs, ToleratedUs: a.ToleratedUs}
		case a.SatisfiedUs != m.SatisfiedUs || a.ToleratedUs != m.ToleratedUs:
			return nil, fmt.Sprintf("no APDEX: the documents' thresholds differ (%s and %s)", m.thresholds(), a.thresholds())
		}
		m.Requests += a.Requests
		m.Satisfied += a.Satisfied
		m.Tolerating += a.Tolerating
		m.Frustrated += a.Frustrated
		m.Failed += a.Failed
		if a.Requests > 0 {
			source = max(source, slices.Index(apdexSources[:], a.Source))
		}
	}
	if m != nil && source >= 0 {
		m.Source = apdexSources[source]
	}
	return m, ""
}

// thresholds is "T 100ms, F 400ms".
func (a *apdexSection) thresholds() string {
	return fmt.Sprintf("T %v, F %v", time.Duration(a.SatisfiedUs)*time.Microsecond, time.Duration(a.ToleratedUs)*time.Microsecond)
}

// writeApdex writes the APDEX line of --extended (nothing without --apdex).
func writeApdex(w io.Writer, r *Run) error {
	a := r.Apdex
	if a == nil || a.Requests == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "\nAPDEX (%s): %.3f%s\n  %s\n", a.thresholds(), a.Score, a.boundNote(), a.counts())
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
