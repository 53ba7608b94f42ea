package plot

import (
	"io"

	"gab/internal/outfile"
	"gab/report"
)

// writeSweepHTML writes d's HTML report to out, as gab sweep --html does.
func writeSweepHTML(out string, d *report.SweepDocument) error {
	return outfile.WriteAtomic(out, func(w io.Writer) error { return report.WriteHTMLPage(w, SweepPage(d)) })
}
