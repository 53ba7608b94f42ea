package samples

import "sync/atomic"

// DefaultLimit is the number of requests whose timings a Store keeps exactly
// when New is given no limit: 160 MB of samples.
const DefaultLimit = 10_000_000

// Store holds one Sample per recorded request, filled lock-free by request
// index (the order in which ab records them). Past its limit it keeps 1 ms
// histograms with exact sums instead, so memory stays flat.
type Store struct {
	exact Blocks[Sample]             // written by index, no lock; allocated at once (New) or as it fills (NewGrowing)
	count atomic.Int64               // recorded requests (exact and histogram)
	histP atomic.Pointer[Histograms] // allocated only when the limit is passed
	spill *spillStore                // samples past the limit, on disk too (SpillPastLimit); nil otherwise
}

// New returns a store for up to n requests, of which at most limit are
// kept exactly, allocated now: for a run that sends n requests.
func New(n, limit int) *Store {
	size := exactSize(n, limit)
	return &Store{exact: NewBlocks[Sample](size, size)}
}

// NewGrowing returns a store for up to n requests, of which at most limit
// are kept exactly, for a run that a time limit ends (-t), whose n is only a
// cap: it starts with 65,536 samples (1 MiB) and adds a block of as many
// whenever the requests reach past what it holds (see Blocks), so that a
// short run's store costs what it holds, not 16 bytes times the cap. The first Exact gathers the blocks
// into one slice: while it copies them, the samples are held twice.
func NewGrowing(n, limit int) *Store {
	return &Store{exact: NewBlocks[Sample](blockLen, exactSize(n, limit))}
}

// exactSize is the number of requests a store keeps exactly: min(n, limit),
// limit 0 meaning DefaultLimit.
func exactSize(n, limit int) int {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return max(min(n, limit), 0)
}

// SpillPastLimit makes the store keep every sample past its exact limit in a
// temporary file in dir ("" means os.TempDir()) as well as in the histograms,
// for the -g file (see spill.go). Call it before recording; Close releases
// the file.
func (s *Store) SpillPastLimit(dir string) { s.spill = newSpillStore(dir) }

// Put stores sample number i (0-based), the i-th request recorded. It is safe
// for concurrent use with distinct i and distinct batches. batch is the recording worker's own spill
// buffer (see spill.go); nil spills at once, under the store's lock.
func (s *Store) Put(i int, smp Sample, batch *[]Sample) {
	if i < s.exact.Limit() {
		s.exact.Set(i, smp)
	} else {
		s.histograms().add(smp)
		if s.spill != nil {
			s.spillSample(smp, batch)
		}
	}
	s.count.Add(1)
}

func (s *Store) spillSample(smp Sample, batch *[]Sample) {
	if batch == nil {
		s.spill.add([]Sample{smp})
		return
	}
	if *batch == nil {
		*batch = make([]Sample, 0, spillBatch)
	}
	*batch = append(*batch, smp)
	if len(*batch) >= spillBatch {
		s.spill.add(*batch)
		*batch = (*batch)[:0]
	}
}

// FlushBatch moves a worker's spill buffer into the store; the run's end
// calls it for every worker once they have all stopped.
func (s *Store) FlushBatch(batch *[]Sample) {
	if s.spill != nil {
		s.spill.flushBatch(batch)
	}
}

func (s *Store) histograms() *Histograms {
	if h := s.histP.Load(); h != nil {
		return h
	}
	h := NewHistograms()
	if s.histP.CompareAndSwap(nil, h) {
		return h
	}
	return s.histP.Load()
}

// Len is the number of recorded requests.
func (s *Store) Len() int { return int(s.count.Load()) }

// Exact returns the exactly stored samples (all of them unless Overflowed).
// Callers may reorder the slice in place (the report sorts it). It must not
// run concurrently with Put: a growing store gathers its blocks into one
// slice on the first call.
func (s *Store) Exact() []Sample { return s.exact.All(s.Len()) }

// Allocated is the number of samples the store has memory for: all it may
// keep exactly for New's, what the requests reached so far (in blocks of
// 65,536) for NewGrowing's.
func (s *Store) Allocated() int { return s.exact.Allocated() }

// Rows is the number of samples EachByTotal yields: every recorded request
// when nothing overflowed or the store spills past its limit, else the exact ones.
func (s *Store) Rows() int {
	n := len(s.Exact())
	if s.spill != nil {
		n += int(s.spill.count())
	}
	return n
}

// EachByTotal calls emit for every exactly stored sample and every spilled
// one, in CompareByTotal order (the -g file's rows), stopping at emit's first
// error. It sorts Exact() in place. A failure of the temporary file (during
// the run or now) is returned before emit is called, or when the reading
// fails. It allocates nothing per sample; it must not run concurrently with
// recording or with itself.
func (s *Store) EachByTotal(emit func(Sample) error) error {
	exact := s.Exact()
	SortByTotal(exact)
	if s.spill != nil {
		return s.spill.eachSorted(exact, emit)
	}
	for _, smp := range exact {
		if err := emit(smp); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the temporary file of a spilling store (its name is removed
// as soon as it is created, so nothing is left on disk even without Close).
// EachByTotal fails after it.
func (s *Store) Close() error {
	if s.spill == nil {
		return nil
	}
	return s.spill.close()
}

// Overflowed reports whether more requests were recorded than the exact store holds.
func (s *Store) Overflowed() bool { return s.histP.Load() != nil }

// Histograms returns the histograms of every recorded request (exact samples
// folded in), or nil when nothing overflowed.
func (s *Store) Histograms() *Histograms {
	h := s.histP.Load()
	if h == nil {
		return nil
	}
	if !h.folded {
		for _, smp := range s.Exact() {
			h.add(smp)
		}
		h.folded = true
	}
	return h
}
