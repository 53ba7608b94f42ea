package report

import (
	"math"
	"sort"
	"strconv"
)

// This file is the arithmetic of a figure across runs: its mean with a 95 %
// interval (Interval), the ratio of two such means with its interval
// (Ratio), and the ranking of several by the ratio's test (RankIntervals,
// TieRule). gab sweep, gab capacity and Group use it.

// TieRule says when two targets share a rank.
const TieRule = "two targets share a rank exactly when the 95 % interval of their ratio (the ratio tables' interval: delta method " +
	"on the log scale, Welch's degrees of freedom) includes 1; a rank is 1 + the targets ahead that this test tells apart, " +
	"=N when shared, and lo–hi where ties do not chain (a ~ b, b ~ c, a ≠ c: a 1, b 1–2, c 2), lo–hi spanning the ranks of " +
	"the targets it ties; lettered groups (a, ab, b): targets tied exactly when they share a letter; " +
	"with one repetition there is no interval and the order is the means'"

// Interval is a figure's mean over a group's runs (a sweep point's
// repetitions, a capacity target's searches) with its 95 %
// confidence interval (Student's t; Lo = Hi = Mean for fewer than two
// values).
type Interval struct {
	N        int
	Mean, SD float64
	Lo, Hi   float64
	Known    bool
}

// IntervalOf is the mean of values with its 95 % confidence interval
// (Student's t), as a group's runs have it.
func IntervalOf(values []float64) Interval {
	sp := SpreadOf(values)
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

// Ratio is a figure of a group of runs divided by the same figure of
// another (a sweep's baseline, or the same target at another concurrency or
// size; one capacity by another), with its 95
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

// RankText is a place of a ranking: "2"; "=2" when shared (tied); "1–2"
// when the place ties places of different ranks (a rank range, TieRule).
func RankText(rank, hi int, tied bool) string {
	switch {
	case hi > rank:
		return strconv.Itoa(rank) + "–" + strconv.Itoa(hi)
	case tied:
		return "=" + strconv.Itoa(rank)
	}
	return strconv.Itoa(rank)
}

// The ranking rule across groups of runs: gab sweep ranks the targets of a
// point with it, gab capacity its targets' capacities. TieRule names it.

// Place is an item's place in RankIntervals's order.
type Place struct {
	Index int // the item's index in the input
	// Rank is 1 + the number of items ahead that TieRule's test tells
	// apart from this one (1 = best); RankHi is the highest Rank among the
	// items it cannot tell apart from this one (itself included): the
	// item's rank range, Rank…RankHi. Where ties chain (a ~ b, b ~ c,
	// a ≠ c) the ranges show it (a 1, b 1–2, c 2); two items' ranges
	// overlap whenever they are tied.
	Rank, RankHi int
	// Tied: the test cannot tell another item apart from this one.
	Tied bool
	// Loose: the range does not keep the test with some item the test
	// tells apart from this one (the ranges overlap, or run against the
	// means' order): the pairwise results do not chain as intervals can
	// (a ~ b, c ~ d, a ≠ c ... in a crossing pattern). Group is exact
	// there.
	Loose bool
	// Group are the letters of the groups the item belongs to (TieRule's
	// lettered groups): two items share a letter exactly when they are
	// tied. Empty for an unknown item.
	Group string
}

// LooseMark is "?" after a rank range that is Loose (see Place), else "".
func LooseMark(loose bool) string {
	if loose {
		return "?"
	}
	return ""
}

// GroupLetter names the i-th lettered group (0-based): a…z, A…Z, then
// "{53}" and on.
func GroupLetter(i int) string {
	switch {
	case i < 26:
		return string(rune('a' + i))
	case i < 52:
		return string(rune('A' + i - 26))
	}
	return "{" + strconv.Itoa(i+1) + "}"
}

// RankIntervals orders items by their intervals (highest mean first when
// higher is better) and ranks them by TieRule: each pair of known items is
// tied or apart by Apart, the test the ratio tables print; unknown ones come
// last, ranked apart.
func RankIntervals(ivs []Interval, higher bool) []Place {
	idx := make([]int, len(ivs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := ivs[idx[i]], ivs[idx[j]]
		if a.Known != b.Known {
			return a.Known
		}
		if higher {
			return a.Mean > b.Mean
		}
		return a.Mean < b.Mean
	})
	m := 0 // known items: idx[:m]
	for m < len(idx) && ivs[idx[m]].Known {
		m++
	}
	// tied[i][j]: the test cannot tell the i-th and j-th (in order) apart.
	tied := make([][]bool, m)
	for i := range tied {
		tied[i] = make([]bool, m)
	}
	for i := range m {
		tied[i][i] = true
		for j := i + 1; j < m; j++ {
			t := !Apart(ivs[idx[i]], ivs[idx[j]])
			tied[i][j], tied[j][i] = t, t
		}
	}
	out := make([]Place, len(idx))
	for i, k := range idx {
		out[i] = Place{Index: k, Rank: i + 1, RankHi: i + 1}
	}
	// An item's rank: 1 + the items ahead of it that the test tells apart
	// from it (competition ranking: =1 =1 3); the top of its range: the
	// highest rank of the items tied with it.
	for i := range m {
		out[i].Rank = 1
		for j := range i {
			if !tied[i][j] {
				out[i].Rank++
			}
		}
	}
	for i := range m {
		out[i].RankHi = out[i].Rank
		for j := range m {
			if j != i && tied[i][j] {
				out[i].Tied = true
				out[i].RankHi = max(out[i].RankHi, out[j].Rank)
			}
		}
	}
	for i := range m {
		for j := i + 1; j < m; j++ {
			if !tied[i][j] && out[i].RankHi >= out[j].Rank {
				out[i].Loose, out[j].Loose = true, true
			}
		}
	}
	for g, members := range tieGroups(tied) {
		for _, i := range members {
			out[i].Group += GroupLetter(g)
		}
	}
	return out
}

// tieGroups are the lettered groups of a tie relation over items in rank
// order: sets of items tied with each other, each as large as it can be,
// such that every item is in one and every tied pair shares one. Greedily:
// for each tied pair no group holds yet (and each item tied with none), a
// group from that pair grown by every item, in order, tied with all its
// members. Groups are in the order of their first members.
func tieGroups(tied [][]bool) [][]int {
	m := len(tied)
	var groups [][]int
	// shared[i][j]: a group holds both.
	shared := make([][]bool, m)
	for i := range shared {
		shared[i] = make([]bool, m)
	}
	for i := range m {
		alone := true
		for j := range m {
			if j == i || !tied[i][j] {
				continue
			}
			alone = false
			if shared[i][j] {
				continue
			}
			g := []int{min(i, j), max(i, j)}
			for k := range m {
				if k == i || k == j {
					continue
				}
				all := true
				for _, x := range g {
					all = all && tied[k][x]
				}
				if all {
					g = append(g, k)
				}
			}
			sort.Ints(g)
			for _, x := range g {
				for _, y := range g {
					shared[x][y] = true
				}
			}
			groups = append(groups, g)
		}
		if alone {
			groups = append(groups, []int{i})
		}
	}
	sort.SliceStable(groups, func(a, b int) bool {
		ga, gb := groups[a], groups[b]
		for x := 0; x < len(ga) && x < len(gb); x++ {
			if ga[x] != gb[x] {
				return ga[x] < gb[x]
			}
		}
		return len(ga) < len(gb)
	})
	return groups
}
