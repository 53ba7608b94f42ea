package report

import (
	"math"
	"math/big"
	"time"
)

// This file holds ab's arithmetic, one named function per rule, so that each
// quirk is tested on its own. Times are integer microseconds unless a name
// says otherwise; "ms" values are what ab prints.

// roundMs is ab's ap_round_ms: microseconds to milliseconds, round half up.
func roundMs(us int64) int64 { return (us + 500) / 1000 }

// doubleMs is ab's ap_double_ms: microseconds to fractional milliseconds.
func doubleMs(us float64) float64 { return us / 1000 }

// truncatedMean is ab's mean: the integer sum divided by the count, truncated
// to whole microseconds (0 for no values).
func truncatedMean(sum uint64, n int) int64 {
	if n <= 0 {
		return 0
	}
	return int64(sum / uint64(n))
}

// sampleSD is ab's standard deviation from the sum of squared deviations from
// the truncated mean: sqrt(Σ(x−mean)²/(n−1)), and 0 for a single value.
func sampleSD(sumSquaredDeviations float64, n int) float64 {
	if n <= 1 {
		return 0
	}
	return math.Sqrt(sumSquaredDeviations / float64(n-1))
}

// squaredDeviationsExact is Σ(x−mean)² from a histogram's exact sums:
// Σx² − 2·mean·Σx + n·mean², computed with big integers so that a narrow
// distribution of large values loses nothing to cancellation.
func squaredDeviationsExact(sumSqHi, sumSqLo, sum uint64, n uint64, mean int64) float64 {
	return squaredDeviationsBig(uint128(sumSqHi, sumSqLo), sum, n, mean)
}

// squaredDeviationsBig is squaredDeviationsExact with Σx² as a big integer
// (which it modifies).
func squaredDeviationsBig(sq *big.Int, sum uint64, n uint64, mean int64) float64 {
	m := big.NewInt(mean)
	twoMS := new(big.Int).Mul(m, new(big.Int).SetUint64(sum))
	twoMS.Lsh(twoMS, 1)
	nm2 := new(big.Int).Mul(m, m)
	nm2.Mul(nm2, new(big.Int).SetUint64(n))
	sq.Sub(sq, twoMS)
	sq.Add(sq, nm2)
	f, _ := new(big.Float).SetInt(sq).Float64()
	return f
}

// medianIndexes returns the indexes ab averages for its median of n sorted
// values. ab inverts the textbook rule: for odd n > 1 it averages v[n/2] and
// v[n/2+1]; for even n (and n == 1) it takes v[n/2] alone (lo == hi).
func medianIndexes(n int) (lo, hi int) {
	i := n / 2
	if n > 1 && n%2 == 1 {
		return i, i + 1
	}
	return i, i
}

// abMedian is ab's median of sorted values (µs), truncated to µs; 0 when empty.
func abMedian(sorted []uint32) int64 {
	if len(sorted) == 0 {
		return 0
	}
	lo, hi := medianIndexes(len(sorted))
	return (int64(sorted[lo]) + int64(sorted[hi])) / 2
}

// percentileIndex is ab's index into the total-sorted samples for the row p
// (50…99) of its percentile table: done·p/100 in integer arithmetic. The 100%
// row uses done−1 instead; so does any p at which the index would run past
// the data.
func percentileIndex(done, p int) int {
	if p >= 100 {
		return done - 1
	}
	return clampIndex(int(int64(done)*int64(p)/100), done)
}

// csvIndex is the -e file's index for row i (0…100): v[0] for row 0,
// v[done−1] for row 100, else v[floor(0.5 + done·i/100)].
//
// gab fix: where that index equals done (done·i/100 ≥ done − 0.5, e.g. rows
// 95–99 for done = 10), ab reads one element past its data and prints a zero
// or heap garbage (0.257 in the captured csv-n10.csv); gab prints the last
// sample instead.
func csvIndex(done, i int) int {
	switch {
	case i <= 0:
		return 0
	case i >= 100:
		return done - 1
	}
	return clampIndex(int(0.5+float64(done)*float64(i)/100.0), done)
}

func clampIndex(i, n int) int {
	if i >= n {
		return n - 1
	}
	if i < 0 {
		return 0
	}
	return i
}

// confidence is ab's verdict on a column's mean and median (the WARNING and
// ERROR lines under its Connection Times table), named as the JSON document
// names it.
type confidence string

const (
	// Reliable: the median and the mean are within one standard deviation.
	reliable confidence = "reliable"
	// NotWithinDeviation: ab's WARNING, |mean − median| > sd.
	notWithinDeviation confidence = "warning"
	// MoreThanTwiceApart: ab's ERROR, |mean − median| > 2·sd.
	moreThanTwiceApart confidence = "error"
)

// confidenceOf is ab's SANE test on the printed (ms) mean and median and the
// sd in ms as a double.
func confidenceOf(meanMs, medianMs int64, sdMs float64) confidence {
	d := math.Abs(float64(meanMs) - float64(medianMs))
	switch {
	case d > 2*sdMs:
		return moreThanTwiceApart
	case d > sdMs:
		return notWithinDeviation
	}
	return reliable
}

// htmlAverage is the HTML report's avg: the column's sum rounded to ms first,
// then divided by the count in integer arithmetic (unlike the text report).
func htmlAverage(sumUs uint64, n int) int64 {
	if n <= 0 {
		return 0
	}
	return roundMs(int64(sumUs)) / int64(n)
}

// secondsTaken is ab's timetaken: the elapsed time in whole microseconds
// (ab's clock resolution), as seconds.
func secondsTaken(elapsed time.Duration) float64 {
	return float64(elapsed.Microseconds()) / 1e6
}

// requestsPerSecond is done / T.
func requestsPerSecond(done int, seconds float64) float64 {
	return float64(done) / seconds
}

// timePerRequest is ab's first "Time per request": c·T·1000/done (ms).
func timePerRequest(concurrency int, seconds float64, done int) float64 {
	return float64(concurrency) * seconds * 1000 / float64(done)
}

// timePerRequestAcross is ab's second "Time per request": T·1000/done (ms).
func timePerRequestAcross(seconds float64, done int) float64 {
	return seconds * 1000 / float64(done)
}

// kilobytesPerSecond is ab's transfer rate: bytes/1024/T.
func kilobytesPerSecond(bytes int64, seconds float64) float64 {
	return float64(bytes) / 1024 / seconds
}
