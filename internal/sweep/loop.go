package sweep

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"gab/internal/hoststat"
)

// This file is the sweep's loop: the plan's runs in order, each point's
// line as its first round ends and again after its last repetition, until
// the plan's end, an interruption or a failed --before. What a run is (the
// single run's measurement) is the caller's: Loop.Measure.

// Loop runs a sweep's plan.
type Loop struct {
	Settings *Settings
	Dims     Dims
	// Before runs --before's command ahead of a run of the point (nil:
	// none); an error stops the sweep.
	Before func(ctx context.Context, pt Point) error
	// Measure measures one run of the plan: order is its place in the
	// plan, done the runs measured before it and planned the runs the plan
	// holds now (--repeat auto drops those a settled point no longer
	// needs).
	Measure func(ctx context.Context, r Run, order, done, planned int) *RunResult
	// Lines gets each point's lines (PointLine, VerdictLines).
	Lines io.Writer
}

// Runs is what a sweep's runs measured.
type Runs struct {
	Runs        []*RunResult
	Planned     int
	Start       time.Time
	LoadStart   []float64 // the load averages at the start (absent where unknown)
	Interrupted bool
	Fatal       int   // runs that ended with an error before or while measuring
	BeforeErr   error // --before's command failed: the sweep stopped
}

// Run runs the plan (Settings.Order, Settings.Seed) with Settings.Pause
// between runs.
func (l *Loop) Run(ctx context.Context) *Runs {
	s := l.Settings
	m := &Runs{Start: time.Now(), LoadStart: hoststat.LoadAverage()}
	plan := Plan(l.Dims, s.Order, rand.New(rand.NewPCG(s.Seed, 0)))
	m.Planned = len(plan)
	byPoint := map[Point][]*RunResult{} // each point's runs: the sweep stays linear in its runs
	settled := map[Point]bool{}         // --repeat auto: the point needs no more runs
	for i, r := range plan {
		if settled[r.Point] {
			m.Planned--
			continue
		}
		if !l.ready(ctx, m, i, r.Point) {
			break
		}
		rr := l.Measure(ctx, r, i, len(m.Runs), m.Planned)
		m.Runs = append(m.Runs, rr)
		if rr.Ending == "fatal" || rr.Ending == "not_started" {
			m.Fatal++
		}
		if rr.Ending == "interrupted" {
			m.Interrupted = true
			break
		}
		mine := append(byPoint[r.Point], rr)
		byPoint[r.Point] = mine
		// A point is finished after its last repetition, or with --repeat
		// auto once its interval is narrow enough.
		settled[r.Point] = s.Auto && Settled(s.CI, mine)
		l.pointLines(m, r, mine, settled[r.Point])
	}
	return m
}

// ready waits out the pause before the i-th run and runs --before's
// command for its point; false (m says why) stops the sweep.
func (l *Loop) ready(ctx context.Context, m *Runs, i int, pt Point) bool {
	s := l.Settings
	if ctx.Err() != nil {
		m.Interrupted = true
		return false
	}
	if i > 0 && s.Pause > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(s.Pause):
		}
		if ctx.Err() != nil {
			m.Interrupted = true
			return false
		}
	}
	if l.Before == nil {
		return true
	}
	if err := l.Before(ctx, pt); err != nil {
		if ctx.Err() != nil {
			m.Interrupted = true
		} else {
			m.BeforeErr = err
		}
		return false
	}
	return true
}

// pointLines writes a point's line after its last repetition (with its
// verdicts), and as its first round ends, long before its last.
func (l *Loop) pointLines(m *Runs, r Run, mine []*RunResult, settled bool) {
	s := l.Settings
	switch {
	case r.Rep == s.Repeat-1 || settled:
		p := Aggregate(s, mine)[0]
		fmt.Fprintf(l.Lines, "[%d/%d] %s\n", len(m.Runs), m.Planned, PointLine(p))
		for _, line := range VerdictLines(s, p) {
			fmt.Fprintf(l.Lines, "%s\n", line)
		}
	case r.Rep == 0:
		upTo := "of"
		if s.Auto {
			upTo = "of at most"
		}
		p := Aggregate(s, mine)[0]
		fmt.Fprintf(l.Lines, "[%d/%d] round 1 %s %d: %s\n", len(m.Runs), m.Planned, upTo, s.Repeat, PointLine(p))
	}
}
