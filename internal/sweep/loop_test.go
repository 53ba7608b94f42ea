package sweep

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestLoopRunsThePlan: the loop measures the plan's runs in order through
// Measure (the caller's single-run measurement), writes each point's line as
// its first round ends and after its last, stops at a failed --before with
// the error, and at an interrupted run.
func TestLoopRunsThePlan(t *testing.T) {
	s, _ := testSweep() // targets a and b, -c 1, 2 repetitions
	var lines bytes.Buffer
	var measured []string
	loop := &Loop{Settings: s, Dims: Dims{Targets: 2, Concurrency: 1, Repeat: 2}, Lines: &lines,
		Measure: func(_ context.Context, r Run, order, done, planned int) *RunResult {
			measured = append(measured, s.Targets[r.Target].Label)
			if order != done || planned != 4 {
				t.Errorf("run %d: done %d of %d", order, done, planned)
			}
			return fakeRun(r.Point, r.Rep, order, float64(100+order), 1000, 2000)
		}}
	m := loop.Run(t.Context())
	if got := strings.Join(measured, " "); got != "a b a b" || len(m.Runs) != 4 || m.Interrupted || m.BeforeErr != nil || m.Fatal != 0 {
		t.Errorf("runs %q, %+v", got, m)
	}
	out := lines.String()
	for _, want := range []string{"[1/4] round 1 of 2: a size=- c=1: 100.0 req/s", "[2/4] round 1 of 2: b size=- c=1: 101.0 req/s",
		"[3/4] a size=- c=1: 101.0 req/s ±12.7 (95% CI, n=2", "[4/4] b size=- c=1: 102.0 req/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("lines lack %q:\n%s", want, out)
		}
	}

	// --before fails at the third run: two runs, the error kept.
	calls := 0
	loop.Before = func(context.Context, Point) error {
		if calls++; calls == 3 {
			return errors.New("before failed")
		}
		return nil
	}
	measured = nil
	if m := loop.Run(t.Context()); len(m.Runs) != 2 || m.BeforeErr == nil || m.Interrupted {
		t.Errorf("--before failing: %+v", m)
	}
	// An interrupted run ends the loop; so does a cancelled context.
	loop.Before = nil
	loop.Measure = func(_ context.Context, r Run, order, _, _ int) *RunResult {
		rr := fakeRun(r.Point, r.Rep, order, 1, 1000)
		rr.Ending = "interrupted"
		return rr
	}
	if m := loop.Run(t.Context()); len(m.Runs) != 1 || !m.Interrupted {
		t.Errorf("interrupted run: %+v", m)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if m := loop.Run(ctx); len(m.Runs) != 0 || !m.Interrupted {
		t.Errorf("cancelled: %+v", m)
	}
}
