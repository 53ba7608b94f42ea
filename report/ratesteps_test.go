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
	steps := rateStepsOf(phases, tl)
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
	if rateStepsOf(nil, tl) != nil {
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
