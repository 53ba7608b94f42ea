package sweep

import (
	"strings"
	"testing"
)

// PointLine's sd is the deviation by the sweep's estimator, the table's:
// with --deviation mean-of-runs, the runs' own sds averaged, not the pooled sd.
func TestPointLineNamesTheTablesDeviation(t *testing.T) {
	p := &PointResult{Label: "a", Concurrency: 2, LatencyCount: 10, LatencyMeanMs: 1, LatencySDMs: 0.5, DeviationMs: 0.25, LatencyP99Ms: 3}
	if l := PointLine(p); !strings.Contains(l, "latency 1.000 ms sd 0.250 p99 3.000") {
		t.Fatalf("%s", l)
	}
}
