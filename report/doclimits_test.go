package report

import (
	"bytes"
	"strings"
	"testing"

	"gab/client"
)

// A document's size and counts are ones gab can have written: over
// MaxDocumentBytes it is refused before it is parsed, the bound in the
// error; more rate steps than a schedule has, or more timeline intervals
// than MaxTimelineIntervals, are refused with the field named. Before, a
// document of 400,000 rate steps (121 MB) was accepted.
func TestDocumentBounds(t *testing.T) {
	fixture, raw := fixtureDocument(t)
	if _, err := DecodeDocument("ok.json", raw); err != nil {
		t.Fatalf("the fixture: %v", err)
	}
	// Spaces before the document: valid JSON, over the bound.
	big := append(bytes.Repeat([]byte(" "), MaxDocumentBytes), raw...)
	if _, err := DecodeDocument("big.json", big); err == nil || err.Error() != "big.json: larger than 64 MiB, the most gab reads of a run document" {
		t.Errorf("a document over %d bytes: %v", MaxDocumentBytes, err)
	}
	step := rateStep{LengthS: 1, TargetPerS: 4, TargetEndPerS: 4, Intervals: 1}
	for _, c := range []struct {
		want   string
		mutate func(d *Run)
	}{
		{"rate.steps: 1001 steps, more than a --rate schedule has (1000)", func(d *Run) {
			d.Rate.Steps = make([]rateStep, client.MaxRatePhases+1)
		}},
		{"timeline.intervals: 100001 intervals, more than a gab document holds (100000)", func(d *Run) {
			d.Timeline.Intervals = make([]intervalFigures, MaxTimelineIntervals+1)
		}},
		{"rate.steps[1].intervals: 99, more than the timeline's", func(d *Run) {
			d.Rate.Steps = []rateStep{step, step}
			d.Rate.Steps[1].Intervals = 99
		}},
		{"rate.steps[0]: target_per_s 4 to target_end_per_s 2e+09: --rate is from 0.001 to 1e+09 per second", func(d *Run) {
			d.Rate.Steps = []rateStep{step}
			d.Rate.Steps[0].TargetEndPerS = 2e9
		}},
		{"rate.steps[0]: target_per_s 0 to target_end_per_s 4", func(d *Run) {
			d.Rate.Steps = []rateStep{step}
			d.Rate.Steps[0].TargetPerS = 0
		}},
		{"rate.steps[0].requests: 4294967296 is more than a gab document can count", func(d *Run) {
			d.Rate.Steps = []rateStep{step}
			d.Rate.Steps[0].Requests = 1 << 32
		}},
	} {
		d := roundTrip(t, fixture)
		c.mutate(d)
		err := ValidateDocument(d)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	d := roundTrip(t, fixture)
	d.Rate.Steps = []rateStep{step}
	if err := ValidateDocument(d); err != nil {
		t.Errorf("a document with a step: %v", err)
	}
}

// The schema states the same bounds.
func TestSchemaStatesDocumentBounds(t *testing.T) {
	defs := loadSchema(t)["$defs"].(map[string]any)
	prop := func(def, name string) map[string]any {
		return defs[def].(map[string]any)["properties"].(map[string]any)[name].(map[string]any)
	}
	if got := prop("rate", "steps")["maxItems"]; got != float64(client.MaxRatePhases) {
		t.Errorf("rate.steps maxItems %v, want %d", got, client.MaxRatePhases)
	}
	if got := prop("timeline", "intervals")["maxItems"]; got != float64(MaxTimelineIntervals) {
		t.Errorf("timeline.intervals maxItems %v, want %d", got, MaxTimelineIntervals)
	}
}
