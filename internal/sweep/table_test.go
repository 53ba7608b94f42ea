package sweep

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"gab/report"
)

// TestNewCatalogFigureReachesTheSweep: a derived figure added to the
// catalog (here, for the test, req/s per connection) reaches the sweep's
// CSV, the points' JSON figures and, with a column head in its SweepUse,
// the written table, with no sweep code of its own: every catalog key can
// be a column (figureColumn), its value the point's Group's by the figure's
// Pool rule.
func TestNewCatalogFigureReachesTheSweep(t *testing.T) {
	old := report.Catalog
	t.Cleanup(func() { report.Catalog = old })
	perConn := report.Figure{Key: "rps_per_connection", Title: "Requests per second per connection", Unit: "#/s", CSV: "rps_per_conn",
		Decimals: 2, Pool: report.MeanOfRuns, Sweep: report.SweepUse{Head: "req/s/conn", Decimals: 1, Place: 75}, Of: func(d *report.Run) (float64, bool) {
			if d.Report.ConcurrencyLevel < 1 {
				return 0, false
			}
			return d.Report.RequestsPerSecond / float64(d.Report.ConcurrencyLevel), true
		}}
	report.Catalog = append(append([]report.Figure(nil), old...), perConn)

	s, runs := testSweep()
	points := Aggregate(s, runs)
	a := points[0] // req/s 100 and 110 at -c 1
	if v, ok := a.Value("rps_per_connection"); !ok || v != 105 {
		t.Fatalf("the point's figure %v %v, want the runs' mean 105", v, ok)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, points); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range rows[0] {
		if h == "rps_per_conn" {
			col = i
		}
	}
	if col < 0 || rows[1][col] != "105.00" {
		t.Errorf("CSV: column %d of %v", col, rows[1])
	}
	d := NewDocument(s, points, Meta{})
	if fv := d.Points[0].Figures; len(fv) == 0 || fv[len(fv)-1].Key != "rps_per_connection" || fv[len(fv)-1].Value != 105 {
		t.Errorf("JSON figures %v", fv)
	}
	for _, f := range report.Catalog {
		c := figureColumn(FigureColumn{Head: f.Key, Key: f.Key, Decimals: f.Decimals})
		want := "-"
		if v, ok := a.Figure(&f); ok {
			want = f.Format(v)
		}
		if got := c.cell(a); got != want {
			t.Errorf("column %s: %q, want %q", f.Key, got, want)
		}
	}
	if got := figureColumn(FigureColumn{Key: "no_such_figure", Decimals: 1}).cell(a); got != "-" {
		t.Errorf("an unknown key: %q", got)
	}
	buf.Reset()
	if err := WriteTable(&buf, s, points, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	head := strings.Fields(lines[0])
	i := slices.Index(head, "req/s/conn")
	if i < 1 || i+1 >= len(head) || head[i-1] != "err" || head[i+1] != "rx" {
		t.Fatalf("the table's head, the column at its place (after err, before rx Mbit/s): %q", lines[0])
	}
	// The columns are aligned right: the cell ends where its head does
	// (in runes: "±95%").
	h, row := []rune(lines[0]), []rune(lines[1])
	end := len([]rune(lines[0][:strings.Index(lines[0], "req/s/conn")])) + len("req/s/conn")
	if end > len(row) || len(h) < end || !strings.HasSuffix(string(row[:end]), " 105.0") {
		t.Errorf("the table's req/s/conn cell, want 105.0: head %q, row %q", lines[0], lines[1])
	}
}

// TestTableReadsTheCatalog: the table's latency, failure, bandwidth and CPU
// columns are the point's catalog figures (the JSON's "figures"), and the
// written table holds them.
func TestTableReadsTheCatalog(t *testing.T) {
	s, runs := testSweep()
	points := Aggregate(s, runs)
	var buf bytes.Buffer
	if err := WriteTable(&buf, s, points, true); err != nil {
		t.Fatal(err)
	}
	row := " " + strings.Join(strings.Fields(strings.Split(buf.String(), "\n")[1]), " ") + " "
	cols, _ := tableColumns(s, points)
	cell := map[string]string{}
	for _, c := range cols {
		cell[c.head] = c.cell(points[0])
	}
	for _, c := range []struct {
		head, key string
		prec      int
	}{
		{"lat ms", "mean", 3}, {"min ms", "min", 3}, {"p50 ms", "p50", 3}, {"p99 ms", "p99", 3}, {"failed", "failed", 0},
		{"rx Mbit/s", "received_mbit_per_s", 2}, {"cli us/req", "client_cpu_us_per_request", 1}, {"cli cpu%", "client_cpu_percent", 1},
	} {
		v, ok := points[0].Value(c.key)
		if want := f(v, c.prec); !ok || cell[c.head] != want || !strings.Contains(row, " "+want+" ") {
			t.Errorf("%s: cell %q, figure %s %v %v; row %q", c.head, cell[c.head], c.key, v, ok, row)
		}
	}
}

// TestSweepPointFigureReadsBothVersions: a point of a version 2 document
// gives each figure from "figures", and its fixed figure fields (written
// for this version only) hold the same values; a version 1 document from
// before "figures" gives them from the fixed fields; both versions decode.
func TestSweepPointFigureReadsBothVersions(t *testing.T) {
	s, runs := testSweep()
	d := NewDocument(s, Aggregate(s, runs), Meta{})
	fixed := []string{"rps", "mean", "sd", "min", "p50", "p99", "complete", "failed", "received_mbit_per_s", "sent_mbit_per_s",
		"client_cpu_percent", "client_cpu_us_per_request", "server_cpu_percent", "server_cpu_us_per_request"}
	for i := range d.Points {
		p := d.Points[i]
		old := p
		old.Figures = nil // as a version 1 document from before figures
		for _, key := range fixed {
			v, ok := p.Figure(key)
			w, wok := old.Figure(key)
			if ok != wok || v != w {
				t.Errorf("point %d %s: figures %v %v, fixed field %v %v", i, key, v, ok, w, wok)
			}
		}
		if v, ok := p.Figure("p90"); !ok || v <= 0 {
			t.Errorf("point %d p90 %v %v", i, v, ok)
		}
		if _, ok := old.Figure("p90"); ok {
			t.Errorf("point %d: p90 without figures", i)
		}
	}
	raw := notStartedSweep(t)
	for _, v := range []string{"1", "2"} {
		doc := bytes.Replace(raw, []byte(`"schema_version": 2`), []byte(`"schema_version": `+v), 1)
		if _, err := report.DecodeSweep("s.json", doc); err != nil {
			t.Errorf("version %s: %v", v, err)
		}
	}
}
