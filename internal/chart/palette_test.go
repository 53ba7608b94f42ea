package chart

import (
	"fmt"
	"testing"
)

// TestLooksDistinct: every colour number up to MaxLooks, solid or Dashed,
// has a look (colour and dash) no other has, and there are at least twelve
// colours.
func TestLooksDistinct(t *testing.T) {
	if len(Colors) < 12 {
		t.Fatalf("%d colours", len(Colors))
	}
	seen := map[[2]string]string{}
	for n := 1; n <= MaxLooks; n++ {
		for _, dashed := range []bool{false, true} {
			l := Line{Color: n, Dashed: dashed}
			lk := LookOf(&l, 0)
			key := [2]string{lk.Color, lk.GnuplotDash}
			if prev, dup := seen[key]; dup {
				t.Errorf("colour %d dashed %v looks like %s: %+v", n, dashed, prev, lk)
			}
			seen[key] = fmt.Sprint("colour ", n, " dashed ", dashed)
			svgKey := [2]string{lk.Color, lk.SVGDash}
			if svgKey[1] == "" && lk.Dash != 0 {
				t.Errorf("colour %d: dash %d has no SVG pattern", n, lk.Dash)
			}
		}
	}
	// The 13th colour number is the first colour with a dash pattern, not
	// the first colour again.
	a, b := LookOf(&Line{Color: 1}, 0), LookOf(&Line{Color: 13}, 0)
	if a.Color != b.Color || a.Dash == b.Dash {
		t.Errorf("colour 1 %+v, colour 13 %+v", a, b)
	}
}
