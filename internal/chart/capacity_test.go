package chart

import "testing"

// The knee: per target a corrected and an uncorrected line of the same
// colour (the second dashed) in order of achieved rate, and the objective.
func TestCapacityFigure(t *testing.T) {
	f := CapacityFigure("t", []KneeTarget{
		{Label: "a", Steps: []KneeStep{{AchievedPerS: 400, CorrectedP99Ms: 3, UncorrectedP99Ms: 2}, {AchievedPerS: 100, CorrectedP99Ms: 1, UncorrectedP99Ms: 1}}},
		{Label: "b", Steps: []KneeStep{{AchievedPerS: 200, CorrectedP99Ms: 900, UncorrectedP99Ms: 5}}},
		{Label: "none"},
	}, 50)
	if len(f.Panels) != 1 {
		t.Fatalf("%d panels", len(f.Panels))
	}
	p := f.Panels[0]
	if len(p.Lines) != 5 {
		t.Fatalf("%d lines, want 2 per target with steps and the objective", len(p.Lines))
	}
	a, au := p.Lines[0], p.Lines[1]
	if a.Title != "a corrected p99" || au.Title != "a uncorrected p99" || a.Color != au.Color || a.Dashed || !au.Dashed {
		t.Errorf("target a's lines %+v %+v", a, au)
	}
	if a.Rows[0][0] != 100 || a.Rows[1][0] != 400 {
		t.Errorf("not in order of achieved rate: %v", a.Rows)
	}
	if p.Lines[2].Color == a.Color {
		t.Error("two targets share a colour")
	}
	if obj := p.Lines[4]; obj.Title != "objective" || obj.Rows[0][1] != 50 || obj.Rows[1][0] != 400 {
		t.Errorf("objective %+v", obj)
	}
	if !p.LogY {
		t.Error("latencies spanning decades on a linear scale")
	}
}
