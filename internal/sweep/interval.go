package sweep

import (
	"sort"
	"strconv"
)

// The ranking rule for figures other than a point's (gab capacity ranks its
// targets' capacities with it).

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
