package client

import "testing"

// TestLiveBuckets: every value lies in its bucket, whose top is at most
// 12.5 % above the value, and buckets never go down as values go up.
func TestLiveBuckets(t *testing.T) {
	prev := -1
	for _, v := range []uint32{0, 1, 7, 8, 9, 15, 16, 17, 100, 999, 1000, 123456, 1 << 31, 1<<32 - 1} {
		b := liveBucket(v)
		hi := liveBucketHigh(b)
		if b < prev || b >= liveBuckets || uint64(v) > hi || float64(hi) > float64(v)*1.125+1 {
			t.Errorf("%d µs: bucket %d (previous %d), top %d", v, b, prev, hi)
		}
		prev = b
	}
	var h liveHist
	s := LiveStats{}
	for v := uint32(1); v <= 1000; v++ {
		h.add(v * 10)
	}
	for i := range h {
		s.hist[i] = h[i].Load()
		s.count += s.hist[i]
	}
	if p, ok := s.Percentile(99); !ok || p < 9900 || p > 11138 {
		t.Errorf("p99 of 10..10000 µs: %d, %v", p, ok)
	}
	if _, ok := (&LiveStats{}).Percentile(99); ok {
		t.Error("p99 of nothing")
	}
}

// BenchmarkLiveAdd is the status line's cost per recorded request: one
// bucket's load and store, nothing allocated.
func BenchmarkLiveAdd(b *testing.B) {
	var h liveHist
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.add(uint32(i & 0xffff))
	}
}
