package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gab/internal/chart"
	"gab/internal/headless"
	"gab/internal/sweep"
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
	wantInFile(t, img+".gp", "using 1:2:('C') with labels", "title 'flag C: client-bound'")
	dat, _ := os.ReadFile(img + ".dat")
	_, block, _ := strings.Cut(string(dat), "— flag C: client-bound")
	block, _, _ = strings.Cut(block, "\n\n\n")
	if !strings.Contains(block, "\n1\t") || !strings.Contains(block, "\n2\t") {
		t.Errorf("the flag's data block lacks a point: %q", block)
	}
	wantInFile(t, img, ">C<", "flag C: client-bound")
	// The HTML report: the points table's flags and legend, the charts'
	// rings and legend.
	wantInFile(t, page, "<th>flags</th>", "C client-bound", `<g class="flag" data-mark="C"`, ">flag C: client-bound</text>")
	b, _ := os.ReadFile(page)
	if n := strings.Count(string(b), `<g class="flag" data-mark="C"`); n != 2 { // requests per second, latency
		t.Errorf("%d charts mark C, want 2", n)
	}
}

// TestSweepHTMLComparisons: the sweep's HTML report has the ratios to
// --baseline and the change from the first concurrency to the last, as the
// table text has them, and the points' flags with their legend.
func TestSweepHTMLComparisons(t *testing.T) {
	d := &sweep.Document{Settings: sweep.DocSettings{Targets: []sweep.DocTarget{{Label: "nginx"}, {Label: "caddy"}}, Concurrency: []int{1, 8},
		Repeat: 3, Deviation: sweep.DeviationPooled, Baseline: "nginx"},
		Points: []sweep.DocPoint{
			{Label: "nginx", Concurrency: 1, Verdicts: []string{"client_bound", "busy_machine"}},
			{Label: "caddy", Concurrency: 1, Verdicts: []string{"kernel_drops"}},
			{Label: "nginx", Concurrency: 8}, {Label: "caddy", Concurrency: 8},
		},
		BaselineRatios: []sweep.DocComparison{{Label: "caddy", Concurrency: 8, BaseLabel: "nginx", BaseConc: 8,
			Throughput: &sweep.DocRatio{Ratio: 0.54, Lo: 0.31, Hi: 0.93}, P99: &sweep.DocRatio{Ratio: 2, Lo: 2, Hi: 2}}},
		Changes: []sweep.DocComparison{{Label: "nginx", Concurrency: 8, BaseLabel: "nginx", BaseConc: 1,
			Throughput: &sweep.DocRatio{Ratio: 3.5, Lo: 3.1, Hi: 3.9}}},
	}
	page := filepath.Join(t.TempDir(), "s.html")
	if err := writeSweepHTML(page, d); err != nil {
		t.Fatal(err)
	}
	wantInFile(t, page,
		"<h2>Ratios to nginx (--baseline) at the same point</h2>",
		"<tr><td>caddy</td><td></td><td>c=8</td><td>0.540 [0.310, 0.930]</td><td></td><td></td><td>2.000</td></tr>",
		"<h2>Change of each target from c=1 to c=8 (ratio last/first)</h2>",
		"<tr><td>nginx</td><td></td><td>c=1 → c=8</td><td>3.500 [3.100, 3.900]</td>",
		"<th>flags</th>", "<td>CB</td>", "<td>D</td>",
		"Flags: the points&#39; verdicts (each found by a run or more; the JSON has the evidence, the charts ring the points): C client-bound, B busy machine, D kernel drops.",
		`<g class="flag" data-mark="D"`)
}

// TestSweepHTMLFits1400: the sweep report's widest points table (a
// --param, sizes, server and host CPU, every flag, an unstable cv) fits a
// 1400 px window in Chromium: no table reaches past its right edge and the
// page does not scroll sideways.
func TestSweepHTMLFits1400(t *testing.T) {
	bin := testtool.Need(t, "chromium", "chromium")
	one := func(v float64) *float64 { return &v }
	d := &sweep.Document{CommandLine: []string{"gab", "sweep"}, Settings: sweep.DocSettings{
		Targets: []sweep.DocTarget{{Label: "lighttpd"}, {Label: "nginx"}}, Concurrency: []int{16, 256},
		SizeOption: "--sizes", Sizes: []sweep.DocSize{{Text: "64k", Bytes: 65536}, {Text: "1m", Bytes: 1 << 20}},
		Param: &sweep.DocParam{Name: "workers", Values: []string{"16"}}, Repeat: 10, Deviation: sweep.DeviationPooled}}
	for _, label := range []string{"lighttpd", "nginx"} {
		for _, c := range []int{16, 256} {
			d.Points = append(d.Points, sweep.DocPoint{Label: label, Size: &sweep.DocSize{Text: "64k", Bytes: 65536}, ParamValue: "16", Concurrency: c,
				Repeats: 10, Planned: 10, RPS: sweep.DocRPS{MeanPerS: 123456.78, CI95PerS: 12345.67, CV: 0.1234, Unstable: true},
				Latency:  sweep.DocLatency{Count: 1e6, MeanMs: 1234.567, DeviationMs: 1234.567, MinMs: 1234.567, P50Ms: 1234.567, P99Ms: 12345.678},
				MbitPerS: 12345.67, RequestsFailed: 1234567, ClientCPUUsPerReq: one(1234.5), ServerCPUUsPerReq: one(1234.5),
				HostCPU: &sweep.DocHostCPU{BusyUsPerReq: 1234.5}, Verdicts: []string{"client_bound", "busy_machine", "kernel_drops", "too_short", "too_few", "wide_interval"}})
		}
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "s.html")
	if err := writeSweepHTML(page, d); err != nil {
		t.Fatal(err)
	}
	rep, err := headless.OpenWith(t.Context(), bin, filepath.Join(dir, "profile"), "file://"+page, headless.Options{Width: 1400, Height: 900,
		Eval: `(function () {
  var widest = 0;
  document.querySelectorAll("table").forEach(function (t) { widest = Math.max(widest, Math.ceil(t.getBoundingClientRect().right)); });
  return "tables end at " + widest + ", page " + document.documentElement.scrollWidth + " wide in " + innerWidth;
})()`})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Eval)
	var widest, page2, inner int
	if _, err := fmt.Sscanf(rep.Eval, "tables end at %d, page %d wide in %d", &widest, &page2, &inner); err != nil || inner != 1400 || widest > inner || page2 > inner {
		t.Errorf("%s (%v): the points table does not fit", rep.Eval, err)
	}
}

// TestEverySweepPanelMarksFlags: every panel of a sweep's figure (the bars
// per target, against concurrency, size and --param, and the single
// point's) rings the flagged point where it draws it, a line per verdict
// in the table's order of codes.
func TestEverySweepPanelMarksFlags(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	point := func(label, size string, bytes int64, param string, c int, verdicts ...string) sweep.DocPoint {
		return sweep.DocPoint{Label: label, Size: &sweep.DocSize{Text: size, Bytes: bytes}, ParamValue: param, Concurrency: c,
			RPS: sweep.DocRPS{MeanPerS: 100}, Latency: sweep.DocLatency{Count: 10, P50Ms: 1, DeviationMs: 0.5, MinMs: 0.5},
			MbitPerS: 1, ClientCPUUsPerReq: v(10), ServerCPUUsPerReq: v(20), HostCPU: &sweep.DocHostCPU{BusyUsPerReq: 30}, Verdicts: verdicts}
	}
	d := &sweep.Document{Settings: sweep.DocSettings{Targets: []sweep.DocTarget{{Label: "a"}, {Label: "b"}}, Concurrency: []int{1, 2},
		SizeOption: "--sizes", Sizes: []sweep.DocSize{{Text: "1", Bytes: 1}, {Text: "1k", Bytes: 1024}},
		Param: &sweep.DocParam{Name: "w", Values: []string{"1", "2"}}, Repeat: 1}}
	for _, label := range []string{"a", "b"} {
		for _, sz := range d.Settings.Sizes {
			for _, q := range []string{"1", "2"} {
				for _, c := range []int{1, 2} {
					var ks []string
					if label == "b" && sz.Text == "1k" && q == "2" && c == 2 {
						ks = []string{"wide_interval", "client_bound"}
					}
					d.Points = append(d.Points, point(label, sz.Text, sz.Bytes, q, c, ks...))
				}
			}
		}
	}
	fig := sweepFigure(d)
	single := &sweep.Document{Settings: sweep.DocSettings{Targets: []sweep.DocTarget{{Label: "a"}}, Concurrency: []int{1}, Repeat: 1},
		Points: []sweep.DocPoint{point("a", "1", 1, "", 1, "kernel_drops")}}
	one := sweepFigure(single)
	panels := append(fig.Panels, one.Panels...)
	if len(panels) < 10 {
		t.Fatalf("%d panels", len(panels))
	}
	for _, p := range panels {
		var marks []string
		for _, l := range p.Lines {
			if l.Style == chart.Flagged {
				marks = append(marks, fmt.Sprintf("%s@%d:%d", l.Mark, l.MarkSlot, len(l.Rows)))
			}
		}
		want := "C@0:1 W@1:1" // the flagged point alone, C first
		switch {
		case p.Title == one.Panels[0].Title:
			want = "D@0:1"
		case strings.Contains(p.Title, " per target at ") && !strings.Contains(p.Title, " at size 1k at w=2 "):
			want = "" // the bars of another size and w
		}
		if got := strings.Join(marks, " "); got != want {
			t.Errorf("panel %q: flags %q, want %q", p.Title, got, want)
		}
	}
}
