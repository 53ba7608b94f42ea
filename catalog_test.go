package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gab/report"
)

// TestCatalogEntryReachesEveryOutput adds a figure to a copy of the catalog
// (the mean response body, from what a run already records, present only
// where the run gathered the extended measurements, as a figure of the
// phases would be) and finds it in every output that lists figures:
// --extended's block, the JSON document's figures, the HTML report (a run's
// figures, gab plot's comparison), --fail-if (without --extended: the entry's
// Needs turns the measurements on), gab merge's text and document, gab
// compare, and gab sweep's CSV and JSON. A new figure is this one entry.
func TestCatalogEntryReachesEveryOutput(t *testing.T) {
	saved := report.Catalog
	t.Cleanup(func() { report.Catalog = saved })
	report.Catalog = append(slices.Clip(saved), report.Figure{
		Key: "mean_body_bytes", Title: "Mean response body", Unit: "bytes", CSV: "mean_body_bytes", Decimals: 1,
		Pool: report.Pooled, Needs: report.NeedsExtended,
		Of: func(d *report.Run) (float64, bool) {
			if d.Extended == nil || d.Report.CompleteRequests == 0 {
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

	// A run: --extended, --json, --html, --fail-if; and --fail-if alone.
	stdout := mustRun("gab", "-n", "20", "-c", "2", "--extended", "--json", file("a.json"), "--html", file("a.html"),
		"--fail-if", "mean_body_bytes=100", url+"/")
	check("--extended", stdout, "  mean_body_bytes:                     100.0 [bytes]       Mean response body\n",
		"--fail-if mean_body_bytes=100: passed (mean_body_bytes = 100.0 bytes)")
	check("--fail-if without --extended", mustRun("gab", "-n", "20", "-c", "2", "--fail-if", "mean_body_bytes=100", url+"/"),
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

// TestOneValuePerFigure: a run's latency figures are one number wherever
// they appear: the --fail-if verdict (its line and the JSON check's value),
// the JSON document's figures, the HTML report's tables (the figures table
// and the percentile table) and gab compare, within the exact sample store
// and past it (--sample-limit). The server answers in 2 to 13 ms, where an
// HDR histogram's buckets (3 significant digits) are 2 to 8 µs wide, so a
// figure read from the exact samples and one read from a histogram differ.
func TestOneValuePerFigure(t *testing.T) {
	url := pacedServer(t, func(i int64) time.Duration {
		return time.Duration(2000+(i*7919)%11000) * time.Microsecond
	})
	keys := []struct{ key, row string }{{"p50", "50%"}, {"p90", "90%"}, {"p99", "99%"}, {"p99.9", "99.9%"}, {"mean", ""}, {"max", ""}}
	for _, limit := range []string{"", "40"} {
		dir := t.TempDir()
		jsonFile, htmlFile := filepath.Join(dir, "a.json"), filepath.Join(dir, "a.html")
		argv := []string{"gab", "-n", "120", "-c", "8", "--json", jsonFile, "--html", htmlFile}
		if limit != "" {
			argv = append(argv, "--sample-limit", limit)
		}
		for _, k := range keys {
			argv = append(argv, "--fail-if", k.key+"<10s")
		}
		status, stdout, stderr := runGab(t, append(argv, url)...)
		if status != exitOK {
			t.Fatalf("%v: status %d\n%s%s", argv, status, stdout, stderr)
		}
		raw, err := os.ReadFile(jsonFile)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Figures    map[string]float64 `json:"figures"`
			Thresholds struct {
				Checks []struct {
					Metric string   `json:"metric"`
					Value  *float64 `json:"value"`
				} `json:"checks"`
			} `json:"thresholds"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		html, err := os.ReadFile(htmlFile)
		if err != nil {
			t.Fatal(err)
		}
		var cmp struct {
			Groups []struct {
				Rows []struct {
					Figure string  `json:"figure"`
					A      float64 `json:"a"`
				} `json:"rows"`
			} `json:"groups"`
		}
		if err := json.Unmarshal([]byte(mustGab(t, "gab", "compare", "--format", "json", jsonFile, jsonFile)), &cmp); err != nil || len(cmp.Groups) != 1 {
			t.Fatalf("gab compare --format json: %v %+v", err, cmp)
		}
		compared := map[string]float64{}
		for _, r := range cmp.Groups[0].Rows {
			compared[r.Figure] = r.A
		}
		for i, k := range keys {
			fig, ok := doc.Figures[k.key]
			if !ok {
				t.Fatalf("limit %q: no figure %s in %v", limit, k.key, doc.Figures)
			}
			want := strconv.FormatFloat(fig, 'f', 3, 64) // ms, as every output prints it
			if c := doc.Thresholds.Checks[i]; c.Metric != k.key || c.Value == nil || math.Abs(*c.Value-fig*1000) > 1e-6 {
				t.Errorf("limit %q: --fail-if %s's JSON check %+v, the figure %v ms", limit, k.key, c, fig)
			}
			line := fmt.Sprintf("--fail-if %s<10s: passed (%s = %s ms)", k.key, k.key, want)
			if !strings.Contains(stdout, line) {
				t.Errorf("limit %q: no %q in\n%s", limit, line, stdout)
			}
			label := k.key
			if k.key == "mean" {
				label = "Mean"
			}
			if cell := fmt.Sprintf("<td>%s [ms]</td><td>%s</td>", label, want); !strings.Contains(string(html), cell) {
				t.Errorf("limit %q: the HTML figures table lacks %s", limit, cell)
			}
			if k.row != "" {
				if cell := fmt.Sprintf("<td>%s</td><td>%s</td>", k.row, want); !strings.Contains(string(html), cell) {
					t.Errorf("limit %q: the HTML percentile table lacks %s", limit, cell)
				}
			}
			if v, ok := compared[label]; !ok || v != fig {
				t.Errorf("limit %q: gab compare's %s is %v (%v), the figure %v", limit, label, v, ok, fig)
			}
		}
	}
}

// mustGab runs gab and returns its stdout; any status but 0 fails the test.
func mustGab(t *testing.T, argv ...string) string {
	t.Helper()
	status, stdout, stderr := runGab(t, argv...)
	if status != exitOK {
		t.Fatalf("%v: status %d\n%s%s", argv, status, stdout, stderr)
	}
	return stdout
}
