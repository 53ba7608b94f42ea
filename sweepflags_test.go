package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gab/internal/testtool"
)

// TestSweepDemoVerdictsReachEveryOutput: the built-in server runs inside
// gab, so every point of gab sweep --demo is client-bound, and that verdict
// is in what a researcher publishes: the table's flags column and its
// legend, the CSV, the gnuplot chart (a ring and the code at each point,
// the legend naming it) and the HTML report's table and charts.
func TestSweepDemoVerdictsReachEveryOutput(t *testing.T) {
	testtool.Need(t, "gnuplot", "gnuplot-nox")
	dir := t.TempDir()
	csvFile, img, page := filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.svg"), filepath.Join(dir, "s.html")
	status, stdout, stderr := runArgs(t, t.Context(), "ab", "sweep", "--demo", "-q", "-n", "20", "-c", "1,2",
		"--csv", csvFile, "--plot", img, "--html", page)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	// The table: a flags column, each point's codes with C, the legend.
	lines := strings.Split(stdout, "\n")
	head := strings.Fields(lines[0])
	col := -1
	for i, h := range head {
		if h == "flags" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no flags column:\n%s", stdout)
	}
	for _, l := range lines[1:3] {
		// One run per point: no cv, no unstable mark; the fields line up
		// with the header.
		if f := strings.Fields(l); len(f) <= col || f[0] != "demo" || !strings.HasPrefix(f[col], "C") {
			t.Errorf("row %q: flags not C...", l)
		}
	}
	if !strings.Contains(stdout, "\nflags: the points' verdicts (each found by a run or more; stderr and --json have the evidence): C client-bound") {
		t.Errorf("no legend naming C:\n%s", stdout)
	}
	// The CSV.
	rows, c := readCSV(t, csvFile)
	for _, r := range rows[1:] {
		if !strings.HasPrefix(r[c["flags"]], "C") || !strings.Contains(" "+r[c["verdicts"]]+" ", " client_bound ") {
			t.Errorf("CSV row: flags %q verdicts %q", r[c["flags"]], r[c["verdicts"]])
		}
	}
	// The gnuplot chart: its script, its data (both points in the block)
	// and the image gnuplot drew.
	testtool.WantInFile(t, img+".gp", "using 1:2:('C') with labels", "title 'flag C: client-bound'")
	dat, _ := os.ReadFile(img + ".dat")
	_, block, _ := strings.Cut(string(dat), "— flag C: client-bound")
	block, _, _ = strings.Cut(block, "\n\n\n")
	if !strings.Contains(block, "\n1\t") || !strings.Contains(block, "\n2\t") {
		t.Errorf("the flag's data block lacks a point: %q", block)
	}
	testtool.WantInFile(t, img, ">C<", "flag C: client-bound")
	// The HTML report: the points table's flags and legend, the charts'
	// rings and legend.
	testtool.WantInFile(t, page, "<th>flags</th>", "C client-bound", `<g class="flag" data-mark="C"`, ">flag C: client-bound</text>")
	b, _ := os.ReadFile(page)
	if n := strings.Count(string(b), `<g class="flag" data-mark="C"`); n != 2 { // requests per second, latency
		t.Errorf("%d charts mark C, want 2", n)
	}
}
