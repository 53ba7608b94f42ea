package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"gab/client"
)

// A schedule's steps gather the timeline's intervals that start in each;
// the document with them (and the intervals' targets) matches the schema,
// and rate mode's section prints them.
func TestRateSteps(t *testing.T) {
	_, s := extFixture()
	if s.Rate == nil || s.Timeline == nil || len(s.Timeline.Intervals) < 3 {
		t.Fatal("the fixture has no rate section or timeline")
	}
	tl := s.Timeline
	for i := range tl.Intervals {
		tl.Intervals[i].TargetPerS = float64(10 * (i + 1))
	}
	phases := []client.RatePhase{{From: 10, To: 10, For: time.Second}, {From: 20, To: 30, For: 2 * time.Second}}
	steps := rateStepsOf(phases, s)
	if len(steps) != 2 || steps[0].Intervals != 1 || steps[1].Intervals != len(tl.Intervals)-1 {
		t.Fatalf("steps %+v", steps)
	}
	var all int64
	for _, st := range steps {
		all += st.Requests
	}
	if all != int64(s.Report.CompleteRequests) || steps[0].Requests != tl.Intervals[0].Requests || steps[0].UncorrectedP99Us != tl.Intervals[0].P99Us ||
		steps[0].CorrectedP99Us != tl.Intervals[0].Corrected.P99Us || steps[1].TargetEndPerS != 30 {
		t.Errorf("steps %+v against intervals %+v", steps, tl.Intervals)
	}
	if rateStepsOf(nil, s) != nil {
		t.Error("steps of a constant rate")
	}
	s.Rate.Steps = steps
	var b bytes.Buffer
	if err := WriteJSON(&b, s); err != nil {
		t.Fatal(err)
	}
	matchesSchema(t, b.Bytes())
	b.Reset()
	if err := writeCorrected(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Rate schedule by step") || !strings.Contains(b.String(), "20>30") {
		t.Errorf("rate section:\n%s", b.String())
	}
}

// matchesSchema fails the test for each way raw breaks docs/json-schema.json.
func matchesSchema(t *testing.T, raw []byte) {
	t.Helper()
	schema := loadSchema(t)
	var errs []string
	validate(schema, schema, decodeGeneric(t, raw), "$", &errs)
	for _, e := range errs {
		t.Error(e)
	}
}

// StepInterval: the longest interval up to the one asked for that divides
// every step boundary within the run, in whole µs and at least
// client.MinInterval; 0 when there is none.
func TestStepInterval(t *testing.T) {
	steps := func(d ...time.Duration) []client.RatePhase {
		var ps []client.RatePhase
		for _, x := range d {
			ps = append(ps, client.RatePhase{From: 1, To: 1, For: x})
		}
		return ps
	}
	ms := time.Millisecond
	for _, c := range []struct {
		want   time.Duration
		phases []client.RatePhase
		limit  time.Duration
		got    time.Duration
	}{
		{time.Second, steps(500*ms, 500*ms), time.Second, 500 * ms},
		{time.Second, steps(10*time.Second, 10*time.Second, 10*time.Second), 30 * time.Second, time.Second},
		{300 * ms, steps(10*time.Second, 10*time.Second, 10*time.Second), 30 * time.Second, 250 * ms},
		{time.Second, steps(1500*ms, 1500*ms), 3 * time.Second, 750 * ms},
		{time.Second, steps(150*ms, 150*ms, 150*ms), 450 * ms, 150 * ms},
		{time.Second, steps(400*ms, 600*ms), time.Second, 400 * ms}, // one boundary, at 400 ms
		{time.Second, steps(600*ms, 400*ms, time.Second), 2 * time.Second, 200 * ms},
		// The last phase's end, and boundaries at or past -t, cut no interval.
		{time.Second, steps(2500 * ms), 2500 * ms, time.Second},
		{time.Second, steps(2500 * ms), 0, time.Second},
		{time.Second, steps(2500 * ms), 5 * time.Second, 625 * ms}, // the last rate holds past the ramp's end
		{time.Second, steps(time.Second, 500*ms), 0, time.Second},
		{time.Second, steps(time.Second, 500*ms, time.Second), 1500 * ms, time.Second},
		// None: steps shorter than the shortest interval, or of no whole µs.
		{time.Second, steps(50*ms, 50*ms), 100 * ms, 0},
		{time.Second, steps(130*ms, 70*ms, 100*ms), 300 * ms, 0},
		{time.Second, steps(time.Second+1, time.Second+1), 0, 0},
		// A long prime number of µs: no divisor between 100 ms and 1 s.
		{time.Second, steps(999_999_937*time.Microsecond, time.Second), 0, 0},
		{50 * ms, steps(50*ms, 50*ms), 100 * ms, 0},
		// The grain itself, when asked for.
		{130 * ms, steps(130*ms, 130*ms), 0, 130 * ms},
	} {
		if got := StepInterval(c.want, c.phases, c.limit); got != c.got {
			t.Errorf("StepInterval(%v, %v, %v) = %v, want %v", c.want, c.phases, c.limit, got, c.got)
		}
	}
}
