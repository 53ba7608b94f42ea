package capacity

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// edited is the fixture's JSON with edit applied to its decoded form.
func edited(t *testing.T, edit func(m map[string]any)) []byte {
	t.Helper()
	b, err := json.Marshal(fixture())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	return b
}

// at walks m by keys and indexes ("targets", 0, "searches", ...).
func at(m map[string]any, path ...any) map[string]any {
	var v any = m
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v.(map[string]any)
}

// Decode refuses, naming the field, a document whose numbers are negative,
// beyond 2^53, outside their options' ranges or at odds with each other:
// nothing of it is drawn, ranked or compared.
func TestDecodeRefusesBadFigures(t *testing.T) {
	step := func(m map[string]any) map[string]any { return at(m, "targets", 0, "searches", 0, "steps", 0) }
	summary := func(m map[string]any) map[string]any { return at(m, "targets", 0, "capacity") }
	for _, c := range []struct {
		want string
		edit func(m map[string]any)
	}{
		{"steps[0].target_per_s: -100 is negative", func(m map[string]any) { step(m)["target_per_s"] = -100 }},
		{"steps[0].achieved_per_s: 1e+308 is beyond", func(m map[string]any) { step(m)["achieved_per_s"] = 1e308 }},
		{"steps[0].target_per_s: 0.5 is not a rate a search tries", func(m map[string]any) { step(m)["target_per_s"] = 0.5 }},
		{"steps[0].target_per_s: 2e+09 is not a rate a search tries", func(m map[string]any) { step(m)["target_per_s"] = 2e9 }},
		{"targets[0].capacity.mean_per_s: -1e+300 is negative", func(m map[string]any) { summary(m)["mean_per_s"] = -1e300 }},
		{"targets[0].capacity: mean_per_s, ci95_lo_per_s and ci95_hi_per_s (5e+15, 0, 0), but its searches give 0, 0, 0",
			func(m map[string]any) { summary(m)["mean_per_s"] = 5e15 }},
		{"targets[0].capacity.found_searches: 1, but 0 of its searches found a capacity", func(m map[string]any) { summary(m)["found_searches"] = 1 }},
		{"targets[0].capacity.bounds: [], but its searches give [{0 100 client-bound}]", func(m map[string]any) { summary(m)["bounds"] = []any{} }},
		{"targets[0].capacity.repetitions: 3, but the target has 1 searches", func(m map[string]any) { summary(m)["repetitions"] = 3 }},
		{"targets[0].capacity: found, client_bound and interrupted (true, true, false)", func(m map[string]any) { summary(m)["found"] = true }},
		{"targets[0].searches[0].result.capacity_per_s: 1e+09, but the highest passing step's rate is 100",
			func(m map[string]any) { at(m, "targets", 0, "searches", 0, "result")["capacity_per_s"] = 1e9 }},
		{"targets[0].searches: 1 searches, but repeat is 2", func(m map[string]any) { m["repeat"] = 2 }},
		{"repeat: 0 is not --repeat's", func(m map[string]any) { m["repeat"] = 0 }},
		{"attempts: 11 is not --attempts'", func(m map[string]any) { m["attempts"] = 11 }},
		{"resolution_percent: 0 is not --resolution's", func(m map[string]any) { m["resolution_percent"] = 0 }},
		{"step_s: 0.01 is below --step's least", func(m map[string]any) { m["step_s"] = 0.01 }},
		{"settle_s: 0.05 is neither 0 nor", func(m map[string]any) { m["settle_s"] = 0.05 }},
		{"min_achieved: 2 is not a share", func(m map[string]any) { m["min_achieved"] = 2 }},
		{"max_connections: 0 is not -c's", func(m map[string]any) { m["max_connections"] = 0 }},
		{"steps[0].connections: 257 is not within 1..max_connections (256)", func(m map[string]any) { step(m)["connections"] = 257 }},
		{"objectives[0]: \"rps>5\" is not an objective", func(m map[string]any) { m["objectives"] = []string{"rps>5"} }},
		{"objectives: none", func(m map[string]any) { m["objectives"] = []string{} }},
		{"targets: 0 targets", func(m map[string]any) { m["targets"] = []any{} }},
		{"targets[2]: null", func(m map[string]any) { m["targets"] = append(m["targets"].([]any), nil) }},
		{"targets[1].searches[0].steps[0]: corrected_p50_us, corrected_p99_us and corrected_p99_9_us (1, 2, 1) are out of order",
			func(m map[string]any) { at(m, "targets", 1, "searches", 0, "steps", 0)["corrected_p99_9_us"] = 1 }},
		{"steps[0].pass: a passing step that did not keep its rate", func(m map[string]any) { step(m)["kept_rate"] = false }},
		{"machine.cpus: -2 is negative", func(m map[string]any) { at(m, "machine")["cpus"] = -2 }},
		{"targets[0].noise: corrected_p99_min_us, corrected_p99_max_us and objectives_inside (2, 9, false), but its steps give 2, 9, true",
			func(m map[string]any) { at(m, "targets", 0, "noise")["objectives_inside"] = false }},
	} {
		_, err := Decode(edited(t, c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v", c.want, err)
		}
	}
	if _, err := Decode(edited(t, func(map[string]any) {})); err != nil {
		t.Fatalf("the fixture: %v", err)
	}
	// An earlier gab's interval below 0 (capacities far apart) reads as 0:
	// version 1 averaged every search's capacity.
	d := fixture()
	d.Repeat, d.SchemaVersion = 2, 1
	for _, tg := range d.Targets {
		Finish(tg, Search{})
		caps := []float64{tg.Runs[0].Result.CapacityPerS, tg.Runs[1].Result.CapacityPerS}
		iv := summaryV1(caps)
		tg.Capacity.MeanPerS, tg.Capacity.HiPerS, tg.Capacity.LoPerS = iv.Mean, iv.Hi, -12.5
	}
	b, _ := json.Marshal(d)
	if got, err := Decode(b); err != nil || got.Targets[0].Capacity.LoPerS != 0 {
		t.Errorf("an interval below 0: %v", err)
	}
	// Data after the document is not a document.
	if _, err := Decode(append(edited(t, func(map[string]any) {}), "{}"...)); err == nil {
		t.Error("trailing data accepted")
	}
}

// FuzzDecode: no input panics the decoder, and a document it accepts
// validates again, prints with no raw control byte, and re-encodes as JSON
// with no NaN or infinite figure (gab compare's change in per cent too).
func FuzzDecode(f *testing.F) {
	b, _ := json.Marshal(fixture())
	f.Add(b)
	f.Add(bytes.Replace(b, []byte(`"target_per_s":100`), []byte(`"target_per_s":-1e308`), 1))
	f.Add([]byte(`{"tool":"gab","schema":"gab-capacity","schema_version":1}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := Decode(raw)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\x1b\n\r\x07") {
				t.Fatalf("a raw control byte in %q", err)
			}
			return
		}
		if err := Validate(d); err != nil {
			t.Fatalf("validated once, not twice: %v", err)
		}
		var out strings.Builder
		if err := WriteText(&out, d); err != nil {
			t.Fatal(err)
		}
		if s := out.String(); strings.ContainsAny(s, "\x1b\r\x07") || strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
			t.Fatalf("the text:\n%q", s)
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		for _, a := range d.Targets {
			for _, b := range d.Targets {
				if a.Capacity.MeanPerS > 0 {
					if c := 100 * (b.Capacity.MeanPerS - a.Capacity.MeanPerS) / a.Capacity.MeanPerS; math.IsNaN(c) || math.IsInf(c, 0) {
						t.Fatalf("a change of %v %%", c)
					}
				}
			}
		}
	})
}
