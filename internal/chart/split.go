package chart

import "strconv"

// MaxSeries is the most series a panel of a split figure draws: past it
// the palette's colours repeat in other dash patterns (which, on a chart
// whose dashes mean p99, read as another figure) and the legend outgrows
// the panel.
const MaxSeries = 8

// SplitPanels returns the panels with every panel of more than max series
// split into as few panels of at most max series each as it takes, in
// order, and every panel's legend set outside its plot (LegendOutside). A
// series is the data sets of one colour number (a target's p50 and its
// dashed p99, its bars and their whiskers); Flagged data sets (a point's
// verdicts) are not series: each part keeps the flags of its own points.
// A part's title says which part it is, its ID gets the part's number, and
// its series take the colours from 1 in their order.
func SplitPanels(panels []Panel, max int) []Panel {
	var out []Panel
	for _, p := range panels {
		p.LegendOutside = true
		var order []int            // colour numbers in order of first use
		byColor := map[int][]int{} // colour number → its lines
		var flags []int
		for i, l := range p.Lines {
			if l.Style == Flagged {
				flags = append(flags, i)
				continue
			}
			c := l.ColorOf(i)
			if _, ok := byColor[c]; !ok {
				order = append(order, c)
			}
			byColor[c] = append(byColor[c], i)
		}
		if len(order) <= max {
			out = append(out, p)
			continue
		}
		parts := (len(order) + max - 1) / max
		per := (len(order) + parts - 1) / parts // as even as it goes
		for k := 0; k < parts; k++ {
			q := p
			q.Lines = nil
			q.Title = p.Title + " (part " + strconv.Itoa(k+1) + " of " + strconv.Itoa(parts) + ")"
			if p.ID != "" {
				q.ID = p.ID + "-" + strconv.Itoa(k+1)
			}
			at := map[[2]float64]bool{}
			chunk := order[k*per : min((k+1)*per, len(order))]
			for j, c := range chunk {
				for _, i := range byColor[c] {
					l := p.Lines[i]
					l.Color = j + 1
					q.Lines = append(q.Lines, l)
					for _, r := range l.Rows {
						if len(r) >= 2 {
							at[[2]float64{r[0], r[1]}] = true
						}
					}
				}
			}
			for _, i := range flags {
				l := p.Lines[i]
				l.Rows = nil
				for _, r := range p.Lines[i].Rows {
					if len(r) >= 2 && at[[2]float64{r[0], r[1]}] {
						l.Rows = append(l.Rows, r)
					}
				}
				if len(l.Rows) > 0 {
					q.Lines = append(q.Lines, l)
				}
			}
			out = append(out, q)
		}
	}
	return out
}
