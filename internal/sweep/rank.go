package sweep

import (
	"math"

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

// TieRule says when two targets share a rank.
const TieRule = "two targets share a rank exactly when the 95 % interval of their ratio (the ratio tables' interval: delta method " +
	"on the log scale, Welch's degrees of freedom) includes 1; a rank is 1 + the targets ahead that this test tells apart, " +
	"=N when shared, and lo–hi where ties do not chain (a ~ b, b ~ c, a ≠ c: a 1, b 1–2, c 2), lo–hi spanning the ranks of " +
	"the targets it ties; lettered groups (a, ab, b): targets tied exactly when they share a letter; " +
	"with one repetition there is no interval and the order is the means'"

// Interval is a figure's mean over a point's repetitions with its 95 %
// confidence interval (Student's t; Lo = Hi = Mean for fewer than two
// values).
type Interval struct {
	N        int
	Mean, SD float64
	Lo, Hi   float64
	Known    bool
}

// IntervalOf is the mean of values with its 95 % confidence interval
// (Student's t), as a point's repetitions have it.
func IntervalOf(values []float64) Interval {
	sp := report.SpreadOf(values)
	iv := Interval{N: len(values), Mean: sp.Mean, SD: sp.SD, Lo: sp.Mean, Hi: sp.Mean, Known: len(values) > 0}
	if iv.N > 1 {
		h := TQuantile975(iv.N-1) * iv.SD / math.Sqrt(float64(iv.N))
		iv.Lo, iv.Hi = iv.Mean-h, iv.Mean+h
	}
	return iv
}

// Apart reports whether TieRule's test tells two intervals apart: the 95 %
// interval of the ratio a/b (RatioOf, as the ratio tables print it) excludes
// 1. Without two values on each side the ratio has no interval, and
// different means are apart. Where a ratio has no logarithm (a mean of 0 or
// below), the test is on the difference instead: Welch's 95 % interval of
// the means' difference excludes 0.
func Apart(a, b Interval) bool {
	if r := RatioOf(a, b); r.Known {
		return r.Lo > 1 || r.Hi < 1
	}
	if a.N < 2 || b.N < 2 {
		return a.Mean != b.Mean
	}
	va, vb := a.SD*a.SD/float64(a.N), b.SD*b.SD/float64(b.N)
	if va+vb == 0 {
		return a.Mean != b.Mean
	}
	df := (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	return math.Abs(a.Mean-b.Mean) > TQuantile975Frac(max(1, df))*math.Sqrt(va+vb)
}

// Throughput is the point's req/s over its repetitions.
func (p *PointResult) Throughput() Interval {
	v := make([]float64, len(p.Runs))
	for i, r := range p.Runs {
		v[i] = r.RPS
	}
	return IntervalOf(v)
}

// Deviation is the point's latency deviation by the sweep's estimator
// (DeviationMs) with the interval of its repetitions' own sds around it.
func (p *PointResult) Deviation() Interval {
	iv := IntervalOf(p.RunSDsMs)
	shift := p.DeviationMs - iv.Mean
	iv.Mean, iv.Lo, iv.Hi = p.DeviationMs, iv.Lo+shift, iv.Hi+shift
	iv.Known = p.LatencyCount > 0
	return iv
}

// Ranked is one place of a ranking by TieRule: Rank…RankHi is the rank
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
// ranks it by TieRule (RankIntervals). Unknown figures come last, ranked
// apart.
func rank(g []*PointResult, fig func(*PointResult) Interval, higher bool) []Ranked {
	ivs := make([]Interval, len(g))
	for i, p := range g {
		ivs[i] = fig(p)
	}
	out := make([]Ranked, len(g))
	for i, pl := range RankIntervals(ivs, higher) {
		out[i] = Ranked{PointResult: g[pl.Index], Rank: pl.Rank, RankHi: pl.RankHi, Tied: pl.Tied, Loose: pl.Loose, Group: pl.Group}
	}
	return out
}

// Ratio is a figure of a point divided by the same figure of another (the
// baseline, or the same target at another concurrency or size), with its 95
// % interval by the delta method on the log scale: the variance of the
// ratio's logarithm is the sum of the two means' squared relative standard
// errors, with Welch–Satterthwaite's degrees of freedom (fractional, not
// rounded: rounding down widens the interval), so the interval is
// Value ÷× exp(t·√v), positive and asymmetric. Lo and Hi equal Value when
// either side has fewer than two repetitions.
type Ratio struct {
	Value, Lo, Hi float64
	Known         bool
}

// RatioOf is a / b.
func RatioOf(a, b Interval) Ratio {
	if !a.Known || !b.Known || b.Mean == 0 || a.Mean == 0 {
		return Ratio{}
	}
	r := Ratio{Value: a.Mean / b.Mean, Known: true}
	r.Lo, r.Hi = r.Value, r.Value
	if a.N < 2 || b.N < 2 {
		return r
	}
	va := a.SD * a.SD / float64(a.N) / (a.Mean * a.Mean)
	vb := b.SD * b.SD / float64(b.N) / (b.Mean * b.Mean)
	v := va + vb
	if v == 0 {
		return r
	}
	df := v * v / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	h := math.Exp(TQuantile975Frac(max(1, df)) * math.Sqrt(v))
	r.Lo, r.Hi = r.Value/h, r.Value*h
	return r
}

// Comparison is one point against another: req/s, the latency deviation,
// the mean and p99 latency as ratios (the latencies' without an interval:
// they are of every request together).
type Comparison struct {
	Point, Base      *PointResult
	Throughput       Ratio
	Deviation        Ratio
	MeanLatency, P99 Ratio
}

func compare(p, base *PointResult) Comparison {
	c := Comparison{Point: p, Base: base,
		Throughput: RatioOf(p.Throughput(), base.Throughput()),
		Deviation:  RatioOf(p.Deviation(), base.Deviation())}
	plain := func(a, b float64) Ratio {
		if a <= 0 || b <= 0 || p.LatencyCount == 0 || base.LatencyCount == 0 {
			return Ratio{}
		}
		return Ratio{Value: a / b, Lo: a / b, Hi: a / b, Known: true}
	}
	c.MeanLatency = plain(p.LatencyMeanMs, base.LatencyMeanMs)
	c.P99 = plain(p.LatencyP99Ms, base.LatencyP99Ms)
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
