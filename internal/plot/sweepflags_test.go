package plot

import (
	"fmt"
	"gab/report"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gab/internal/chart"
	"gab/internal/headless"
	"gab/internal/sweep"
	"gab/internal/testtool"
)

// TestSweepHTMLComparisons: the sweep's HTML report has the ratios to
// --baseline and the change from the first concurrency to the last, as the
// table text has them, and the points' flags with their legend.
func TestSweepHTMLComparisons(t *testing.T) {
	d := &report.SweepDocument{Settings: report.SweepSettings{Targets: []report.SweepTarget{{Label: "nginx"}, {Label: "caddy"}}, Concurrency: []int{1, 8},
		Repeat: 3, Deviation: sweep.DeviationPooled, Baseline: "nginx"},
		Points: []report.SweepPoint{
			{Label: "nginx", Concurrency: 1, Verdicts: []string{"client_bound", "busy_machine"}},
			{Label: "caddy", Concurrency: 1, Verdicts: []string{"kernel_drops"}},
			{Label: "nginx", Concurrency: 8}, {Label: "caddy", Concurrency: 8},
		},
		BaselineRatios: []report.SweepComparison{{Label: "caddy", Concurrency: 8, BaseLabel: "nginx", BaseConc: 8,
			Throughput: &report.SweepRatio{Ratio: 0.54, Lo: 0.31, Hi: 0.93}, P99: &report.SweepRatio{Ratio: 2, Lo: 2, Hi: 2}}},
		Changes: []report.SweepComparison{{Label: "nginx", Concurrency: 8, BaseLabel: "nginx", BaseConc: 1,
			Throughput: &report.SweepRatio{Ratio: 3.5, Lo: 3.1, Hi: 3.9}}},
		Rankings: []report.SweepRanking{
			{Concurrency: 1, ByThroughput: []report.SweepRankedPoint{{Rank: 1, Label: "nginx"}, {Rank: 2, Label: "caddy"}},
				ByDeviation: []report.SweepRankedPoint{{Rank: 1, Label: "caddy"}, {Rank: 2, Label: "nginx"}}},
			{Concurrency: 8, ByThroughput: []report.SweepRankedPoint{{Rank: 1, Label: "caddy"}, {Rank: 2, Label: "nginx"}},
				ByDeviation: []report.SweepRankedPoint{{Rank: 1, Label: "caddy"}, {Rank: 2, Label: "nginx"}}}},
	}
	page := filepath.Join(t.TempDir(), "s.html")
	if err := writeSweepHTML(page, d); err != nil {
		t.Fatal(err)
	}
	testtool.WantInFile(t, page,
		"<h2>Ratios to nginx (--baseline) at the same point</h2>",
		"<tr><td>caddy</td><td></td><td>c=8</td><td>0.540 [0.310, 0.930]</td><td></td><td></td><td>2.000</td></tr>",
		"<h2>Change of each target from c=1 to c=8 (ratio last/first)</h2>",
		"<tr><td>nginx</td><td></td><td>c=1 → c=8</td><td>3.500 [3.100, 3.900]</td>",
		"<th>flags</th>", "<td>CB</td>", "<td>D</td>",
		"Flags: the points&#39; verdicts (each found by a run or more; the JSON has the evidence, the charts ring the points): C client-bound, B busy machine, D kernel drops.",
		`<g class="flag" data-mark="D"`,
		// The ranking of flagged points says it cannot be trusted; the
		// ranking of unflagged ones does not.
		"Not trustworthy here: nginx CB, caddy D carry flags of a disturbed measure; a rank or tie there may not hold on a quiet machine.")
	if b, err := os.ReadFile(page); err != nil || strings.Count(string(b), "Not trustworthy") != 1 {
		t.Errorf("want one ranking said not trustworthy (%v)", err)
	}
}

// TestSweepHTMLFits1400: the sweep report's widest points table (a
// --param, --post-sizes (received and sent), client, server and host CPU,
// errored runs, every flag, an unstable cv) fits a
// 1400 px window in Chromium: no table reaches past its right edge and the
// page does not scroll sideways.
func TestSweepHTMLFits1400(t *testing.T) {
	bin := testtool.Need(t, "chromium", "chromium")
	one := func(v float64) *float64 { return &v }
	d := &report.SweepDocument{CommandLine: []string{"gab", "sweep"}, Settings: report.SweepSettings{
		Targets: []report.SweepTarget{{Label: "lighttpd"}, {Label: "nginx"}}, Concurrency: []int{16, 256},
		SizeOption: "--post-sizes", Sizes: []report.SweepSize{{Text: "64k", Bytes: 65536}, {Text: "1m", Bytes: 1 << 20}},
		Param: &report.SweepParam{Name: "workers", Values: []string{"16"}}, Repeat: 10, Deviation: sweep.DeviationPooled}}
	for _, label := range []string{"lighttpd", "nginx"} {
		for _, c := range []int{16, 256} {
			d.Points = append(d.Points, report.SweepPoint{Label: label, Size: &report.SweepSize{Text: "64k", Bytes: 65536}, ParamValue: "16", Concurrency: c,
				Repeats: 10, Planned: 10, RPS: report.FixedFields{"mean_per_s": 123456.78, "ci95_half_width_per_s": 12345.67, "cv": 0.1234, "cv_above_max": true},
				Latency:  report.FixedFields{"count": 1e6, "mean_ms": 1234.567, "deviation_ms": 1234.567, "min_ms": 1234.567, "p50_ms": 1234.567, "p99_ms": 12345.678},
				MbitPerS: 12345.67, SentMbitPerS: 12345.67, RequestsFailed: 1234567, RunsWithError: 10,
				ClientCPUUsPerReq: one(1234.5), ClientCPUPercent: one(123.4), ServerCPUUsPerReq: one(1234.5), ServerCPUPercent: one(1234.5),
				HostCPU: report.FixedFields{"busy_us_per_request": 1234.5}, Verdicts: []string{"client_bound", "busy_machine", "kernel_drops", "too_short", "too_few", "wide_interval"}})
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
	point := func(label, size string, bytes int64, param string, c int, verdicts ...string) report.SweepPoint {
		return report.SweepPoint{Label: label, Size: &report.SweepSize{Text: size, Bytes: bytes}, ParamValue: param, Concurrency: c,
			RPS: report.FixedFields{"mean_per_s": 100.0}, Latency: report.FixedFields{"count": 10, "p50_ms": 1.0, "deviation_ms": 0.5, "min_ms": 0.5},
			MbitPerS: 1, ClientCPUUsPerReq: v(10), ServerCPUUsPerReq: v(20), HostCPU: report.FixedFields{"busy_us_per_request": 30.0}, Verdicts: verdicts}
	}
	d := &report.SweepDocument{Settings: report.SweepSettings{Targets: []report.SweepTarget{{Label: "a"}, {Label: "b"}}, Concurrency: []int{1, 2},
		SizeOption: "--sizes", Sizes: []report.SweepSize{{Text: "1", Bytes: 1}, {Text: "1k", Bytes: 1024}},
		Param: &report.SweepParam{Name: "w", Values: []string{"1", "2"}}, Repeat: 1}}
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
	fig := SweepFigure(d)
	single := &report.SweepDocument{Settings: report.SweepSettings{Targets: []report.SweepTarget{{Label: "a"}}, Concurrency: []int{1}, Repeat: 1},
		Points: []report.SweepPoint{point("a", "1", 1, "", 1, "kernel_drops")}}
	one := SweepFigure(single)
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
