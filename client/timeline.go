package client

import (
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/internal/samples"
)

// This file is the latency timeline (Config.Interval): for each interval of
// the run (1 s by default) an HDR histogram of the recorded requests' total
// times and the counts of completions, failures and bytes, and in rate mode a
// second histogram of the coordinated-omission-corrected times.
//
// A request belongs to the interval holding its end time (outcome.End), so a
// stall shows in exactly the intervals it covered. Recording takes no lock and
// allocates nothing, as HdrHistogram's Recorder: workers record into shards
// (a handful, chosen round-robin per worker, like extraStats), each with two
// live buffers, one for even and one for odd intervals, whose counts are
// bumped with atomic adds. A collector goroutine harvests interval k a little
// after it ended (timelineGrace): it swaps the shard's buffer for a clean one
// tagged k+2, waits with a writer-reader phaser until no worker can still be
// writing into the old one, adds it into interval k's totals and keeps only
// the compressed histogram and its figures, so memory grows by about a
// kilobyte per interval, not by a histogram (230 KB at gab's geometry).
// A worker that finds its interval's buffer tagged otherwise (it recorded
// after the harvest, or far ahead of a late collector) takes a mutex and adds
// into the interval's totals directly; the run's end merges what remains, so
// every interval is exact whatever the timing.
//
// Config.OnInterval sees each interval as the collector closes it (live
// results: gab's --live, --metrics, --remote-write). The collector calls it
// after the harvest, outside the timeline's lock, so a slow callback delays
// only the next harvest, never a worker; nothing is added to the per-request
// path. The intervals still open when the run ends are closed by
// timeline.result, which hands them on from the goroutine that runs
// Runner.Run, after the collector has exited: the calls never overlap and
// come in the order of the intervals. An interval handed on live lacks the
// records that reach it after its harvest (they are in Result.Timeline).

// DefaultInterval is the timeline's interval when none is given, and
// MinInterval the shortest: closing an interval (its compressed histogram,
// mostly hdrhistogram-go's zlib compressor) takes about a millisecond of CPU.
const (
	DefaultInterval = time.Second
	MinInterval     = 100 * time.Millisecond
)

// timelineGrace is how long after an interval's end the collector waits before
// harvesting it: a worker records a request a few µs after taking its end time.
func timelineGrace(d int64) int64 {
	return min(d/4, int64(100*time.Millisecond))
}

// IntervalLatency is one interval's latency distribution in µs (of the
// interval's Requests): min and max exact, percentiles by the nearest rank (samples.NearestRank) read from
// the histogram (the bucket's highest value, within 0.1 %, capped by the exact
// max), and the histogram itself in HdrHistogram's V2 compressed base64
// encoding (gab's geometry: 1 µs to 24 h, 3 significant digits).
type IntervalLatency struct {
	MinUs, MaxUs                int64
	P50Us, P90Us, P99Us, P999Us int64
	Histogram                   string

	count int64 // the values in the histogram
}

// FailuresUnclassified is Interval.FailuresBy's index for the failures ab
// counts in no class (after FailureConnect … FailureExceptions).
const FailuresUnclassified = int(FailureExceptions) + 1

// Interval is one interval of the timeline.
type Interval struct {
	// Start is the interval's start since the run's start (index × interval).
	Start time.Duration
	// Length is the interval's length: the timeline's interval, except for a
	// last interval cut short by the end of the run.
	Length time.Duration
	// Requests is the number of requests recorded with an end time in the
	// interval (they sum to Result.Complete).
	Requests int64
	// Failures counts the attempts ab counts as Failed requests that ended in
	// the interval: recorded ones (connect with -r, receive, length,
	// exceptions) and connect failures, which are issued again.
	Failures int64
	// FailuresBy splits Failures by ab's class: indexed by Failure
	// (FailureConnect, FailureReceive, FailureLength, FailureExceptions),
	// and [FailuresUnclassified] for those ab counts in no class (a response
	// head past gab's limit).
	FailuresBy [FailuresUnclassified + 1]int64
	// Status counts the recorded requests by the class of their status: [0]
	// none read (a failure before the head), [1] to [5] 1xx to 5xx (a code
	// outside 100–599 counts as none).
	Status [6]int64
	// WriteErrors counts the interval's recorded requests whose request could
	// not be written (ab's "Write errors", which are not Failures).
	WriteErrors int64
	// Bytes is every byte read (heads included) by a worker since its previous
	// recording (a recorded request, or a failure counted apart), counted at
	// the recording: the intervals' sum is "Total transferred" less what was
	// read after a worker's last recording (for requests left in flight at
	// the run's stop).
	Bytes int64
	// Sent is every request byte written (heads and bodies) by a worker
	// since its previous recording, counted as Bytes is: the intervals' sum
	// is Result.TotalSent ("Total body sent") less what was written after a
	// worker's last recording.
	Sent int64
	// Latency is the total time (ab's "Total") of the interval's requests.
	Latency IntervalLatency
	// Corrected is the rate-mode latency from each request's intended send
	// time (--rate); zero otherwise.
	Corrected IntervalLatency
	// Due is how many requests the rate schedule had due in the interval
	// (--rate; 0 otherwise): over Length, the target rate.
	Due float64
	// ConnsOpen is how many connections the run had open when the interval
	// was handed on to Config.OnInterval (connecting ones included); 0 in
	// Result.Timeline and in the intervals handed on at the run's end.
	ConnsOpen int64
	// TLSHandshakes counts the interval's requests that opened a connection
	// with a TLS handshake (outcome.Connect after TCPDone), TLSUs the sum of
	// those handshakes' times (Connect − TCPDone, the extended report's TLS
	// phase) in µs.
	TLSHandshakes, TLSUs int64
}

// Timeline is the run's latency over time.
type Timeline struct {
	Interval time.Duration
	// Corrected reports whether Intervals[i].Corrected is kept (rate mode).
	Corrected bool
	// Intervals covers the run from its start, one entry per interval,
	// empty ones included.
	Intervals []Interval
}

// histCountsLen is the length of the counts array of gab's histogram
// geometry; histIndex maps a value to its index in it, as hdrhistogram-go
// does for New(samples.HistLowestUS, samples.HistHighestUS, samples.HistDigits) (timeline_test.go
// checks both against the library).
const (
	histSubBucketHalfMag = 10 // 2·10^HistDigits rounded up to a power of two is 2048 = 2^(10+1)
	histSubBucketMask    = 1<<(histSubBucketHalfMag+1) - 1
)

var histCountsLen = func() int {
	// The smallest power-of-two multiple of 2048 above HistHighestUS.
	buckets := 1
	for v := int64(histSubBucketMask + 1); v <= samples.HistHighestUS; v <<= 1 {
		buckets++
	}
	return (buckets + 1) << histSubBucketHalfMag
}()

func histIndex(us int64) int {
	bucket := 64 - bits.LeadingZeros64(uint64(us)|histSubBucketMask) - (histSubBucketHalfMag + 1)
	sub := us >> uint(bucket)
	return (bucket+1)<<histSubBucketHalfMag + int(sub) - (1 << histSubBucketHalfMag)
}

func clampUS(us int64) int64 {
	return min(max(us, 0), samples.HistHighestUS)
}

// tlDist is one distribution of one interval being gathered: counts indexed
// as gab's HDR histogram, and exact min and max. Live buffers are written with
// atomics by several workers at once.
type tlDist struct {
	counts   []int64
	min, max int64 // min is math.MaxInt64 when empty
}

func newTLDist() tlDist { return tlDist{counts: make([]int64, histCountsLen), min: math.MaxInt64} }

func (d *tlDist) add(us int64) {
	atomic.AddInt64(&d.counts[histIndex(clampUS(us))], 1)
	for m := atomic.LoadInt64(&d.max); us > m; m = atomic.LoadInt64(&d.max) {
		if atomic.CompareAndSwapInt64(&d.max, m, us) {
			break
		}
	}
	for m := atomic.LoadInt64(&d.min); us < m; m = atomic.LoadInt64(&d.min) {
		if atomic.CompareAndSwapInt64(&d.min, m, us) {
			break
		}
	}
}

// used is the range of counts indices that may be non-zero: every value
// recorded lies between the exact min and max.
func (d *tlDist) used() (from, to int) {
	if d.min > d.max {
		return 0, 0
	}
	return histIndex(clampUS(d.min)), histIndex(clampUS(d.max)) + 1
}

// mergeFrom adds o into d (no writer is using either).
func (d *tlDist) mergeFrom(o *tlDist) {
	from, to := o.used()
	for i, c := range o.counts[from:to] {
		if c != 0 {
			d.counts[from+i] += c
		}
	}
	d.min, d.max = min(d.min, o.min), max(d.max, o.max)
}

// reset empties d, clearing only the indices in use (a clean buffer's pages
// are never written).
func (d *tlDist) reset() {
	from, to := d.used()
	clear(d.counts[from:to])
	d.min, d.max = math.MaxInt64, 0
}

// histValue is the lowest value counted at index i (histIndex's inverse).
func histValue(i int) int64 {
	if i < 2<<histSubBucketHalfMag {
		return int64(i)
	}
	bucket := i>>histSubBucketHalfMag - 1
	sub := int64(i&(1<<histSubBucketHalfMag-1) + 1<<histSubBucketHalfMag)
	return sub << uint(bucket)
}

// latency turns the gathered counts into an IntervalLatency, through
// scratch, a histogram of gab's geometry that it resets.
func (d *tlDist) latency(count int64, scratch *hdrhistogram.Histogram) IntervalLatency {
	scratch.Reset()
	from, to := d.used()
	for i, c := range d.counts[from:to] {
		if c != 0 {
			_ = scratch.RecordValues(histValue(from+i), c) // in range: it was counted there
		}
	}
	return LatencyOf(scratch, count, d.min, d.max)
}

// LatencyOf describes the count values of h whose exact min and max are lo
// and hi as an IntervalLatency (percentiles by Dist.Percentile's rule).
func LatencyOf(h *hdrhistogram.Histogram, count, lo, hi int64) IntervalLatency {
	l := IntervalLatency{count: count}
	if b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		l.Histogram = string(b)
	}
	if count == 0 {
		return l
	}
	dist := samples.Dist{Hist: h, Count: count, Min: lo, Max: hi}
	l.MinUs, l.MaxUs = lo, hi
	l.P50Us, l.P90Us = dist.Percentile(50), dist.Percentile(90)
	l.P99Us, l.P999Us = dist.Percentile(99), dist.Percentile(99.9)
	return l
}

// tlBuf gathers one interval in one shard (or, as an aggregate, in all).
type tlBuf struct {
	k int64 // the interval it gathers
	tlCounts
	lat, cor  tlDist
	corrected bool
}

// tlCounts are an interval's counts (atomics while live): Interval's
// Requests, Failures, WriteErrors, Bytes, Sent, TLSHandshakes, TLSUs and
// Status.
type tlCounts struct {
	n, fail, werr, bytes int64
	sent                 int64
	tlsN, tlsUs          int64
	status               [6]int64
	failBy               [FailuresUnclassified + 1]int64
}

func (c *tlCounts) add(o *tlCounts) {
	c.n += o.n
	c.fail += o.fail
	c.werr += o.werr
	c.bytes += o.bytes
	c.sent += o.sent
	c.tlsN += o.tlsN
	c.tlsUs += o.tlsUs
	for i, v := range o.status {
		c.status[i] += v
	}
	for i, v := range o.failBy {
		c.failBy[i] += v
	}
}

// addTo adds the counts to iv's.
func (c *tlCounts) addTo(iv *Interval) {
	iv.Requests += c.n
	iv.Failures += c.fail
	iv.WriteErrors += c.werr
	iv.Bytes += c.bytes
	iv.Sent += c.sent
	iv.TLSHandshakes += c.tlsN
	iv.TLSUs += c.tlsUs
	for i, v := range c.status {
		iv.Status[i] += v
	}
	for i, v := range c.failBy {
		iv.FailuresBy[i] += v
	}
}

func newTLBuf(rate bool) *tlBuf {
	b := &tlBuf{lat: newTLDist(), corrected: rate}
	if rate {
		b.cor = newTLDist()
	}
	return b
}

func (b *tlBuf) mergeFrom(o *tlBuf) {
	b.tlCounts.add(&o.tlCounts)
	b.lat.mergeFrom(&o.lat)
	if b.corrected {
		b.cor.mergeFrom(&o.cor)
	}
}

func (b *tlBuf) reset(k int64) {
	b.k, b.tlCounts = k, tlCounts{}
	b.lat.reset()
	if b.corrected {
		b.cor.reset()
	}
}

// phaser is HdrHistogram's WriterReaderPhaser: writers enter and leave a
// critical section with one atomic add each; the reader's flip waits until
// every writer that entered before it has left.
type phaser struct {
	start   atomic.Int64
	evenEnd atomic.Int64
	oddEnd  atomic.Int64
}

func (p *phaser) init() { p.oddEnd.Store(math.MinInt64) }

func (p *phaser) enter() int64 { return p.start.Add(1) - 1 }

func (p *phaser) exit(e int64) {
	if e < 0 {
		p.oddEnd.Add(1)
	} else {
		p.evenEnd.Add(1)
	}
}

// flip waits for the writers inside their critical section to leave. One
// reader at a time.
func (p *phaser) flip() {
	nextEven := p.start.Load() < 0
	var initial int64
	if nextEven {
		p.evenEnd.Store(0)
	} else {
		initial = math.MinInt64
		p.oddEnd.Store(initial)
	}
	atFlip := p.start.Swap(initial)
	for spins := 0; ; spins++ {
		var end int64
		if nextEven {
			end = p.oddEnd.Load()
		} else {
			end = p.evenEnd.Load()
		}
		if end == atFlip {
			return
		}
		if spins < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

type tlShard struct {
	ph   phaser
	slot [2]atomic.Pointer[tlBuf]
	_    [64]byte // keep neighbouring shards' counters off one cache line
}

// tlTally is a worker's link to the timeline: its shard and what it had read,
// written and failed at its previous recording.
type tlTally struct {
	shard      *tlShard
	read, sent int64
	fail       int
	// by are the worker's failures in each of ab's classes at its previous
	// recording (looked at only when fail changed).
	by [FailureExceptions + 1]int
}

// failedClass is the class of the failure that made t.Failed.classified()
// change since the worker's previous recording, and takes note of the
// counts: a finished attempt adds at most one failure, so the first class
// that grew is the one (FailuresUnclassified when none did).
func (tt *tlTally) failedClass(f *Failures) int8 {
	now := [...]int{f.Connect, f.Receive, f.Length, f.Exceptions}
	c := int8(FailuresUnclassified)
	for i := range now {
		if now[i] != tt.by[i] && c == int8(FailuresUnclassified) {
			c = int8(i)
		}
		tt.by[i] = now[i]
	}
	return c
}

// timeline gathers Result.Timeline.
type timeline struct {
	d      int64 // interval in ns
	rate   bool
	shards []tlShard
	next   atomic.Uint32
	clock  func() int64

	mu        sync.Mutex
	open      map[int64]*tlBuf // intervals not harvested yet, by the slow path
	late      map[int64]*tlBuf // records for intervals already harvested
	done      []Interval       // harvested intervals, by index
	harvested int64            // intervals 0..harvested-1 are in done
	spare     []*tlBuf

	scratch *hdrhistogram.Histogram // for encoding an interval (collector, then result)

	// onInterval is Config.OnInterval (nil: none); due, in rate mode, the
	// requests the schedule has due between two times (ns since the start),
	// so that an interval handed on live carries its target rate.
	onInterval func(Interval)
	due        func(from, to int64) float64
	conns      func() int64 // the run's open connections (Interval.ConnsOpen)

	stopCh chan struct{}
	exited chan struct{}
}

// tlLive is what a timeline hands its intervals on to as they close: its
// onInterval and due fields.
type tlLive struct {
	on    func(Interval)
	due   func(from, to int64) float64
	conns func() int64
}

func newTimeline(d time.Duration, rate bool, workers int, clock func() int64, live tlLive) *timeline {
	n := min(2*runtime.GOMAXPROCS(0), 16, max(workers, 1))
	tl := &timeline{d: int64(d), rate: rate, shards: make([]tlShard, n), clock: clock,
		open: map[int64]*tlBuf{}, late: map[int64]*tlBuf{}, scratch: samples.NewHist(), stopCh: make(chan struct{}), exited: make(chan struct{}),
		onInterval: live.on, due: live.due, conns: live.conns}
	for i := range tl.shards {
		sh := &tl.shards[i]
		sh.ph.init()
		for k := range sh.slot {
			b := newTLBuf(rate)
			b.k = int64(k)
			sh.slot[k].Store(b)
		}
	}
	go tl.collect()
	return tl
}

// shard assigns t a shard on its first recording. Only t's worker calls it.
func (tl *timeline) shard(t *tally) *tlShard {
	if t.tl.shard == nil {
		t.tl.shard = &tl.shards[int(tl.next.Add(1)-1)%len(tl.shards)]
	}
	return t.tl.shard
}

// moved is what t read and wrote since its previous recording, which it
// takes note of.
func (tt *tlTally) moved(t *tally) (read, sent int64) {
	read, sent = t.TotalRead-tt.read, t.TotalSent-tt.sent
	tt.read, tt.sent = t.TotalRead, t.TotalSent
	return read, sent
}

// observe records one recorded request (from run.record).
func (tl *timeline) observe(t *tally, o *outcome) {
	sh := tl.shard(t)
	bytes, sent := t.tl.moved(t)
	f := t.Failed.classified()
	failed := f != t.tl.fail
	t.tl.fail = f
	class := int8(-1)
	if failed {
		class = t.tl.failedClass(&t.Failed)
	}
	var cor int64
	if tl.rate {
		cor = spanUS(o.Intended, o.End)
	}
	tls := int64(-1) // no handshake
	if o.Connect > o.TCPDone {
		tls = spanUS(o.TCPDone, o.Connect)
	}
	tl.add(sh, o.End, tlRecord{us: spanUS(o.Start, o.End), cor: cor, tls: tls, bytes: bytes, sent: sent,
		class: statusClass(o.Status), failed: class, writeErr: o.Class == failWrite, recorded: true})
}

// tlRecord is what one attempt adds to its interval: us the total time, cor
// the corrected one, tls the TLS handshake's time (−1 without a handshake),
// bytes and sent the bytes read and written since the worker's previous
// recording, class the status's (statusClass); failed is the class of a
// failure counted (Interval.FailuresBy's index; −1: none), writeErr says it
// was a write error, recorded says a request was recorded.
type tlRecord struct {
	us, cor, tls, bytes int64
	sent                int64
	class               int
	failed              int8
	writeErr, recorded  bool
}

// statusClass is Interval.Status's index for a status code.
func statusClass(code int) int {
	if code < 100 || code > 599 {
		return 0
	}
	return code / 100
}

// failure counts an attempt that failed without being recorded (a connect
// failure or an oversized response head, issued again), with what the worker
// read and wrote since its previous recording.
func (tl *timeline) failure(t *tally, end int64) {
	sh := tl.shard(t)
	t.tl.fail = t.Failed.classified()
	bytes, sent := t.tl.moved(t)
	tl.add(sh, end, tlRecord{tls: -1, failed: t.tl.failedClass(&t.Failed), bytes: bytes, sent: sent})
}

// add records rec into the interval of end.
func (tl *timeline) add(sh *tlShard, end int64, rec tlRecord) {
	k := max(end, 0) / tl.d
	e := sh.ph.enter()
	b := sh.slot[k&1].Load()
	if b.k == k {
		b.record(&rec)
	} else {
		tl.slow(k, &rec)
	}
	sh.ph.exit(e)
}

func (b *tlBuf) record(rec *tlRecord) {
	if rec.failed >= 0 {
		atomic.AddInt64(&b.fail, 1)
		atomic.AddInt64(&b.failBy[rec.failed], 1)
	}
	if rec.bytes != 0 {
		atomic.AddInt64(&b.bytes, rec.bytes)
	}
	if rec.sent != 0 {
		atomic.AddInt64(&b.sent, rec.sent)
	}
	if !rec.recorded {
		return
	}
	atomic.AddInt64(&b.n, 1)
	atomic.AddInt64(&b.status[rec.class], 1)
	if rec.writeErr {
		atomic.AddInt64(&b.werr, 1)
	}
	if rec.tls >= 0 {
		atomic.AddInt64(&b.tlsN, 1)
		atomic.AddInt64(&b.tlsUs, rec.tls)
	}
	b.lat.add(rec.us)
	if b.corrected {
		b.cor.add(rec.cor)
	}
}

// slow records into interval k when the shard's live buffer is not k's.
func (tl *timeline) slow(k int64, rec *tlRecord) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	m := tl.open
	if k < tl.harvested {
		m = tl.late
	}
	b := m[k]
	if b == nil {
		b = tl.bufLocked(k)
		m[k] = b
	}
	b.record(rec)
}

// bufLocked returns a clean buffer for interval k (tl.mu held).
func (tl *timeline) bufLocked(k int64) *tlBuf {
	if n := len(tl.spare); n > 0 {
		b := tl.spare[n-1]
		tl.spare = tl.spare[:n-1]
		b.reset(k)
		return b
	}
	b := newTLBuf(tl.rate)
	b.k = k
	return b
}

// collect harvests each interval shortly after it ends, until the run stops.
func (tl *timeline) collect() {
	defer close(tl.exited)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	grace := timelineGrace(tl.d)
	for k := int64(0); ; k++ {
		for {
			wait := (k+1)*tl.d + grace - tl.clock()
			if wait <= 0 {
				break
			}
			timer.Reset(time.Duration(wait))
			select {
			case <-tl.stopCh:
				return
			case <-timer.C:
			}
		}
		select {
		case <-tl.stopCh:
			return
		default:
		}
		iv := tl.harvest(k)
		if tl.onInterval != nil {
			if tl.conns != nil {
				iv.ConnsOpen = tl.conns()
			}
			tl.onInterval(iv)
		}
	}
}

// harvest closes interval k: every shard's k buffer is swapped for a clean one
// tagged k+2, and once no worker can be writing into them, they and what the
// slow path gathered make interval k.
func (tl *timeline) harvest(k int64) Interval {
	tl.mu.Lock()
	agg := tl.open[k]
	if agg == nil {
		agg = tl.bufLocked(k)
	}
	delete(tl.open, k)
	fresh := make([]*tlBuf, len(tl.shards))
	for i := range fresh {
		fresh[i] = tl.bufLocked(k + 2)
	}
	tl.mu.Unlock()
	old := make([]*tlBuf, 0, len(tl.shards))
	for i := range tl.shards {
		sh := &tl.shards[i]
		old = append(old, sh.slot[k&1].Swap(fresh[i]))
		sh.ph.flip()
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for _, b := range old {
		agg.mergeFrom(b)
		tl.spare = append(tl.spare, b)
	}
	iv := tl.interval(agg)
	tl.done = append(tl.done, iv)
	tl.spare = append(tl.spare, agg)
	tl.harvested = k + 1
	return iv
}

func (tl *timeline) interval(b *tlBuf) Interval {
	iv := Interval{
		Start:   time.Duration(b.k * tl.d),
		Length:  time.Duration(tl.d),
		Latency: b.lat.latency(b.n, tl.scratch),
	}
	b.addTo(&iv)
	if tl.rate {
		iv.Corrected = b.cor.latency(b.n, tl.scratch)
	}
	if tl.due != nil {
		iv.Due = tl.due(int64(iv.Start), int64(iv.Start+iv.Length))
	}
	return iv
}

// result stops the collector and returns the timeline of a run that lasted
// elapsed. Every worker has stopped.
func (tl *timeline) result(elapsed time.Duration) *Timeline {
	close(tl.stopCh)
	<-tl.exited
	// What the live buffers hold goes through the slow path's maps.
	for i := range tl.shards {
		sh := &tl.shards[i]
		sh.ph.flip()
		for s := range sh.slot {
			b := sh.slot[s].Load()
			if b.n == 0 && b.fail == 0 {
				continue
			}
			m := tl.open
			if b.k < tl.harvested {
				m = tl.late
			}
			if agg := m[b.k]; agg != nil {
				agg.mergeFrom(b)
			} else {
				m[b.k] = b
			}
		}
	}
	last := int64(-1)
	if elapsed > 0 {
		last = (int64(elapsed) - 1) / tl.d
	}
	for k := range tl.open {
		last = max(last, k)
	}
	live := len(tl.done) // the intervals handed on live so far
	for k := tl.harvested; k <= last; k++ {
		b := tl.open[k]
		if b == nil {
			b = newTLBuf(tl.rate)
			b.k = k
		}
		tl.done = append(tl.done, tl.interval(b))
	}
	for k, b := range tl.late {
		tl.done[k] = tl.mergeLate(tl.done[k], b)
	}
	out := &Timeline{Interval: time.Duration(tl.d), Corrected: tl.rate, Intervals: tl.done}
	for n := len(out.Intervals); n > 0; n-- {
		// Intervals the collector closed after the run's last recording.
		if iv := out.Intervals[n-1]; iv.Start < elapsed || iv.Requests != 0 || iv.Failures != 0 {
			break
		}
		out.Intervals = out.Intervals[:n-1]
	}
	if n := len(out.Intervals); n > 0 {
		// The last interval ends with the run (unless a recording came later).
		lastEnd := out.Intervals[n-1].Start + out.Intervals[n-1].Length
		if cut := lastEnd - elapsed; cut > 0 && cut < out.Intervals[n-1].Length {
			out.Intervals[n-1].Length -= cut
			if tl.due != nil {
				iv := &out.Intervals[n-1]
				iv.Due = tl.due(int64(iv.Start), int64(iv.Start+iv.Length))
			}
		}
	}
	if tl.onInterval != nil {
		// The intervals the collector did not close, as the run's timeline
		// has them (the last one cut at the run's end).
		for i := live; i < len(out.Intervals); i++ {
			tl.onInterval(out.Intervals[i])
		}
	}
	return out
}

// mergeLate adds records that arrived after their interval was harvested.
func (tl *timeline) mergeLate(iv Interval, b *tlBuf) Interval {
	b.addTo(&iv)
	iv.Latency = tl.mergeLatency(iv.Latency, &b.lat, iv.Requests)
	if tl.rate {
		iv.Corrected = tl.mergeLatency(iv.Corrected, &b.cor, iv.Requests)
	}
	return iv
}

func (tl *timeline) mergeLatency(l IntervalLatency, d *tlDist, count int64) IntervalLatency {
	more := d.latency(count-l.count, tl.scratch)
	if more.count == 0 {
		return l
	}
	h, err := hdrhistogram.Decode([]byte(l.Histogram))
	if err != nil {
		h = samples.NewHist()
	}
	add, _ := hdrhistogram.Decode([]byte(more.Histogram))
	if add != nil {
		h.Merge(add)
	}
	lo, hi := more.MinUs, more.MaxUs
	if l.count > 0 {
		lo, hi = min(lo, l.MinUs), max(hi, l.MaxUs)
	}
	return LatencyOf(h, count, lo, hi)
}
