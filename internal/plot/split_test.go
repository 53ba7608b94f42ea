package plot

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gab/gnuplot"
	"gab/internal/chart"
	"gab/internal/testtool"
)

// `gab plot a=X b=Y` of two sweeps of 3 targets × 3 concurrencies × 3 sizes:
// 18 series against size. No panel draws more than 8 (the colours past 12
// would be drawn dotted, where dashes mean p99), every legend stands outside
// its plot, no title is wider than its chart, and gnuplot draws the figure.
func TestPlotConfigurationsSplit(t *testing.T) {
	targets, sizes, conc := []string{"nginx", "lighttpd", "caddy"}, []string{"1k", "16k", "256k"}, []int{10, 50, 100}
	d, err := Configurations([]Input{
		{Label: "a", Path: "a.json", Sweep: studyDocument(targets, sizes, conc, false)},
		{Label: "b", Path: "b.json", Sweep: studyDocument(targets, sizes, conc, false)},
	})
	if err != nil {
		t.Fatal(err)
	}
	f := SweepFigure(d)
	parts := 0
	for _, p := range f.Panels {
		series := map[int]bool{}
		for i, l := range p.Lines {
			if l.Style == chart.Flagged {
				continue
			}
			series[l.ColorOf(i)] = true
			if l.ColorOf(i) > chart.MaxSeries {
				t.Errorf("panel %q: colour %d (a dotted look)", p.Title, l.ColorOf(i))
			}
		}
		if len(series) > chart.MaxSeries {
			t.Errorf("panel %q: %d series", p.Title, len(series))
		}
		if strings.Contains(p.Title, "(part ") {
			parts++
		}
		if !p.LegendOutside {
			t.Errorf("panel %q: legend inside", p.Title)
		}
		var svg bytes.Buffer
		if err := chart.WriteSVG(&svg, &p, 960, 320); err != nil {
			t.Fatal(err)
		}
		checkSVGLayout(t, svg.String(), &p, 960)
	}
	if parts < 3 {
		t.Errorf("%d panels are parts: the 18 series against size are not split", parts)
	}
	checkLooks(t, "two sweeps", f)

	testtool.Need(t, "gnuplot", "gnuplot-nox")
	img := filepath.Join(t.TempDir(), "p.png")
	if err := gnuplot.Draw(context.Background(), img, f); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(img); err != nil || st.Size() < 10000 {
		t.Fatalf("no image: %v", err)
	}
	var script bytes.Buffer
	term, _ := gnuplot.TerminalFor(img)
	if err := gnuplot.WriteScript(&script, f, term, "p.dat", "p.png"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(script.String(), "set key inside") || !strings.Contains(script.String(), "set key outside right top vertical") {
		t.Errorf("gnuplot draws a legend inside a plot")
	}
}

var (
	svgFrame = regexp.MustCompile(`<rect x="([-0-9.]+)" y="([-0-9.]+)" width="([-0-9.]+)" height="([-0-9.]+)" fill="none" stroke="#999"/>`)
	svgText  = regexp.MustCompile(`<text (class="title" )?x="([-0-9.]+)" y="([-0-9.]+)"[^>]*>([^<]*)</text>`)
)

// checkSVGLayout: each title line of the chart lies within its width W and
// each legend entry outside the plot's frame.
func checkSVGLayout(t *testing.T, svg string, p *chart.Panel, W float64) {
	t.Helper()
	m := svgFrame.FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("%q: no frame", p.Title)
	}
	var fr [4]float64
	for i := range fr {
		fr[i], _ = strconv.ParseFloat(m[i+1], 64)
	}
	legend := map[string]bool{}
	for _, l := range p.Lines {
		if l.Title != "" {
			legend[strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `'`, "&#39;", `"`, "&#34;").Replace(l.Title)] = true
		}
	}
	for _, m := range svgText.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[2], 64)
		y, _ := strconv.ParseFloat(m[3], 64)
		if m[1] != "" {
			if w := chart.TextWidth(m[4], 12); x-w/2 < 0 || x+w/2 > W {
				t.Errorf("%q: title line %q clipped (%.0f px at %.0f of %.0f)", p.Title, m[4], w, x, W)
			}
			continue
		}
		if legend[m[4]] && x > fr[0] && x < fr[0]+fr[2] && y > fr[1] && y < fr[1]+fr[3] {
			t.Errorf("%q: legend entry %q inside the plot", p.Title, m[4])
		}
	}
}
