package samples

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestStartMsCountsWallClockMilliseconds(t *testing.T) {
	base := time.Date(2026, time.November, 30, 1, 2, 3, 999_700_000, time.UTC).UnixMicro()
	for _, tc := range []struct {
		startNs int64
		want    uint32
	}{
		{0, 0},
		{299_999, 0},   // 07:…:03.999999: still the run's millisecond
		{300_000, 1},   // 04.000000: the next millisecond (and second)
		{1_299_999, 1}, // 04.000999
		{1_300_000, 2},
		{-5_000_000, 0}, // before the run's start (never recorded): clamped
		{49 * 24 * int64(time.Hour), 49 * 24 * 3_600_000},
	} {
		got := StartMs(base, tc.startNs)
		if got != tc.want {
			t.Errorf("StartMs(%d ns) = %d, want %d", tc.startNs, got, tc.want)
		}
		if tc.startNs >= 0 {
			// The -g file's seconds: exactly ab's floor(start µs / 1e6).
			abSec := (base + tc.startNs/1000) / 1_000_000
			if sec := (base/1000 + int64(got)) / 1000; sec != abSec {
				t.Errorf("StartMs(%d ns): second %d, ab's is %d", tc.startNs, sec, abSec)
			}
		}
	}
}

func TestSortByTotalOrdersTiesAsAB(t *testing.T) {
	samples := []Sample{
		{Start: 9, Connect: 0, Wait: 3000, Total: 9000},
		{Start: 8, Connect: 2000, Wait: 1000, Total: 5000},
		{Start: 7, Connect: 1000, Wait: 1000, Total: 5000}, // same total and wait, more processing: after
		{Start: 6, Connect: 0, Wait: 500, Total: 5000},     // same total, less wait: first of the three
		{Start: 5, Connect: 0, Wait: 500, Total: 5000},     // equal durations: the earlier start first
		{Start: 4, Connect: 0, Wait: 0, Total: 1000},
	}
	SortByTotal(samples)
	var starts []uint32
	for _, s := range samples {
		starts = append(starts, s.Start)
	}
	if want := []uint32{4, 5, 6, 8, 7, 9}; !slices.Equal(starts, want) {
		t.Errorf("order by start %v, want %v", starts, want)
	}
	if allocs := testing.AllocsPerRun(5, func() { SortByTotal(samples) }); allocs != 0 {
		t.Errorf("SortByTotal allocated %v times", allocs)
	}
}

func TestSortByTotalMatchesComparisonSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		n      int
		spread uint32
	}{{0, 1}, {1, 1}, {63, 5}, {65, 1}, {500, 3}, {5000, 200}, {100000, 1000}, {100000, 1 << 31}, {30000, 2}} {
		s := make([]Sample, tc.n)
		for i := range s {
			total := rng.Uint32N(tc.spread)
			connect := rng.Uint32N(min(tc.spread, total+1))
			s[i] = Sample{Start: rng.Uint32N(3), Connect: connect, Wait: rng.Uint32N(tc.spread/2 + 1), Total: total}
			if i%97 == 0 {
				s[i].Connect = total + 5 // Processing clamps to 0
			}
		}
		want := slices.Clone(s)
		slices.SortFunc(want, CompareByTotal)
		SortByTotal(s)
		if !slices.Equal(s, want) {
			t.Errorf("n=%d spread=%d: radix order differs from CompareByTotal's", tc.n, tc.spread)
		}
	}
}

func FuzzSortByTotal(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, mask uint8) {
		// Narrow values (mask) make ties on every field likely.
		var s []Sample
		for i := 0; i+16 <= len(data) && len(s) < 4096; i += 16 {
			s = append(s, Sample{
				Start:   binary.LittleEndian.Uint32(data[i:]) & uint32(mask),
				Connect: binary.LittleEndian.Uint32(data[i+4:]) & uint32(mask),
				Wait:    binary.LittleEndian.Uint32(data[i+8:]) & uint32(mask),
				Total:   binary.LittleEndian.Uint32(data[i+12:]) & (uint32(mask)<<8 | 0xff),
			})
		}
		for len(s) > 0 && len(s) < 200 { // past the comparison-sort cut-off
			s = append(s, s[:min(len(s), 200-len(s))]...)
		}
		want := slices.Clone(s)
		slices.SortFunc(want, CompareByTotal)
		SortByTotal(s)
		if !slices.Equal(s, want) {
			t.Fatalf("radix order differs from CompareByTotal's for %d samples", len(s))
		}
	})
}

// benchSamples is a keep-alive run's shape: totals around 100 µs, a few
// connects, waits just under the totals.
func benchSamples(n int) []Sample {
	rng := rand.New(rand.NewPCG(3, 4))
	s := make([]Sample, n)
	for i := range s {
		total := 60 + rng.Uint32N(200)
		s[i] = Sample{Start: uint32(i / 50), Wait: total - rng.Uint32N(20), Total: total}
	}
	return s
}

func BenchmarkSortByTotal(b *testing.B) {
	for _, sorter := range []struct {
		name string
		sort func([]Sample)
	}{{"radix", SortByTotal}, {"comparison", func(s []Sample) { slices.SortFunc(s, CompareByTotal) }}} {
		b.Run(sorter.name, func(b *testing.B) {
			base := benchSamples(1_000_000)
			s := make([]Sample, len(base))
			for b.Loop() {
				copy(s, base)
				sorter.sort(s)
			}
		})
	}
}
