// Package samples is gab's store of per-request timings: one 16-byte Sample
// per recorded request, kept exactly up to a limit and in 1 ms histograms
// (with exact sums) past it, optionally spilled to a temporary file so that
// the -g file still gets every row. It also holds ab's row order
// (CompareByTotal, sorted by SortByTotal), the rank queries the report's
// medians and percentiles are read from (Ranks), and Dist, the HDR-histogram
// distribution used for the figures beyond ab's.
//
// The client fills a Store while a run goes on; report and gnuplot read it
// afterwards. Nothing here knows about HTTP or about how figures are printed.
package samples

import (
	"cmp"
	"slices"
)

// Sample is one recorded request in ab's terms: 16 bytes, so a million
// requests cost 16 MB (ab keeps 32 bytes each). Durations are in µs.
type Sample struct {
	// Start is the request's wall-clock start in whole milliseconds since
	// Result.Start's millisecond: floor(start_µs/1000) − floor(runStart_µs/1000).
	// Result.Start.UnixMilli()+Start is then the start in epoch ms, truncated,
	// and its division by 1000 is exactly ab's apr_time_sec(start) for the -g
	// file. It needs no unwrap and no recording order; it covers 2^32 ms
	// (49.7 days).
	Start   uint32
	Connect uint32 // ab ctime: start → connection ready (TLS included); 0 on keep-alive reuse
	Wait    uint32 // ab waittime: request written → first response byte
	Total   uint32 // ab time: start → response complete. Processing = Total − Connect
}

// Processing is ab's "Processing" column: Total − Connect (never negative).
func (s Sample) Processing() uint32 {
	if s.Total < s.Connect {
		return 0
	}
	return s.Total - s.Connect
}

// StartMs is Sample.Start for a request that started startNs after a run
// whose start is runStartUs in µs since the epoch: the difference of the two
// instants' whole wall-clock milliseconds (0 for a start before the run's).
func StartMs(runStartUs, startNs int64) uint32 {
	d := (runStartUs+startNs/1000)/1000 - runStartUs/1000
	if d < 0 {
		return 0
	}
	return uint32(d)
}

// CompareByTotal is ab's -g row order, which is also the order of the
// percentile table and the -e file: by Total, ties by Wait, then Processing,
// then Connect (ab sorts with four chained glibc qsorts, stable merge sorts
// there, in the order connect, processing, wait, total), then Start. ab's last
// tie-break is recording (completion) order; among samples equal in every
// duration, start order is completion order, and samples that also start in
// the same millisecond print identical -g rows, so the output is the same.
func CompareByTotal(x, y Sample) int {
	if c := cmp.Compare(x.Total, y.Total); c != 0 {
		return c
	}
	if c := cmp.Compare(x.Wait, y.Wait); c != 0 {
		return c
	}
	if c := cmp.Compare(x.Processing(), y.Processing()); c != 0 {
		return c
	}
	if c := cmp.Compare(x.Connect, y.Connect); c != 0 {
		return c
	}
	return cmp.Compare(x.Start, y.Start)
}

// SortByTotal sorts samples in place into CompareByTotal's order, allocating
// nothing. An already sorted slice costs one linear pass.
func SortByTotal(samples []Sample) {
	if slices.IsSortedFunc(samples, CompareByTotal) {
		return
	}
	radixByTotal(samples, 0)
}

// sortKeyDigits is the length in bytes of CompareByTotal's key: Total, Wait,
// Processing, Connect and Start, most significant byte first.
const sortKeyDigits = 20

// sortKeyDigit is byte d of s's CompareByTotal key.
func sortKeyDigit(s *Sample, d int) byte {
	var v uint32
	switch d >> 2 {
	case 0:
		v = s.Total
	case 1:
		v = s.Wait
	case 2:
		v = s.Processing()
	case 3:
		v = s.Connect
	default:
		v = s.Start
	}
	return byte(v >> (24 - 8*uint(d&3)))
}

// radixByTotal sorts s by the key bytes from digit d on: an in-place MSD
// radix sort (American flag sort), a few linear passes where a comparison
// sort makes ~log2(n) indirect calls per sample (it was a sixth of the
// client's user time at the end of a keep-alive run). Small ranges are
// left to slices.SortFunc.
func radixByTotal(s []Sample, d int) {
	for len(s) > 64 && d < sortKeyDigits {
		var count [256]int
		for i := range s {
			count[sortKeyDigit(&s[i], d)]++
		}
		if count[sortKeyDigit(&s[0], d)] == len(s) {
			d++ // one value of this byte: the next one decides
			continue
		}
		var next, end [256]int
		sum := 0
		for b := range count {
			next[b] = sum
			sum += count[b]
			end[b] = sum
		}
		for b := range count {
			for next[b] < end[b] {
				v := s[next[b]]
				for k := sortKeyDigit(&v, d); int(k) != b; k = sortKeyDigit(&v, d) {
					v, s[next[k]] = s[next[k]], v
					next[k]++
				}
				s[next[b]] = v
				next[b]++
			}
		}
		start := 0
		for b := range count {
			if count[b] > 1 {
				radixByTotal(s[start:end[b]], d+1)
			}
			start = end[b]
		}
		return
	}
	if len(s) > 1 && d < sortKeyDigits {
		slices.SortFunc(s, CompareByTotal)
	}
}
