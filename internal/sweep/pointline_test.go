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
