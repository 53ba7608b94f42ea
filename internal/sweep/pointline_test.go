package sweep

import (
	"strings"
	"testing"
)

// PointLine's sd is the deviation by the sweep's estimator, the table's:
// with --deviation mean-of-runs, the runs' own sds averaged, not the pooled sd.
func TestPointLineNamesTheTablesDeviation(t *testing.T) {
	run := fakeRun(Point{0, -1, 0, -1}, 0, 0, 1, 100, 900, 2000)
	s := &Settings{Targets: []Target{{"a", "http://h/a"}}, Concurrency: []int{2}, Repeat: 1, Deviation: DeviationMeanOfRuns}
	p := Aggregate(s, []*RunResult{run})[0]
	p.DeviationMs = 0.25
	if l := PointLine(p); !strings.Contains(l, "latency 1.000 ms sd 0.250 p99 2.000") {
		t.Fatalf("%s", l)
	}
}

// PointLine's failed requests are the table's: the catalog's figure of the
// point's records (which counts requests unanswered at the stop too), not a
// count of its own.
func TestPointLineFailedIsTheTables(t *testing.T) {
	run := fakeRun(Point{0, -1, 0, -1}, 0, 0, 1, 100, 900)
	run.Document.Report.FailedRequests = 2 // the record's count
	s := &Settings{Targets: []Target{{"a", "http://h/a"}}, Concurrency: []int{2}, Repeat: 1}
	p := Aggregate(s, []*RunResult{run})[0]
	cols, _ := tableColumns(s, []*PointResult{p})
	cell := ""
	for _, c := range cols {
		if c.head == "failed" {
			cell = c.cell(p)
		}
	}
	if l := PointLine(p); cell != "2" || !strings.Contains(l, ", 2 failed") {
		t.Errorf("table %q, line %s", cell, l)
	}
}
