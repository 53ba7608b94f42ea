package sweep

import (
	"fmt"
	"io"

	"gab/internal/printable"
	"gab/report"
)

// WriteRunErrors lists the runs that ended with an error, after the table
// (nothing when none did). Labels and messages are printed printable, each
// message on one line.
func WriteRunErrors(w io.Writer, points []*PointResult) error {
	first := true
	for _, p := range points {
		for _, r := range p.Runs {
			if r.Error == "" {
				continue
			}
			if first {
				if _, err := fmt.Fprintln(w, "\nRuns that ended with an error:"); err != nil {
					return err
				}
				first = false
			}
			size := ""
			if p.Size != nil {
				size = " size=" + p.Size.Text
			}
			if _, err := fmt.Fprintf(w, "  %s%s c=%d repetition %d: %s\n", printable.String(p.Label), size, p.Concurrency, r.Rep+1, printable.String(report.OneLine(r.Error))); err != nil {
				return err
			}
		}
	}
	return nil
}
