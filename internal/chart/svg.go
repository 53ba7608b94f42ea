package chart

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"gab/internal/printable"
)

// This file draws a Panel as an SVG image (the HTML report's charts): axes
// with labelled tics, a grid, the data sets in the palette's colours and a
// legend. Nothing but the SVG itself: no script, no font or style from
// elsewhere, so the page that holds it works offline.

const (
	svgLeft, svgRight, svgTop, svgBottom = 64.0, 16.0, 30.0, 44.0
)

// axis maps data values to pixels along one axis.
type axis struct {
	lo, hi   float64 // in data units (log10 of them on a log axis)
	log      bool
	pxLo, px float64 // pixel of lo and length in pixels (negative for y)
}

func (a axis) at(v float64) float64 {
	if a.log {
		v = math.Log10(math.Max(v, 1e-12))
	}
	if a.hi == a.lo {
		return a.pxLo + a.px/2
	}
	return a.pxLo + (v-a.lo)/(a.hi-a.lo)*a.px
}

// svgLayout is where a panel's parts go on its image: the title's lines,
// the margins around the plot, the legend's place and the axes' mappings.
type svgLayout struct {
	W, H               float64
	title              []string
	top, right, bottom float64
	legend             legendPlace
	lx                 float64 // the legend's left edge (inside or right of the plot)
	perRow             int     // legend entries a row under the plot
	xs, ys             [2]float64
	x, y               axis
}

// layoutSVG places p's parts on a width × height image.
func layoutSVG(p *Panel, width, height int) svgLayout {
	W, H := float64(width), float64(height)
	// A title wider than the image is wrapped onto more lines, and the plot
	// moves down under them.
	title := wrapText(printable.String(p.Title), W-16, svgTitleSize)
	top := svgTop + svgLineHeight*float64(len(title)-1)
	// The legend: a short one inside the plot, top left; a long one in a
	// column right of the plot, where it covers no data; on a narrow image
	// (a panel of a figure with columns) in rows under the x axis's label,
	// two entries a row.
	legend := legendInside
	switch {
	case p.Titled() == 0:
	case W < MinLegendRightWidth:
		legend = legendBelow
	case p.Titled() > MaxLegendInside || p.LegendOutside:
		legend = legendRight
	}
	right, lx := svgRight, svgLeft
	bottom := svgBottom
	if legend == legendRight {
		right = svgRight + legendColumnWidth(p, W)
		lx = W - right + 8
	}
	perRow := 2 // legend entries a row under the plot
	if legend == legendBelow {
		for _, l := range p.Lines {
			if l.Title != "" && 24+TextWidth(printable.String(l.Title), 11) > (W-svgLeft)/2 {
				perRow = 1
			}
		}
		bottom += svgLineHeight*float64((p.Titled()+perRow-1)/perRow) + 4
	}
	xs, ys := dataRange(p)
	x := axis{lo: xs[0], hi: xs[1], log: p.LogX, pxLo: svgLeft, px: W - svgLeft - right}
	y := axis{lo: ys[0], hi: ys[1], log: p.LogY, pxLo: H - bottom, px: -(H - top - bottom)}
	if x.log {
		x.lo, x.hi = math.Log10(math.Max(x.lo, 1e-12)), math.Log10(math.Max(x.hi, 1e-12))
	}
	if y.log {
		y.lo, y.hi = math.Log10(math.Max(y.lo, 1e-12)), math.Log10(math.Max(y.hi, 1e-12))
	}
	return svgLayout{W: W, H: H, title: title, top: top, right: right, bottom: bottom, legend: legend, lx: lx, perRow: perRow,
		xs: xs, ys: ys, x: x, y: y}
}

// legendColumnWidth is the width of a legend right of the plot:
// svgLegendWidth, or as wide as its longest entry (sample and text) needs,
// at most half the image.
func legendColumnWidth(p *Panel, W float64) float64 {
	w := svgLegendWidth
	for _, l := range p.Lines {
		if l.Title != "" {
			w = max(w, 32+TextWidth(printable.String(l.Title), 11))
		}
	}
	return min(w, W/2)
}

// WriteSVG draws p as a width × height SVG element.
func WriteSVG(w io.Writer, p *Panel, width, height int) error {
	bw := bufio.NewWriter(w)
	lo := layoutSVG(p, width, height)
	x, y := lo.x, lo.y
	// The plot area's mapping, for the page's script (hover and zoom).
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" font-family="sans-serif" font-size="11" data-x="%g %g %g %g %t" data-y="%g %g %g %g %t">`,
		width, height, width, height, x.pxLo, x.px, x.lo, x.hi, x.log, y.pxLo, y.px, y.lo, y.hi, y.log)
	fmt.Fprintf(bw, "<title>%s</title>", esc(p.Title))
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="#fff"/>`, width, height)
	for i, line := range lo.title {
		fmt.Fprintf(bw, `<text class="title" x="%g" y="%g" text-anchor="middle" font-size="%g">%s</text>`, lo.W/2, 18+svgLineHeight*float64(i), svgTitleSize, html.EscapeString(line))
	}
	writeAxes(bw, p, &lo)
	// Data sets, clipped to the frame.
	fmt.Fprintf(bw, `<clipPath id="clip-%s"><rect x="%g" y="%g" width="%g" height="%g"/></clipPath><g clip-path="url(#clip-%s)"><g class="plot">`,
		clipID(p), svgLeft, lo.top, lo.W-svgLeft-lo.right, lo.H-lo.top-lo.bottom, clipID(p))
	for i, l := range p.Lines {
		writeLine(bw, &l, x, y, LookOf(&l, i))
	}
	bw.WriteString("</g></g>")
	writeLegend(bw, p, &lo)
	bw.WriteString("</svg>")
	return bw.Flush()
}

// writeAxes draws the grid, the tics and their labels, the axes' labels and
// the plot's frame.
func writeAxes(bw *bufio.Writer, p *Panel, lo *svgLayout) {
	x, y, W, H, top, bottom, right := lo.x, lo.y, lo.W, lo.H, lo.top, lo.bottom, lo.right
	xticks := p.XTics
	if len(xticks) == 0 {
		for _, v := range niceTicks(lo.xs[0], lo.xs[1]) {
			xticks = append(xticks, Tic{formatTick(v), v})
		}
	}
	bw.WriteString(`<g stroke="#ddd" stroke-width="1">`)
	for _, t := range xticks {
		px := x.at(t.At)
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, px, top, px, H-bottom)
	}
	yticks := niceTicks(lo.ys[0], lo.ys[1])
	if y.log {
		yticks = decadeTicks(lo.ys[0], lo.ys[1])
	}
	for _, v := range yticks {
		py := y.at(v)
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, svgLeft, py, W-right, py)
	}
	bw.WriteString(`</g><g fill="#333">`)
	for _, t := range xticks {
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x.at(t.At), H-bottom+14, esc(t.Label))
	}
	for _, v := range yticks {
		fmt.Fprintf(bw, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`, svgLeft-6, y.at(v)+4, formatTick(v))
	}
	fmt.Fprintf(bw, `<text x="%g" y="%g" text-anchor="middle">%s</text>`, svgLeft+(W-svgLeft-right)/2, H-bottom+36, esc(p.XLabel))
	fmt.Fprintf(bw, `<text transform="translate(14,%g) rotate(-90)" text-anchor="middle">%s</text>`, top+(H-top-bottom)/2, esc(p.YLabel))
	bw.WriteString(`</g>`)
	fmt.Fprintf(bw, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#999"/>`, svgLeft, top, W-svgLeft-right, H-top-bottom)
}

// writeLegend draws the legend: top left inside the frame, in its column
// right of the plot or under the x axis.
func writeLegend(bw *bufio.Writer, p *Panel, lo *svgLayout) {
	lx, ly := lo.lx, lo.top+14
	k := 0
	for i, l := range p.Lines {
		if l.Title == "" {
			continue
		}
		if lo.legend == legendBelow {
			lx = svgLeft - 20 + float64(k%lo.perRow)*(lo.W-svgLeft)/2
			ly = lo.H - lo.bottom + svgBottom + 10 + svgLineHeight*float64(k/lo.perRow)
			k++
		}
		writeSample(bw, &l, LookOf(&l, i), lx, ly)
		fmt.Fprintf(bw, `<text x="%g" y="%g">%s</text>`, lx+24, ly, esc(l.Title))
		ly += 14
	}
}

// writeSample draws a legend entry's sample at (lx, ly): a dot, a ring or a
// stroke, as the data set is drawn.
func writeSample(bw *bufio.Writer, l *Line, lk Look, lx, ly float64) {
	color := lk.Color
	switch {
	case l.Style == Points && lk.Square: // a dot, as the series is drawn
		fmt.Fprintf(bw, `<rect x="%g" y="%g" width="6" height="6" fill="%s" stroke="%s" stroke-width="1.5"/>`, lx+11, ly-7, lk.MarkerFill(), color)
	case l.Style == Points:
		fmt.Fprintf(bw, `<circle cx="%g" cy="%g" r="3" fill="%s" stroke="%s" stroke-width="1.5"/>`, lx+14, ly-4, lk.MarkerFill(), color)
	case l.Style == Marks && lk.Square:
		fmt.Fprintf(bw, `<rect x="%g" y="%g" width="8" height="8" fill="%s" stroke="#000" stroke-width="0.5"/>`, lx+10, ly-8, color)
	case l.Style == Marks:
		fmt.Fprintf(bw, `<circle cx="%g" cy="%g" r="4.5" fill="%s" stroke="#000" stroke-width="0.5"/>`, lx+14, ly-4, color)
	case l.Style == Flagged:
		fmt.Fprintf(bw, `<circle cx="%g" cy="%g" r="5" fill="none" stroke="%s" stroke-width="1.5"/>`, lx+14, ly-4, color)
	case lk.SVGDash != "":
		fmt.Fprintf(bw, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="3" stroke-dasharray="%s"/>`, lx+8, ly-4, lx+20, ly-4, color, lk.SVGDash)
	default:
		fmt.Fprintf(bw, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="3"/>`, lx+8, ly-4, lx+20, ly-4, color)
	}
}

// writeLine draws one data set in its style.
func writeLine(bw *bufio.Writer, l *Line, x, y axis, lk Look) {
	switch l.Style {
	case Points:
		writePoints(bw, l, x, y, lk)
	case Marks:
		writeMarks(bw, l, x, y, lk)
	case Flagged:
		writeFlagged(bw, l, x, y, lk)
	case Lines, ErrorBars:
		writePolyline(bw, l, x, y, lk)
	case Stacked:
		writeStacked(bw, l, x, y, lk)
	case Bars:
		writeBars(bw, l, x, y, lk)
	}
}

// svgNum is v in pixels to a tenth, as the paths write their coordinates.
func svgNum(v float64) []byte { return strconv.AppendFloat(nil, math.Round(v*10)/10, 'f', -1, 64) }

// writePoints draws a dot per row, one path of zero-length strokes (round,
// or square in a square family; hollow ones get a white centre).
func writePoints(bw *bufio.Writer, l *Line, x, y axis, lk Look) {
	var d []byte
	for _, r := range l.Rows {
		if len(r) < 2 || bad(r[0], r[1]) {
			continue
		}
		d = append(d, 'M')
		d = append(d, svgNum(x.at(r[0]))...)
		d = append(d, ' ')
		d = append(d, svgNum(y.at(r[1]))...)
		d = append(d, "h0"...)
	}
	linecap := "round"
	if lk.Square {
		linecap = "square"
	}
	fmt.Fprintf(bw, `<path d="%s" stroke="%s" stroke-width="3" stroke-linecap="%s" stroke-opacity="0.7" fill="none" vector-effect="non-scaling-stroke"/>`, d, lk.Color, linecap)
	if lk.Hollow {
		fmt.Fprintf(bw, `<path d="%s" stroke="%s" stroke-width="1.2" stroke-linecap="%s" fill="none" vector-effect="non-scaling-stroke"/>`, d, lk.MarkerFill(), linecap)
	}
}

// writeMarks draws circles, or squares in a square family (failing capacity
// steps beside passing ones).
func writeMarks(bw *bufio.Writer, l *Line, x, y axis, lk Look) {
	for _, r := range l.Rows {
		if len(r) < 2 || bad(r[0], r[1]) {
			continue
		}
		if lk.Square {
			fmt.Fprintf(bw, `<rect x="%.1f" y="%.1f" width="9" height="9" fill="%s" stroke="#000" stroke-width="0.5"/>`, x.at(r[0])-4.5, y.at(r[1])-4.5, lk.Color)
			continue
		}
		fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="5" fill="%s" stroke="#000" stroke-width="0.5"/>`, x.at(r[0]), y.at(r[1]), lk.Color)
	}
}

// writeFlagged draws the rings, then the marks: a group a test (or a
// reader) finds by its class and mark.
func writeFlagged(bw *bufio.Writer, l *Line, x, y axis, lk Look) {
	color := lk.Color
	fmt.Fprintf(bw, `<g class="flag" data-mark="%s" fill="%s" font-weight="bold">`, esc(l.Mark), color)
	for _, r := range l.Rows {
		if len(r) < 2 || bad(r[0], r[1]) {
			continue
		}
		px, py := x.at(r[0]), y.at(r[1])
		ty := py + 16 // below the ring; above it at the frame's bottom
		if ty > y.pxLo-2 {
			ty = py - 10
		}
		fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="7" fill="none" stroke="%s" stroke-width="1.5"/><text x="%.1f" y="%.1f">%s</text>`,
			px, py, color, px+8+8*float64(l.MarkSlot), ty, esc(l.Mark))
	}
	bw.WriteString("</g>")
}

// writePolyline draws a line through the rows (a row it cannot draw breaks
// it), and for ErrorBars a vertical whisker from each row's low to high.
func writePolyline(bw *bufio.Writer, l *Line, x, y axis, lk Look) {
	var d []byte
	cmd := byte('M')
	for _, r := range l.Rows {
		if len(r) < 2 || bad(r[0], r[1]) {
			cmd = 'M'
			continue
		}
		d = append(d, cmd)
		d = append(d, svgNum(x.at(r[0]))...)
		d = append(d, ' ')
		d = append(d, svgNum(y.at(r[1]))...)
		cmd = 'L'
	}
	dash := ""
	if lk.SVGDash != "" {
		dash = ` stroke-dasharray="` + lk.SVGDash + `"`
	}
	fmt.Fprintf(bw, `<path d="%s" stroke="%s" stroke-width="2" fill="none"%s/>`, d, lk.Color, dash)
	if l.Style != ErrorBars {
		return
	}
	var e []byte
	for _, r := range l.Rows {
		if len(r) < 4 || bad(r[0], r[2]) || bad(r[3], r[3]) {
			continue
		}
		e = append(e, 'M')
		e = append(e, svgNum(x.at(r[0]))...)
		e = append(e, ' ')
		e = append(e, svgNum(y.at(r[2]))...)
		e = append(e, 'V')
		e = append(e, svgNum(y.at(r[3]))...)
	}
	fmt.Fprintf(bw, `<path d="%s" stroke="%s" stroke-width="1.5" fill="none"/>`, e, lk.Color)
}

// writeStacked draws a box per row from its base to its top, as wide as its
// third column.
func writeStacked(bw *bufio.Writer, l *Line, x, y axis, lk Look) {
	for _, r := range l.Rows {
		if len(r) < 4 || bad(r[0], r[1]) || bad(r[2], r[3]) {
			continue
		}
		x0, x1 := x.at(r[0]-r[2]/2), x.at(r[0]+r[2]/2)
		y0, y1 := y.at(r[3]), y.at(r[1])
		fmt.Fprintf(bw, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.6"/>`,
			x0, y1, math.Max(x1-x0, 0.5), math.Max(y0-y1, 0), lk.Color)
	}
}

// writeBars draws a translucent bar per row from 0, one x unit wide or as
// wide as its third column.
func writeBars(bw *bufio.Writer, l *Line, x, y axis, lk Look) {
	for _, r := range l.Rows {
		if len(r) < 2 || bad(r[0], r[1]) {
			continue
		}
		w := 1.0
		if len(r) >= 3 && r[2] > 0 {
			w = r[2]
		}
		x0, x1 := x.at(r[0]-w/2), x.at(r[0]+w/2)
		y0, y1 := y.at(0), y.at(r[1])
		fmt.Fprintf(bw, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.35" stroke="%s"/>`,
			x0, y1, math.Max(x1-x0, 0.5), math.Max(y0-y1, 0), lk.Color, lk.Color)
	}
}

// clipID names a panel's clip path: its ID, or its title's hash.
func clipID(p *Panel) string {
	if p.ID != "" && strings.Trim(p.ID, "abcdefghijklmnopqrstuvwxyz0123456789-") == "" {
		return p.ID
	}
	h := fnv.New32a()
	h.Write([]byte(p.Title))
	return fmt.Sprintf("p%08x", h.Sum32())
}

// decadeTicks are the powers of ten in [lo, hi] (and lo when there is none).
func decadeTicks(lo, hi float64) []float64 {
	var out []float64
	for v := math.Pow(10, math.Ceil(math.Log10(math.Max(lo, 1e-12)))); v <= hi*1.0001; v *= 10 {
		out = append(out, v)
	}
	if len(out) == 0 {
		out = append(out, lo)
	}
	return out
}

func bad(a, b float64) bool {
	return math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0)
}

// dataRange is the x and y ranges of the panel's data, widened to 0 where
// the panel anchors an axis there and to the bars' edges.
func dataRange(p *Panel) (xs, ys [2]float64) {
	xs = [2]float64{math.Inf(1), math.Inf(-1)}
	ys = xs
	for _, l := range p.Lines {
		for _, r := range l.Rows {
			if len(r) < 2 || bad(r[0], r[1]) {
				continue
			}
			lo, hi := r[0], r[0]
			if l.Style == Bars || l.Style == Stacked {
				w := 1.0
				if len(r) >= 3 && r[2] > 0 {
					w = r[2]
				}
				lo, hi = lo-w/2, hi+w/2
			}
			xs[0], xs[1] = math.Min(xs[0], lo), math.Max(xs[1], hi)
			ys[0], ys[1] = math.Min(ys[0], r[1]), math.Max(ys[1], r[1])
			if l.Style == ErrorBars && len(r) >= 4 {
				ys[0], ys[1] = math.Min(ys[0], r[2]), math.Max(ys[1], r[3])
			}
		}
	}
	if math.IsInf(xs[0], 0) {
		xs = [2]float64{0, 1} // no data: the fixed x range, if any, still holds
		if p.XMax > p.XMin {
			xs = [2]float64{p.XMin, p.XMax}
		}
		return xs, [2]float64{0, 1}
	}
	if p.XFromZero {
		xs[0] = math.Min(xs[0], 0)
	}
	if p.YFromZero && !p.LogY {
		ys[0] = math.Min(ys[0], 0)
	}
	for _, t := range p.XTics {
		xs[0], xs[1] = math.Min(xs[0], t.At), math.Max(xs[1], t.At)
	}
	if p.XMax > p.XMin {
		xs = [2]float64{p.XMin, p.XMax}
	}
	if ys[1] == ys[0] {
		ys[1] = ys[0] + 1
	}
	if p.LogY {
		ys[0] = math.Max(ys[0], 1e-3) / 1.2
		ys[1] *= 1.5 // headroom for the legend
	} else {
		ys[1] += (ys[1] - ys[0]) * 0.05 // headroom for the legend
	}
	if xs[1] == xs[0] {
		xs[1] = xs[0] + 1
	}
	return xs, ys
}

// niceTicks returns about six round values (1, 2 or 5 × 10^k apart) in [lo, hi].
func niceTicks(lo, hi float64) []float64 {
	span := hi - lo
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return []float64{lo}
	}
	step := math.Pow(10, math.Floor(math.Log10(span/6)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= 7 {
			step *= m
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

func formatTick(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// esc is s as SVG text: controls and bytes that are not UTF-8 written as
// \xNN (printable.String), then HTML-escaped.
func esc(s string) string { return html.EscapeString(printable.String(s)) }
