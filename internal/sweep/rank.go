package sweep

import (
	"gab/report"
)

// The latency deviation estimators (--deviation).
const (
	// DeviationPooled is the sd of every request of every repetition
	// together.
	DeviationPooled = "pooled"
	// DeviationMeanOfRuns is the mean of the repetitions' own sds
	// (JMeter's and the server studies' "deviation").
	DeviationMeanOfRuns = "mean-of-runs"
)

// Throughput is the point's req/s over its repetitions.
func (p *PointResult) Throughput() report.Interval {
	v := make([]float64, len(p.Runs))
	for i, r := range p.Runs {
		v[i] = r.RPS
	}
	return IntervalOf(v)
}

// Deviation is the point's latency deviation by the sweep's estimator
// (DeviationMs) with the interval of its repetitions' own sds around it.
func (p *PointResult) Deviation() report.Interval {
	iv := report.IntervalOf(p.RunSDsMs)
	shift := p.DeviationMs - iv.Mean
	iv.Mean, iv.Lo, iv.Hi = p.DeviationMs, iv.Lo+shift, iv.Hi+shift
	iv.Known = p.LatencyCount > 0
	return iv
}

// Ranked is one place of a ranking by report.TieRule: Rank…RankHi is the rank
// range, Tied says another target cannot be told apart, Group holds the
// letters of its tie groups.
type Ranked struct {
	*PointResult
	Rank, RankHi int
	Tied, Loose  bool
	Group        string
}

// Ranking orders the targets of one size, --param value and concurrency: by
// mean req/s (highest first) and by latency deviation (lowest first; the
// "deviation" server studies rank by), with ties by TieRule.
type Ranking struct {
	Size         *Size
	ParamValue   string
	Concurrency  int
	ByThroughput []Ranked
	ByDeviation  []Ranked
}

// groups are the points of each size, --param value and concurrency, in the
// order of points; groups come in the order of their first point.
func groups(points []*PointResult) [][]*PointResult {
	type key struct{ size, param, conc int }
	var keys []key
	byKey := map[key][]*PointResult{}
	for _, p := range points {
		k := key{p.Point.Size, p.Point.Param, p.Point.Concurrency}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], p)
	}
	out := make([][]*PointResult, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}

// Rankings returns one ranking per size, --param value and concurrency that
// has more than one target measured, in the order of the points. Points
// that recorded no request rank last by deviation.
func Rankings(points []*PointResult) []Ranking {
	var out []Ranking
	for _, g := range groups(points) {
		if len(g) < 2 {
			continue
		}
		r := Ranking{Size: g[0].Size, ParamValue: g[0].ParamValue, Concurrency: g[0].Concurrency}
		r.ByThroughput = rank(g, (*PointResult).Throughput, true)
		r.ByDeviation = rank(g, (*PointResult).Deviation, false)
		out = append(out, r)
	}
	return out
}

// rank sorts g by the figure (highest first when higher is better) and
// ranks it by report.TieRule (report.RankIntervals). Unknown figures come last, ranked
// apart.
func rank(g []*PointResult, fig func(*PointResult) report.Interval, higher bool) []Ranked {
	ivs := make([]report.Interval, len(g))
	for i, p := range g {
		ivs[i] = fig(p)
	}
	out := make([]Ranked, len(g))
	for i, pl := range report.RankIntervals(ivs, higher) {
		out[i] = Ranked{PointResult: g[pl.Index], Rank: pl.Rank, RankHi: pl.RankHi, Tied: pl.Tied, Loose: pl.Loose, Group: pl.Group}
	}
	return out
}

// Comparison is one point against another: req/s, the latency deviation,
// the mean and p99 latency as ratios (the latencies' without an interval:
// they are of every request together).
type Comparison struct {
	Point, Base      *PointResult
	Throughput       report.Ratio
	Deviation        report.Ratio
	MeanLatency, P99 report.Ratio
}

func compare(p, base *PointResult) Comparison {
	c := Comparison{Point: p, Base: base,
		Throughput: report.RatioOf(p.Throughput(), base.Throughput()),
		Deviation:  report.RatioOf(p.Deviation(), base.Deviation())}
	plain := func(a, b float64) report.Ratio {
		if a <= 0 || b <= 0 || p.LatencyCount == 0 || base.LatencyCount == 0 {
			return report.Ratio{}
		}
		return report.Ratio{Value: a / b, Lo: a / b, Hi: a / b, Known: true}
	}
	of := func(p *PointResult, key string) float64 { v, _ := p.Value(key); return v }
	c.MeanLatency = plain(of(p, "mean"), of(base, "mean"))
	c.P99 = plain(of(p, "p99"), of(base, "p99"))
	return c
}

// BaselineRatios compares every other target of each size, --param value
// and concurrency with the baseline target (label) of the same point.
func BaselineRatios(points []*PointResult, label string) []Comparison {
	var out []Comparison
	for _, g := range groups(points) {
		var base *PointResult
		for _, p := range g {
			if p.Label == label {
				base = p
			}
		}
		if base == nil {
			continue
		}
		for _, p := range g {
			if p != base {
				out = append(out, compare(p, base))
			}
		}
	}
	return out
}

// Changes compares each target at the last concurrency with the same target
// at the first (same size and --param value), or, with one concurrency, at
// the last size with the first: how each target's figures change from one
// end of the sweep's range to the other.
func Changes(s *Settings, points []*PointResult) []Comparison {
	byPoint := map[Point]*PointResult{}
	for _, p := range points {
		byPoint[p.Point] = p
	}
	var out []Comparison
	for _, p := range points {
		from := p.Point
		switch {
		case len(s.Concurrency) > 1 && p.Point.Concurrency == len(s.Concurrency)-1:
			from.Concurrency = 0
		case len(s.Concurrency) == 1 && len(s.Sizes) > 1 && p.Point.Size == len(s.Sizes)-1:
			from.Size = 0
		default:
			continue
		}
		if base := byPoint[from]; base != nil {
			out = append(out, compare(p, base))
		}
	}
	return out
}
