package plot

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gab/internal/chart"
	"gab/report"
)

// savedRuns are n saved runs as gab plot reads them (testdata/run.json, a
// 3 s gab --demo run with a timeline of four intervals), labelled runK.
func savedRuns(t *testing.T, n int) ([]Input, []string) {
	t.Helper()
	raw, err := os.ReadFile("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	command := []string{"gab", "plot"}
	var ins []Input
	for k := range n {
		in, err := Decode("testdata/run.json", raw)
		if err != nil {
			t.Fatal(err)
		}
		in.Label = "run" + strconv.Itoa(k+1)
		ins = append(ins, in)
		command = append(command, in.Label+"=testdata/run.json")
	}
	return ins, command
}

var (
	svgChart     = regexp.MustCompile(`(?s)<svg .*?</svg>`)
	svgPlotFrame = regexp.MustCompile(`<rect x="([-0-9.]+)" y="([-0-9.]+)" width="([-0-9.]+)" height="([-0-9.]+)" fill="none" stroke="#999"/>`)
	svgEntry     = regexp.MustCompile(`<text x="([-0-9.]+)" y="([-0-9.]+)">(run[0-9]+[^<]*)</text>`)
)

// TestPlotRunsHTML: the HTML page of 3, 9 and 18 saved runs overlaid: no
// chart draws more than chart.MaxSeries series, every legend entry of every
// chart stands right of its plot, each run is in one part of each kind of
// chart; the title fits above the charts (the page shows the command line).
func TestPlotRunsHTML(t *testing.T) {
	for _, n := range []int{3, 9, 18} {
		ins, command := savedRuns(t, n)
		out, err := Build(ins, command, true)
		if err != nil || out.Page == nil {
			t.Fatalf("%d runs: %v", n, err)
		}
		fig := out.Page.Figure
		for _, p := range fig.Panels {
			colors := map[int]bool{}
			for i, l := range p.Lines {
				colors[l.ColorOf(i)] = true
			}
			if len(colors) > chart.MaxSeries {
				t.Errorf("%d runs: %q draws %d series", n, p.Title, len(colors))
			}
		}
		var page bytes.Buffer
		if err := report.WriteHTMLPage(&page, out.Page); err != nil {
			t.Fatal(err)
		}
		charts := svgChart.FindAllString(page.String(), -1)
		if len(charts) != len(fig.Panels) {
			t.Fatalf("%d runs: %d charts for %d panels", n, len(charts), len(fig.Panels))
		}
		parts := map[string]int{} // run and chart title → parts with its lines
		for i, svg := range charts {
			m := svgPlotFrame.FindStringSubmatch(svg)
			if m == nil {
				t.Fatalf("chart %d: no frame", i)
			}
			x, _ := strconv.ParseFloat(m[1], 64)
			w, _ := strconv.ParseFloat(m[3], 64)
			entries := svgEntry.FindAllStringSubmatch(svg, -1)
			if len(entries) == 0 {
				t.Errorf("%d runs: chart %q has no legend", n, fig.Panels[i].Title)
			}
			seen := map[string]bool{}
			for _, e := range entries {
				if lx, _ := strconv.ParseFloat(e[1], 64); lx < x+w {
					t.Errorf("%d runs: chart %q: legend entry %q at x %v inside the plot (to %v)", n, fig.Panels[i].Title, e[3], lx, x+w)
				}
				run, _, _ := strings.Cut(e[3], " ")
				kind, _, _ := strings.Cut(fig.Panels[i].Title, " (part ")
				if !seen[run] {
					seen[run] = true
					parts[run+" in "+kind]++
				}
			}
		}
		for k, c := range parts {
			if c != 1 {
				t.Errorf("%d runs: %s: in %d parts", n, k, c)
			}
		}
		if len(parts) < 4*n {
			t.Errorf("%d runs: %d (run, chart) pairs, want each run in at least 4 kinds of chart", n, len(parts))
		}
		if w := chart.TextWidth(fig.Title, 12); w > maxTitleWidth || !strings.HasPrefix(fig.Title, "gab plot") {
			t.Errorf("%d runs: title %q (%.0f px)", n, fig.Title, w)
		}
		if full := strings.Join(command, " "); fig.Title != full && !strings.Contains(page.String(), full) {
			t.Errorf("%d runs: the page lacks the command line", n)
		}
	}
}
