package plot

import (
	"gab/report"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gab/internal/chart"
)

// paramDocument is a --param sweep of two targets at one size and
// concurrency: gzip off, on and auto.
func paramDocument() *report.SweepDocument {
	d := studyDocument([]string{"nginx", "caddy"}, []string{"1k"}, []int{10}, false)
	d.Settings.Param = &report.SweepParam{Name: "gzip", Values: []string{"off", "on", "auto"}}
	var pts []report.SweepPoint
	for _, p := range d.Points {
		for i, v := range d.Settings.Param.Values {
			q := p
			q.ParamValue = v
			k := float64(i + 1)
			q.RPS = report.FixedFields{"mean_per_s": p.RPS["mean_per_s"].(float64) * (1 + k/10), "ci95_half_width_per_s": 50.0}
			q.MbitPerS = p.MbitPerS / k
			c, s := *p.ClientCPUUsPerReq*k, *p.ServerCPUUsPerReq*k
			q.ClientCPUUsPerReq, q.ServerCPUUsPerReq = &c, &s
			pts = append(pts, q)
		}
	}
	d.Points = pts
	return d
}

// A --param sweep's charts: requests per second and p50, and now bandwidth
// (with whiskers) and CPU per request (client and server) against the
// parameter; its HTML has each configuration's maximum and where.
func TestSweepParamFigures(t *testing.T) {
	d := paramDocument()
	f := SweepFigure(d)
	panels := map[string]*chart.Panel{}
	for i := range f.Panels {
		panels[strings.SplitN(f.Panels[i].Title, " (", 2)[0]] = &f.Panels[i]
	}
	bw, cpu := panels["Bandwidth against gzip"], panels["CPU per request against gzip"]
	if bw == nil || cpu == nil {
		t.Fatalf("no bandwidth or CPU panel against gzip: %v", keys(panels))
	}
	b := bw.Lines[0]
	if b.Style != chart.ErrorBars || len(b.Rows) != 3 || b.Rows[1][1] != d.Points[1].MbitPerS || !(b.Rows[1][2] < b.Rows[1][1] && b.Rows[1][1] < b.Rows[1][3]) {
		t.Errorf("bandwidth against gzip: %+v", b)
	}
	if len(cpu.Lines) < 4 || cpu.Lines[0].Rows[2][1] != *d.Points[2].ClientCPUUsPerReq || !cpu.Lines[1].Dashed || cpu.Lines[1].Rows[2][1] != *d.Points[2].ServerCPUUsPerReq {
		t.Errorf("CPU against gzip: %+v", cpu.Lines)
	}

	html := filepath.Join(t.TempDir(), "p.html")
	if err := writeSweepHTML(html, d); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(page), "Maximum req/s per configuration over gzip")
	if i < 0 {
		t.Fatal("no maximum table in the sweep page")
	}
	// nginx peaks at auto (1000 × 1.3), caddy too (2000 × 1.3); on (×1.2)
	// is within nginx's interval of ±50, not caddy's.
	// The cells have the text table's digits (sweep.RPSDecimals).
	for _, re := range []string{`<td>nginx</td><td>1300.0</td><td>50.0</td><td>auto</td><td>on</td>`, `<td>caddy</td><td>2600.0</td><td>50.0</td><td>auto</td><td></td>`} {
		if !regexp.MustCompile(re).MatchString(string(page[i:])) {
			t.Errorf("no row %s in %.600s", re, page[i:])
		}
	}
}

// Against size the bandwidth has whiskers: the rate's interval scaled.
func TestSweepSizeBandwidthWhiskers(t *testing.T) {
	d := studyDocument([]string{"a"}, []string{"4", "64", "1k"}, []int{10}, false)
	for _, p := range SweepFigure(d).Panels {
		if !strings.HasPrefix(p.Title, "Received bandwidth against size") {
			continue
		}
		l := p.Lines[0]
		pt := d.Points[0]
		h := pt.MbitPerS * pt.RPS["ci95_half_width_per_s"].(float64) / pt.RPS["mean_per_s"].(float64)
		if l.Style != chart.ErrorBars || l.Rows[0][2] != pt.MbitPerS-h || l.Rows[0][3] != pt.MbitPerS+h || !strings.Contains(p.Title, "whiskers") {
			t.Errorf("%q: %+v", p.Title, l)
		}
		return
	}
	t.Error("no bandwidth panel")
}

func keys(m map[string]*chart.Panel) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
