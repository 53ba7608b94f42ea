package chart

import (
	"math"
	"sort"
	"strconv"
)

// KneeTarget is one target's capacity searches, for CapacityFigure.
type KneeTarget struct {
	Label    string
	Searches []KneeSearch
	// CapacityPerS is the target's capacity over its searches, LoPerS and
	// HiPerS its 95 % interval (HiPerS ≤ LoPerS: none); 0 when not known.
	CapacityPerS, LoPerS, HiPerS float64
}

// KneeSearch is one search of a target: its steps in the order run, and
// its outcome in words.
type KneeSearch struct {
	Steps  []KneeStep
	Result string
}

// KneeStep is one step of a capacity search.
type KneeStep struct {
	AchievedPerS                     float64
	CorrectedP99Ms, UncorrectedP99Ms float64
	CorrectedP50Ms                   float64
	// Pass says the step met the objectives; ClientBound that gab limited
	// it (neither passed nor failed).
	Pass, ClientBound bool
}

// PanelCapacityKnee prefixes the IDs of CapacityFigure's panels
// (capacity-knee-T-S: target T's search S, from 1).
const PanelCapacityKnee = "capacity-knee"

// Colours of the knee's data sets: passing steps green dots, failing ones
// red squares, client-bound ones grey, the uncorrected p99 small blue dots.
const (
	kneePass        = 3
	kneeFail        = 4 + len(Colors) // red, the square family
	kneeClientBound = 8
	kneeUncorrected = 1
	kneeCapacity    = 11 // black
	kneeObjective   = 5
	kneeConnector   = 8
)

// MaxKneeColumns is the most searches CapacityFigure sets side by side; a
// target with more takes further rows.
const MaxKneeColumns = 3

// CapacityFigure draws gab capacity's knee: one panel per search, a row per
// target and a column per search (Figure.Columns), every panel on the same
// rate axis. A panel draws each step's corrected p99 (from each request's
// intended send time) against its achieved rate as a point, passing and
// failing steps apart (client-bound steps, which are neither, apart too),
// joined in order of rate by a thin grey line; each step's uncorrected p99
// (from its actual send) as a small dot; the target's capacity and its 95 %
// interval as vertical lines; the objective as a flat one when
// objectiveMs > 0. Past the knee the corrected p99 climbs while the
// uncorrected one may not: a closed-loop tool would show the second.
func CapacityFigure(title string, ts []KneeTarget, objectiveMs float64) *Figure {
	cols := 1
	hi := 0.0
	for _, t := range ts {
		cols = max(cols, min(len(t.Searches), MaxKneeColumns))
		for _, s := range t.Searches {
			for _, st := range s.Steps {
				hi = max(hi, st.AchievedPerS)
			}
		}
		hi = max(hi, t.CapacityPerS, t.HiPerS)
	}
	f := &Figure{Title: title, Columns: cols}
	for ti, t := range ts {
		for si, s := range t.Searches {
			f.Panels = append(f.Panels, kneeSearchPanel(ti, si, t, s, hi, objectiveMs))
		}
		// The next target starts a row of its own.
		for len(t.Searches) > 0 && len(f.Panels)%cols != 0 {
			f.Panels = append(f.Panels, Panel{ID: PanelCapacityKnee + "-" + strconv.Itoa(ti+1) + "-none-" + strconv.Itoa(len(f.Panels)),
				XLabel: "achieved requests per second", YLabel: "p99 latency (ms)"})
		}
	}
	if len(f.Panels) == 0 {
		f.Panels = append(f.Panels, Panel{ID: PanelCapacityKnee, Title: "no search measured a step",
			XLabel: "achieved requests per second", YLabel: "p99 latency (ms)"})
	}
	return f
}

func kneeSearchPanel(ti, si int, t KneeTarget, s KneeSearch, hi, objectiveMs float64) Panel {
	p := Panel{ID: PanelCapacityKnee + "-" + strconv.Itoa(ti+1) + "-" + strconv.Itoa(si+1),
		Title:  t.Label + ", search " + strconv.Itoa(si+1) + ": " + s.Result,
		XLabel: "achieved requests per second", YLabel: "p99 latency (ms)", XFromZero: true, YFromZero: true, LegendOutside: true}
	if hi > 0 {
		p.XMin, p.XMax = 0, hi*1.05
	}
	steps := append([]KneeStep(nil), s.Steps...)
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].AchievedPerS < steps[j].AchievedPerS })
	cols := []string{"achieved_per_s", "corrected_p99_ms"}
	join := Line{Style: Lines, Color: kneeConnector, Columns: cols,
		Note: "each step's achieved rate and corrected p99 (from the intended send times), in order of rate"}
	pass := Line{Title: "step passed", Style: Marks, Color: kneePass, Columns: cols, Note: "steps that met the objectives"}
	fail := Line{Title: "step failed", Style: Marks, Color: kneeFail, Columns: cols, Note: "steps that missed an objective or the rate"}
	bound := Line{Title: "step client-bound", Style: Marks, Color: kneeClientBound, Columns: cols,
		Note: "steps limited by gab itself: neither passed nor failed"}
	unc := Line{Title: "uncorrected p99", Style: Marks, Color: kneeUncorrected, Columns: []string{"achieved_per_s", "uncorrected_p99_ms"},
		Note: "each step's p99 from the actual send times"}
	ylo, yhi := math.Inf(1), 0.0
	for _, st := range steps {
		row := []float64{st.AchievedPerS, st.CorrectedP99Ms}
		join.Rows = append(join.Rows, row)
		switch {
		case st.ClientBound:
			bound.Rows = append(bound.Rows, row)
		case st.Pass:
			pass.Rows = append(pass.Rows, row)
		default:
			fail.Rows = append(fail.Rows, row)
		}
		unc.Rows = append(unc.Rows, []float64{st.AchievedPerS, st.UncorrectedP99Ms})
		for _, v := range []float64{st.CorrectedP99Ms, st.UncorrectedP99Ms} {
			if v > 0 {
				ylo, yhi = min(ylo, v), max(yhi, v)
			}
		}
	}
	if objectiveMs > 0 {
		ylo, yhi = min(ylo, objectiveMs), max(yhi, objectiveMs)
	}
	if len(steps) == 0 {
		return p
	}
	p.Lines = append(p.Lines, join)
	for _, l := range []Line{unc, pass, fail, bound} { // the steps over the uncorrected dots
		if len(l.Rows) > 0 {
			p.Lines = append(p.Lines, l)
		}
	}
	vertical := func(x float64) [][]float64 { return [][]float64{{x, ylo}, {x, yhi}} }
	if t.CapacityPerS > 0 && yhi > 0 {
		p.Lines = append(p.Lines, Line{Title: "capacity " + rate(t.CapacityPerS) + " req/s", Style: Lines, Color: kneeCapacity,
			Columns: []string{"capacity_per_s", "p99_ms"}, Rows: vertical(t.CapacityPerS),
			Note: "the target's capacity over its searches"})
		if t.HiPerS > t.LoPerS {
			// Both ends in one data set, broken between them.
			rows := append(vertical(max(t.LoPerS, 0)), []float64{math.NaN(), math.NaN()})
			p.Lines = append(p.Lines, Line{Title: "95 % interval " + rate(t.LoPerS) + " to " + rate(t.HiPerS), Style: Lines, Color: kneeCapacity, Dashed: true,
				Columns: []string{"interval_end_per_s", "p99_ms"}, Rows: append(rows, vertical(t.HiPerS)...),
				Note: "the capacity's 95 % interval: its low end (drawn at 0 when below), then its high end"})
		}
	}
	if objectiveMs > 0 {
		p.Lines = append(p.Lines, Line{Title: "objective " + strconv.FormatFloat(objectiveMs, 'f', -1, 64) + " ms", Style: Lines, Color: kneeObjective, Dashed: true,
			Columns: []string{"achieved_per_s", "objective_ms"}, Rows: [][]float64{{0, objectiveMs}, {max(hi*1.05, 1), objectiveMs}}})
	}
	p.LogIfDecades()
	return p
}

// rate is a rate in req/s for a legend: whole numbers, one decimal below 10.
func rate(v float64) string {
	if math.Abs(v) < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}
