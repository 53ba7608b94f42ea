package plot

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"gab/gnuplot"
	"gab/internal/chart"
	"gab/internal/testtool"
	"gab/report"
)

// TestNewCatalogFigureReachesTheCharts: a derived figure added to the
// catalog with a panel in its SweepUse (here, for the test, req/s per
// connection) is drawn against each thing the sweep varied (concurrency,
// size, --param's values), a line per series with the points' values, in
// the SVG charts, the HTML report and the gnuplot script and data, with no
// other code; its 9 series against concurrency are split into panels of at
// most 8, each legend outside its plot.
func TestNewCatalogFigureReachesTheCharts(t *testing.T) {
	old := report.Catalog
	t.Cleanup(func() { report.Catalog = old })
	report.Catalog = append(append([]report.Figure(nil), old...), report.Figure{Key: "rps_per_connection", Title: "Requests per second per connection",
		Unit: "#/s", CSV: "rps_per_conn", Decimals: 2, Pool: report.MeanOfRuns, Sweep: report.SweepUse{Panel: true},
		Of: func(*report.Run) (float64, bool) { return 0, false }})
	d := studyDocument([]string{"a", "b", "c"}, []string{"1k", "16k", "256k"}, []int{1, 10, 100}, false)
	p := paramDocument()
	for _, doc := range []*report.SweepDocument{d, p} {
		for i := range doc.Points {
			pt := &doc.Points[i]
			pt.SetFigure("rps_per_connection", rpsMean(pt)/float64(pt.Concurrency), true)
		}
	}
	const title = "Requests per second per connection against "
	for _, c := range []struct {
		doc    *report.SweepDocument
		axis   string
		panels int
	}{{d, "concurrency", 2}, {d, "size", 2}, {p, "gzip", 1}} {
		f := SweepFigure(c.doc)
		var panels []chart.Panel
		series := 0
		for _, pn := range f.Panels {
			if !strings.HasPrefix(pn.Title, title+c.axis+" ") {
				continue
			}
			panels = append(panels, pn)
			if !pn.LegendOutside {
				t.Errorf("%q: legend inside", pn.Title)
			}
			n := 0
			for _, l := range pn.Lines {
				if l.Style == chart.Flagged {
					continue
				}
				n++
				if l.Columns[1] != "rps_per_conn" || len(l.Rows) != 3 {
					t.Errorf("%q: line %q %v %v", pn.Title, l.Title, l.Columns, l.Rows)
				}
				for _, r := range l.Rows { // a value of 1000·k+… over a concurrency of 1, 10 or 100
					if r[1] <= 0 || r[1] > 4000 {
						t.Errorf("%q: line %q row %v", pn.Title, l.Title, r)
					}
				}
			}
			if n > chart.MaxSeries {
				t.Errorf("%q: %d series", pn.Title, n)
			}
			series += n
			var svg bytes.Buffer
			if err := chart.WriteSVG(&svg, &pn, 960, 320); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(svg.String(), title+c.axis) {
				t.Errorf("the SVG chart lacks its title: %.300s", svg.String())
			}
		}
		if len(panels) != c.panels || series != len(c.doc.Points)/3 {
			t.Errorf("against %s: %d panels, %d series; want %d panels, %d series", c.axis, len(panels), series, c.panels, len(c.doc.Points)/3)
		}
		var script, data bytes.Buffer
		term, err := gnuplot.TerminalFor("x.png")
		if err != nil {
			t.Fatal(err)
		}
		if err := gnuplot.WriteScript(&script, f, term, "x.dat", "x.png"); err != nil {
			t.Fatal(err)
		}
		if err := gnuplot.WriteData(&data, f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(script.String(), title+c.axis) || !strings.Contains(data.String(), "rps_per_conn") {
			t.Errorf("against %s: the gnuplot script or data lacks the figure", c.axis)
		}
	}
	html := filepath.Join(t.TempDir(), "s.html")
	if err := writeSweepHTML(html, d); err != nil {
		t.Fatal(err)
	}
	testtool.WantInFile(t, html, title+"concurrency", title+"size")
}
