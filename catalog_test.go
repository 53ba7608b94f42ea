package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gab/report"
)

// TestCatalogEntryReachesEveryOutput adds a figure to a copy of the catalog
// (the mean response body, from what a run already records) and finds it in
// every output that lists figures: --extended's block, the JSON document's
// figures, the HTML report (a run's figures, gab plot's comparison),
// --fail-if, gab merge's text and document, gab compare, and gab sweep's CSV
// and JSON. A new figure is this one entry.
func TestCatalogEntryReachesEveryOutput(t *testing.T) {
	saved := report.Catalog
	t.Cleanup(func() { report.Catalog = saved })
	report.Catalog = append(slices.Clip(saved), report.Figure{
		Key: "mean_body_bytes", Title: "Mean response body", Unit: "bytes", CSV: "mean_body_bytes", Decimals: 1,
		Of: func(d *report.Run) (float64, bool) {
			if d.Report.CompleteRequests == 0 {
				return 0, false
			}
			return float64(d.Report.HTMLTransferredBytes) / float64(d.Report.CompleteRequests), true
		},
	})
	url, _ := startDocServer(t) // 100-byte bodies
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	read := func(name string) string {
		b, err := os.ReadFile(file(name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	check := func(output, text string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s lacks %q:\n%s", output, w, text)
			}
		}
	}
	figure := func(output, doc string) float64 {
		t.Helper()
		var d struct {
			Figures map[string]float64 `json:"figures"`
		}
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatalf("%s: %v", output, err)
		}
		return d.Figures["mean_body_bytes"]
	}
	mustRun := func(argv ...string) string {
		t.Helper()
		status, stdout, stderr := runGab(t, argv...)
		if status != exitOK {
			t.Fatalf("%v: status %d\n%s%s", argv, status, stdout, stderr)
		}
		return stdout
	}

	// A run: --extended, --json, --html, --fail-if.
	stdout := mustRun("gab", "-n", "20", "-c", "2", "--extended", "--json", file("a.json"), "--html", file("a.html"),
		"--fail-if", "mean_body_bytes=100", url+"/")
	check("--extended", stdout, "  mean_body_bytes:                     100.0 [bytes]       Mean response body\n",
		"--fail-if mean_body_bytes=100: passed (mean_body_bytes = 100.0 bytes)")
	if v := figure("--json", read("a.json")); v != 100 {
		t.Errorf("--json: figures.mean_body_bytes = %v", v)
	}
	check("--html", read("a.html"), "<td>Mean response body [bytes]</td><td>100.0</td><td>mean_body_bytes</td>")
	mustRun("gab", "-n", "10", "--json", file("b.json"), url+"/")

	// gab plot's comparison of several runs, gab compare.
	mustRun("gab", "plot", "-o", file("ab.html"), file("a.json"), file("b.json"))
	check("gab plot's comparison", read("ab.html"), "<th>Mean response body [bytes]</th>")
	check("gab compare", mustRun("gab", "compare", file("a.json"), file("b.json")),
		"\nMean response body [bytes]                      100            100    +0.0 %\n")

	// gab merge of two shards.
	for i, name := range []string{"s0.json", "s1.json"} {
		mustRun("gab", "-n", "10", "-c", "2", "--shard", []string{"0/2", "1/2"}[i], "--run-id", "r", "--json", file(name), url+"/")
	}
	check("gab merge", mustRun("gab", "merge", file("s0.json"), file("s1.json")), "  mean_body_bytes:                     100.0 [bytes]")
	if v := figure("gab merge --format json", mustRun("gab", "merge", "--format", "json", file("s0.json"), file("s1.json"))); v != 100 {
		t.Errorf("gab merge --format json: figures.mean_body_bytes = %v", v)
	}

	// gab sweep's CSV and JSON.
	mustRun("gab", "sweep", "-n", "10", "--repeat", "2", "--pause", "0", "--csv", file("s.csv"), "--json", file("s.json"), url+"/")
	rows, col := readCSV(t, file("s.csv"))
	if i, ok := col["mean_body_bytes"]; !ok || i != len(rows[0])-1 || len(rows) != 2 || rows[1][i] != "100.0" {
		t.Errorf("sweep --csv: %v", rows)
	}
	var sw struct {
		Points []struct {
			Figures map[string]float64 `json:"figures"`
		} `json:"points"`
	}
	if err := json.Unmarshal([]byte(read("s.json")), &sw); err != nil || len(sw.Points) != 1 || sw.Points[0].Figures["mean_body_bytes"] != 100 {
		t.Errorf("sweep --json: %+v %v", sw, err)
	}
}
