package plot

import (
	"bytes"
	"fmt"
	"gab/report"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gab/gnuplot"
	"gab/internal/chart"
	"gab/internal/sweep"
)

// studyDocument is a sweep document shaped like the server study: targets
// × sizes × concurrencies, with every figure the charts read.
func studyDocument(targets, sizes []string, conc []int, post bool) *report.SweepDocument {
	d := &report.SweepDocument{CommandLine: []string{"gab", "sweep", "-n", "100", strings.Repeat("--long-option ", 40)}}
	d.Settings.Repeat, d.Settings.Concurrency, d.Settings.Deviation = 3, conc, sweep.DeviationMeanOfRuns
	d.Settings.SizeOption = "--sizes"
	if post {
		d.Settings.SizeOption = "--post-sizes"
	}
	for _, t := range targets {
		d.Settings.Targets = append(d.Settings.Targets, report.SweepTarget{Label: t, URL: "http://127.0.0.1:1/" + t})
	}
	for i, s := range sizes {
		d.Settings.Sizes = append(d.Settings.Sizes, report.SweepSize{Text: s, Bytes: int64(4) << (4 * i)})
	}
	f := func(v float64) *float64 { return &v }
	for ti, t := range targets {
		for si := range sizes {
			for ci, c := range conc {
				v := float64(1000*(ti+1) + 100*si + 10*ci)
				d.Points = append(d.Points, report.SweepPoint{Label: t, Size: &d.Settings.Sizes[si], Concurrency: c, Repeats: 3, Planned: 3,
					RPS: report.FixedFields{"mean_per_s": v, "ci95_half_width_per_s": v / 5},
					Latency: report.FixedFields{"count": 10, "mean_ms": v / 1000, "sd_ms": 1, "p50_ms": v / 1000, "p99_ms": v / 500, "min_ms": v / 2000, "deviation_ms": 1,
						"run_sds_ms": []float64{0.8, 1, 1.3}},
					MbitPerS: v / 10, SentMbitPerS: v / 20, ClientCPUUsPerReq: f(v / 100), ServerCPUUsPerReq: f(v / 50),
					HostCPU: report.FixedFields{"busy_us_per_request": v / 30}})
			}
		}
	}
	return d
}

var (
	gpClause  = regexp.MustCompile(`with (\w+) .*?linecolor rgb '(#[0-9a-f]{6})' dashtype (\S+)(.*)$`)
	svgLegend = regexp.MustCompile(`<(line|circle|rect) ([^>]*)/><text [^>]*>([^<]*)</text>`)
	svgColor  = regexp.MustCompile(`(?:stroke|fill)="(#[0-9a-f]{6})"`)
	svgDash   = regexp.MustCompile(`stroke-dasharray="([^"]*)"`)
)

// checkLooks: within each panel of the gnuplot script and of the SVG
// charts, no two titled data sets share their style, colour and dash (or
// point shape).
func checkLooks(t *testing.T, name string, f *chart.Figure) {
	t.Helper()
	var script bytes.Buffer
	term, err := gnuplot.TerminalFor("x.png")
	if err != nil {
		t.Fatal(err)
	}
	if err := gnuplot.WriteScript(&script, f, term, "x.dat", "x.png"); err != nil {
		t.Fatal(err)
	}
	clauses := 0
	for _, plot := range strings.Split(script.String(), "\nplot ")[1:] {
		plot = plot[:strings.Index(plot+"\n\n", "\n\n")]
		seen := map[string]string{}
		for _, clause := range strings.Split(plot, ", \\\n") {
			m := gpClause.FindStringSubmatch(clause)
			if m == nil {
				t.Errorf("%s: a plot clause without colour and dash: %q", name, clause)
				continue
			}
			clauses++
			title := m[4][strings.Index(m[4], "title")+1:]
			if strings.Contains(m[4], "notitle") {
				continue
			}
			look := m[1] + " " + m[2] + " " + m[3] + " " + regexp.MustCompile(`pointtype \d+`).FindString(clause)
			if prev, dup := seen[look]; dup {
				t.Errorf("%s: gnuplot draws %s and %s alike (%s)", name, prev, title, look)
			}
			seen[look] = title
		}
	}
	if clauses == 0 {
		t.Errorf("%s: no plot clause in\n%s", name, script.String())
	}
	for _, p := range f.Panels {
		var svg bytes.Buffer
		if err := chart.WriteSVG(&svg, &p, 900, 320); err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		legend := svg.String()[strings.LastIndex(svg.String(), "</g>"):] // after the plot's group
		for _, m := range svgLegend.FindAllStringSubmatch(legend, -1) {
			look := m[1] + " " + strings.Join(svgColor.FindAllString(m[2], -1), " ") + " " + svgDash.FindString(m[2])
			if prev, dup := seen[look]; dup {
				t.Errorf("%s, panel %q: the SVG legend shows %q and %q alike (%s)", name, p.Title, prev, m[3], look)
			}
			seen[look] = m[3]
		}
		if n := p.Titled(); len(seen) != n {
			t.Errorf("%s, panel %q: %d distinct legend entries for %d titled data sets", name, p.Title, len(seen), n)
		}
	}
}

// TestChartLooksDistinct: the sweep charts of a server study (5 targets, 3
// sizes, 2 concurrencies: up to 30 data sets in a panel, past the 8
// colours gnuplot cycles through) and a run figure of 8 runs (32 data sets
// in a panel) draw no two data sets of a panel alike, in the gnuplot script
// and the SVG charts.
func TestChartLooksDistinct(t *testing.T) {
	study := studyDocument([]string{"apache", "nginx", "lighttpd", "h2o", "caddy"}, []string{"1k", "16k", "256k"}, []int{1000, 5000}, false)
	checkLooks(t, "server study", SweepFigure(study))
	// Its panels of 10 or 15 series are split into panels of at most 8, and
	// every legend, the bar charts' (two entries) too, is right of its plot.
	var script bytes.Buffer
	term, _ := gnuplot.TerminalFor("x.png")
	if err := gnuplot.WriteScript(&script, SweepFigure(study), term, "x.dat", "x.png"); err != nil {
		t.Fatal(err)
	}
	out := strings.Index(script.String(), "set key outside right top vertical\n")
	if first := strings.Index(script.String(), "\nplot "); out < 0 || out > first || strings.Contains(script.String(), "set key inside") {
		t.Errorf("a legend stays inside its plot:\n%s", script.String())
	}
	// and so do the SVG charts', in a column right of the frame.
	for _, p := range SweepFigure(study).Panels {
		if p.Titled() <= 8 {
			continue
		}
		var svg bytes.Buffer
		if err := chart.WriteSVG(&svg, &p, 900, 320); err != nil {
			t.Fatal(err)
		}
		frame := regexp.MustCompile(`<rect x="64" y="30" width="([0-9.]+)"`).FindStringSubmatch(svg.String())
		label := regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9.]+">` + regexp.QuoteMeta(p.Lines[0].Title) + `</text>`).FindStringSubmatch(svg.String())
		if frame == nil || label == nil {
			t.Fatalf("panel %q: no frame or legend entry", p.Title)
		}
		w, _ := strconv.ParseFloat(frame[1], 64)
		lx, _ := strconv.ParseFloat(label[1], 64)
		if lx < 64+w {
			t.Errorf("panel %q: legend at x %v inside the frame (right edge %v)", p.Title, lx, 64+w)
		}
	}
	var runs []*chart.Data
	for i := range 8 {
		runs = append(runs, &chart.Data{Label: fmt.Sprintf("run%d", i), ElapsedS: 2,
			Curve:     []chart.CurvePoint{{Percent: 50, Us: 100}, {Percent: 100, Us: 900}},
			PerSecond: []int64{100, 100},
			Intervals: []chart.Interval{{StartS: 0, LengthS: 1, Requests: 100, P50Us: 100, P99Us: 500, MaxUs: 900}, {StartS: 1, LengthS: 1, Requests: 90, P50Us: 120, P99Us: 600, MaxUs: 950}}})
	}
	checkLooks(t, "8 runs", chart.RunFigure("runs", runs))
}

// TestSweepStudyFigures: the sweep charts are the studies' figure types,
// chosen from what the sweep varied: per size the targets side by side as
// bars (req/s with whiskers, deviation), bandwidth against size in the
// direction that grows (sent for --post-sizes), min and p50 latency and CPU
// per request against size; whiskers stop at zero; the title fits.
func TestSweepStudyFigures(t *testing.T) {
	d := studyDocument([]string{"a", "b", "c"}, []string{"4", "64", "1k"}, []int{10, 50}, true)
	d.Points[0].RPS["ci95_half_width_per_s"] = 5 * d.Points[0].RPS["mean_per_s"].(float64) // a whisker that would run below zero
	f := SweepFigure(d)
	if len(f.Title) > 120 || strings.Contains(f.Title, "--long-option") {
		t.Errorf("title %q", f.Title)
	}
	titles := map[string]*chart.Panel{}
	for i := range f.Panels {
		titles[f.Panels[i].Title] = &f.Panels[i]
	}
	want := []string{
		"Requests per second per target at size 4 (mean of 3 runs; whiskers: 95 % interval)",
		"Latency deviation per target at size 1k (mean-of-runs; whiskers: 95 % interval of the runs' sds)",
		"Sent bandwidth against size (whiskers: 95 % interval; request bodies; mean over the runs)",
		"Latency against size (min: solid, p50: dashed in the same colour; every request of every run)",
		"CPU per request against size (client: solid; --server-pid: dashed in the same colour)",
		"Whole host's CPU per request against size (/proc/stat: user, system, irq, softirq; 10 ms ticks)",
	}
	for _, w := range want {
		if titles[w] == nil {
			var have []string
			for k := range titles {
				have = append(have, k)
			}
			t.Errorf("no panel %q; panels:\n%s", w, strings.Join(have, "\n"))
		}
	}
	bars := titles[want[0]]
	if bars == nil {
		return
	}
	if len(bars.XTics) != 3 || bars.XTics[1].Label != "b" {
		t.Errorf("bar tics %+v", bars.XTics)
	}
	nbars, nwhiskers := 0, 0
	for _, l := range bars.Lines {
		switch l.Style {
		case chart.Bars:
			nbars += len(l.Rows)
		case chart.ErrorBars:
			nwhiskers++
			if l.Rows[0][2] < 0 {
				t.Errorf("whisker below zero: %v", l.Rows[0])
			}
		}
	}
	if nbars != 3*2 || nwhiskers != 3*2 {
		t.Errorf("%d bars and %d whiskers, want a bar and a whisker per target and concurrency", nbars, nwhiskers)
	}
	sent := titles[want[2]]
	if sent.Lines[0].Columns[1] != "sent_mbit_per_s" || sent.Lines[0].Rows[0][1] != d.Points[0].SentMbitPerS {
		t.Errorf("bandwidth against size plots %v %v, want the sent bandwidth", sent.Lines[0].Columns, sent.Lines[0].Rows)
	}
	checkLooks(t, "post study", f)

	// Latencies that span decades are drawn on a log axis, said in the title.
	d.Points[1].Latency["p50_ms"] = 1000.0
	for _, p := range SweepFigure(d).Panels {
		if strings.HasPrefix(p.Title, "Latency against size") && (!p.LogY || !strings.HasSuffix(p.Title, "; log scale")) {
			t.Errorf("panel %q: log y %v", p.Title, p.LogY)
		}
	}
}
