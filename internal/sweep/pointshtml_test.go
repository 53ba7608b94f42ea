package sweep_test

import (
	"bytes"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gab/internal/plot"
	"gab/internal/sweep"
	"gab/report"
)

// TestNewCatalogFigureReachesTheHTMLPoints: a figure added to the catalog
// with a column head in its SweepUse (here, for the test, req/s per
// connection, its head holding HTML's special characters) is a column of
// the sweep HTML page's Points table, escaped, at its place in the text
// table; every figure column of the text table (from its first after the
// flags) is the page's in the same order, each point's cell the same text.
func TestNewCatalogFigureReachesTheHTMLPoints(t *testing.T) {
	old := report.Catalog
	t.Cleanup(func() { report.Catalog = old })
	const head = `req/s/conn<&">`
	report.Catalog = append(slices.Clip(old), report.Figure{Key: "rps_per_connection", Title: "Requests per second per connection", Unit: "#/s",
		CSV: "rps_per_conn", Decimals: 2, Pool: report.MeanOfRuns, Sweep: report.SweepUse{Head: head, Decimals: 1, Place: 75},
		Of: func(d *report.Run) (float64, bool) { return d.Report.RequestsPerSecond / 2, true }})

	s, runs := sweep.SweepForTest()
	points := sweep.Aggregate(s, runs)
	var text bytes.Buffer
	if err := sweep.WriteTable(&text, s, points, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.SplitN(text.String(), "\n", 2)[0], " "+head+" ") {
		t.Fatalf("the text table lacks the column:\n%s", text.String())
	}
	heads, rows := sweep.TableForTest(s, points)
	from := slices.Index(heads, "flags") + 1
	if from == 0 || slices.Contains(heads, "host us/req") {
		t.Fatalf("the text table's heads %q", heads)
	}

	var page bytes.Buffer
	if err := report.WriteHTMLPage(&page, plot.SweepPage(sweep.NewDocument(s, points, sweep.Meta{}))); err != nil {
		t.Fatal(err)
	}
	out := page.String()
	if !strings.Contains(out, "<th>req/s/conn&lt;&amp;&#34;&gt;</th>") || strings.Contains(out, head) {
		t.Errorf("the page lacks the escaped head %q", head)
	}
	table := htmlTable(t, out, "Points")
	if len(table) != len(rows)+1 {
		t.Fatalf("the page's Points table has %d rows, the text table %d points", len(table)-1, len(rows))
	}
	at := slices.Index(table[0], "flags") + 1
	n := len(heads) - from
	if at == 0 || at+n > len(table[0]) || !slices.Equal(table[0][at:at+n], heads[from:]) {
		t.Fatalf("the page's columns after flags %q, the text table's %q", table[0][at:], heads[from:])
	}
	for i, row := range rows {
		if got, want := table[i+1][at:at+n], row[from:]; !slices.Equal(got, want) {
			t.Errorf("point %d: the page's cells %q, the text table's %q", i, got, want)
		}
	}
	if c := slices.Index(heads, head); rows[0][c] != "52.5" || rows[1][c] != "147.5" {
		t.Errorf("the new column's cells %q and %q, want the runs' means 52.5 and 147.5", rows[0][c], rows[1][c])
	}
}

// htmlTable is the cells of the page's table under <h2>title</h2>,
// unescaped, its head row first.
func htmlTable(t *testing.T, page, title string) [][]string {
	t.Helper()
	_, after, ok := strings.Cut(page, "<h2>"+title+"</h2>")
	if !ok {
		t.Fatalf("the page has no %s table", title)
	}
	body, _, _ := strings.Cut(after, "</table>")
	var rows [][]string
	cell := regexp.MustCompile(`<t[hd]>(.*?)</t[hd]>`)
	for _, tr := range regexp.MustCompile(`<tr>(.*?)</tr>`).FindAllStringSubmatch(body, -1) {
		var row []string
		for _, c := range cell.FindAllStringSubmatch(tr[1], -1) {
			row = append(row, html.UnescapeString(c[1]))
		}
		rows = append(rows, row)
	}
	return rows
}

// TestHTMLReqPerSecondAsTheTable: the sweep HTML page writes a point's
// req/s mean, its 95 % interval and cv as the text table does (the same
// digits, "-" for the spread of a single run), and its rankings' req/s as
// the table's mean: one figure, one text.
func TestHTMLReqPerSecondAsTheTable(t *testing.T) {
	s, runs := sweep.SweepForTest()
	// b's second run left out: a point of one run beside one of two.
	points := sweep.Aggregate(s, runs[:3])
	heads, rows := sweep.TableForTest(s, points)
	var page bytes.Buffer
	if err := report.WriteHTMLPage(&page, plot.SweepPage(sweep.NewDocument(s, points, sweep.Meta{}))); err != nil {
		t.Fatal(err)
	}
	table := htmlTable(t, page.String(), "Points")
	if len(table) != len(rows)+1 {
		t.Fatalf("the page's Points table has %d rows, the text table %d points", len(table)-1, len(rows))
	}
	byRank := map[string]string{} // label: the ranking's req/s cell
	for _, r := range htmlTable(t, page.String(), "Ranking at -c 1")[1:] {
		byRank[r[1]] = r[2]
	}
	for _, c := range []struct{ page, text string }{{"req/s mean", "req/s"}, {"± 95 % CI", "±95%"}, {"cv %", "cv%"}} {
		pc, tc := slices.Index(table[0], c.page), slices.Index(heads, c.text)
		if pc < 0 || tc < 0 {
			t.Fatalf("no column %q in the page (%q) or %q in the table (%q)", c.page, table[0], c.text, heads)
		}
		for i, row := range rows {
			// The page marks an unstable cv in its cell, the table in a column of its own.
			if got, want := strings.TrimSuffix(table[i+1][pc], " (unstable)"), row[tc]; got != want {
				t.Errorf("point %d: the page's %s %q, the text table's %s %q", i, c.page, got, c.text, want)
			}
			if c.text == "req/s" && byRank[row[0]] != row[tc] {
				t.Errorf("point %d: the page's ranking has req/s %q, the text table %q", i, byRank[row[0]], row[tc])
			}
		}
	}
	if rows[0][slices.Index(heads, "req/s")] != "105.0" || rows[1][slices.Index(heads, "±95%")] != "-" {
		t.Errorf("the text table's cells %q: want a's mean 105.0 and no interval for b's single run", rows)
	}
}
