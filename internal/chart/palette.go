package chart

// The palette every chart draws its data sets with, in the SVG charts and
// the gnuplot scripts alike: twelve colours, then the same twelve with
// other dash patterns (and point shapes), so that no two data sets of a
// panel look alike up to MaxLooks colour numbers (a Line's Color), and a
// Dashed line never looks like another colour number's.

// Colors are the twelve colours, in order: the ten of Tableau's palette
// (tab10, chosen to be told apart, on screen and in print) and black and
// navy.
var Colors = [12]string{
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
	"#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#000080",
}

// dash is one dash pattern: SVG's stroke-dasharray ("" solid), gnuplot's
// dashtype, and the point shape for Points (SVG: round or square dots,
// filled or hollow, one shape per family; gnuplot's pointtype).
type dash struct {
	svg, gnuplot   string
	square, hollow bool
	pointType      int
}

// dashes are the patterns, in pairs: a colour number's family (its
// twelve) takes a pair, and a Dashed line the pair's second.
var dashes = [...]dash{
	{"", "1", false, false, 7},                         // solid; filled circle
	{"6 4", "(6,4)", false, false, 6},                  // dashed; open circle
	{"2 3", "(2,3)", true, false, 5},                   // dotted; filled square
	{"8 3 2 3", "(8,3,2,3)", true, false, 4},           // dash-dot; open square
	{"12 4", "(12,4)", false, true, 9},                 // long dashes; filled triangle
	{"12 3 2 3 2 3", "(12,3,2,3,2,3)", false, true, 8}, // dash-dot-dot; open triangle
	{"4 2", "(4,2)", true, true, 13},                   // short dashes; filled diamond
	{"1 4", "(1,4)", true, true, 12},                   // sparse dots; open diamond
}

// MaxLooks is how many colour numbers have a look of their own: twelve
// colours in each of the dash pairs.
const MaxLooks = len(Colors) * len(dashes) / 2

// Look is how a data set is drawn.
type Look struct {
	Color string // #rrggbb
	// Dash numbers the pattern (0 solid); SVGDash is its stroke-dasharray
	// ("" for solid), GnuplotDash its dashtype.
	Dash        int
	SVGDash     string
	GnuplotDash string
	// Square draws Points as squares in SVG, Hollow with a white centre (a
	// Dashed line's points look like its family's there); PointType is
	// gnuplot's.
	Square, Hollow bool
	PointType      int
}

// LookOf is the look of the i-th line of a panel: its colour number's
// colour, and the dash (or point shape) of its family, the pair's second
// when Dashed. Past MaxLooks colour numbers the looks repeat.
func LookOf(l *Line, i int) Look {
	n := (l.ColorOf(i) - 1) % MaxLooks
	d := 2 * (n / len(Colors))
	if l.Dashed {
		d++
	}
	p := dashes[d]
	return Look{Color: Colors[n%len(Colors)], Dash: d, SVGDash: p.svg, GnuplotDash: p.gnuplot, Square: p.square, Hollow: p.hollow, PointType: p.pointType}
}

// MarkerFill is the inside of a point's marker: white when Hollow, else its
// colour.
func (lk Look) MarkerFill() string {
	if lk.Hollow {
		return "#ffffff"
	}
	return lk.Color
}

// Titled is the number of a panel's data sets with a legend entry.
func (p *Panel) Titled() int {
	n := 0
	for _, l := range p.Lines {
		if l.Title != "" {
			n++
		}
	}
	return n
}

// MaxLegendInside is the most legend entries a panel holds inside its plot,
// in the SVG charts and gnuplot's; a longer legend goes right of the plot
// (in SVG, svgLegendWidth pixels wide or as its longest entry needs).
const (
	MaxLegendInside = 8
	svgLegendWidth  = 190.0
)

// MinLegendRightWidth is the narrowest SVG image that gets a legend inside
// or right of its plot; a narrower one has it under the plot.
const MinLegendRightWidth = 600.0

type legendPlace int

const (
	legendInside legendPlace = iota
	legendRight
	legendBelow
)
