package report

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestMergeRunsFarApartBounded: runs whose start times lie far apart (a
// document's start_time is whatever it says) merge without stretching the
// per-second counts over the gap between them.
func TestMergeRunsFarApartBounded(t *testing.T) {
	docs := randomShardedRun(rand.New(rand.NewPCG(3, 4)), 100, 2, 0).shardDocuments(t, "run-1")
	runs := []*Run{docs[0].Doc, docs[1].Doc}
	start, err := time.Parse(time.RFC3339Nano, runs[0].StartTime)
	if err != nil {
		t.Fatal(err)
	}
	runs[1].StartTime = start.Add(maxStartSpread + 30*24*time.Hour).Format(time.RFC3339Nano)
	for _, d := range runs {
		d.Extended = &extendedFigures{Throughput: throughputFigures{PerSecond: []int64{1, 2}}}
	}
	m, err := MergeRuns(runs)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Extended.Throughput.PerSecond); n > 2 {
		t.Errorf("merged per-second counts span %d seconds", n)
	}
	// Runs a second apart still add up by second.
	runs[1].StartTime = start.Add(time.Second).Format(time.RFC3339Nano)
	if m, err = MergeRuns(runs); err != nil {
		t.Fatal(err)
	}
	if got := m.Extended.Throughput.PerSecond; len(got) != 3 || got[0] != 1 || got[1] != 3 || got[2] != 2 {
		t.Errorf("per-second counts of runs a second apart: %v, want [1 3 2]", got)
	}
}
