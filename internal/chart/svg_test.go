package chart

import (
	"bytes"
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
