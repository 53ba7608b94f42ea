package report

import "gab/client"

// rankCounts are the radix select's counters: one per 16-bit digit, reused
// for both passes, so that a rank query costs 256 KB whatever the run's size.
// A count fits in uint32 because the exact store cannot hold 2^32 samples
// (that would be 64 GiB).
type rankCounts [1 << 16]uint32

// selectRank returns the value of rank k (0-based, k < len(samples)) in the
// column's ascending order, exactly, without sorting or copying: pass 1
// counts the values' high 16 bits to find the bucket holding rank k, pass 2
// counts the low 16 bits of the values in that bucket.
func selectRank(samples []client.Sample, c Column, k int, counts *rankCounts) uint32 {
	clear(counts[:])
	forEachValue(samples, c, func(v uint32) { counts[v>>16]++ })
	high, k := digitHolding(counts, k)
	clear(counts[:])
	forEachValue(samples, c, func(v uint32) {
		if v>>16 == high {
			counts[v&0xFFFF]++
		}
	})
	low, _ := digitHolding(counts, k)
	return high<<16 | low
}

// digitHolding returns the digit whose count range holds rank k, and k's rank
// within that digit.
func digitHolding(counts *rankCounts, k int) (digit uint32, rest int) {
	for d, n := range counts {
		if k < int(n) {
			return uint32(d), k
		}
		k -= int(n)
	}
	panic("report: rank out of range")
}

// forEachValue calls f with the column's value of every sample. The column
// switch sits outside the loops so that each loop inlines f.
func forEachValue(samples []client.Sample, c Column, f func(uint32)) {
	switch c {
	case ConnectColumn:
		for i := range samples {
			f(samples[i].Connect)
		}
	case ProcessingColumn:
		for i := range samples {
			f(samples[i].Processing())
		}
	case WaitingColumn:
		for i := range samples {
			f(samples[i].Wait)
		}
	default:
		for i := range samples {
			f(samples[i].Total)
		}
	}
}
