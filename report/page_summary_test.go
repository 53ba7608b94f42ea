package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"gab/internal/chart"
)

// TestRunPageSummaryFirst: a run's HTML report opens with its summary
// (requests per second, p50 and p99, errors, objectives, the verdicts named)
// and the verdicts' banner, before the charts and ab's figures.
func TestRunPageSummaryFirst(t *testing.T) {
	h := quietHost()
	h.CPU.User = 9 * time.Second // others used the machine: busy_machine
	r := judged(t, h, nil)
	r.Thresholds = &thresholdVerdicts{Checks: []thresholdCheck{{Expression: "p99<1ms", Passed: false}, {Expression: "rps>1", Passed: true}}}
	fig := &chart.Figure{Panels: []chart.Panel{{ID: "p", Title: "a chart", Lines: []chart.Line{{Style: chart.Lines, Rows: [][]float64{{0, 1}, {1, 2}}}}}}}
	var b bytes.Buffer
	if err := WriteHTMLPage(&b, &Page{Title: "t", Runs: []PageRun{{Doc: r}}, Figure: fig}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	at := func(s string) int {
		i := strings.Index(page, s)
		if i < 0 {
			t.Fatalf("page lacks %q:\n%s", s, page)
		}
		return i
	}
	order := []string{`<h2 id="summary-1">Summary</h2>`, "<td>Requests per second:</td><td>", "<td>Latency (total time):</td><td>p50 ",
		"<td>Errors:</td><td>4 failed of ", "<td>Objectives:</td><td>1 of 2 met (--fail-if); missed: p99&lt;1ms</td>",
		"<td>Verdicts:</td><td>busy-machine", `<div class="verdicts"`, "<h2>Charts</h2>", "<h3>ab's figures</h3>"}
	for i := 1; i < len(order); i++ {
		if at(order[i-1]) > at(order[i]) {
			t.Errorf("%q comes after %q", order[i-1], order[i])
		}
	}
	if strings.Count(page, `<div class="verdicts"`) != 1 {
		t.Error("the banner is not shown once")
	}
	// A run that was not judged says so; of several runs only those with
	// verdicts have a summary, of their verdicts.
	_, plain := extFixture()
	b.Reset()
	if err := WriteHTMLPage(&b, &Page{Title: "t", Runs: []PageRun{{Label: "a", Doc: plain}, {Label: "b", Doc: r}}}); err != nil {
		t.Fatal(err)
	}
	page = b.String()
	sum := page[strings.Index(page, "<h2"):strings.Index(page, `<div class="verdicts"`)]
	if sum != "<h2 id=\"summary-2\">Summary: b</h2>\n<table class=\"figures\"><tr><td>Verdicts:</td><td>busy-machine, too-few (below)</td></tr>\n</table>" {
		t.Errorf("several runs' summaries:\n%s", page)
	}
	b.Reset()
	if err := WriteHTMLPage(&b, &Page{Title: "t", Runs: []PageRun{{Doc: plain}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<td>Verdicts:</td><td>not judged</td>") {
		t.Errorf("an unjudged run's summary:\n%s", b.String())
	}
}
