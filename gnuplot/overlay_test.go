package gnuplot

import (
	"bytes"
	"context"
	"image"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gab/internal/chart"
)

var looksRE = regexp.MustCompile(`linecolor rgb '(#[0-9a-f]{6})' dashtype (\S+)`)

// TestOverlayScriptSplit: the script of 18 saved runs overlaid draws no
// panel with more than chart.MaxSeries looks (colour and dash), every
// panel's legend right of its plot (none inside, where it covers data),
// and gnuplot draws it: every panel's band of the image has ink.
func TestOverlayScriptSplit(t *testing.T) {
	var runs []*chart.Data
	for k := range 18 {
		runs = append(runs, withIntervals(testRun("run"+strconv.Itoa(k+1), 1+float64(k)/10)))
	}
	fig := chart.RunFigure("gab plot of 18 runs", runs)
	var gp bytes.Buffer
	if err := WriteScript(&gp, fig, terminals[0], "o.png.dat", "o.png"); err != nil {
		t.Fatal(err)
	}
	key, plots := "inside", 0
	for _, cmd := range strings.Split(gp.String(), "\nplot ")[1:] {
		before := gp.String()[:strings.Index(gp.String(), cmd)]
		if i := strings.LastIndex(before, "set key "); i >= 0 {
			key = before[i : i+strings.IndexByte(before[i:], '\n')]
		}
		if key != "set key outside right top vertical" {
			t.Errorf("plot %d: legend %q", plots+1, key)
		}
		cmd = cmd[:strings.Index(cmd+"\n\n", "\n\n")]
		looks := map[string]bool{}
		for _, m := range looksRE.FindAllStringSubmatch(cmd, -1) {
			looks[m[1]+" "+m[2]] = true
		}
		if len(looks) > chart.MaxSeries {
			t.Errorf("plot %d draws %d looks: %s", plots+1, len(looks), cmd)
		}
		plots++
	}
	if plots != len(fig.Panels) || plots < 10 {
		t.Fatalf("%d plots for %d panels", plots, len(fig.Panels))
	}

	needGnuplot(t)
	img := filepath.Join(t.TempDir(), "o.png")
	if err := Draw(context.Background(), img, fig); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, img, b, len(fig.Panels))
}

// TestTitleBesideLegendNotClipped: gnuplot centres a panel's title on its
// plot, which a legend right of it pushes left: a title that fits the
// image but not beside a long legend wrapped at the image's width and ran
// off its left edge. Drawn by gnuplot, the image's first columns hold no
// ink.
func TestTitleBesideLegendNotClipped(t *testing.T) {
	needGnuplot(t)
	long := strings.Repeat("a long configuration label ", 2) // 54 characters
	p := chart.Panel{Title: "Requests per second against concurrency (mean of 3 runs; bars: 95 % interval), a title of 104 characters",
		XLabel: "x", YLabel: "y", LegendOutside: true}
	for k := range 3 {
		p.Lines = append(p.Lines, chart.Line{Title: long + strconv.Itoa(k), Style: chart.Lines, Rows: [][]float64{{1, 1}, {2, float64(k + 2)}}})
	}
	pic := drawPNG(t, &chart.Figure{Title: "t", Panels: []chart.Panel{p}})
	r := pic.Bounds()
	if ink := inkFraction(pic, image.Rect(r.Min.X, r.Min.Y, r.Min.X+3, r.Max.Y)); ink > 0 {
		t.Errorf("ink in the image's first 3 columns (%.1f%%): a title runs off its left edge", ink*100)
	}
}
