package main

import (
	"io"
	"strings"
	"testing"

	"gab/internal/abprint"
)

// TestSweepFirstRoundAndLiveLine: gab sweep prints each point's line as its
// first round ends, not only after the last, and on a terminal draws a live
// line for the run under way (its place in the plan and its progress), which
// every printed line erases first. Runs of 4 requests that each wait 50 ms
// outlast the line's 100 ms redraw.
func TestSweepFirstRoundAndLiveLine(t *testing.T) {
	terminalWidth = func(io.Writer) (bool, int) { return true, 200 }
	t.Cleanup(func() { terminalWidth = abprint.TerminalWidth })
	url := extServer(t)
	status, _, stderr := runGab(t, "gab", "sweep", "-n", "4", "-c", "1,2", "--repeat", "2", "ext="+url+"/slow")
	if status != 0 {
		t.Fatalf("status %d\n%q", status, stderr)
	}
	if !strings.Contains(stderr, "\r\x1b[K[1/4] ext c=1 rep=1: ") || !strings.Contains(stderr, " done | ") {
		t.Fatalf("no live line for the first run:\n%q", stderr)
	}
	// What stays on the screen of each line: the text after its last erase.
	var shown []string
	for line := range strings.Lines(stderr) {
		if i := strings.LastIndex(line, "\r\x1b[K"); i >= 0 {
			line = line[i+len("\r\x1b[K"):]
		}
		if line = strings.TrimSuffix(line, "\n"); line != "" {
			shown = append(shown, line)
		}
	}
	want := []string{"[1/4] round 1 of 2: ext size=- c=1: ", "[2/4] round 1 of 2: ext size=- c=2: ", "[3/4] ext size=- c=1: ", "[4/4] ext size=- c=2: "}
	var got []string
	for _, l := range shown {
		if strings.HasPrefix(l, "[") {
			got = append(got, l)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("lines %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("line %d: %q, want it to start %q", i+1, got[i], w)
		}
	}
	if strings.HasSuffix(stderr, "\r\x1b[K") || strings.Contains(stderr[strings.LastIndex(stderr, "\n"):], " done | ") {
		t.Errorf("the live line is left on the screen:\n%q", stderr)
	}
}
