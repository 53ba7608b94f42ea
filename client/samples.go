package client

import (
	"cmp"
	"math/bits"
	"slices"
	"sync/atomic"
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

// Samples stores one Sample per recorded request, filled lock-free by request
// index (the order in which ab records them). Past its limit it keeps 1 ms
// histograms with exact sums instead, so memory stays flat.
type Samples struct {
	exact []Sample                   // preallocated; written by index, no lock
	count atomic.Int64               // recorded requests (exact and histogram)
	histP atomic.Pointer[Histograms] // allocated only when the limit is passed
	spill *spillStore                // samples past the limit, on disk too (SpillPastLimit); nil otherwise
}

// NewSamples returns a store for up to n requests, of which at most limit are
// kept exactly.
func NewSamples(n, limit int) *Samples {
	if limit <= 0 {
		limit = DefaultSampleLimit
	}
	size := n
	if size > limit {
		size = limit
	}
	if size < 0 {
		size = 0
	}
	return &Samples{exact: make([]Sample, size)}
}

// SpillPastLimit makes the store keep every sample past its exact limit in a
// temporary file in dir ("" means os.TempDir()) as well as in the histograms,
// for the -g file (see spill.go). Call it before recording; Close releases
// the file.
func (s *Samples) SpillPastLimit(dir string) { s.spill = newSpillStore(dir) }

// put stores sample number i (0-based). It is safe for concurrent use with
// distinct i and distinct batches. batch is the recording worker's own spill
// buffer (see spill.go); nil spills at once, under the store's lock.
func (s *Samples) put(i int, smp Sample, batch *[]Sample) {
	if i < len(s.exact) {
		s.exact[i] = smp
	} else {
		s.histograms().add(smp)
		if s.spill != nil {
			s.spillSample(smp, batch)
		}
	}
	s.count.Add(1)
}

func (s *Samples) spillSample(smp Sample, batch *[]Sample) {
	if batch == nil {
		s.spill.add([]Sample{smp})
		return
	}
	if *batch == nil {
		*batch = make([]Sample, 0, spillBatch)
	}
	*batch = append(*batch, smp)
	if len(*batch) >= spillBatch {
		s.spill.add(*batch)
		*batch = (*batch)[:0]
	}
}

// flushBatch moves a worker's spill buffer into the store; the run's end
// calls it for every worker once they have all stopped.
func (s *Samples) flushBatch(batch *[]Sample) {
	if s.spill != nil {
		s.spill.flushBatch(batch)
	}
}

func (s *Samples) histograms() *Histograms {
	if h := s.histP.Load(); h != nil {
		return h
	}
	h := NewHistograms()
	if s.histP.CompareAndSwap(nil, h) {
		return h
	}
	return s.histP.Load()
}

// Len is the number of recorded requests.
func (s *Samples) Len() int { return int(s.count.Load()) }

// Exact returns the exactly stored samples (all of them unless Overflowed).
// Callers may reorder the slice in place (the report sorts it).
func (s *Samples) Exact() []Sample {
	n := s.Len()
	if n > len(s.exact) {
		n = len(s.exact)
	}
	return s.exact[:n]
}

// Rows is the number of samples EachByTotal yields: every recorded request
// when nothing overflowed or the store spills past its limit, else the exact ones.
func (s *Samples) Rows() int {
	n := len(s.Exact())
	if s.spill != nil {
		n += int(s.spill.count())
	}
	return n
}

// EachByTotal calls emit for every exactly stored sample and every spilled
// one, in CompareByTotal order (the -g file's rows), stopping at emit's first
// error. It sorts Exact() in place. A failure of the temporary file (during
// the run or now) is returned before emit is called, or when the reading
// fails. It allocates nothing per sample; it must not run concurrently with
// recording or with itself.
func (s *Samples) EachByTotal(emit func(Sample) error) error {
	exact := s.Exact()
	SortByTotal(exact)
	if s.spill != nil {
		return s.spill.eachSorted(exact, emit)
	}
	for _, smp := range exact {
		if err := emit(smp); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the temporary file of a spilling store (its name is removed
// as soon as it is created, so nothing is left on disk even without Close).
// EachByTotal fails after it.
func (s *Samples) Close() error {
	if s.spill == nil {
		return nil
	}
	return s.spill.close()
}

// Overflowed reports whether more requests were recorded than the exact store holds.
func (s *Samples) Overflowed() bool { return s.histP.Load() != nil }

// Histograms returns the histograms of every recorded request (exact samples
// folded in), or nil when nothing overflowed.
func (s *Samples) Histograms() *Histograms {
	h := s.histP.Load()
	if h == nil {
		return nil
	}
	if !h.folded {
		for _, smp := range s.Exact() {
			h.add(smp)
		}
		h.folded = true
	}
	return h
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

// Histograms hold one Column per ab column, for runs past the exact store's limit.
type Histograms struct {
	Connect, Processing, Wait, Total Column
	folded                           bool
}

// NewHistograms returns empty histograms.
func NewHistograms() *Histograms { return &Histograms{} }

func (h *Histograms) add(s Sample) {
	h.Connect.Add(s.Connect)
	h.Processing.Add(s.Processing())
	h.Wait.Add(s.Wait)
	h.Total.Add(s.Total)
}

// ColumnBuckets is the number of 1 ms buckets (values past the last go to Over).
const ColumnBuckets = 120_000

// Column is a histogram of one column with 1 ms buckets aligned to ab's
// rounding: bucket k holds the values that ab prints as k ms, (µs+500)/1000 = k.
// Count, sum, sum of squares, min and max are exact. Safe for concurrent Add.
type Column struct {
	Buckets [ColumnBuckets]atomic.Uint64
	// Over counts values of ColumnBuckets ms and more; their exact ms values are
	// lost only for the median and percentiles, which then print the bucket bound.
	Over        atomic.Uint64
	Count       atomic.Uint64
	Sum         atomic.Uint64
	sumSqHi     atomic.Uint64
	sumSqLo     atomic.Uint64
	min, maxPl1 atomic.Uint64 // maxPl1 = max+1 so that zero means unset; min stored as ^v
}

// Add records one value in µs.
func (c *Column) Add(us uint32) {
	ms := (uint64(us) + 500) / 1000
	if ms < ColumnBuckets {
		c.Buckets[ms].Add(1)
	} else {
		c.Over.Add(1)
	}
	c.Count.Add(1)
	c.Sum.Add(uint64(us))
	hi, lo := bits.Mul64(uint64(us), uint64(us))
	// 128-bit add with carry; a lost race here cannot happen because lo and hi
	// are updated with atomics and the carry is added to hi separately.
	newLo := c.sumSqLo.Add(lo)
	if newLo < lo {
		hi++
	}
	c.sumSqHi.Add(hi)
	for {
		m := c.min.Load()
		if m != 0 && ^m <= uint64(us) {
			break
		}
		if c.min.CompareAndSwap(m, ^uint64(us)) {
			break
		}
	}
	for {
		m := c.maxPl1.Load()
		if m != 0 && m-1 >= uint64(us) {
			break
		}
		if c.maxPl1.CompareAndSwap(m, uint64(us)+1) {
			break
		}
	}
}

// Min and Max are the exact extremes in µs (0 when empty).
func (c *Column) Min() uint64 {
	if m := c.min.Load(); m != 0 {
		return ^m
	}
	return 0
}

// Max is the largest value in µs.
func (c *Column) Max() uint64 {
	if m := c.maxPl1.Load(); m != 0 {
		return m - 1
	}
	return 0
}

// SumSquares is Σx² as a 128-bit value (hi, lo).
func (c *Column) SumSquares() (hi, lo uint64) { return c.sumSqHi.Load(), c.sumSqLo.Load() }
