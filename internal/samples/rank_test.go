package samples

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// NearestRank is floor(p·n/100 + ½) computed exactly for p as written: for
// every n up to 400 and p in 0.01 steps (p = k/100, so the rank is
// floor((2·k·n + 10000)/20000) in integers) and for p with more decimals.
// HdrHistogram's Go library reads the same rank (over the values 1…n, each
// its own bucket, ValueAtQuantile(p) is the rank) except where p·n/100 is
// exactly k + ½ and its floating-point product falls just below: there it
// reads k, NearestRank k + 1 (99.99 of 5000: 4999 and 5000).
func TestNearestRankIsExact(t *testing.T) {
	h := NewHist()
	differ := 0
	for n := int64(1); n <= 400; n++ {
		_ = h.RecordValue(n)
		for k := int64(0); k <= 10_000; k++ {
			p := float64(k) / 100
			want := max(1, min(n, (2*k*n+10_000)/20_000))
			got := NearestRank(n, p)
			if got != want {
				t.Fatalf("NearestRank(%d, %v) = %d, want %d", n, p, got, want)
			}
			if hdr := h.ValueAtQuantile(p); hdr != got {
				// Only at an exact half, and only one rank lower.
				if (k*n)%10_000 != 5_000 || hdr != got-1 {
					t.Fatalf("NearestRank(%d, %v) = %d, ValueAtQuantile %d: not at a half", n, p, got, hdr)
				}
				differ++
			}
		}
	}
	if differ == 0 {
		t.Error("ValueAtQuantile never took the lower rank at an exact half: the comparison checks nothing")
	}
	for _, c := range []struct {
		n    int64
		p    float64
		want int64
	}{
		{5000, 99.99, 5000}, {50_000, 99.999, 50_000}, {5000, 99.97, 4999}, {200, 12.25, 25}, {2000, 0.025, 1},
		{1000, 99.9, 999}, {1000, 50, 500}, {1000, 99.95, 1000}, {1000, 99.94, 999}, {3000, 33.333, 1000},
		{7, 12.5, 1}, {10, 94, 9}, {10, 95, 10}, {3, 50, 2}, {2, 50, 1}, {1 << 62, 50, 1 << 61},
		{10, 0, 1}, {10, -1, 1}, {10, 150, 10}, {10, math.NaN(), 1}, {0, 50, 0}, {10, 1e-300, 1}, {5e18, 5e-17, 3},
	} {
		if got := NearestRank(c.n, c.p); got != c.want {
			t.Errorf("NearestRank(%d, %v) = %d, want %d", c.n, c.p, got, c.want)
		}
	}
}

func TestSelectRankMatchesSortedColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var counts rankCounts
	for _, n := range []int{1, 2, 3, 255, 1000, 20_000} {
		for _, gen := range []struct {
			name string
			f    func() uint32
		}{
			{"full range", rng.Uint32},
			{"small", func() uint32 { return rng.Uint32N(1000) }},
			{"constant", func() uint32 { return 42 }},
			{"high bits only", func() uint32 { return rng.Uint32N(256) << 24 }},
			{"straddling 2^16", func() uint32 { return 65_500 + rng.Uint32N(100) }},
		} {
			samples := make([]Sample, n)
			for i := range samples {
				c := gen.f() / 4
				samples[i] = Sample{Connect: c, Wait: gen.f(), Total: c + gen.f()/2}
			}
			before := slices.Clone(samples)
			for _, c := range []Field{Connect, Processing, Wait, Total} {
				want := make([]uint32, n)
				for i, smp := range samples {
					want[i] = smp.Value(c)
				}
				slices.Sort(want)
				for _, k := range []int{0, n / 3, n / 2, n - 1, rng.IntN(n)} {
					if got := selectRank(samples, c, k, &counts); got != want[k] {
						t.Fatalf("n=%d %s field %d: rank %d = %d, want %d", n, gen.name, c, k, got, want[k])
					}
				}
			}
			if !slices.Equal(samples, before) {
				t.Fatalf("n=%d %s: selectRank modified the samples", n, gen.name)
			}
		}
	}
}

func TestBucketRanksOverflow(t *testing.T) {
	var col Column
	for _, us := range []uint32{500, 130_000_000, 125_000_000, 140_000_000} {
		col.Add(us)
	}
	r := newBucketRanks(&col)
	for _, tc := range []struct {
		rank uint64
		want int64
	}{
		{0, 500},                  // exact min
		{1, ColumnBuckets * 1000}, // past the last bucket: its bound
		{2, ColumnBuckets * 1000}, //
		{3, 140_000_000},          // exact max
		{9, 140_000_000},          // past the end: the max
	} {
		if got := r.valueAt(tc.rank); got != tc.want {
			t.Errorf("valueAt(%d) = %d, want %d", tc.rank, got, tc.want)
		}
	}
}
