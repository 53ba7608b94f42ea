package sweep

import "sort"

// The ranking rule for figures other than a point's (gab capacity ranks its
// targets' capacities with it).

// Place is an item's place in RankIntervals's order.
type Place struct {
	Index int // the item's index in the input
	Rank  int // 1 = best; shared by a tie group
	Tied  bool
}

// RankIntervals orders items by their intervals (highest mean first when
// higher is better) and ranks them by TieRule: a tie group holds the items
// whose interval is not apart from its first one's; unknown ones come last,
// ranked apart.
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
	out := make([]Place, len(idx))
	lead := 0
	for i, k := range idx {
		if i > 0 && (!ivs[k].Known || !ivs[idx[lead]].Known || Apart(ivs[idx[lead]], ivs[k])) {
			lead = i
		}
		out[i] = Place{Index: k, Rank: lead + 1}
	}
	for i := range out {
		out[i].Tied = (i > 0 && out[i-1].Rank == out[i].Rank) || (i+1 < len(out) && out[i+1].Rank == out[i].Rank)
	}
	return out
}
