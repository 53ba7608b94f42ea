package samples

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// The -g file wants every request's row, but past the exact store's limit the
// samples go into histograms only. With spilling on (Config.KeepAllRows), each
// sample past the limit is also kept on disk by an external sort: workers batch
// samples in a small buffer of their own (no lock per request), full batches
// move under a mutex into a shared run buffer, and a full run buffer is sorted
// and appended to one temporary file as a sorted run. At the end the runs are
// merged, with the exact store and the unwritten tail, in CompareByTotal order.
//
// The run buffer is two halves: one fills while the worker that filled the
// other sorts and writes it, so the other workers do not wait for the disk.
// Memory stays flat: workers × spillBatch + spillRunSamples samples, and
// spillMergeFanIn read buffers while merging.

// Sizes, variables so that tests can shrink them.
var (
	spillBatch      = 64      // samples a worker buffers before taking the lock
	spillRunSamples = 1 << 20 // both halves of the run buffer together (16 MB)
	spillMergeFanIn = 64      // runs merged at once; more are merged in passes first
	spillReadBuffer = 64 << 10
)

// spillTempPattern names the temporary files (os.CreateTemp's pattern).
const spillTempPattern = "gab-rows-*"

// sampleBytes is a Sample's size on disk: four little-endian uint32s.
const sampleBytes = 16

// spillRun is one sorted run in the temporary file.
type spillRun struct{ offset, count int64 }

// spillStore holds the samples past the exact limit when spilling is on.
type spillStore struct {
	dir string // for os.CreateTemp; "" is os.TempDir()

	mu   sync.Mutex // guards fill
	fill []Sample   // the half being filled (nil until first used)

	// writeMu is held while a full half is sorted and written; it guards the rest.
	writeMu sync.Mutex
	spare   []Sample // the other half, empty (nil until first needed)
	file    *os.File
	size    int64 // bytes written to file
	runs    []spillRun
	err     error // the first I/O error (or errSpillClosed); later samples are dropped
	encoded []byte
}

func newSpillStore(dir string) *spillStore { return &spillStore{dir: dir} }

func halfRun() int { return max(spillRunSamples/2, 1) }

// add moves batch into the run buffer, writing a run whenever a half is full.
func (sp *spillStore) add(batch []Sample) {
	sp.mu.Lock()
	for {
		if sp.fill == nil {
			sp.fill = make([]Sample, 0, halfRun())
		}
		n := copy(sp.fill[len(sp.fill):cap(sp.fill)], batch)
		sp.fill = sp.fill[:len(sp.fill)+n]
		batch = batch[n:]
		if len(sp.fill) < cap(sp.fill) {
			break
		}
		// Full: swap in the other half (waiting, if it is still being written,
		// holding mu so that no one else fills meanwhile), then write this one.
		sp.writeMu.Lock()
		full := sp.fill
		if sp.spare == nil {
			sp.spare = make([]Sample, 0, halfRun())
		}
		sp.fill, sp.spare = sp.spare[:0], nil
		sp.mu.Unlock()
		sp.writeRun(full)
		sp.spare = full[:0]
		sp.writeMu.Unlock()
		if len(batch) == 0 {
			return
		}
		sp.mu.Lock()
	}
	sp.mu.Unlock()
}

// writeRun sorts run and appends it to the file as one sorted run. The caller
// holds writeMu.
func (sp *spillStore) writeRun(run []Sample) {
	if sp.err != nil {
		return
	}
	SortByTotal(run)
	if sp.file == nil {
		f, err := createUnlinkedTemp(sp.dir)
		if err != nil {
			sp.fail(err)
			return
		}
		sp.file = f
	}
	if sp.encoded == nil {
		sp.encoded = make([]byte, 0, spillReadBuffer)
	}
	w := runWriter{f: sp.file, buf: sp.encoded[:0]}
	for _, smp := range run {
		w.put(smp)
	}
	if err := w.flush(); err != nil {
		sp.fail(err)
		return
	}
	sp.runs = append(sp.runs, spillRun{offset: sp.size, count: int64(len(run))})
	sp.size += int64(len(run)) * sampleBytes
}

// fail records the first I/O error and releases the file: the run goes on,
// and the -g file reports the error.
func (sp *spillStore) fail(err error) {
	sp.err = fmt.Errorf("keeping the -g rows past the exact sample limit in a temporary file: %w", err)
	_ = sp.dropFile() // the error that matters is err
}

// dropFile closes the temporary file and forgets its runs. The caller holds writeMu.
func (sp *spillStore) dropFile() error {
	sp.runs, sp.size = nil, 0
	if sp.file == nil {
		return nil
	}
	err := closeTemp(sp.file)
	sp.file = nil
	return err
}

var errSpillClosed = errors.New("the -g rows kept in a temporary file were released (Store.Close)")

// createUnlinkedTemp creates a temporary file and removes its name at once, so
// that nothing is left behind however gab ends (the open descriptor keeps the
// data until it is closed). Where an open file cannot be removed, close
// removes it instead.
func createUnlinkedTemp(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, spillTempPattern)
	if err != nil {
		return nil, err
	}
	_ = os.Remove(f.Name()) // best effort; close retries
	return f, nil
}

// closeTemp closes f and removes its name if it is still there.
func closeTemp(f *os.File) error {
	err := f.Close()
	if rerr := os.Remove(f.Name()); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// runWriter encodes samples into buf and writes it to f when full.
type runWriter struct {
	f   io.Writer
	buf []byte
	err error
}

func (w *runWriter) put(smp Sample) {
	if len(w.buf)+sampleBytes > cap(w.buf) {
		w.flushBuf()
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, smp.Start)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, smp.Connect)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, smp.Wait)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, smp.Total)
}

func (w *runWriter) flushBuf() {
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.f.Write(w.buf)
	}
	w.buf = w.buf[:0]
}

func (w *runWriter) flush() error {
	w.flushBuf()
	return w.err
}

// flushBatch moves a worker's batch into the store (at the end of a run).
func (sp *spillStore) flushBatch(batch *[]Sample) {
	if len(*batch) > 0 {
		sp.add(*batch)
		*batch = (*batch)[:0]
	}
}

// count is the number of samples kept (in memory and on disk).
func (sp *spillStore) count() int64 {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.writeMu.Lock()
	defer sp.writeMu.Unlock()
	n := int64(len(sp.fill))
	for _, r := range sp.runs {
		n += r.count
	}
	return n
}

// mergeSource is one sorted input of a merge: a slice in memory or a run on disk.
type mergeSource struct {
	cur  Sample
	mem  []Sample
	r    *bufio.Reader
	left int64 // samples left in r
	rec  [sampleBytes]byte
}

// next loads the source's next sample into cur; false at its end.
func (m *mergeSource) next() (bool, error) {
	if m.r == nil {
		if len(m.mem) == 0 {
			return false, nil
		}
		m.cur, m.mem = m.mem[0], m.mem[1:]
		return true, nil
	}
	if m.left == 0 {
		return false, nil
	}
	if _, err := io.ReadFull(m.r, m.rec[:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return false, fmt.Errorf("reading back the -g rows kept in a temporary file: %w", err)
	}
	m.left--
	m.cur = Sample{
		Start:   binary.LittleEndian.Uint32(m.rec[0:]),
		Connect: binary.LittleEndian.Uint32(m.rec[4:]),
		Wait:    binary.LittleEndian.Uint32(m.rec[8:]),
		Total:   binary.LittleEndian.Uint32(m.rec[12:]),
	}
	return true, nil
}

// merge calls emit for every sample of the sources in CompareByTotal order,
// with a binary min-heap of the sources' current samples.
func merge(sources []*mergeSource, emit func(Sample) error) error {
	heap := make([]*mergeSource, 0, len(sources))
	for _, m := range sources {
		ok, err := m.next()
		if err != nil {
			return err
		}
		if ok {
			heap = append(heap, m)
		}
	}
	for i := len(heap)/2 - 1; i >= 0; i-- {
		siftDown(heap, i)
	}
	for len(heap) > 0 {
		top := heap[0]
		if err := emit(top.cur); err != nil {
			return err
		}
		ok, err := top.next()
		if err != nil {
			return err
		}
		if !ok {
			last := len(heap) - 1
			heap[0] = heap[last]
			heap = heap[:last]
		}
		siftDown(heap, 0)
	}
	return nil
}

func siftDown(heap []*mergeSource, i int) {
	for {
		least := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(heap) && CompareByTotal(heap[c].cur, heap[least].cur) < 0 {
				least = c
			}
		}
		if least == i {
			return
		}
		heap[i], heap[least] = heap[least], heap[i]
		i = least
	}
}

// readers returns merge sources for runs of the file, reusing sources' buffers.
func (sp *spillStore) readers(runs []spillRun, sources []*mergeSource) []*mergeSource {
	for i, run := range runs {
		if i == len(sources) {
			sources = append(sources, &mergeSource{r: bufio.NewReaderSize(nil, spillReadBuffer)})
		}
		m := sources[i]
		m.r.Reset(io.NewSectionReader(sp.file, run.offset, run.count*sampleBytes))
		m.left = run.count
	}
	return sources[:len(runs)]
}

// reduceRuns merges runs in groups of spillMergeFanIn into a new file until
// at most spillMergeFanIn remain. The caller holds writeMu.
func (sp *spillStore) reduceRuns() error {
	fanIn := max(spillMergeFanIn, 2)
	var sources []*mergeSource
	for len(sp.runs) > fanIn {
		f, err := createUnlinkedTemp(sp.dir)
		if err != nil {
			return fmt.Errorf("merging the -g rows kept in a temporary file: %w", err)
		}
		if sp.encoded == nil {
			sp.encoded = make([]byte, 0, spillReadBuffer)
		}
		w := runWriter{f: f, buf: sp.encoded[:0]}
		var merged []spillRun
		var size int64
		for len(sp.runs) > 0 {
			group := sp.runs[:min(fanIn, len(sp.runs))]
			sp.runs = sp.runs[len(group):]
			sources = sp.readers(group, sources)
			var n int64
			err = merge(sources, func(smp Sample) error { w.put(smp); n++; return nil })
			if err != nil {
				break
			}
			merged = append(merged, spillRun{offset: size, count: n})
			size += n * sampleBytes
		}
		if err == nil {
			err = w.flush()
		}
		if err != nil {
			_ = closeTemp(f)
			return fmt.Errorf("merging the -g rows kept in a temporary file: %w", err)
		}
		_ = closeTemp(sp.file) // the old runs are merged; only reads were pending
		sp.file, sp.size, sp.runs = f, size, merged
	}
	return nil
}

// eachSorted calls emit for exact (sorted by the caller) merged with every
// spilled sample, in CompareByTotal order. It sorts the unwritten tail in place.
func (sp *spillStore) eachSorted(exact []Sample, emit func(Sample) error) error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.writeMu.Lock()
	defer sp.writeMu.Unlock()
	if sp.err != nil {
		return sp.err
	}
	if err := sp.reduceRuns(); err != nil {
		// A pass stopped half way: the runs left are not all the rows.
		sp.err = err
		_ = sp.dropFile()
		return err
	}
	SortByTotal(sp.fill)
	sources := sp.readers(sp.runs, nil)
	sources = append(sources, &mergeSource{mem: exact}, &mergeSource{mem: sp.fill})
	return merge(sources, emit)
}

// close releases the temporary file and the run buffer.
func (sp *spillStore) close() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.writeMu.Lock()
	defer sp.writeMu.Unlock()
	sp.fill, sp.spare = nil, nil
	if sp.err == nil {
		sp.err = errSpillClosed
	}
	return sp.dropFile()
}
