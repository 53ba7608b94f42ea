package sweep

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
)

// TestFlagCodes: a point's verdicts become codes in one order whatever the
// runs' order, each once; a kind without a code (a document of another
// gab) is shown by its printable name.
func TestFlagCodes(t *testing.T) {
	for _, c := range []struct {
		kinds []string
		want  string
	}{
		{nil, ""},
		{[]string{"busy_machine", "client_bound"}, "CB"},
		{[]string{"wide_interval", "too_few", "too_short", "kernel_drops", "busy_machine", "client_bound"}, "CBDSFW"},
		{[]string{"client_bound", "client_bound"}, "C"},
		{[]string{"shared\x1bcore", "kernel_drops"}, `D shared\x1bcore`},
	} {
		if got := FlagCodes(c.kinds); got != c.want {
			t.Errorf("FlagCodes(%q) = %q, want %q", c.kinds, got, c.want)
		}
	}
	if got := FlagLegend([][]string{{"kernel_drops"}, nil, {"client_bound", "kernel_drops"}}); got != "C client-bound, D kernel drops" {
		t.Errorf("legend %q", got)
	}
	seen := map[string]bool{}
	for _, f := range Flags {
		if len(f.Code) != 1 || seen[f.Code] {
			t.Errorf("flag %+v: a code is one letter of its own", f)
		}
		seen[f.Code] = true
	}
}

// TestTableAndCSVCarryFlags: the table has a flags column with a legend
// line naming the codes it uses, and the CSV the codes and the kinds.
func TestTableAndCSVCarryFlags(t *testing.T) {
	s, runs := testSweep()
	points := Aggregate(s, runs)
	points[0].Verdicts = []string{"busy_machine", "client_bound"}
	var buf bytes.Buffer
	if err := WriteTable(&buf, s, points, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	// Columns: label size c runs req/s ±95% sd cv% (the unstable mark,
	// without a header) flags lat ms: point a is unstable (cv 6.7 %).
	head, a, b := strings.Fields(lines[0]), strings.Fields(lines[1]), strings.Fields(lines[2])
	if len(a) < 10 || len(b) < 9 || head[8] != "flags" || a[8] != "!" || a[9] != "CB" || b[8] != "0.600" {
		t.Errorf("want a flags column with CB for a only:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "\nflags: the points' verdicts (each found by a run or more; stderr and --json have the evidence): C client-bound, B busy machine.\n") {
		t.Errorf("no legend line:\n%s", buf.String())
	}
	buf.Reset()
	if err := WriteCSV(&buf, points); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if a, b := rows[1], rows[2]; a[col["flags"]] != "CB" || a[col["verdicts"]] != "busy_machine client_bound" || b[col["flags"]] != "" || b[col["verdicts"]] != "" {
		t.Errorf("CSV rows %q %q", a, b)
	}
	// Without a flag, no legend.
	points[0].Verdicts = nil
	buf.Reset()
	WriteTable(&buf, s, points, true)
	if strings.Contains(buf.String(), "flags:") {
		t.Errorf("a legend without flags:\n%s", buf.String())
	}
}
