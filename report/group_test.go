package report

import (
	"math"
	"testing"
	"time"
)

// TestGroupStatFollowsThePoolRule: a group of a run's shards gives each
// catalog figure by its Pool rule (pooled: the merged record's; sum, min,
// max, mean: of the shards' own), with n, mean, sd, min, max and the 95 %
// interval of the shards' own values beside it; a figure summed, or the
// least or greatest, is what the exact merge gives too.
func TestGroupStatFollowsThePoolRule(t *testing.T) {
	shards, _ := validShards(t, 7)
	var runs []*Run
	for _, s := range shards {
		runs = append(runs, s.Doc)
	}
	g := NewGroup(append(runs, NotStarted([]string{"gab"}, time.Unix(0, 0), "refused", 1)))
	if len(g.Runs) != len(runs) || g.Merged == nil {
		t.Fatalf("group of %d runs (merged %v), want the %d with a report", len(g.Runs), g.Merged != nil, len(runs))
	}
	pools := map[Pool]int{}
	for i := range Catalog {
		f := &Catalog[i]
		vs := g.Values(f)
		s := g.Stat(f)
		if len(vs) == 0 {
			if s.Known {
				t.Errorf("%s: known with no run's value", f.Key)
			}
			continue
		}
		pools[f.Pool]++
		iv := IntervalOf(vs)
		lo, hi, sum := vs[0], vs[0], 0.0
		for _, v := range vs {
			lo, hi, sum = math.Min(lo, v), math.Max(hi, v), sum+v
		}
		if !s.Known || s.Runs != iv || s.Min != lo || s.Max != hi || s.Runs.N != len(runs) {
			t.Errorf("%s: runs' statistics %+v, want %+v min %v max %v", f.Key, s, iv, lo, hi)
		}
		if len(vs) > 1 && !(s.Runs.Lo < s.Runs.Mean && s.Runs.Mean < s.Runs.Hi) && s.Runs.SD > 0 {
			t.Errorf("%s: interval %+v does not hold the mean", f.Key, s.Runs)
		}
		merged, mok := f.Value(g.Merged)
		var want float64
		switch f.Pool {
		case Pooled:
			want = merged
			if !mok {
				want = iv.Mean
			}
			if s.FromMerged != mok {
				t.Errorf("%s: from the merged record %v, the record has it %v", f.Key, s.FromMerged, mok)
			}
		case SumOfRuns:
			want = sum
		case MinOfRuns:
			want = lo
		case MaxOfRuns:
			want = hi
		case MeanOfRuns:
			want = iv.Mean
		}
		if s.Value != want {
			t.Errorf("%s (pool %d): %v, want %v", f.Key, f.Pool, s.Value, want)
		}
		if v, ok := g.Value(f); !ok || v != s.Value {
			t.Errorf("%s: Value %v, Stat %v", f.Key, v, s.Value)
		}
		if f.Pool != MeanOfRuns && f.Pool != Pooled && mok && math.Abs(merged-s.Value) > 1e-9*math.Abs(merged) {
			t.Errorf("%s: the runs' %v is %v, the exact merge's %v", f.Key, []string{"", "", "sum", "min", "max"}[f.Pool], s.Value, merged)
		}
	}
	for _, p := range []Pool{Pooled, MeanOfRuns, SumOfRuns, MinOfRuns, MaxOfRuns} {
		if pools[p] == 0 {
			t.Errorf("no figure of pool %d measured: the case tests less than it says", p)
		}
	}
	if fv := g.Figures(); len(fv) == 0 || fv[0].Key != Catalog[0].Key {
		t.Errorf("figures %v", fv)
	}
}

// TestGroupWithoutMerge: runs that do not merge (a start time that is not
// one) still give every figure, pooled ones as the mean of the runs' own.
func TestGroupWithoutMerge(t *testing.T) {
	shards, _ := validShards(t, 8)
	a, b := *shards[0].Doc, *shards[1].Doc
	b.StartTime = "not a time"
	g := NewGroup([]*Run{&a, &b})
	if g.Merged != nil {
		t.Fatal("runs merged despite a bad start time")
	}
	f, _ := FigureByKey("p99")
	s := g.Stat(&f)
	if !s.Known || s.FromMerged || s.Value != s.Runs.Mean || s.Runs.N != 2 {
		t.Errorf("p99 without a merge: %+v", s)
	}
	if s := NewGroup(nil).Stat(&f); s.Known {
		t.Errorf("empty group: %+v", s)
	}
}
