package plot

import (
	"io"
	"os"
	"strings"
	"testing"

	"gab/internal/outfile"
	"gab/report"
)

// writeSweepHTML writes d's HTML report to out, as gab sweep --html does.
func writeSweepHTML(out string, d *report.SweepDocument) error {
	return outfile.WriteAtomic(out, func(w io.Writer) error { return report.WriteHTMLPage(w, SweepPage(d)) })
}

// wantInFile checks that the file name holds each of wants.
func wantInFile(t *testing.T, name string, wants ...string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range wants {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q", name, want)
		}
	}
}
