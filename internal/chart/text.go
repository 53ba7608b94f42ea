package chart

import (
	"strings"
	"unicode/utf8"
)

// Sizes of the SVG charts' text: a title's font size and the height of a
// line of text (a title's or a legend entry's), in pixels.
const (
	svgTitleSize  = 12.0
	svgLineHeight = 14.0
)

// TextWidth is an upper estimate of the width of s in pixels in a sans-serif
// font of size px: 0.62 em a character (wider than the average of the
// common sans-serif fonts' letters and digits).
func TextWidth(s string, px float64) float64 {
	return float64(utf8.RuneCountInString(s)) * 0.62 * px
}

// WrapText is wrapText: s in lines no wider than width pixels at font
// size px (gnuplot's titles).
func WrapText(s string, width, px float64) []string { return wrapText(s, width, px) }

// wrapText splits s at spaces into lines no wider than width (TextWidth at
// px); a word wider than a line stands alone.
func wrapText(s string, width, px float64) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case TextWidth(line+" "+w, px) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}
