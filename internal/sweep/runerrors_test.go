package sweep

import (
	"strings"
	"testing"
)

// The runs' errors follow the table one per line, printable whatever the
// server or the label put in them; nothing is written when no run failed.
func TestWriteRunErrors(t *testing.T) {
	ok := &PointResult{Label: "a", Concurrency: 1, Runs: []*RunResult{{}}}
	var b strings.Builder
	if err := WriteRunErrors(&b, []*PointResult{ok}); err != nil || b.Len() != 0 {
		t.Fatalf("no errors: wrote %q (%v)", b.String(), err)
	}
	bad := &PointResult{Label: "x\x1b[2J", Size: &Size{Text: "1k"}, Concurrency: 4,
		Runs: []*RunResult{{}, {Run: Run{Rep: 1}, Error: "gab: read\r\n failed \x07\n"}}}
	if err := WriteRunErrors(&b, []*PointResult{ok, bad}); err != nil {
		t.Fatal(err)
	}
	want := "\nRuns that ended with an error:\n  x\\x1b[2J size=1k c=4 repetition 2: gab: read failed \\x07\n"
	if got := b.String(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
