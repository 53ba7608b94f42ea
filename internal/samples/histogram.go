package samples

import (
	"math/bits"
	"sync/atomic"
)

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

// Field is the histogram of field f.
func (h *Histograms) Field(f Field) *Column {
	switch f {
	case Connect:
		return &h.Connect
	case Processing:
		return &h.Processing
	case Wait:
		return &h.Wait
	}
	return &h.Total
}
