package report

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSortUint32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 255, 256, 257, 1000, 100_000} {
		for _, gen := range []struct {
			name string
			f    func() uint32
		}{
			{"full range", rng.Uint32},
			{"small", func() uint32 { return rng.Uint32N(1000) }},
			{"constant", func() uint32 { return 42 }},
			{"high bytes only", func() uint32 { return rng.Uint32N(256) << 24 }},
		} {
			values := make([]uint32, n)
			for i := range values {
				values[i] = gen.f()
			}
			want := slices.Clone(values)
			slices.Sort(want)
			sortUint32(values, make([]uint32, n))
			if !slices.Equal(values, want) {
				t.Errorf("n=%d %s: not sorted like slices.Sort", n, gen.name)
			}
		}
	}
}
