package chart

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// overlayRun is a saved run as gab plot overlays it: a timeline of three
// intervals with phases, a percentile curve, response-time ranges and an
// objective; k varies its figures.
func overlayRun(k int) *Data {
	d := &Data{Label: fmt.Sprintf("run%d", k+1), ElapsedS: 3, HasPhases: true, CurvePrecision: "exact (µs)",
		Ranges: []int64{90, 9, 1}, RangeEdgesMs: []float64{1, 10}, Failed: int(k % 2),
		Objectives: []Objective{{Label: "p99<5ms", Percent: 99, Us: 5000, Passed: k%3 != 0}}}
	for i := range 3 {
		us := int64(500 + 100*k + 50*i)
		d.Intervals = append(d.Intervals, Interval{StartS: float64(i), LengthS: 1, Requests: int64(100 + 10*k), Failures: int64(i % 2),
			P50Us: us, P90Us: 2 * us, P99Us: 4 * us, MaxUs: 9 * us, ConnectUs: 50, WaitUs: float64(us), RestUs: 20})
	}
	for _, p := range []float64{0, 50, 90, 99, 99.9, 100} {
		d.Curve = append(d.Curve, CurvePoint{Percent: p, Us: int64(500+100*k) * int64(1+p/10)})
	}
	return d
}

// panelKind is a panel's ID without the part's number.
func panelKind(id string) string {
	if i := strings.LastIndexByte(id, '-'); i > 0 && strings.Trim(id[i+1:], "0123456789") == "" {
		return id[:i]
	}
	return id
}

// TestRunOverlaySplit: gab plot of 3, 9 and 18 saved runs. No panel draws
// more than MaxSeries series (colour numbers: past them the colours repeat
// in other dashes, which on a chart of p50 and dashed p99 read as another
// figure); every run is in exactly one part of each kind of panel, with all
// its lines; the parts share their axes; every legend stands outside its
// plot, in the SVG charts too. One run is drawn as before: one panel of
// each kind, its legend inside.
func TestRunOverlaySplit(t *testing.T) {
	kinds := []string{PanelRate, PanelLatencyTime, PanelPhases, PanelPercentiles, PanelRanges, PanelKnee}
	for _, n := range []int{3, 9, 18} {
		var runs []*Data
		for k := range n {
			runs = append(runs, overlayRun(k))
		}
		f := RunFigure("gab plot", runs)
		where := map[string]map[string][]int{} // kind → run → the panels with its lines
		parts := map[string][]*Panel{}
		for i := range f.Panels {
			p := &f.Panels[i]
			colors := map[int]bool{}
			for j, l := range p.Lines {
				if l.Style != Flagged {
					colors[l.ColorOf(j)] = true
				}
			}
			if len(colors) > MaxSeries {
				t.Errorf("%d runs: panel %q draws %d series", n, p.Title, len(colors))
			}
			if !p.LegendOutside {
				t.Errorf("%d runs: panel %q has its legend inside", n, p.Title)
			}
			kind := panelKind(p.ID)
			parts[kind] = append(parts[kind], p)
			if where[kind] == nil {
				where[kind] = map[string][]int{}
			}
			for _, l := range p.Lines {
				run, _, _ := strings.Cut(l.Title, " ")
				if strings.HasPrefix(run, "run") && (len(where[kind][run]) == 0 || where[kind][run][len(where[kind][run])-1] != i) {
					where[kind][run] = append(where[kind][run], i)
				}
			}
			var svg bytes.Buffer
			if err := WriteSVG(&svg, p, 960, 320); err != nil {
				t.Fatal(err)
			}
			checkSVGText(t, svg.String(), *p, 960)
		}
		for _, kind := range kinds {
			if len(where[kind]) != n {
				t.Errorf("%d runs: %s panels draw %d runs", n, kind, len(where[kind]))
			}
			for run, ps := range where[kind] {
				if len(ps) != 1 {
					t.Errorf("%d runs: %s: %s's lines are in panels %v", n, kind, run, ps)
				}
			}
			for _, p := range parts[kind][1:] {
				q := parts[kind][0]
				if p.XMin != q.XMin || p.XMax != q.XMax || p.LogY != q.LogY || len(p.XTics) != len(q.XTics) {
					t.Errorf("%d runs: %s: the parts' axes differ", n, kind)
				}
			}
		}
		if n > MaxSeries && len(parts[PanelPercentiles]) < 2 {
			t.Errorf("%d runs: the percentile curves are not split", n)
		}
	}
	one := RunFigure("gab", []*Data{overlayRun(0)})
	for _, p := range one.Panels {
		if p.LegendOutside || strings.Contains(p.Title, "(part ") {
			t.Errorf("one run: panel %q split or with its legend outside", p.Title)
		}
	}
}
