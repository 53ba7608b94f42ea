package report

import "slices"

// radixThreshold is the size below which slices.Sort is faster than the
// four counting passes.
const radixThreshold = 256

// sortUint32 sorts values ascending with an LSD radix sort (four 8-bit
// passes), using scratch (len ≥ len(values)) as the second buffer. Sorting
// the four columns of 10^7 samples this way takes well under a second, where
// a comparison sort takes several.
func sortUint32(values, scratch []uint32) {
	n := len(values)
	if n < radixThreshold {
		slices.Sort(values)
		return
	}
	src, dst := values, scratch[:n]
	for shift := uint(0); shift < 32; shift += 8 {
		var counts [256]int
		for _, v := range src {
			counts[(v>>shift)&0xFF]++
		}
		if counts[(src[0]>>shift)&0xFF] == n {
			continue // every value shares this byte: the pass would not move anything
		}
		pos := 0
		for b, c := range counts {
			counts[b] = pos
			pos += c
		}
		for _, v := range src {
			b := (v >> shift) & 0xFF
			dst[counts[b]] = v
			counts[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &values[0] {
		copy(values, src)
	}
}
