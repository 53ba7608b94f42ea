package samples

import (
	"math"
	"sync"
	"testing"
)

// TestNewGrowingAllocatesAsItFills: a store whose n is only a cap (a -t run's
// 2^31−1) starts with one block, not with the 10,000,000 samples (160 MB) of
// its limit, grows by blocks as indexes reach them, written by several
// goroutines at once across block boundaries, and Exact gathers every
// sample in index order.
func TestNewGrowingAllocatesAsItFills(t *testing.T) {
	s := NewGrowing(math.MaxInt32, 0)
	if got := s.Allocated(); got != blockLen {
		t.Fatalf("a new growing store has room for %d samples, want one block of %d", got, blockLen)
	}
	const n = 3*blockLen + 123
	const workers = 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				s.Put(i, Sample{Start: uint32(i), Total: uint32(i) * 3}, nil)
			}
		})
	}
	wg.Wait()
	if got, most := s.Allocated(), n+blockLen; got < n || got > most {
		t.Errorf("after %d samples the store has room for %d, want %d to %d", n, got, n, most)
	}
	exact := s.Exact()
	if len(exact) != n || s.Overflowed() {
		t.Fatalf("Exact holds %d samples (overflowed %v), want %d", len(exact), s.Overflowed(), n)
	}
	for i, smp := range exact {
		if smp.Start != uint32(i) || smp.Total != uint32(i)*3 {
			t.Fatalf("sample %d is %+v, want Start %d", i, smp, i)
		}
	}
	SortByTotal(exact) // Exact's slice is the store's: a second call sees the sort
	if again := s.Exact(); &again[0] != &exact[0] || len(again) != n {
		t.Errorf("a second Exact returned another slice")
	}
}

// TestNewGrowingStopsAtItsLimit: past the exact limit a growing store keeps
// histograms, as New's does, and allocates no block beyond the limit (the
// last one is cut to it).
func TestNewGrowingStopsAtItsLimit(t *testing.T) {
	const limit = blockLen + 100
	s := NewGrowing(math.MaxInt32, limit)
	for i := range limit + 50 {
		s.Put(i, Sample{Total: 1000}, nil)
	}
	if got := s.Allocated(); got != limit {
		t.Errorf("room for %d samples, want the limit %d", got, limit)
	}
	if len(s.Exact()) != limit || !s.Overflowed() || s.Histograms().Total.Count.Load() != limit+50 {
		t.Errorf("exact %d, overflowed %v, want %d exact and histograms of all %d", len(s.Exact()), s.Overflowed(), limit, limit+50)
	}
}

// TestNewAllocatesTheRun: a run of n requests gets its store at once (no
// gathering at the end), as before.
func TestNewAllocatesTheRun(t *testing.T) {
	if got := New(3*blockLen, 0).Allocated(); got != 3*blockLen {
		t.Errorf("New(%d) has room for %d", 3*blockLen, got)
	}
	if got := New(50, 10).Allocated(); got != 10 {
		t.Errorf("New(50, limit 10) has room for %d", got)
	}
}

// BenchmarkStorePut is the recording of one sample in a growing store:
// blocks of 65,536 samples are allocated as the indexes reach them, so a
// sample costs no allocation (allocs/op 0) and 16 bytes (B/op ≈ 16).
func BenchmarkStorePut(b *testing.B) {
	for _, kind := range []struct {
		name string
		make func(n int) *Store
	}{{"New", func(n int) *Store { return New(n, 0) }}, {"NewGrowing", func(n int) *Store { return NewGrowing(n, 0) }}} {
		b.Run(kind.name, func(b *testing.B) {
			b.ReportAllocs()
			const n = 1 << 20
			s := kind.make(n)
			i := 0
			for b.Loop() {
				if i == n {
					b.StopTimer()
					s, i = kind.make(n), 0
					b.StartTimer()
				}
				s.Put(i, Sample{Total: uint32(i)}, nil)
				i++
			}
		})
	}
}
