package chart

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestRunFigureViews: one run with a timeline (status classes, phases, rate
// mode's target and corrected p99), per-request latencies, a curve to
// p99.999, ranges and objectives gets every panel, in order, on one time
// axis; the status stack's bases add up; the spectrum's tics reach the
// curve's resolution and its objectives are split into met and missed; a
// latency panel spanning decades is on a log axis.
func TestRunFigureViews(t *testing.T) {
	d := &Data{ElapsedS: 2, Recorded: 4, Stored: 4, HasPhases: true, TargetPerS: 100,
		Latency:      []LatencyPoint{{0.1, 100}, {0.5, 90_000}, {1.2, 200}, {1.9, 150}},
		Curve:        []CurvePoint{{0, 100}, {90, 150}, {99.999, 90_000}, {100, 90_000}},
		Ranges:       []int64{3, 1, 0},
		RangeEdgesMs: []float64{1, 10},
		Failed:       1,
		Objectives:   []Objective{{Label: "p99<1ms", Percent: 99, Us: 1000}, {Label: "mean<1s", Percent: -1, Us: 1e6, Passed: true}},
	}
	for i := range 4 {
		d.Intervals = append(d.Intervals, Interval{StartS: float64(i) * 0.5, LengthS: 0.5, Requests: 50, Failures: 1,
			P50Us: 100, P90Us: 150, P99Us: 200, MaxUs: 90_000, CorrectedP99Us: 300, ConnectUs: 10, WaitUs: 50, RestUs: 20,
			Status: [6]int64{1, 0, 40, 0, 6, 3}, HasStatus: true})
	}
	f := RunFigure("t", []*Data{d})
	var ids []string
	for _, p := range f.Panels {
		ids = append(ids, p.ID)
	}
	want := []string{PanelRate, PanelStatus, PanelLatencyTime, PanelPhases, PanelScatter, PanelPercentiles, PanelRanges, PanelKnee}
	if !slices.Equal(ids, want) {
		t.Fatalf("panels %v, want %v", ids, want)
	}
	byID := func(id string) *Panel { return &f.Panels[slices.Index(ids, id)] }
	for _, id := range []string{PanelRate, PanelStatus, PanelLatencyTime, PanelPhases, PanelScatter} {
		if p := byID(id); p.XMin != 0 || p.XMax != 2 {
			t.Errorf("%s: x from %v to %v, not the run's 0 to 2 s", id, p.XMin, p.XMax)
		}
	}
	rate := byID(PanelRate)
	if l := rate.Lines[len(rate.Lines)-1]; l.Title != "target" || !l.Dashed || l.Rows[0][1] != 100 || l.Rows[1][0] != 2 {
		t.Errorf("rate panel's last line %+v, want the dashed target at 100/s to 2 s", l)
	}
	// A schedule's target: a step per interval.
	for i := range d.Intervals {
		d.Intervals[i].TargetPerS = 100 + 10*float64(i)
	}
	steps := RunFigure("t", []*Data{d}).Panels[0]
	if l := steps.Lines[len(steps.Lines)-1]; len(l.Rows) != 8 || l.Rows[2][0] != 0.5 || l.Rows[2][1] != 110 || l.Rows[3][0] != 1 || l.Rows[7][1] != 130 {
		t.Errorf("target steps %v", l.Rows)
	}
	// Stacked 2xx, 4xx, 5xx, none: each base is the classes before it.
	st := byID(PanelStatus)
	var titles []string
	for _, l := range st.Lines {
		titles = append(titles, l.Title)
	}
	if strings.Join(titles, " ") != "2xx 4xx 5xx no status" || st.Lines[2].Rows[0][3] != 46/0.5 || st.Lines[2].Rows[0][1] != 49/0.5 {
		t.Errorf("status stack %v, 5xx rows %v", titles, st.Lines[2].Rows)
	}
	lat := byID(PanelLatencyTime)
	if !lat.LogY || !strings.HasSuffix(lat.Title, "; log scale") || lat.Lines[4].Title != "corrected p99" {
		t.Errorf("latency over time: log %v, title %q, lines %d", lat.LogY, lat.Title, len(lat.Lines))
	}
	pct := byID(PanelPercentiles)
	if tics := pct.XTics; tics[len(tics)-2].Label != "99.999%" || tics[len(tics)-1].Label != "max" {
		t.Errorf("percentile tics %v: want them to p99.999 and the maximum", tics)
	}
	met, missed := pct.Lines[len(pct.Lines)-2], pct.Lines[len(pct.Lines)-1]
	if met.Title != "objective met" || len(met.Rows) != 1 || met.Rows[0][0] != 2 || missed.Title != "objective missed" || math.Abs(missed.Rows[0][0]-100) > 1e-9 {
		t.Errorf("objectives: met %+v, missed %+v", met, missed)
	}
	rg := byID(PanelRanges)
	if names := []string{rg.XTics[0].Label, rg.XTics[1].Label, rg.XTics[2].Label, rg.XTics[3].Label}; strings.Join(names, "|") != "t ≤ 1 ms|1 ms < t ≤ 10 ms|10 ms < t|failed" {
		t.Errorf("range tics %v", names)
	}
	if rows := rg.Lines[0].Rows; len(rows) != 4 || rows[3][1] != 1 {
		t.Errorf("range bars %v: want 3 ranges and the failed", rows)
	}
}

// TestPhasePanelTLS: a run with TLS handshakes draws connect (TCP), TLS,
// waiting and rest apart, a plain run its connect, waiting and rest; overlaid,
// every line has its own colour.
func TestPhasePanelTLS(t *testing.T) {
	run := func(label string, tls bool) *Data {
		d := &Data{Label: label, ElapsedS: 1, HasPhases: true, HasTLS: tls}
		for i := range 2 {
			iv := Interval{StartS: float64(i) * 0.5, LengthS: 0.5, Requests: 10, ConnectUs: 100, WaitUs: 500, RestUs: 50}
			if tls {
				iv.TLSUs = 900
			}
			d.Intervals = append(d.Intervals, iv)
		}
		return d
	}
	lines := func(runs ...*Data) ([]string, []Line, string) {
		t.Helper()
		p, ok := phasePanel(runs, func(d *Data, what string) string { return strings.TrimSpace(d.Label + " " + what) })
		if !ok {
			t.Fatal("no phase panel")
		}
		var titles []string
		for _, l := range p.Lines {
			titles = append(titles, l.Title)
		}
		return titles, p.Lines, p.Title
	}
	titles, ls, title := lines(run("", true))
	if strings.Join(titles, "|") != "connect|TLS|waiting|rest" || ls[1].Columns[1] != "tls_ms" || ls[1].Rows[0][1] != 0.9 || ls[0].Rows[0][1] != 0.1 ||
		!strings.Contains(title, "connect: TCP; TLS: the handshake") {
		t.Errorf("TLS run: lines %v, TLS rows %v, title %q", titles, ls[1].Rows, title)
	}
	titles, _, title = lines(run("", false))
	if strings.Join(titles, "|") != "connect|waiting|rest" || !strings.Contains(title, "connect: TCP and TLS") {
		t.Errorf("plain run: lines %v, title %q", titles, title)
	}
	titles, ls, _ = lines(run("a", false), run("b", true))
	colors := map[int]bool{}
	for _, l := range ls {
		colors[l.Color] = true
	}
	if len(titles) != 7 || titles[3] != "b connect" || titles[4] != "b TLS" || len(colors) != 7 {
		t.Errorf("overlaid: lines %v, %d colours", titles, len(colors))
	}
}
