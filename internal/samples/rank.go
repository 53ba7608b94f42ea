package samples

import (
	"math/big"
	"math/bits"
	"sort"
	"strconv"
)

// Field names one of ab's four timing columns of a Sample.
type Field int

const (
	Connect    Field = iota // ab's ctime: start → connection ready
	Processing              // Total − Connect
	Wait                    // request written → first response byte
	Total                   // start → response complete
)

// Value is the sample's value of field f in µs.
func (s Sample) Value(f Field) uint32 {
	switch f {
	case Connect:
		return s.Connect
	case Processing:
		return s.Processing()
	case Wait:
		return s.Wait
	}
	return s.Total
}

// Ranks answers "the value of rank i in a field's ascending order" over every
// request a Store recorded: exactly from the exact samples, or, once the store
// overflowed, from the 1 ms histograms (a bucket's value, clamped to the exact
// min and max). The report's medians and percentiles and the -e file read it.
// It is not safe for concurrent use.
type Ranks struct {
	// Exact mode: the samples sorted by CompareByTotal (Total ranks read them
	// directly; other fields' ranks come from a radix select over them, with
	// counts as its scratch).
	byTotal []Sample
	counts  *rankCounts
	hist    [4]*bucketRanks // histogram mode
	n       int
}

// Ranks sorts the store's exact samples in place into CompareByTotal's order
// (the -g file's order) and returns rank queries over every recorded request.
// In exact mode its memory is a constant 256 KB, whatever the number of
// samples; in histogram mode, one cumulative count per 1 ms bucket and field.
func (s *Store) Ranks() *Ranks {
	if s.Overflowed() {
		h := s.Histograms()
		r := &Ranks{n: int(h.Total.Count.Load())}
		for f := range r.hist {
			r.hist[f] = newBucketRanks(h.Field(Field(f)))
		}
		return r
	}
	exact := s.Exact()
	SortByTotal(exact)
	return &Ranks{byTotal: exact, counts: new(rankCounts), n: len(exact)}
}

// NearestRank is the 1-based rank of percentile p (0…100) among n values by
// the nearest-rank rule HdrHistogram's ValueAtQuantile states: p/100·n
// rounded half up, floor(p·n/100 + ½), within 1…n (0 when n is 0). p is taken
// as the decimal the user wrote (the shortest decimal that reads back as p)
// and the rank is computed exactly, in integers: 99.99 of 5000 is 4999.5,
// rank 5000. HdrHistogram's Go library computes the same rule in floating
// point, where p/100 is rounded to binary, so wherever p·n/100 is exactly
// k + ½ its product can fall just below and it takes rank k (99.99 of 5000:
// 4999); everywhere else the two agree. The figures beyond ab's use it; ab's
// own tables keep ab's index rule.
func NearestRank(n int64, p float64) int64 {
	switch {
	case n <= 0:
		return 0
	case !(p > 0): // NaN, 0 and below
		return 1
	case p >= 100:
		return n
	}
	// p = m/10^d exactly, from p's shortest decimal ("9.999e+01": m 9999,
	// d 2); rank = floor((2·m·n + 100·10^d) / (200·10^d)), in 128 bits where
	// 200·10^d fits in 64, else in math/big.
	var buf [32]byte
	dec := strconv.AppendFloat(buf[:0], p, 'e', -1, 64)
	var m uint64
	digits, exp := 0, 0
	for i, c := range dec {
		if c == 'e' {
			exp, _ = strconv.Atoi(string(dec[i+1:]))
			break
		}
		if c >= '0' && c <= '9' {
			m = m*10 + uint64(c-'0')
			digits++
		}
	}
	d := digits - 1 - exp
	for ; d < 0; d++ { // a whole p below 100: "5e+01" is 50
		m *= 10
	}
	var q int64
	if d <= 16 {
		pow := uint64(1)
		for range d {
			pow *= 10
		}
		hi, lo := bits.Mul64(2*m, uint64(n)) // m < 10^17, so 2·m < 2^58
		var carry uint64
		lo, carry = bits.Add64(lo, 100*pow, 0)
		hi += carry
		quo, _ := bits.Div64(hi, lo, 200*pow) // below n + 1: p < 100
		q = int64(quo)
	} else {
		r := new(big.Rat).SetFrac(new(big.Int).SetUint64(m), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d)), nil))
		r.Mul(r, big.NewRat(n, 50)) // 2·p·n/100
		z := new(big.Int).Add(r.Num(), r.Denom())
		z.Quo(z, new(big.Int).Mul(big.NewInt(2), r.Denom()))
		q = z.Int64() // at most n + 1: p < 100
	}
	return max(1, min(n, q))
}

// Len is the number of ranks (recorded requests).
func (r *Ranks) Len() int { return r.n }

// FromHistograms says the ranks resolve to 1 ms buckets, not exact values.
func (r *Ranks) FromHistograms() bool { return r.hist[0] != nil }

// ValueAt is the value in µs of rank i (0-based, i < Len()) in field f's
// ascending order. In exact mode a field other than Total costs two passes
// over the samples.
func (r *Ranks) ValueAt(f Field, i int) int64 {
	switch {
	case r.FromHistograms():
		return r.hist[f].valueAt(uint64(i))
	case f == Total:
		return int64(r.byTotal[i].Total)
	}
	return int64(selectRank(r.byTotal, f, i, r.counts))
}

// rankCounts are the radix select's counters: one per 16-bit digit, reused
// for both passes, so that a rank query costs 256 KB whatever the run's size.
// A count fits in uint32 because the exact store cannot hold 2^32 samples
// (that would be 64 GiB).
type rankCounts [1 << 16]uint32

// selectRank returns the value of rank k (0-based, k < len(samples)) in the
// field's ascending order, exactly, without sorting or copying: pass 1
// counts the values' high 16 bits to find the bucket holding rank k, pass 2
// counts the low 16 bits of the values in that bucket.
func selectRank(samples []Sample, f Field, k int, counts *rankCounts) uint32 {
	clear(counts[:])
	forEachValue(samples, f, func(v uint32) { counts[v>>16]++ })
	high, k := digitHolding(counts, k)
	clear(counts[:])
	forEachValue(samples, f, func(v uint32) {
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
	panic("samples: rank out of range")
}

// forEachValue calls f with the field's value of every sample. The field
// switch sits outside the loops so that each loop inlines fn.
func forEachValue(samples []Sample, f Field, fn func(uint32)) {
	switch f {
	case Connect:
		for i := range samples {
			fn(samples[i].Connect)
		}
	case Processing:
		for i := range samples {
			fn(samples[i].Processing())
		}
	case Wait:
		for i := range samples {
			fn(samples[i].Wait)
		}
	default:
		for i := range samples {
			fn(samples[i].Total)
		}
	}
}

// bucketRanks answers rank queries over a Column's 1 ms buckets.
type bucketRanks struct {
	cumulative []uint64 // cumulative[k] = number of values in buckets 0…k (Over last)
	min, max   int64
}

func newBucketRanks(col *Column) *bucketRanks {
	r := &bucketRanks{
		cumulative: make([]uint64, ColumnBuckets+1),
		min:        int64(col.Min()),
		max:        int64(col.Max()),
	}
	var total uint64
	for k := range col.Buckets {
		total += col.Buckets[k].Load()
		r.cumulative[k] = total
	}
	r.cumulative[ColumnBuckets] = total + col.Over.Load()
	return r
}

// valueAt returns the value of rank i: its bucket's ms value in µs, clamped to
// the exact min and max (so rank 0 and the last rank are exact). A rank in
// the overflow bucket gets the bucket bound, or the max if smaller.
func (r *bucketRanks) valueAt(i uint64) int64 {
	k := sort.Search(len(r.cumulative), func(k int) bool { return r.cumulative[k] > i })
	if i+1 >= r.cumulative[len(r.cumulative)-1] {
		return r.max
	}
	if i == 0 {
		return r.min
	}
	v := int64(k) * 1000
	return min(max(v, r.min), r.max)
}
