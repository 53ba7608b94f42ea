package gnuplot

import (
	"bytes"
	"image"
	"strings"
	"testing"

	"gab/internal/chart"
)

func kneeFigure() *chart.Figure {
	search := func(result string, k float64) chart.KneeSearch {
		return chart.KneeSearch{Result: result, Steps: []chart.KneeStep{
			{AchievedPerS: 100 * k, CorrectedP99Ms: 1, UncorrectedP99Ms: 1, Pass: true},
			{AchievedPerS: 1600 * k, CorrectedP99Ms: 400, UncorrectedP99Ms: 5},
			{AchievedPerS: 400 * k, CorrectedP99Ms: 2, UncorrectedP99Ms: 2, Pass: true},
			{AchievedPerS: 800 * k, CorrectedP99Ms: 9, UncorrectedP99Ms: 3, ClientBound: true},
		}}
	}
	return chart.CapacityFigure("gab capacity: p99<10ms", []chart.KneeTarget{
		{Label: "nginx", CapacityPerS: 700, LoPerS: 500, HiPerS: 900, Searches: []chart.KneeSearch{search("800 req/s", 1), search("at least 400 req/s: limited by the client (gab)", 0.9), search("760 req/s", 1.1)}},
		{Label: "caddy", CapacityPerS: 300, Searches: []chart.KneeSearch{search("300 req/s", 0.4)}},
		{Label: "lighttpd", Searches: []chart.KneeSearch{{Result: "interrupted: not measured"}}},
	}, 10)
}

// The knee's searches side by side: gnuplot lays the panels out in the
// figure's columns (a target's row left partly empty), a legend under each
// plot, the interval's two ends apart (a blank line between them in the
// data), and draws every cell of a search (one with no step as empty axes
// under its title).
func TestDrawKneeColumns(t *testing.T) {
	needGnuplot(t)
	fig := kneeFigure()
	var script, data bytes.Buffer
	if err := WriteScript(&script, fig, terminals[0], "k.dat", "k.png"); err != nil {
		t.Fatal(err)
	}
	if err := WriteData(&data, fig); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"set multiplot layout 3,3 ", "set multiplot next", "set key outside below", "plot NaN notitle"} {
		if !strings.Contains(script.String(), want) {
			t.Errorf("script lacks %q:\n%s", want, script.String())
		}
	}
	if !strings.Contains(data.String(), "\n500\t1\n500\t400\n\n900\t1\n900\t400\n") {
		t.Errorf("the interval's ends are not two segments:\n%s", data.String())
	}
	m := drawPNG(t, fig)
	r := m.Bounds()
	if r.Dx() < 1300 || r.Dy() < 900 {
		t.Fatalf("%v: too small for 3 rows of 3", r)
	}
	// Cells of searches have ink, an interrupted search's its axes; the
	// empty places of caddy's and lighttpd's rows none.
	cw, ch := r.Dx()/3, (r.Dy()-30)/3
	for i, want := range []bool{true, true, true, true, false, false, true, false, false} {
		c := image.Rect(i%3*cw, 30+i/3*ch, (i%3+1)*cw, 30+(i/3+1)*ch)
		ink := inkFraction(m, c)
		if want && ink < 0.02 || !want && ink > 0.001 {
			t.Errorf("cell %d: %.2f%% drawn pixels (want a chart: %t)", i, ink*100, want)
		}
	}

}

// A title is wrapped to its panel's width: in a figure of three columns
// (each 450 pixels of a 1350-pixel PNG) a 55-character title stays on one
// line, and one twice as long takes two.
func TestTitlesWrapToTheirPanel(t *testing.T) {
	short, long := strings.Repeat("word ", 11)[:54]+"x", strings.Repeat("word ", 22)[:109]+"x"
	f := &chart.Figure{Title: "t", Columns: 3, Panels: []chart.Panel{{Title: short}, {Title: long}, {Title: "c"}}}
	var script bytes.Buffer
	if err := WriteScript(&script, f, terminals[0], "k.dat", "k.png"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(script.String(), "set title '"+short+"'\n") {
		t.Errorf("the short title is wrapped:\n%s", script.String())
	}
	if n := strings.Count(script.String(), `\0012`); n != 1 {
		t.Errorf("%d line breaks, want the long title's one:\n%s", n, script.String())
	}
}
