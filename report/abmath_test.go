package report

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func TestRoundMs(t *testing.T) {
	for _, tc := range []struct{ us, want int64 }{
		{0, 0}, {499, 0}, {500, 1}, {1499, 1}, {1500, 2}, {999_999, 1000}, {23_021, 23},
	} {
		if got := roundMs(tc.us); got != tc.want {
			t.Errorf("roundMs(%d) = %d, want %d", tc.us, got, tc.want)
		}
	}
}

func TestDoubleMs(t *testing.T) {
	if got := doubleMs(1250); got != 1.25 {
		t.Errorf("doubleMs(1250) = %v, want 1.25", got)
	}
}

func TestTruncatedMean(t *testing.T) {
	for _, tc := range []struct {
		sum  uint64
		n    int
		want int64
	}{
		{0, 0, 0}, {10, 3, 3}, {11, 3, 3}, {2999, 1000, 2}, {27_774, 3, 9258},
	} {
		if got := truncatedMean(tc.sum, tc.n); got != tc.want {
			t.Errorf("truncatedMean(%d, %d) = %d, want %d", tc.sum, tc.n, got, tc.want)
		}
	}
}

func TestSampleSD(t *testing.T) {
	// Values 1000, 2000, 4000: truncated mean 2333; squared deviations
	// 1333² + 333² + 1667² = 1776889 + 110889 + 2778889 = 4666667.
	if got, want := sampleSD(4_666_667, 3), math.Sqrt(4_666_667.0/2); got != want {
		t.Errorf("sampleSD = %v, want %v", got, want)
	}
	if got := sampleSD(123, 1); got != 0 {
		t.Errorf("sampleSD with one value = %v, want 0", got)
	}
	if got := sampleSD(0, 0); got != 0 {
		t.Errorf("sampleSD with no value = %v, want 0", got)
	}
}

func TestSquaredDeviationsExact(t *testing.T) {
	// 1000, 2000, 4000: Σx = 7000, Σx² = 21e6, mean 2333:
	// 21e6 − 2·2333·7000 + 3·2333² = 21000000 − 32662000 + 16328667 = 4666667.
	if got := squaredDeviationsExact(0, 21_000_000, 7000, 3, 2333); got != 4_666_667 {
		t.Errorf("squaredDeviationsExact = %v, want 4666667", got)
	}
	// Σx² past 2^64: 2^32 values of 2^32 µs would overflow; use hi word 1,
	// lo 0 (Σx² = 2^64) for 4 values of 2^31 with mean 2^31: deviation 0.
	if got := squaredDeviationsExact(1, 0, 1<<33, 4, 1<<31); got != 0 {
		t.Errorf("squaredDeviationsExact with a 128-bit sum = %v, want 0", got)
	}
}

func TestMedianIndexes(t *testing.T) {
	for _, tc := range []struct{ n, lo, hi int }{
		{1, 0, 0}, // one value: v[0]
		{2, 1, 1}, // even: the upper middle alone
		{3, 1, 2}, // odd: ab averages v[1] and v[2], not the middle one
		{4, 2, 2},
		{5, 2, 3},
	} {
		lo, hi := medianIndexes(tc.n)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("medianIndexes(%d) = %d,%d, want %d,%d", tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

func TestABMedian(t *testing.T) {
	for _, tc := range []struct {
		sorted []uint32
		want   int64
	}{
		{nil, 0},
		{[]uint32{7}, 7},
		{[]uint32{742, 4011, 23021}, 13516},         // (4011+23021)/2, the median-odd case
		{[]uint32{1, 2, 4}, 3},                      // (2+4)/2
		{[]uint32{1, 2, 5}, 3},                      // (2+5)/2 = 3.5 truncated
		{[]uint32{4000, 6000, 21000, 24000}, 21000}, // even: v[2]
	} {
		if got := abMedian(tc.sorted); got != tc.want {
			t.Errorf("abMedian(%v) = %d, want %d", tc.sorted, got, tc.want)
		}
	}
}

func TestPercentileIndex(t *testing.T) {
	for _, tc := range []struct{ done, p, want int }{
		{3, 50, 1}, {3, 66, 1}, {3, 75, 2}, {3, 99, 2}, {3, 100, 2},
		{10, 50, 5}, {10, 95, 9}, {10, 99, 9}, {100, 99, 99}, {100, 100, 99},
		{1000, 66, 660},
	} {
		if got := percentileIndex(tc.done, tc.p); got != tc.want {
			t.Errorf("percentileIndex(%d, %d) = %d, want %d", tc.done, tc.p, got, tc.want)
		}
	}
}

func TestCSVIndex(t *testing.T) {
	for _, tc := range []struct{ done, i, want int }{
		{10, 0, 0}, {10, 4, 0}, {10, 5, 1}, {10, 14, 1}, {10, 15, 2}, {10, 94, 9},
		{10, 95, 9}, // ab reads v[10], past the data; gab clamps to the last
		{10, 99, 9},
		{10, 100, 9},
		{20, 3, 1}, {20, 2, 0}, {1, 50, 0}, {1, 49, 0},
	} {
		if got := csvIndex(tc.done, tc.i); got != tc.want {
			t.Errorf("csvIndex(%d, %d) = %d, want %d", tc.done, tc.i, got, tc.want)
		}
	}
}

func TestConfidenceOf(t *testing.T) {
	for _, tc := range []struct {
		mean, median int64
		sd           float64
		want         confidence
	}{
		{1, 0, 0.4, moreThanTwiceApart}, // rounding alone gives ERROR
		{1, 0, 0.5, notWithinDeviation}, // d = 1 > 0.5, not > 1.0
		{1, 0, 0.8, notWithinDeviation}, // sane-error's WARNING rows
		{1, 0, 1.0, reliable},           // d = 1 is not > 1.0
		{0, 0, 0.0, reliable},
		{9, 13, 12.0, reliable},
		{13, 21, 3.9, moreThanTwiceApart},
		{21, 13, 4.0, notWithinDeviation}, // d = 8 = 2·sd: not "more than twice"
	} {
		if got := confidenceOf(tc.mean, tc.median, tc.sd); got != tc.want {
			t.Errorf("confidenceOf(%d, %d, %v) = %v, want %v", tc.mean, tc.median, tc.sd, got, tc.want)
		}
	}
}

func TestHTMLAverage(t *testing.T) {
	for _, tc := range []struct {
		sum  uint64
		n    int
		want int64
	}{
		{2499, 2, 1}, // roundMs(2499)/2 = 2/2
		{5600, 4, 1}, // roundMs(5600)/4 = 6/4
		// The text mean of 700 and 700 is roundMs(700) = 1; HTML's is
		// roundMs(1400)/2 = 1/2 = 0.
		{1400, 2, 0},
		{0, 0, 0},
	} {
		if got := htmlAverage(tc.sum, tc.n); got != tc.want {
			t.Errorf("htmlAverage(%d, %d) = %d, want %d", tc.sum, tc.n, got, tc.want)
		}
	}
}

func TestRates(t *testing.T) {
	secs := secondsTaken(8283*time.Microsecond + 999*time.Nanosecond) // ns below a µs are dropped
	if secs != 0.008283 {
		t.Fatalf("secondsTaken = %v, want 0.008283", secs)
	}
	// plain-100b: 100 requests, -c 10, 33300 bytes read.
	for _, tc := range []struct {
		name string
		got  float64
		want string
		fmt  string
	}{
		{"requests per second", requestsPerSecond(100, secs), "12072.92", "%.2f"},
		{"time per request", timePerRequest(10, secs, 100), "0.828", "%.3f"},
		{"time per request across", timePerRequestAcross(secs, 100), "0.083", "%.3f"},
		{"transfer rate", kilobytesPerSecond(33300, secs), "3926.06", "%.2f"},
	} {
		if got := fmt.Sprintf(tc.fmt, tc.got); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.name, got, tc.want)
		}
	}
}
