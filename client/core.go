package client

import (
	"gab/internal/samples"

	"context"
	"errors"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// This file is ab's accounting, shared by every transport (HTTP/1, HTTP/2, CGI):
// the request budget, Document Length fixed by the first response, the failure
// classes, the abort after 10 failures, recording by index, progress, and the
// ways a run ends (-t, -s, SIGINT, fatal errors).

// failClass is how one request attempt ended.
type failClass uint8

const (
	// classOK: a complete response (any status).
	classOK failClass = iota
	// failConnect: the connection could not be set up. Not recorded; the request
	// is issued again; counts towards ab's abort after 10 failures.
	failConnect
	// failRefused: connection refused. Without -r it is fatal
	// ("apr_socket_recv: Connection refused (111)"), with -r a recorded Connect failure.
	failRefused
	// failReceive: a receive error (reset, EOF before any byte or mid-body).
	// Without -r a reset is fatal as in ab; an early EOF is always just counted.
	failReceive
	// failReceiveCounted: a receive failure that is counted whatever -r says.
	failReceiveCounted
	// failException: a malformed response, or one overdue under --request-timeout. Recorded.
	failException
	// failWrite: sending the request failed ("Send request failed!"). Recorded, Write errors+1.
	failWrite
	// failHeaderOverflow: a response head over 8191 bytes. Non-2xx+1, Failed+1 with
	// no class, not recorded, issued again; counts towards the abort.
	failHeaderOverflow
	// failAbandoned: the run stopped while the request was in flight. Not counted at all.
	failAbandoned
)

// outcome is what a transport reports for one request attempt. Times are
// nanoseconds since the run's start (run.clock), from the monotonic clock.
type outcome struct {
	Start     int64 // request start: before connect, or when the previous response on a kept-alive connection ended
	TCPDone   int64 // TCP connection established (before TLS); == Start on reuse
	Connect   int64 // connection ready (TLS included) and the write begins (== Start on reuse)
	WriteEnd  int64 // request fully written
	FirstByte int64 // first response byte read
	End       int64 // response complete (or failure noticed)
	Status    int   // status code, 0 if none was read
	Body      int64 // decoded body bytes of this response
	Class     failClass
	// Intended is the request's scheduled send time in rate mode (ns since the
	// start); finish sets it from tally.Intended, transports need not.
	Intended  int64
	KeptAlive bool       // completed on a connection kept alive for the next request (ab doneka)
	Err       error      // the cause, for failures
	CGI       *cgiSample // per-request CGI phases (CGI transport only; copied when recorded)
	// entry is the URL list's index of the request's URL plus 1 (0: no list),
	// for the results per target; lengthFailed: finish found a Length failure.
	entry        int32
	lengthFailed bool
}

// tally holds one worker's counters. Only its worker writes it, except
// activity, which the watchdog reads; tallies are summed when the run ends.
type tally struct {
	Counters

	statusCode  int // run-length cache in front of statuses, so a map is touched only on change
	statusCount int
	statuses    map[int]int
	firstError  [failureKinds]string
	firstAt     [failureKinds]int64 // when each first error ended (ns since the start)

	lastDone int64 // clock of this worker's latest recording (Elapsed is the max)

	// Intended is the scheduled send time (ns since start) of the current
	// request in rate mode; 0 otherwise. Sent is when its wait for that
	// time ended (at or after Intended, by the timer's lateness): the
	// actual send time, from which ab's uncorrected tables count.
	Intended int64
	Sent     int64
	// slot is the schedule's slot of the request claimed last (rate mode):
	// with Config.Replay, the URL list's entry it sends.
	slot int64

	activity atomic.Int64 // run.clock() of this worker's last socket event, for -s
	state    atomic.Int32 // tallyWorking, tallyPacing or tallyEnded, for -s
	conn     atomic.Pointer[connBox]
	extra    *tallyExtra      // the worker's share of extraStats (phases.go); nil until used
	spill    []samples.Sample // samples past the exact limit on their way to disk (samples.Store.Put); nil until used
	live     *liveHist        // total times for Runner.Live (live.go); nil without Config.Live
	tl       tlTally          // the worker's link to the timeline (timeline.go)
	ramp     rampTally        // what its requests of the ramp-up counted (ramp.go)
	// inflight are the requests this worker had in flight when the run
	// stopped (leftInFlight); nil until then.
	inflight []inFlightAt
	// conns counts the connections the worker opened and has not closed
	// (epoll loops, HTTP/1's goroutines; run.conns has the others). Only
	// the worker writes it: a load and a store, no read-modify-write.
	conns atomic.Int64
}

// inFlightAt is a request the stopping run left in flight: when it started
// and when it was due (rate mode; its start otherwise), in ns since the
// run's start.
type inFlightAt struct{ start, due int64 }

// connOpened and connClosed count one of t's connections (only t's worker
// calls them).
func (t *tally) connOpened() { t.conns.Store(t.conns.Load() + 1) }
func (t *tally) connClosed() { t.conns.Store(t.conns.Load() - 1) }

type connBox struct{ c io.Closer }

// A tally's worker is working (its request, or between two), pacing (rate
// mode: waiting for its next slot) or ended (it returned): -s's watchdog
// (run.idleFor) waits for the server only while a worker works.
const (
	tallyWorking int32 = iota
	tallyPacing
	tallyEnded
)

// touch records socket activity now (for ab's -s idle timeout).
func (t *tally) touch(r *run) { t.activity.Store(r.clock()) }

// setConn registers the worker's current connection (or process), so that a
// stopping run can interrupt its blocking I/O. It returns false if the run has
// already stopped, in which case c has been closed.
func (t *tally) setConn(r *run, c io.Closer) bool {
	if c == nil {
		t.conn.Store(nil)
		return true
	}
	t.conn.Store(&connBox{c})
	if r.stopped.Load() {
		interrupt(c)
		return false
	}
	return true
}

func (t *tally) addStatus(code int) {
	if code == t.statusCode {
		t.statusCount++
		return
	}
	t.flushStatus()
	t.statusCode, t.statusCount = code, 1
}

func (t *tally) flushStatus() {
	if t.statusCount > 0 {
		if t.statuses == nil {
			t.statuses = make(map[int]int)
		}
		t.statuses[t.statusCode] += t.statusCount
	}
	t.statusCount = 0
}

func (t *tally) noteError(f Failure, err error, at int64) {
	if err != nil && t.firstError[f] == "" {
		t.firstError[f], t.firstAt[f] = err.Error(), at
	}
}

// interrupt makes blocked I/O on c return at once.
func interrupt(c io.Closer) {
	if d, ok := c.(interface{ SetDeadline(time.Time) error }); ok {
		_ = d.SetDeadline(time.Unix(1, 0)) // an error means it is closed already
		return
	}
	_ = c.Close() // best effort: the run is stopping
}

// transport carries requests for one protocol.
type transport interface {
	// prepare runs after the banner and before the clock starts: resolve names,
	// check that the peer speaks the protocol. A *FatalError ends the run.
	prepare(ctx context.Context, r *run) error
	// slots is the number of concurrent request loops to run.
	slots() int
	// work is one request loop; it returns when claim fails or the run stops.
	work(r *run, slot int, t *tally)
}

// run is the state of one benchmark run, shared by its workers.
type run struct {
	cfg     *Config
	events  Events
	start   time.Time
	startUs int64 // start.UnixMicro(), for Sample.Start
	samples *samples.Store
	n       int64

	tickets atomic.Int64 // requests handed out (claim) and not given back
	done    atomic.Int64 // recorded requests
	good    atomic.Int64 // successful responses
	bad     atomic.Int64 // ab's Failed requests
	// conns counts the open connections that several goroutines may close
	// (HTTP/2's and HTTP/3's on the goroutine path); tally.conns the others.
	conns atomic.Int64

	docLenState atomic.Int32 // 0 unset, 1 being set, 2 set
	docLen      atomic.Int64
	server      atomic.Pointer[string]
	tlsInfo     atomic.Pointer[TLSInfo]
	headerSeen  atomic.Bool
	rampAt      atomic.Int64 // clock when the first response head arrived (0: none yet)
	rampUp      chan struct{}
	rampOnce    sync.Once

	stopped       atomic.Bool
	stopCh        chan struct{}
	stopOnce      sync.Once
	ending        Ending
	fatal         *FatalError
	progressEvery int64 // ab's progress interval (0: no progress events)
	stopAt        int64 // clock when the run was stopped

	mu      sync.Mutex
	tallies []*tally

	protocol string // Result.Protocol: set by the transport's prepare ("h2", "h2c")
	engine   string // Result.Engine: set by the HTTP/1 transport's prepare

	// warmup: this run is a warm-up (--warmup); it records nothing but counts.
	warmup bool
	// rampEnd is Config.RampUp in the clock's ns (0 without): requests that
	// start before it are left out (rampSent counts them).
	rampEnd  int64
	rampSent atomic.Int64

	sched *schedule   // --rate; nil in ab's closed loop
	cgi   *cgiStore   // CGI phase store (--cgi); nil otherwise
	extra *extraStats // --extended/--percentiles/--rate/JSON figures; nil otherwise
	tl    *timeline   // Config.Interval's latency timeline; nil otherwise
	opens *connOpens  // when the first connections were established (with extra); nil otherwise
	// tstats are the results per target of a URL list (targetstats.go); nil otherwise.
	tstats *targetStats
}

// clock is the time since the run's start in ns, from the monotonic clock.
// time.Since reads only the monotonic clock (time.Now reads the wall clock
// too): one vDSO call per reading on the hot path.
func (r *run) clock() int64 { return int64(time.Since(r.start)) }

// claim hands out the next request; false when n requests are out or the run
// stopped. In rate mode (--rate) it also waits for the request's intended send
// time, which it stores in t.Intended (and when the wait ended, in t.Sent).
func (r *run) claim(t *tally) bool {
	if r.stopped.Load() {
		return false
	}
	if r.tickets.Add(1) > r.n {
		r.tickets.Add(-1)
		return false
	}
	if r.sched != nil {
		return r.sched.wait(r, t)
	}
	return true
}

// tryClaim is claim without the wait of rate mode: ok when a request is
// handed out; otherwise due is when the next one is due (ns since the start),
// or -1 when none is left. Pipelined connections claim with it while they
// have responses to read.
func (r *run) tryClaim(t *tally) (ok bool, due int64) {
	if r.stopped.Load() {
		return false, -1
	}
	if r.tickets.Add(1) > r.n {
		r.tickets.Add(-1)
		return false, -1
	}
	if r.sched == nil {
		return true, 0
	}
	if ok, due = r.sched.tryWait(r, t); !ok {
		r.tickets.Add(-1)
	}
	return ok, due
}

// unclaim gives a request back, to be issued again (it was not recorded).
func (r *run) unclaim() { r.tickets.Add(-1) }

// isStopped reports whether workers should give up.
func (r *run) isStopped() bool { return r.stopped.Load() }

// stop ends the run with the given ending; the first call wins.
func (r *run) stop(e Ending, fe *FatalError) {
	r.stopOnce.Do(func() {
		r.stopAt = r.clock()
		r.ending, r.fatal = e, fe
		r.stopped.Store(true)
		close(r.stopCh)
		r.openRamp()
		r.mu.Lock()
		for _, t := range r.tallies {
			if b := t.conn.Load(); b != nil {
				interrupt(b.c)
			}
		}
		r.mu.Unlock()
	})
}

func (r *run) openRamp() { r.rampOnce.Do(func() { close(r.rampUp) }) }

// sawHeader is called when a complete response head arrives: ab opens its other
// c−1 connections only then (ramp-up).
func (r *run) sawHeader() {
	if !r.headerSeen.Load() && r.headerSeen.CompareAndSwap(false, true) {
		r.rampAt.Store(max(r.clock(), 1))
		r.openRamp()
	}
}

// connOpens times the run's first connections: when each of the first
// len(at) TCP connections was established (ns since the start), and how many
// were established in all. One atomic add per connection, nothing per request.
type connOpens struct {
	n  atomic.Int64
	at []int64 // written once each by the opener, read once the workers have returned
}

// established notes a TCP connection established at now.
func (c *connOpens) established(now int64) {
	if c == nil {
		return
	}
	if i := c.n.Add(1); i <= int64(len(c.at)) {
		c.at[i-1] = now
	}
}

// connWindowMin is the least window of ConnOpening's rule.
const connWindowMin = 100 * time.Millisecond

// connsInTime applies ConnOpening's rule to a run of conns connections that
// lasted end ns: opened holds when its first connections were established
// (at most conns), total how many were established in all, rampAt when the
// first response head arrived (0: never) and rampUp is Config.RampUp in ns.
func connsInTime(opened []int64, total int64, conns int, rampAt, rampUp, end int64) ConnOpening {
	w := max(int64(connWindowMin), end/10)
	o := ConnOpening{Window: time.Duration(w)}
	asks := min(w, end-w) // the asks that had a whole window to be answered before the end
	if conns <= 0 || total <= 0 || asks < 0 {
		return o
	}
	switch {
	case rampUp > 0: // slot i asks at i/conns of the ramp-up
		o.Asked = int(min(int64(conns), asks*int64(conns)/rampUp+1))
	case rampAt > 0 && rampAt <= asks: // ab's ramp: the others ask once the first head arrived
		o.Asked = conns
	default:
		o.Asked = 1
	}
	o.Asked = int(min(int64(o.Asked), total)) // slots that found no request left asked for none
	for _, at := range opened[:min(int64(len(opened)), total)] {
		if at <= asks+w {
			o.Opened++
		}
	}
	o.Opened = min(o.Opened, o.Asked)
	return o
}

// wantServer reports whether the Server header still has to be captured.
func (r *run) wantServer() bool { return r.server.Load() == nil }

// setServer records ab's "Server Software" (first response wins).
func (r *run) setServer(s string) { r.server.CompareAndSwap(nil, &s) }

// setTLS records the first handshake's parameters.
func (r *run) setTLS(info *TLSInfo) { r.tlsInfo.CompareAndSwap(nil, info) }

func (r *run) newTally() *tally {
	t := &tally{}
	if r.cfg.Live {
		t.live = new(liveHist)
	}
	t.activity.Store(r.clock())
	r.mu.Lock()
	r.tallies = append(r.tallies, t)
	r.mu.Unlock()
	return t
}

func usec(ns int64) uint32 {
	if ns <= 0 {
		return 0
	}
	us := ns / 1000
	if us > 0xFFFFFFFF {
		return 0xFFFFFFFF
	}
	return uint32(us)
}

// finish accounts for one attempt. It returns false when the worker should stop
// (the run ended). The caller must have claimed the request.
func (r *run) finish(t *tally, o *outcome) bool {
	if o.Start < r.rampEnd {
		t.leaveToRamp() // its bytes are the ramp-up's, abandoned or not
	}
	if o.Start < r.rampEnd && o.Class != failAbandoned {
		// Started during the ramp-up: its ticket goes back, nothing counts.
		r.unclaim()
		r.rampSent.Add(1)
		return !r.isStopped()
	}
	switch o.Class {
	case failAbandoned:
		r.leftInFlight(t, o)
		r.unclaim()
		return false
	case failConnect, failHeaderOverflow:
		if e := errnoOf(o.Err); e == syscall.EMFILE || e == syscall.ENFILE {
			// ab: "socket: Too many open files (24)", fatal at once.
			r.unclaim()
			r.stop(EndFatal, sysError("socket", o.Err))
			return false
		}
		if o.Class == failConnect {
			t.noteError(FailureConnect, o.Err, o.End)
		} else {
			t.noteError(FailureExceptions, o.Err, o.End)
		}
		r.unclaim()
		// ab: if (bad++ > 10) abort, so the 12th such failure is fatal.
		if r.bad.Add(1)-1 > 10 {
			if o.Class == failHeaderOverflow {
				r.stop(EndFatal, &FatalError{Message: "\nTest aborted after 10 failures\n\n\n", Exit: 1, Err: o.Err})
			} else {
				fe := sysError("apr_socket_connect()", o.Err)
				fe.Message = "\nTest aborted after 10 failures\n\n" + fe.Message
				r.stop(EndFatal, fe)
			}
			return false
		}
		if o.Class == failConnect {
			t.Failed.Connect++
		} else {
			t.Non2xx++
		}
		if r.tl != nil {
			r.tl.failure(t, o.End)
		}
		r.tstats.add(o, false, 0)
		return !r.isStopped()
	case failRefused:
		if !r.cfg.KeepGoing {
			r.unclaim()
			r.stop(EndFatal, sysError("apr_socket_recv", o.Err))
			return false
		}
		t.noteError(FailureConnect, o.Err, o.End)
		r.reportReceiveError(o.Err)
		t.Failed.Connect++
		r.bad.Add(1)
	case failReceive, failReceiveCounted:
		if o.Class == failReceive && !r.cfg.KeepGoing {
			r.unclaim()
			r.stop(EndFatal, sysError("apr_socket_recv", o.Err))
			return false
		}
		t.noteError(FailureReceive, o.Err, o.End)
		if r.cfg.KeepGoing {
			r.reportReceiveError(o.Err)
		}
		t.Failed.Receive++
		r.bad.Add(1)
	case failException:
		t.noteError(FailureExceptions, o.Err, o.End)
		t.Failed.Exceptions++
		r.bad.Add(1)
	case failWrite:
		t.noteError(FailureWrite, o.Err, o.End)
		t.WriteErrors++
		r.events.SendFailed()
	case classOK:
		if o.Status < 200 || o.Status > 299 {
			t.Non2xx++
		}
		t.addStatus(o.Status)
		if o.KeptAlive {
			t.KeepAlive++
		}
		length := t.Failed.Length
		r.checkLength(t, o.Body, o.End)
		o.lengthFailed = t.Failed.Length > length
	}
	return r.record(t, o)
}

// leftInFlight notes o's request, which the stopping run leaves in flight:
// sent, or being sent (connecting, writing), and neither answered nor
// failed. Every transport reports such a request once, when the run has
// stopped: as an abandoned attempt through finish, or (the event loops,
// which do not finish what they leave) as it shuts down. Result.Outstanding
// lists them; nothing is noted on the hot path.
func (r *run) leftInFlight(t *tally, o *outcome) {
	if r.warmup || o.Start < r.rampEnd {
		return // the warm-up's and the ramp-up's requests count nowhere
	}
	at := inFlightAt{start: o.Start, due: o.Start}
	if r.sched != nil {
		// As stamp does for a recorded request: the actual send time, and
		// the slot's intended one.
		at.start, at.due = max(o.Start, t.Sent), t.Intended
	}
	t.inflight = append(t.inflight, at)
}

func (r *run) reportReceiveError(err error) {
	if r.cfg.Verbosity >= 1 {
		r.events.ReceiveError(sysError("apr_socket_recv", err))
	}
}

var errLengthDiffers = errors.New("body length differs from the first response's")

// checkLength applies ab's rule: the first successful response fixes Document
// Length; later ones of another length are Length failures unless -l.
func (r *run) checkLength(t *tally, body, at int64) {
	if r.good.Add(1) == 1 {
		r.docLen.Store(body)
		r.docLenState.Store(2)
		return
	}
	for r.docLenState.Load() != 2 { // the first response is being recorded right now
		if r.isStopped() {
			return
		}
		time.Sleep(time.Microsecond)
	}
	if !r.cfg.VariableLength && body != r.docLen.Load() {
		t.Failed.Length++
		r.bad.Add(1)
		t.noteError(FailureLength, errLengthDiffers, at)
	}
}

// record stores the attempt's sample if fewer than n are recorded.
func (r *run) record(t *tally, o *outcome) bool {
	i := r.done.Add(1)
	if i > r.n {
		r.done.Add(-1)
		return false
	}
	end := o.End
	if end > t.lastDone {
		t.lastDone = end
	}
	if r.warmup { // counted, never recorded: no sample, no figure
		if i == r.n {
			r.stop(EndCompleted, nil)
			return false
		}
		return !r.isStopped()
	}
	if r.sched != nil {
		r.sched.stamp(t, o) // intended time; start no earlier than the actual send time
	}
	if r.extra != nil {
		r.extra.observe(t, o)
	}
	if r.tl != nil {
		r.tl.observe(t, o)
	}
	if r.cgi != nil {
		r.cgi.put(int(i-1), o.CGI)
	}
	smp := samples.Sample{
		Start:   samples.StartMs(r.startUs, o.Start),
		Connect: usec(o.Connect - o.Start),
		Wait:    usec(o.FirstByte - o.WriteEnd),
		Total:   usec(end - o.Start),
	}
	r.samples.Put(int(i-1), smp, &t.spill)
	r.tstats.add(o, true, smp.Total)
	if t.live != nil {
		t.live.add(smp.Total)
	}
	if every := r.progressEvery; every > 0 && i%every == 0 {
		r.events.Completed(int(i))
	}
	if i == r.n {
		r.stop(EndCompleted, nil)
		return false
	}
	return !r.isStopped()
}

// ProgressInterval is ab's heartbeat for n requests: a "Completed N requests"
// line every max(100, n/10) recorded requests when n > 150 and -q was not
// given, else 0 (no progress lines).
func ProgressInterval(n int, quiet bool) int {
	if quiet || n <= 150 {
		return 0
	}
	return max(100, n/10)
}

// Runner runs one configured benchmark.
type Runner struct {
	cfg     Config
	tr      transport
	r       *run
	cur     atomic.Pointer[run] // r, for Completed from other goroutines
	lookups *lookupTimer        // times name resolution for the extended report; nil otherwise
	warmup  bool                // this runner is a warm-up's (see warmUp)
	// onMeasure is called when the measured part begins (OnMeasure, ramp.go).
	onMeasure func()
}

// New checks the configuration and prepares what must fail before ab's banner
// (TLS ciphers, client certificates). Name resolution happens in Run, after it.
func New(cfg Config) (*Runner, error) {
	if cfg.Events == nil {
		cfg.Events = nopEvents{}
	}
	if cfg.Streams <= 0 {
		cfg.Streams = 1
	}
	lookups := timeLookups(&cfg)
	tr, err := newTransport(&cfg)
	if err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, tr: tr, lookups: lookups}, nil
}

// newTransport returns the transport of cfg.Protocol (or the one a test
// injected in cfg.transport).
func newTransport(cfg *Config) (transport, error) {
	if cfg.transport != nil {
		return cfg.transport(cfg)
	}
	if cfg.URLs != nil && len(cfg.URLs.Origins) > 1 && !cfg.perOrigin {
		return newMultiOrigin(cfg) // multiorigin.go: a transport per origin
	}
	switch cfg.Protocol {
	case HTTP10, HTTP11:
		return newHTTP1(cfg)
	case HTTP2:
		return newHTTP2(cfg)
	case HTTP3:
		return newHTTP3(cfg)
	case CGI:
		return newCGI(cfg)
	}
	return nil, errors.New("gab: protocol not supported in this build")
}

// completed is the number of requests recorded so far (safe to call during Run).
func (rn *Runner) completed() int {
	r := rn.cur.Load()
	if r == nil {
		return 0
	}
	return int(r.done.Load())
}

// Run performs the benchmark. Cancelling ctx (SIGINT) ends it with a partial
// result (Ending EndInterrupted). A fatal error is returned both as the error and
// in Result.Fatal, with whatever was measured.
//
// With a warm-up (Config.WarmupRequests or WarmupTime) a first run sends the
// warm-up requests with the same options over its own connections and
// records nothing; the measured run then starts as ab's does (ramp-up
// included). A fatal error in the warm-up ends Run with that error and an
// empty measured result; an interrupted warm-up ends it interrupted.
func (rn *Runner) Run(ctx context.Context) (*Result, error) {
	var warm *WarmupResult
	if rn.cfg.WarmupRequests > 0 || rn.cfg.WarmupTime > 0 {
		w, err := rn.warmUp(ctx)
		if err != nil || ctx.Err() != nil {
			res := rn.emptyResult(w)
			res.Warmup = w.Warmup
			return res, err
		}
		warm = w.Warmup
	}
	if warm != nil && rn.cfg.RampUp <= 0 {
		rn.measuring() // the measured part begins now (with a ramp-up, at its end: watch)
	}
	res, err := rn.measure(ctx)
	if res != nil {
		res.Warmup = warm
	}
	return res, err
}

// warmUp sends the warm-up: a copy of the configuration with the warm-up's
// request count or time limit, its own transport and connections, no events,
// no extra figures, recording nothing.
func (rn *Runner) warmUp(ctx context.Context) (*Result, error) {
	wc := rn.cfg
	wc.WarmupRequests, wc.WarmupTime = 0, 0
	wc.Requests, wc.TimeLimit = rn.cfg.WarmupRequests, 0
	if rn.cfg.WarmupTime > 0 {
		wc.Requests, wc.TimeLimit = math.MaxInt32, rn.cfg.WarmupTime
	}
	wc.Events, wc.Quiet, wc.Verbosity = nopEvents{}, true, 0
	wc.OnInterval = nil // the warm-up's intervals are no figure's
	wc.Extended, wc.KeepAllRows, wc.SampleLimit = false, false, 1
	if rn.lookups != nil {
		wc.Resolver = rn.lookups.inner // the measured run's DNS figure is its own
	}
	w, err := New(wc)
	if err != nil {
		return &Result{Ending: EndFatal, Warmup: &WarmupResult{}}, err
	}
	w.warmup = true
	res, err := w.measure(ctx)
	res.Warmup = &WarmupResult{Complete: res.Complete, Failed: res.Failed.Total, Elapsed: res.Elapsed}
	return res, err
}

// emptyResult is the measured result of a run that ended in its warm-up:
// nothing measured, the warm-up's ending and fatal error.
func (rn *Runner) emptyResult(w *Result) *Result {
	return &Result{
		Ending:       w.Ending,
		fatal:        w.fatal,
		Samples:      samples.New(0, 1),
		StatusCounts: map[int]int{},
		FirstError:   map[string]string{}, FirstErrorAt: map[string]time.Duration{},
	}
}

// measure is one run: the measured one, or the warm-up (rn.warmup). It sets
// the run up, prepares the transport, starts the workers, and watches them
// until they are done or something ends the run.
func (rn *Runner) measure(ctx context.Context) (*Result, error) {
	r := rn.newRun()
	if fe := rn.begin(ctx, r); fe != nil {
		r.stop(EndFatal, fe)
		return rn.result(), fe
	}
	rn.watch(ctx, r, rn.startWorkers(r))
	res := rn.result()
	if res.fatal != nil {
		return res, res.fatal
	}
	return res, nil
}

// newRun sets up the state of a run: its schedule (--rate), extra statistics
// and sample store.
func (rn *Runner) newRun() *run {
	cfg := &rn.cfg
	r := &run{
		cfg:    cfg,
		events: cfg.Events,
		n:      int64(cfg.Requests),
		rampUp: make(chan struct{}),
		stopCh: make(chan struct{}),
		warmup: rn.warmup,
	}
	rn.r = r
	if !rn.warmup {
		rn.cur.Store(r)
	}
	if cfg.Rate > 0 {
		r.sched = newSchedule(cfg.Rate, cfg.RateSchedule)
		r.sched.replay = cfg.Replay
		r.sched.end = int64(cfg.TimeLimit) // the schedule's last slot is due before -t's end
	}
	if cfg.Extended || cfg.Rate > 0 {
		r.extra = newExtraStats(cfg.Rate > 0, rn.lookups)
	}
	if cfg.URLs != nil && !rn.warmup {
		r.tstats = newTargetStats(cfg)
	}
	if cfg.Extended && r.sched == nil { // ConnOpening: a closed-model run asks for its connections at once
		r.opens = &connOpens{at: make([]int64, max(cfg.Concurrency, 0))}
	}
	r.start = time.Now()
	if cfg.TimeLimit > 0 { // -n is a cap, not what the run will send: the store grows as it fills
		r.samples = samples.NewGrowing(cfg.Requests, cfg.SampleLimit)
	} else {
		r.samples = samples.New(cfg.Requests, cfg.SampleLimit)
	}
	if cfg.KeepAllRows {
		r.samples.SpillPastLimit("")
	}
	return r
}

// begin prepares the transport and starts the run's clock; a fatal error
// ends the run before any request.
func (rn *Runner) begin(ctx context.Context, r *run) *FatalError {
	cfg := &rn.cfg
	if cfg.Concurrency <= 0 {
		// ab accepts -c 0 and then fails in apr_pollset_create/poll.
		return aprError("apr_pollset_poll", 22, "Invalid argument", nil)
	}
	if err := rn.tr.prepare(ctx, r); err != nil {
		var fe *FatalError
		if !errors.As(err, &fe) {
			fe = &FatalError{Message: err.Error() + "\n", Exit: 1, Err: err}
		}
		return fe
	}
	r.start = time.Now() // ab takes the start time just before the first connect
	r.startUs = r.start.UnixMicro()
	r.rampEnd = int64(cfg.RampUp)
	r.progressEvery = int64(ProgressInterval(cfg.Requests, cfg.Quiet))
	return nil
}

// startWorkers starts one worker per slot of the transport (outside rate
// mode all but the first wait for ab's ramp-up) and returns a channel closed
// when they all returned.
func (rn *Runner) startWorkers(r *run) <-chan struct{} {
	var wg sync.WaitGroup
	slots := rn.tr.slots()
	if rn.cfg.Interval > 0 {
		live := tlLive{on: rn.cfg.OnInterval, conns: r.openConns}
		if s := r.sched; s != nil && live.on != nil {
			live.due = func(from, to int64) float64 { return s.countAt(to) - s.countAt(from) }
		}
		r.tl = newTimeline(rn.cfg.Interval, r.sched != nil, slots, r.clock, live)
	}
	for i := 0; i < slots; i++ {
		t := r.newTally()
		wg.Add(1)
		go func(i int, t *tally) {
			defer wg.Done()
			if ramp := rn.cfg.RampUp; ramp > 0 {
				// Slot i opens at i/slots of the ramp-up.
				tm := time.NewTimer(time.Until(r.start.Add(ramp * time.Duration(i) / time.Duration(slots))))
				select {
				case <-tm.C:
				case <-r.stopCh:
					tm.Stop()
					return
				}
			} else if d := rn.cfg.ConnectDelay; d > 0 {
				// -R: slot i's connection opens at i·d, whatever the responses do.
				if !sleepUntil(r, r.start.Add(d*time.Duration(i%max(rn.cfg.Concurrency, 1)))) {
					return
				}
			} else if i > 0 && r.sched == nil {
				// ab's ramp-up: the other slots wait for the first
				// response head. Not in rate mode, where the schedule
				// sends on whichever connection is free: a server slow
				// to answer the first request must not leave the others
				// unopened (the schedule would fall behind with the
				// connections unused, and seem the client's doing).
				select {
				case <-r.rampUp:
				case <-r.stopCh:
					return
				}
			}
			rn.tr.work(r, i, t)
			t.state.Store(tallyEnded)
		}(i, t)
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	return allDone
}

// sleepUntil waits until at, false if the run stopped first.
func sleepUntil(r *run, at time.Time) bool {
	tm := time.NewTimer(time.Until(at))
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-r.stopCh:
		return false
	}
}

// watch waits until the workers are done (allDone), stopping the run on the
// context's cancellation, at -t's limit, or when -s's watchdog finds no socket
// activity in any worker for -s.
func (rn *Runner) watch(ctx context.Context, r *run, allDone <-chan struct{}) {
	cfg := &rn.cfg
	var limit <-chan time.Time
	if cfg.TimeLimit > 0 {
		tm := time.NewTimer(cfg.TimeLimit)
		defer tm.Stop()
		limit = tm.C
	}
	var tick <-chan time.Time
	var every time.Duration
	if cfg.Timeout >= 0 {
		every = min(max(cfg.Timeout/10, time.Millisecond), 100*time.Millisecond)
		tk := time.NewTicker(every)
		defer tk.Stop()
		tick = tk.C
	}
	rampEnd, measured := rn.rampEnds(r)
	defer measured()
	lastTick, lookedAgain := r.clock(), false
	for {
		select {
		case <-rampEnd:
			rn.measuring()
		case <-allDone:
			return
		case <-r.stopCh:
			<-allDone
			return
		case <-ctx.Done():
			r.stop(EndInterrupted, nil)
		case <-limit:
			r.stop(EndTimeLimit, nil)
		case <-tick:
			now := r.clock()
			late := now-lastTick > 3*int64(every)
			lastTick = now
			if r.idleFor() >= int64(cfg.Timeout) {
				// A late tick means this process was not running (a loaded
				// machine, a stopped process): the workers have not yet read
				// what arrived meanwhile, which ab's poll would see at once.
				// Look once more before giving up.
				if late && !lookedAgain {
					lookedAgain = true
					continue
				}
				r.stop(EndFatal, timeoutError())
			}
			lookedAgain = false
		}
	}
}

// idleFor is how long no worker has seen any socket event while one waits
// for the server: 0 while every worker waits for its rate slot or has ended
// (the run then waits for its own schedule, not for the server).
func (r *run) idleFor() int64 {
	var last int64
	waiting := false
	r.mu.Lock()
	for _, t := range r.tallies {
		if a := t.activity.Load(); a > last {
			last = a
		}
		waiting = waiting || t.state.Load() == tallyWorking
	}
	r.mu.Unlock()
	if !waiting {
		return 0
	}
	return r.clock() - last
}

func (rn *Runner) result() *Result {
	r := rn.r
	res := &Result{
		Start:        r.start,
		Ending:       r.ending,
		fatal:        r.fatal,
		Complete:     int(r.done.Load()),
		Samples:      r.samples,
		DocLength:    r.docLen.Load(),
		TLS:          r.tlsInfo.Load(),
		Protocol:     r.protocol,
		Engine:       r.engine,
		StatusCounts: map[int]int{},
		FirstError:   map[string]string{}, FirstErrorAt: map[string]time.Duration{},
	}
	if !r.stopped.Load() {
		r.stopAt = r.clock()
		res.Ending = EndCompleted
	}
	if s := r.server.Load(); s != nil {
		res.ServerSoftware = *s
	}
	if r.extra != nil {
		res.Extra = r.extra.result(r)
	}
	if r.cgi != nil {
		res.CGI = r.cgi.times(res.Complete)
	}
	res.Elapsed = time.Duration(r.stopAt)
	// The lock covers the tallies alone: the timeline's result below hands
	// intervals on to Config.OnInterval, which may call Runner.Live.
	r.mu.Lock()
	var lastDone int64 // ab's lasttime: the latest recording of any worker
	if cfg := rn.cfg; cfg.Timeout > 0 {
		res.Timeout = cfg.Timeout
	}
	for _, t := range r.tallies {
		if res.Ending != EndCompleted { // n recorded: nothing is left outstanding
			for _, at := range t.inflight {
				res.Outstanding = append(res.Outstanding, InFlight{
					Age: time.Duration(max(r.stopAt-at.start, 0)), Corrected: time.Duration(max(r.stopAt-at.due, 0))})
			}
		}
		t.flushStatus()
		r.samples.FlushBatch(&t.spill) // every worker has stopped
		lastDone = max(lastDone, t.lastDone)
		res.Counters.add(&t.Counters)
		for k, v := range t.statuses {
			res.StatusCounts[k] += v
		}
		for f, msg := range t.firstError {
			at := time.Duration(t.firstAt[f])
			if k := Failure(f).String(); msg != "" && (res.FirstError[k] == "" || at < res.FirstErrorAt[k]) {
				res.FirstError[k], res.FirstErrorAt[k] = msg, at
			}
		}
	}
	r.mu.Unlock()
	res.Failed.Total = int(r.bad.Load())
	if o := r.opens; o != nil && o.n.Load() > 0 {
		in := connsInTime(o.at, o.n.Load(), len(o.at), r.rampAt.Load(), int64(rn.cfg.RampUp), r.stopAt)
		res.Opening = &in
	}
	if res.Ending == EndCompleted {
		res.Elapsed = time.Duration(lastDone)
	}
	if r.tl != nil {
		res.Timeline = r.tl.result(res.Elapsed)
		if r.sched != nil {
			r.sched.fillDue(res.Timeline)
		}
	}
	if r.rampEnd > 0 { // the run's figures start after the ramp-up
		res.Ramp = r.rampResult()
		res.Elapsed = max(res.Elapsed-time.Duration(r.rampEnd), 0)
		for k, at := range res.FirstErrorAt { // as the time taken, from the ramp-up's end
			res.FirstErrorAt[k] = max(at-time.Duration(r.rampEnd), 0)
		}
	}
	if r.tstats != nil {
		res.Targets = r.tstats.result()
	}
	if q, ok := rn.tr.(interface{ quicStats() *QUICStats }); ok {
		res.QUIC = q.quicStats()
	}
	return res
}

// failOpen ends o, an attempt that got no connection, at now with err.
func (r *run) failOpen(o *outcome, now int64, err error) {
	if o.TCPDone == 0 {
		o.TCPDone = now
	}
	o.Connect, o.WriteEnd, o.FirstByte, o.End = now, now, now, now
	o.Err, o.Class = err, r.openFailClass(err)
}

// openFailClass is the class of an attempt that got no connection: not
// counted if the run is stopping, a refusal, or a connect failure.
func (r *run) openFailClass(err error) failClass {
	switch {
	case r.isStopped():
		return failAbandoned
	case isRefused(err):
		return failRefused
	}
	return failConnect
}

// isRefused reports a connection refusal.
func isRefused(err error) bool { return errnoOf(err) == syscall.ECONNREFUSED }
