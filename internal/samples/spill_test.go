package samples

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// shrinkSpill sets tiny spill sizes for one test, so that a few thousand
// samples make many runs and a multi-pass merge.
func shrinkSpill(t *testing.T, batch, run, fanIn int) {
	t.Helper()
	old := [...]int{spillBatch, spillRunSamples, spillMergeFanIn, spillReadBuffer}
	spillBatch, spillRunSamples, spillMergeFanIn, spillReadBuffer = batch, run, fanIn, 64
	t.Cleanup(func() {
		spillBatch, spillRunSamples, spillMergeFanIn, spillReadBuffer = old[0], old[1], old[2], old[3]
	})
}

// randomSample has few distinct values per field, so that many samples tie.
func randomSample(rng *rand.Rand) Sample {
	c := rng.Uint32N(4) * 700
	total := c + rng.Uint32N(6)*450
	return Sample{Start: rng.Uint32N(20), Connect: c, Wait: rng.Uint32N(total - c + 1), Total: total}
}

// collect returns what EachByTotal yields.
func collect(t *testing.T, s *Store) []Sample {
	t.Helper()
	var got []Sample
	if err := s.EachByTotal(func(smp Sample) error { got = append(got, smp); return nil }); err != nil {
		t.Fatalf("EachByTotal: %v", err)
	}
	return got
}

func sortedCopy(all []Sample) []Sample {
	want := slices.Clone(all)
	slices.SortFunc(want, CompareByTotal)
	return want
}

// wantEmptyDir fails t unless dir is empty: spilled files have no name.
func wantEmptyDir(t *testing.T, dir, when string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("%s: %s holds %d entries (%s...), want none", when, dir, len(entries), entries[0].Name())
	}
}

// TestSpillConcurrentWritersMergeInOrder records from several goroutines, each
// with its own batch and an uneven share, as workers do, with runs small
// enough to need a multi-pass merge; the merged rows are the sort of all.
func TestSpillConcurrentWritersMergeInOrder(t *testing.T) {
	shrinkSpill(t, 7, 40, 3)
	const n, limit, writers = 6000, 250, 6
	dir := t.TempDir()
	s := New(n, limit)
	s.SpillPastLimit(dir)
	all := make([]Sample, n)
	var next atomic.Int64
	batches := make([][]Sample, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				smp := randomSample(rng)
				all[i] = smp
				s.Put(i, smp, &batches[w])
				if w == 0 && rng.IntN(5) == 0 {
					time.Sleep(10 * time.Microsecond) // an uneven share for this writer
				}
			}
		}()
	}
	wg.Wait()
	for w := range batches {
		s.FlushBatch(&batches[w])
	}
	wantEmptyDir(t, dir, "after the run")
	if runs := len(s.spill.runs); runs <= spillMergeFanIn {
		t.Fatalf("only %d runs on disk; the test wants more than the fan-in %d", runs, spillMergeFanIn)
	}
	if s.Rows() != n {
		t.Errorf("Rows() = %d, want %d", s.Rows(), n)
	}
	want := sortedCopy(all)
	for pass := range 2 { // EachByTotal can be repeated
		if got := collect(t, s); !slices.Equal(got, want) {
			t.Fatalf("pass %d: %d merged rows differ from the sort of all %d samples", pass, len(got), len(want))
		}
	}
	if runs := len(s.spill.runs); runs > spillMergeFanIn {
		t.Errorf("%d runs left after merging in passes, want at most %d", runs, spillMergeFanIn)
	}
	if h := s.Histograms(); h == nil || h.Total.Count.Load() != n {
		t.Errorf("histograms do not count all %d requests", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.EachByTotal(func(Sample) error { return nil }); !errors.Is(err, errSpillClosed) {
		t.Errorf("EachByTotal after Close: %v, want errSpillClosed", err)
	}
	wantEmptyDir(t, dir, "after Close")
}

// TestSpillCounts checks the boundaries: nothing spilled, exactly at the
// limit, one past it, and runs that fill a half exactly.
func TestSpillCounts(t *testing.T) {
	shrinkSpill(t, 4, 16, 2)
	for _, tc := range []struct{ n, limit int }{
		{0, 10}, {5, 10}, {10, 10}, {11, 10}, {10 + 8, 10}, {10 + 16, 10}, {10 + 33, 10}, {300, 1},
	} {
		dir := t.TempDir()
		s := New(tc.n, tc.limit)
		s.SpillPastLimit(dir)
		rng := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.limit)))
		all := make([]Sample, tc.n)
		var batch []Sample
		for i := range all {
			all[i] = randomSample(rng)
			s.Put(i, all[i], &batch)
		}
		s.FlushBatch(&batch)
		if got, want := s.Overflowed(), tc.n > tc.limit; got != want {
			t.Errorf("n=%d limit=%d: Overflowed %v", tc.n, tc.limit, got)
		}
		if s.Rows() != tc.n {
			t.Errorf("n=%d limit=%d: Rows() = %d", tc.n, tc.limit, s.Rows())
		}
		if got := collect(t, s); !slices.Equal(got, sortedCopy(all)) {
			t.Errorf("n=%d limit=%d: merged rows %v\nwant %v", tc.n, tc.limit, got, sortedCopy(all))
		}
		if tc.n <= tc.limit && s.spill.file != nil {
			t.Errorf("n=%d limit=%d: a temporary file was created with nothing to spill", tc.n, tc.limit)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		wantEmptyDir(t, dir, "after Close")
	}
}

// TestSpillWithoutSpillingKeepsExactRowsOnly: without SpillPastLimit the rows
// are the exact store's, as before.
func TestSpillWithoutSpillingKeepsExactRowsOnly(t *testing.T) {
	s := New(30, 10)
	rng := rand.New(rand.NewPCG(1, 2))
	var exact []Sample
	for i := range 30 {
		smp := randomSample(rng)
		if i < 10 {
			exact = append(exact, smp)
		}
		s.Put(s.Len(), smp, nil)
	}
	if s.Rows() != 10 || s.Len() != 30 {
		t.Errorf("Rows %d Len %d, want 10 and 30", s.Rows(), s.Len())
	}
	if got := collect(t, s); !slices.Equal(got, sortedCopy(exact)) {
		t.Errorf("rows %v, want the exact ones sorted", got)
	}
}

// TestSpillFileErrorIsReported: when the temporary file cannot be written the
// run goes on (every request counted) and the rows report the error.
func TestSpillFileErrorIsReported(t *testing.T) {
	shrinkSpill(t, 4, 8, 4)
	s := New(100, 10)
	s.SpillPastLimit(filepath.Join(t.TempDir(), "missing"))
	for i := range 100 {
		s.Put(s.Len(), Sample{Total: uint32(i)}, nil)
	}
	if s.Len() != 100 || s.Histograms().Total.Count.Load() != 100 {
		t.Errorf("Len %d: the run must go on after a temporary file error", s.Len())
	}
	emitted := 0
	err := s.EachByTotal(func(Sample) error { emitted++; return nil })
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("EachByTotal: %v, want the temporary file's error", err)
	}
	if emitted != 0 {
		t.Errorf("%d rows emitted before the error; want none", emitted)
	}
}

// TestSpillMergePassErrorIsReported: a merge pass that cannot create its
// file fails EachByTotal, now and later, with no row emitted.
func TestSpillMergePassErrorIsReported(t *testing.T) {
	shrinkSpill(t, 4, 8, 2)
	dir := filepath.Join(t.TempDir(), "spill")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s := New(100, 10)
	s.SpillPastLimit(dir)
	for i := range 100 {
		s.Put(s.Len(), Sample{Total: uint32(100 - i)}, nil)
	}
	if len(s.spill.runs) <= spillMergeFanIn {
		t.Fatalf("%d runs: no merge pass needed", len(s.spill.runs))
	}
	if err := os.Remove(dir); err != nil { // the runs' file has no name there: the directory is empty
		t.Fatal(err)
	}
	for try := range 2 {
		emitted := 0
		err := s.EachByTotal(func(Sample) error { emitted++; return nil })
		if !errors.Is(err, os.ErrNotExist) || emitted != 0 {
			t.Errorf("try %d: EachByTotal: %v after %d rows; want the merge pass's error before any row", try, err, emitted)
		}
	}
}

// TestSpillBatchAllocatesNothingPerSample: recording past the limit costs no
// allocation per request once the buffers exist.
func TestSpillBatchAllocatesNothingPerSample(t *testing.T) {
	shrinkSpill(t, 8, 64, 4) // a run written every 32 samples: the writes are measured too
	s := New(1<<20, 1)
	s.SpillPastLimit(t.TempDir())
	defer s.Close()
	var batch []Sample
	i := 0
	for ; i < 100; i++ { // the temporary file and the buffers exist
		s.Put(i, Sample{}, &batch)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		i++
		s.Put(i, Sample{Total: uint32(i)}, &batch)
	})
	if allocs != 0 {
		t.Errorf("put past the limit allocated %v times per sample", allocs)
	}
}
