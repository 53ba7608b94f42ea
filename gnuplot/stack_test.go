package gnuplot

import (
	"bytes"
	"strings"
	"testing"

	"gab/internal/chart"
)

// TestStackedPanelRange: a panel of stacked bars gets a y range up to its
// highest top (gnuplot's autoscale stops short of boxxyerror's tops), and
// its boxes go from each row's base to its top.
func TestStackedPanelRange(t *testing.T) {
	f := &chart.Figure{Title: "t", Panels: []chart.Panel{{ID: chart.PanelStatus, Title: "s", YFromZero: true, Lines: []chart.Line{
		{Title: "2xx", Style: chart.Stacked, Columns: []string{"x", "top", "w", "base"}, Rows: [][]float64{{0.5, 80, 1, 0}, {1.5, 90, 1, 0}}},
		{Title: "5xx", Style: chart.Stacked, Columns: []string{"x", "top", "w", "base"}, Rows: [][]float64{{0.5, 100, 1, 80}, {1.5, 95, 1, 90}}},
	}}}}
	var b bytes.Buffer
	if err := WriteScript(&b, f, terminals[0], "d.dat", "i.png"); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.Contains(s, "set yrange [0:105]\n") || !strings.Contains(s, "using 1:(($2+$4)/2):($1-$3/2):($1+$3/2):4:2 with boxxyerror") {
		t.Errorf("script:\n%s", s)
	}
}
