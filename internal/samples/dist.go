package samples

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry for every HDR histogram gab keeps: values in µs from 1 µs
// to 24 hours, 3 significant digits (a recorded value is known to within 0.1 %).
const (
	HistLowestUS  = 1
	HistHighestUS = 24 * 3600 * 1_000_000
	HistDigits    = 3
)

// NewHist returns an empty histogram with gab's geometry (µs, 3 significant digits).
func NewHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistLowestUS, HistHighestUS, HistDigits)
}

// Dist is the distribution of one measured quantity in µs: exact count, sum,
// sum of squares, min and max, and an HDR histogram (3 significant digits) for
// the median and percentiles.
type Dist struct {
	Hist     *hdrhistogram.Histogram
	Count    int64
	Min, Max int64 // µs, exact
	Sum      int64 // µs, exact
	// Welford's running mean and sum of squared deviations, merged with Chan's
	// formula: no cancellation when the sd is tiny beside the mean.
	mean, m2 float64
}

// NewDist returns an empty distribution.
func NewDist() Dist { return Dist{Hist: NewHist()} }

// DistOf rebuilds a distribution from the figures a document carries (count,
// min, max, sum, sample sd and histogram), so that distributions read back
// merge with Merge exactly as the live ones do.
func DistOf(count, minUs, maxUs, sumUs int64, sdUs float64, h *hdrhistogram.Histogram) Dist {
	d := Dist{Hist: h, Count: count, Min: minUs, Max: maxUs, Sum: sumUs}
	if count > 0 {
		d.mean = float64(sumUs) / float64(count)
	}
	if count > 1 {
		d.m2 = sdUs * sdUs * float64(count-1)
	}
	return d
}

// Add records one value in µs (negative values count as 0). Not safe for
// concurrent use.
func (d *Dist) Add(us int64) {
	if us < 0 {
		us = 0
	}
	if d.Count == 0 || us < d.Min {
		d.Min = us
	}
	if us > d.Max {
		d.Max = us
	}
	d.Count++
	d.Sum += us
	delta := float64(us) - d.mean
	d.mean += delta / float64(d.Count)
	d.m2 += delta * (float64(us) - d.mean)
	if us > HistHighestUS {
		us = HistHighestUS // only the histogram clamps; min, max and sums stay exact
	}
	_ = d.Hist.RecordValue(us) // cannot fail: 0 ≤ us ≤ the histogram's highest value
}

// Merge adds o's values to d (Chan's formula for the deviations, so that
// shards merge to the figures of the whole).
func (d *Dist) Merge(o *Dist) {
	if o.Count == 0 {
		return
	}
	if d.Count == 0 || o.Min < d.Min {
		d.Min = o.Min
	}
	if o.Max > d.Max {
		d.Max = o.Max
	}
	d.mean, d.m2 = MergeMoments(d.Count, d.mean, d.m2, o.Count, o.mean, o.m2)
	d.Count += o.Count
	d.Sum += o.Sum
	d.Hist.Merge(o.Hist)
}

// MergeMoments combines two groups' counts, means and sums of squared
// deviations from their means (m2 = (n−1)·sd²) into those of all their values
// together (Chan's formula: no cancellation when the sd is tiny beside the
// mean).
func MergeMoments(na int64, meanA, m2A float64, nb int64, meanB, m2B float64) (mean, m2 float64) {
	if nb == 0 {
		return meanA, m2A
	}
	if na == 0 {
		return meanB, m2B
	}
	n := float64(na + nb)
	delta := meanB - meanA
	return meanA + delta*float64(nb)/n, m2A + m2B + delta*delta*float64(na)*float64(nb)/n
}

// Mean is the exact mean in µs (0 when empty).
func (d *Dist) Mean() float64 {
	if d.Count == 0 {
		return 0
	}
	return float64(d.Sum) / float64(d.Count)
}

// SD is the sample standard deviation in µs (n−1 in the denominator, as ab's),
// 0 for fewer than two values.
func (d *Dist) SD() float64 {
	if d.Count < 2 {
		return 0
	}
	if d.m2 <= 0 {
		return 0
	}
	return math.Sqrt(d.m2 / float64(d.Count-1))
}

// Percentile is the value at percentile p (0..100) in µs by the nearest-rank
// rule of HdrHistogram's ValueAtQuantile (NearestRank), read from the
// histogram: the highest value of the 3-significant-digit bucket that holds
// that rank (HDR's convention), never above the exact maximum. p = 0 is the
// exact minimum.
func (d *Dist) Percentile(p float64) int64 {
	if d.Count == 0 {
		return 0
	}
	if p <= 0 {
		return d.Min
	}
	return d.AtIndex(NearestRank(d.Count, p) - 1)
}

// AtIndex is the value of the idx-th smallest recorded value (0-based, clamped
// to the last) as the histogram knows it: its bucket's highest value, capped by
// the exact min and max.
func (d *Dist) AtIndex(idx int64) int64 {
	if d.Count == 0 {
		return 0
	}
	if idx >= d.Count {
		idx = d.Count - 1
	}
	if idx < 0 {
		idx = 0
	}
	v := HistAtIndex(d.Hist, idx)
	if v > d.Max {
		v = d.Max
	}
	if v < d.Min {
		v = d.Min
	}
	return v
}

// HistAtIndex is the highest equivalent value of the bucket holding the idx-th
// smallest value (0-based) of h; the last bucket's if idx is past the end.
func HistAtIndex(h *hdrhistogram.Histogram, idx int64) int64 {
	total := h.TotalCount()
	if total == 0 {
		return 0
	}
	rank := min(max(idx+1, 1), total)
	// ValueAtPercentile looks up rank int(p/100·total + 0.5), so this p names
	// rank exactly (the 0.5 absorbs any rounding of the division).
	return h.ValueAtPercentile(100 * float64(rank) / float64(total))
}
