package chart

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestEmptyPanelKeepsItsRange: a panel with no data yet (the live
// dashboard's frame for a chart drawn at the end) keeps its fixed x range,
// the run's length so far, not 0 to 1.
func TestEmptyPanelKeepsItsRange(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSVG(&b, &Panel{Title: "later", XMin: 0, XMax: 7}, 400, 200); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `data-x="64 320 0 7 false"`) {
		t.Errorf("the x axis is not 0 to 7: %.300s", b.String())
	}
}

// TestFlaggedMarksEachPoint: a Flagged line rings each of its points and
// writes its mark beside it, in its slot, with a legend entry; the mark is
// text, escaped.
func TestFlaggedMarksEachPoint(t *testing.T) {
	p := &Panel{Title: "rps", XMin: 0, XMax: 10, Lines: []Line{
		{Title: "a", Style: Lines, Rows: [][]float64{{1, 10}, {5, 20}, {9, 15}}},
		{Title: "flag C: client-bound", Style: Flagged, Color: 11, Mark: "C", Rows: [][]float64{{1, 10}, {9, 15}}},
		{Title: "flag <B>", Style: Flagged, Color: 11, Mark: "<B>", MarkSlot: 1, Rows: [][]float64{{9, 15}}},
	}}
	var b bytes.Buffer
	if err := WriteSVG(&b, p, 400, 200); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	c := svg[strings.Index(svg, `<g class="flag" data-mark="C"`):]
	c = c[:strings.Index(c, "</g>")]
	if strings.Count(c, "<circle") != 2 || strings.Count(c, ">C</text>") != 2 {
		t.Errorf("C's group: want two rings and two marks: %s", c)
	}
	bg := svg[strings.Index(svg, `<g class="flag" data-mark="&lt;B&gt;"`):]
	bg = bg[:strings.Index(bg, "</g>")]
	// The second slot is 8 px further right than the first, at the same point.
	var cx, bx float64
	fmtSscan(t, c[strings.LastIndex(c, `<text x="`)+len(`<text x="`):], &cx)
	fmtSscan(t, bg[strings.Index(bg, `<text x="`)+len(`<text x="`):], &bx)
	if strings.Count(bg, "<circle") != 1 || !strings.Contains(bg, ">&lt;B&gt;</text>") || bx-cx != 8 {
		t.Errorf("B's group (x %v, C's %v): %s", bx, cx, bg)
	}
	if !strings.Contains(svg, ">flag C: client-bound</text>") || !strings.Contains(svg, ">flag &lt;B&gt;</text>") {
		t.Errorf("legend lacks the flags: %s", svg)
	}
}

func fmtSscan(t *testing.T, s string, v *float64) {
	t.Helper()
	if _, err := fmt.Sscanf(s[:strings.IndexByte(s, '"')], "%g", v); err != nil {
		t.Fatal(err)
	}
}

// TestLegendColumnFitsEntries: a legend right of the plot is as wide as its
// longest entry needs (a sweep's "flag F: too few requests for a
// percentile", a run's long label): no entry runs past the image's right
// edge, and none lies inside the plot.
func TestLegendColumnFitsEntries(t *testing.T) {
	p := Panel{Title: "Requests per second against concurrency", LegendOutside: true, Lines: []Line{
		{Title: "nginx-keepalive-16-workers p99", Style: Lines, Rows: [][]float64{{1, 1}, {2, 2}}},
		{Title: "flag F: too few requests for a percentile", Style: Flagged, Mark: "F", Color: 11, Rows: [][]float64{{2, 2}}},
	}}
	for _, w := range []int{960, 700} {
		var b bytes.Buffer
		if err := WriteSVG(&b, &p, w, 320); err != nil {
			t.Fatal(err)
		}
		checkSVGText(t, b.String(), p, float64(w))
	}
}
