package client

import "sort"

// Replay (--replay): an access log's requests at their recorded times. The
// schedule (rate.go) takes slot k's due time from Config.Replay, and the
// URL list's pickers give slot k's request entry k, so that each line is
// sent at its own time whichever connection is free; latency is corrected
// for coordinated omission from the due time, as --rate's.

// replayDue is slot k's due time (past the last, the last's).
func replayDue(due []int64, k int64) int64 {
	if len(due) == 0 {
		return 0
	}
	return due[min(k, int64(len(due)-1))]
}

// replayCount is the number of slots due before t.
func replayCount(due []int64, t int64) float64 {
	return float64(sort.Search(len(due), func(i int) bool { return due[i] >= t }))
}

// ReplayShare is shard i of n's due times (--shard i/n): entries i, i+n,
// i+2n... of due, so that the shards together replay every entry once at
// its own time (URLList.SetShare gives slot k entry i+k*n). Its length is
// shard.Share(len(due), n, i).
func ReplayShare(due []int64, i, n int) []int64 {
	out := make([]int64, 0, (len(due)-i+n-1)/n)
	for k := i; k < len(due); k += n {
		out = append(out, due[k])
	}
	return out
}
