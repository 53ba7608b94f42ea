package report

import (
	"fmt"

	"gab/client"
)

// The bounds of what a run document may hold, beside validate.go's checks
// of its figures: gab reads a document of at most MaxDocumentBytes, with at
// most MaxTimelineIntervals intervals and client.MaxRatePhases rate steps,
// so that a document's size, not only its figures, is one gab can have
// written.

// MaxDocumentBytes is the largest run document gab reads (gab merge,
// compare and plot). gab's own documents stay below it but for a timeline
// of more than about 89,000 intervals (750 bytes each, 1,300 in rate mode:
// a day at --interval 1s).
const MaxDocumentBytes = 64 << 20

// MaxTimelineIntervals is the most intervals a document's timeline may
// hold: more than a document of MaxDocumentBytes holds of gab's.
const MaxTimelineIntervals = 100_000

// DocumentTooLarge is the error for the document name (printable already)
// of more than limit bytes, the most gab reads of a what.
func DocumentTooLarge(name, what string, limit int64) error {
	return fmt.Errorf("%s: larger than %d MiB, the most gab reads of a %s", name, limit>>20, what)
}

// bounds checks the number of the document's rate steps and timeline
// intervals, before anything walks them.
func (c *checker) bounds(d *Run) {
	if tl := d.Timeline; tl != nil && len(tl.Intervals) > MaxTimelineIntervals {
		c.fail("timeline.intervals", "%d intervals, more than a gab document holds (%d)", len(tl.Intervals), MaxTimelineIntervals)
	}
	if r := d.Rate; r != nil && len(r.Steps) > client.MaxRatePhases {
		c.fail("rate.steps", "%d steps, more than a --rate schedule has (%d)", len(r.Steps), client.MaxRatePhases)
	}
}

// rateSteps checks a schedule's steps: each of intervals of the timeline
// (intervals in all), its target rates within --rate's range.
func (c *checker) rateSteps(steps []rateStep, intervals int, limit int64) {
	for i := range steps {
		s := &steps[i]
		f := fmt.Sprintf("rate.steps[%d]", i)
		switch {
		case s.Intervals > intervals:
			c.fail(f+".intervals", "%d, more than the timeline's %d", s.Intervals, intervals)
		case !rateInRange(s.TargetPerS) || !rateInRange(s.TargetEndPerS):
			c.fail(f, "target_per_s %g to target_end_per_s %g: --rate is from %g to %g per second", s.TargetPerS, s.TargetEndPerS, client.MinRate, client.MaxRate)
		}
		c.count(f+".requests", s.Requests, limit)
		c.count(f+".failures", s.Failures, limit)
		if c.err != nil {
			return
		}
	}
}

func rateInRange(r float64) bool { return r >= client.MinRate && r <= client.MaxRate }
