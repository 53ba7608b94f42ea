package chart

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func kneeTargets() []KneeTarget {
	return []KneeTarget{
		{Label: "nginx", CapacityPerS: 7333, LoPerS: -5081, HiPerS: 19747, Searches: []KneeSearch{
			{Result: "19200 req/s", Steps: []KneeStep{
				{AchievedPerS: 100, CorrectedP99Ms: 1, UncorrectedP99Ms: 1, Pass: true},
				{AchievedPerS: 1600, CorrectedP99Ms: 400, UncorrectedP99Ms: 5},
				{AchievedPerS: 400, CorrectedP99Ms: 2, UncorrectedP99Ms: 2, Pass: true},
				{AchievedPerS: 800, CorrectedP99Ms: 3, UncorrectedP99Ms: 2, ClientBound: true},
			}},
			{Result: "at least 400 req/s: limited by the client (gab), not measured to the server's limit", Steps: []KneeStep{
				{AchievedPerS: 200, CorrectedP99Ms: 1, UncorrectedP99Ms: 1, Pass: true},
				{AchievedPerS: 96.9, CorrectedP99Ms: 90, UncorrectedP99Ms: 1},
			}},
			{Result: "2000 req/s", Steps: []KneeStep{{AchievedPerS: 2000, CorrectedP99Ms: 4, UncorrectedP99Ms: 3, Pass: true}}},
		}},
		{Label: "caddy", CapacityPerS: 900, Searches: []KneeSearch{
			{Result: "900 req/s", Steps: []KneeStep{{AchievedPerS: 900, CorrectedP99Ms: 8, UncorrectedP99Ms: 3, Pass: true}}},
		}},
	}
}

// The knee: a panel per search, a column per search, each search's steps as
// points in order of rate (no line joins one search's steps to another's),
// passing and failing steps drawn apart, the capacity and its interval as
// vertical lines, at most 8 data sets a panel.
func TestCapacityFigure(t *testing.T) {
	f := CapacityFigure("t", kneeTargets(), 50)
	if f.Columns != 3 {
		t.Errorf("%d columns, want one per search (3)", f.Columns)
	}
	if len(f.Panels) != 6 {
		t.Fatalf("%d panels, want 3 searches of nginx and caddy's one on a row of its own", len(f.Panels))
	}
	for i, p := range f.Panels {
		if len(p.Lines) > 8 {
			t.Errorf("panel %d: %d data sets", i, len(p.Lines))
		}
		if len(p.Lines) > 0 && (p.XMin != 0 || math.Abs(p.XMax-19747*1.05) > 1e-6) {
			t.Errorf("panel %d: x range %v–%v, want the figure's (0 to the highest rate or interval end)", i, p.XMin, p.XMax)
		}
		for _, l := range p.Lines {
			for j := 1; j < len(l.Rows) && l.Style != Lines; j++ {
				if l.Rows[j][0] < l.Rows[j-1][0] {
					t.Errorf("panel %d %q: not in order of rate: %v", i, l.Title, l.Rows)
				}
			}
		}
	}
	if f.Panels[3].Title == "" || !strings.HasPrefix(f.Panels[3].ID, PanelCapacityKnee+"-2-1") || len(f.Panels[4].Lines) != 0 {
		t.Errorf("caddy's search is not first on its row: %q, %q", f.Panels[3].ID, f.Panels[4].ID)
	}
	p := f.Panels[0]
	by := map[string]Line{}
	for _, l := range p.Lines {
		by[l.Title] = l
	}
	join := p.Lines[0]
	if join.Style != Lines || len(join.Rows) != 4 {
		t.Fatalf("the search's steps are not joined in one line: %+v", join)
	}
	for j := 1; j < len(join.Rows); j++ {
		if join.Rows[j][0] < join.Rows[j-1][0] {
			t.Errorf("the steps' line zig-zags: %v", join.Rows)
		}
	}
	pass, fail, bound := by["step passed"], by["step failed"], by["step client-bound"]
	if !p.LegendOutside {
		t.Error("the legend inside the plot")
	}
	if len(pass.Rows) != 2 || len(fail.Rows) != 1 || len(bound.Rows) != 1 || fail.Rows[0][0] != 1600 || bound.Rows[0][0] != 800 {
		t.Errorf("steps: passed %v, failed %v, client-bound %v", pass.Rows, fail.Rows, bound.Rows)
	}
	pl, fl, bl := LookOf(&pass, 0), LookOf(&fail, 0), LookOf(&bound, 0)
	if pl.Color == fl.Color || pl.Square == fl.Square || bl.Color == pl.Color || bl.Color == fl.Color || pass.Style != Marks || fail.Style != Marks {
		t.Errorf("passing and failing steps look alike: %+v %+v %+v", pl, fl, bl)
	}
	c := by["capacity 7333 req/s"]
	if len(c.Rows) != 2 || c.Rows[0][0] != 7333 || c.Rows[1][0] != 7333 || c.Rows[0][1] >= c.Rows[1][1] {
		t.Errorf("capacity line %+v", c)
	}
	iv := by["95 % interval -5081 to 19747"]
	if len(iv.Rows) != 5 || iv.Rows[0][0] != 0 || iv.Rows[1][0] != 0 || !bad(iv.Rows[2][0], 0) || iv.Rows[3][0] != 19747 || !iv.Dashed {
		t.Errorf("interval: want its low end drawn at 0, a break and its high end: %+v", iv)
	}
	if obj := by["objective 50 ms"]; len(obj.Rows) != 2 || obj.Rows[0][1] != 50 {
		t.Errorf("objective %+v", obj)
	}
	if !p.LogY {
		t.Error("latencies spanning decades on a linear scale")
	}
}

var svgTextRE = regexp.MustCompile(`<text (class="title" )?x="([-0-9.]+)" y="([-0-9.]+)"[^>]*>([^<]*)</text>`)

// Each panel of the knee drawn at a third of the page: its title (however
// long the search's result) fits the image, and the legend stands outside
// the plot area, under it.
func TestCapacityPanelsFitTheirColumn(t *testing.T) {
	f := CapacityFigure("t", kneeTargets(), 50)
	const W, H = 440, 360
	for _, p := range f.Panels[:3] {
		var b bytes.Buffer
		if err := WriteSVG(&b, &p, W, H); err != nil {
			t.Fatal(err)
		}
		checkSVGText(t, b.String(), p, W)
	}
}

// checkSVGText checks that every title line of svg lies within the image
// width W, and that every legend entry lies outside the plot area.
func checkSVGText(t *testing.T, svg string, p Panel, W float64) {
	t.Helper()
	var frame [4]float64 // the plot's x, y, width, height
	m := regexp.MustCompile(`<rect x="([-0-9.]+)" y="([-0-9.]+)" width="([-0-9.]+)" height="([-0-9.]+)" fill="none" stroke="#999"/>`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("no plot frame: %.300s", svg)
	}
	for i := range frame {
		frame[i], _ = strconv.ParseFloat(m[i+1], 64)
	}
	titles := 0
	legends := map[string]bool{}
	for _, l := range p.Lines {
		if l.Title != "" {
			legends[esc(l.Title)] = true
		}
	}
	seen := 0
	for _, m := range svgTextRE.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[2], 64)
		y, _ := strconv.ParseFloat(m[3], 64)
		text := m[4]
		if m[1] != "" {
			titles++
			if w := TextWidth(text, svgTitleSize); x-w/2 < 0 || x+w/2 > W {
				t.Errorf("%q: title line %q (%.0f px at %.0f) is clipped by the %.0f px image", p.Title, text, w, x, W)
			}
			continue
		}
		if legends[text] {
			seen++
			inX := x > frame[0] && x < frame[0]+frame[2]
			inY := y > frame[1] && y < frame[1]+frame[3]
			if inX && inY {
				t.Errorf("%q: legend entry %q at %v,%v inside the plot %v", p.Title, text, x, y, frame)
			}
			if w := TextWidth(text, 11); x+w > W+1 {
				t.Errorf("%q: legend entry %q runs past the image", p.Title, text)
			}
		}
	}
	if titles == 0 || seen != len(legends) {
		t.Errorf("%q: %d title lines, %d of %d legend entries: %s", p.Title, titles, seen, len(legends), fmt.Sprint(legends))
	}
}

// A document with no search (every target interrupted before its first
// step) still gives the renderers a panel, which says so.
func TestCapacityFigureNoSearch(t *testing.T) {
	f := CapacityFigure("t", []KneeTarget{{Label: "a"}}, 0)
	if len(f.Panels) != 1 || !strings.Contains(f.Panels[0].Title, "no search") {
		t.Errorf("%+v", f.Panels)
	}
}
