package report

import (
	"time"

	"github.com/montanaflynn/stats"
)

// This file is a group of runs taken as one record: a sweep's point (its
// repetitions), a side of gab compare, the shards of gab merge. A group is
// its runs and their merge (MergeRuns, exact); any catalog figure of the
// group follows from them by the figure's Pool rule, with the statistics of
// the runs' own values beside it (Stat).

// Group is a set of runs and their merge.
type Group struct {
	// Runs are the group's runs, those with a report (a run that ended
	// before it measured has no figure).
	Runs []*Run
	// Merged is Runs merged (MergeRuns); nil where they do not merge (no
	// run, or records that are not runs').
	Merged *Run
}

// NewGroup is the group of the runs that have a report; the others are left
// out. Runs that do not merge leave Merged nil: every figure is then of the
// runs' own values.
func NewGroup(runs []*Run) *Group {
	g := &Group{}
	for _, d := range runs {
		if d != nil && d.Report != nil {
			g.Runs = append(g.Runs, d)
		}
	}
	if len(g.Runs) > 0 {
		g.Merged, _ = MergeRuns(g.Runs) // fails only for records that are not a run's
	}
	return g
}

// groupOf is the group of runs that each have a report, merged with
// their names and start times (gab merge's, after its checks).
func groupOf(runs []*Run, names []string, starts []time.Time) (*Group, error) {
	m, err := mergeRuns(runs, names, starts)
	if err != nil {
		return nil, err
	}
	return &Group{Runs: runs, Merged: m}, nil
}

// Stat is a catalog figure of a group.
type Stat struct {
	// Value is the group's figure by the figure's Pool rule: of the merged
	// record (Pooled), or the mean, sum, least or greatest of the runs' own.
	// A Pooled figure the merged record does not have (runs that do not
	// merge, a section the merge leaves out) is the mean of the runs' own,
	// and FromMerged is false.
	Value      float64
	Known      bool
	FromMerged bool
	// Runs are the runs' own values: N (the runs that have the figure),
	// their mean, sample sd and 95 % interval (IntervalOf).
	Runs     Interval
	Min, Max float64
}

// Values are f of each run that has it, in the group's order.
func (g *Group) Values(f *Figure) []float64 {
	var out []float64
	for _, d := range g.Runs {
		if v, ok := f.Value(d); ok {
			out = append(out, v)
		}
	}
	return out
}

// Stat is f of the group (see Stat); Known is false where no run has it.
func (g *Group) Stat(f *Figure) Stat {
	vs := g.Values(f)
	s := Stat{Runs: IntervalOf(vs)}
	if len(vs) == 0 {
		return s
	}
	data := stats.Float64Data(vs)
	s.Min, _ = stats.Min(data) // the errors are for empty input only
	s.Max, _ = stats.Max(data)
	s.Known = true
	switch f.Pool {
	case Pooled:
		if v, ok := f.Value(g.Merged); ok {
			s.Value, s.FromMerged = v, true
		} else {
			s.Value = s.Runs.Mean
		}
	case SumOfRuns:
		s.Value, _ = stats.Sum(data)
	case MinOfRuns:
		s.Value = s.Min
	case MaxOfRuns:
		s.Value = s.Max
	default:
		s.Value = s.Runs.Mean
	}
	return s
}

// Value is f of the group by its Pool rule (Stat's Value).
func (g *Group) Value(f *Figure) (float64, bool) {
	s := g.Stat(f)
	return s.Value, s.Known
}

// Figures are the group's catalog figures by their Pool rules, those it
// has (a sweep point's "figures").
func (g *Group) Figures() FigureValues {
	out := make(FigureValues, 0, len(Catalog))
	for i := range Catalog {
		if v, ok := g.Value(&Catalog[i]); ok {
			out = append(out, FigureValue{Catalog[i].Key, v})
		}
	}
	return out
}
