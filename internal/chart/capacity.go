package chart

import "sort"

// KneeTarget is one target's capacity steps, for CapacityFigure.
type KneeTarget struct {
	Label string
	Steps []KneeStep
}

// KneeStep is one step of a capacity search.
type KneeStep struct {
	AchievedPerS                     float64
	CorrectedP99Ms, UncorrectedP99Ms float64
	CorrectedP50Ms                   float64
}

// PanelCapacityKnee is the ID of CapacityFigure's panel.
const PanelCapacityKnee = "capacity-knee"

// CapacityFigure draws gab capacity's knee: each target's p99 latency
// against the achieved rate of its steps, corrected (from each request's
// intended send time; solid) and uncorrected (from its actual send; dashed,
// the same colour), with the objective as a flat line when objectiveMs > 0.
// Past the knee the corrected curve climbs while the uncorrected one may not:
// a closed-loop tool would show the second.
func CapacityFigure(title string, ts []KneeTarget, objectiveMs float64) *Figure {
	p := Panel{ID: PanelCapacityKnee, Title: "p99 latency against achieved throughput, one point per step (corrected solid, uncorrected dashed)",
		XLabel: "achieved requests per second", YLabel: "p99 latency (ms)", XFromZero: true, YFromZero: true}
	hi := 0.0
	for k, t := range ts {
		steps := append([]KneeStep(nil), t.Steps...)
		sort.SliceStable(steps, func(i, j int) bool { return steps[i].AchievedPerS < steps[j].AchievedPerS })
		cor := Line{Title: t.Label + " corrected p99", Style: Lines, Color: k + 1, Columns: []string{"achieved_per_s", "corrected_p99_ms"},
			Note: "each step's achieved rate and corrected p99 (from the intended send times)"}
		unc := Line{Title: t.Label + " uncorrected p99", Style: Lines, Color: k + 1, Dashed: true, Columns: []string{"achieved_per_s", "uncorrected_p99_ms"}}
		for _, s := range steps {
			cor.Rows = append(cor.Rows, []float64{s.AchievedPerS, s.CorrectedP99Ms})
			unc.Rows = append(unc.Rows, []float64{s.AchievedPerS, s.UncorrectedP99Ms})
			hi = max(hi, s.AchievedPerS)
		}
		if len(cor.Rows) > 0 {
			p.Lines = append(p.Lines, cor, unc)
		}
	}
	if objectiveMs > 0 && hi > 0 {
		p.Lines = append(p.Lines, Line{Title: "objective", Style: Lines, Color: len(ts) + 1, Dashed: true,
			Columns: []string{"achieved_per_s", "objective_ms"}, Rows: [][]float64{{0, objectiveMs}, {hi, objectiveMs}}})
	}
	p.LogIfDecades()
	return &Figure{Title: title, Panels: []Panel{p}}
}
