//go:build linux

package client

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The io_uring engine of the HTTP/1 event loops (--engine uring). The loops,
// their connections and every rule of the request's life are the epoll
// engine's (http1_epoll_linux.go: the same epLoop, pump and h1Reader); only
// the input and output differ:
//
//   - Each loop owns one ring (uring_linux.go). A turn is one io_uring_enter:
//     it hands the kernel every submission queued since the last turn (the
//     requests of every connection that became ready to write) and waits for
//     completions; then the loop handles them all and pumps the connections
//     they concern. In the steady state of a keep-alive run a request costs
//     no system call of its own.
//   - A request is written with one IORING_OP_SEND (what it did not take is
//     sent next); a socket still connecting takes it once connected, so the
//     first send's completion tells how the connect went, as the epoll
//     engine's first write does.
//   - Each socket has one multishot IORING_OP_RECV, armed once its first
//     send has gone (so that it cannot take a failed connect's error), whose completions come in buffers the kernel takes from the
//     loop's provided-buffer ring. A connection queues them (without
//     copying) until its reader consumes them; recv hands their bytes to the
//     connection's buffer and the buffers back to the kernel. A connection
//     that queues uringConnBufs buffers without consuming them (a peer that
//     sends while its request is still being written, a flood) has its
//     receive cancelled until it has consumed them: what a peer can make a
//     loop hold is capped as the socket buffer caps it under epoll.
//   - A closed socket's requests are cancelled by their user data, which
//     carries the socket's generation: a completion for a socket that is no
//     longer there only gives its buffer back.
//
// The read budget per wake-up, the stop checks, the again list and the
// clock rules are the epoll engine's. So is TLS (tlsloop_linux.go): the
// connection's tlsLink reads its queue of received buffers (h1Ring.read)
// and hands its output to ring sends, one at a time, each with a
// completion (flushRing, ringSentTLS), the bytes in flight left in place
// until it comes.

// Engine names (Config.Engine, Result.Engine).
const (
	EngineAuto     = "auto"
	EngineEpoll    = "epoll"
	EngineUring    = "uring"
	enginePortable = "portable"
)

// uringLoopsStarted counts io_uring event loops started, so tests can tell
// which engine ran.
var uringLoopsStarted atomic.Int64

// uringAuto says whether --engine auto picks io_uring where it works: only
// where it was measured to cost less CPU per request than epoll.
var uringAuto = false

// The provided buffers: uringBufSize bytes each, a ring of a power of 2 of
// them per loop (uringBufsPerConn per connection, within the bounds), of
// which one connection may hold uringConnBufs unconsumed.
const (
	uringBufSize     = 16 << 10
	uringBufsPerConn = 4
	uringMinBufs     = 64
	uringMaxBufs     = 4096
	uringConnBufs    = readBudget / uringBufSize
)

// chooseEngine decides the HTTP/1 run's engine once its event loops are
// known (loops 0: the portable path). --engine uring on a run the ring
// cannot serve is an error; auto falls back to epoll.
func chooseEngine(cfg *Config, loops int, tls bool) (string, error) {
	if loops == 0 {
		if cfg.Engine == EngineUring || cfg.Engine == EngineEpoll {
			return "", fmt.Errorf("gab: --engine %s needs the event loops, which this run does not take (-b, -B, --rate, --ramp-up, -R, --request-timeout or GAB_NETPOLL=go)", cfg.Engine)
		}
		return enginePortable, nil
	}
	switch cfg.Engine {
	case EngineEpoll:
		return EngineEpoll, nil
	case EngineUring:
		if cfg.Pipeline > 1 {
			return "", errors.New("gab: --engine uring sends one request at a time on a connection (--pipeline runs on --engine epoll)")
		}
		if err := uringProbe(); err != nil {
			return "", fmt.Errorf("gab: --engine uring: io_uring is not available here (%v)", err)
		}
		return EngineUring, nil
	}
	if uringAuto && !tls && cfg.Pipeline <= 1 && uringProbe() == nil {
		return EngineUring, nil
	}
	return EngineEpoll, nil
}

// UringConflict is why --engine uring cannot serve a run of cfg to target
// (the command line refuses it before the run), "" if it can as far as
// options tell: the kernel's answer comes when the run prepares.
func UringConflict(cfg *Config, target Target) string {
	switch {
	case cfg.SocketBuffer != 0 || cfg.LocalAddr != "" || cfg.Rate > 0 || cfg.RampUp > 0 ||
		cfg.ConnectDelay > 0 || cfg.RequestTimeout > 0 || cfg.Portable:
		return "--engine uring needs the event loops, which -b, -B, --rate, --ramp-up, -R, --request-timeout and GAB_NETPOLL=go leave"
	case cfg.Pipeline > 1:
		return "--engine uring sends one request at a time on a connection (--pipeline runs on --engine epoll)"
	}
	return ""
}

// The operation a completion's user data names (its top byte); the rest is
// the socket's generation (24 bits) and the connection's index (32 bits).
const (
	uopRecv uint64 = iota + 1
	uopSend
	uopPollOut
	uopCancel
	uopWake
	uopQuietSend
)

// uringQuietSend is the largest request sent quietly: on an established
// connection, with MSG_WAITALL and no completion unless it fails (a
// completion per send would end each turn's wait before any response is
// in). Larger requests are sent with a completion, so that their write
// phase ends when the kernel has taken them.
const uringQuietSend = 16 << 10

func uringData(op uint64, s *epSock) uint64 {
	return op<<56 | uint64(uint32(s.gen)&0xffffff)<<32 | uint64(uint32(s.idx))
}

// ringIO is one connection's io_uring state.
type ringIO struct {
	head, tail int32  // queued buffers (ids), -1 when none; chained by h1Ring.next
	off        int32  // bytes of the head buffer consumed
	count      int32  // buffers queued
	end        int32  // after the queued bytes: 0 more may come, 1 EOF, < 0 -errno
	armed      bool   // a multishot receive is in flight
	capped     bool   // the receive stopped (cancelled at the cap, or out of buffers): arm it once consumed
	sending    bool   // a send, or the poll before it, is in flight
	quiet      bool   // a quiet send may be in flight (cancelled with the socket)
	polling    bool   // that is the poll
	inReady    bool   // in the turn's ready list
	starved    bool   // in the starved list
	sqeEnd     uint32 // the submission queue's tail after the last request naming the socket's descriptor
}

// h1Ring is a loop's ring and its connections' io_uring state.
type h1Ring struct {
	*uring
	io       []ringIO
	blen     []int32 // bytes in each provided buffer
	next     []int32 // the next buffer in its connection's queue
	ready    []int32 // connections with completions this turn
	starved  []int32 // connections whose receive ran out of buffers
	provided bool    // a buffer went back to the kernel this turn
}

func newH1Ring(conns int) (*h1Ring, error) {
	bufs := int(pow2(uint32(min(max(conns*uringBufsPerConn, uringMinBufs), uringMaxBufs))))
	// A connection has at most a receive, a send (or its poll) and their
	// two cancellations queued; completions: the buffers, plus those.
	u, err := newUring(uint32(4*conns+16), uint32(bufs+4*conns+16), bufs, uringBufSize)
	if err != nil {
		return nil, err
	}
	g := &h1Ring{uring: u, io: make([]ringIO, conns), blen: make([]int32, bufs), next: make([]int32, bufs),
		ready: make([]int32, 0, conns), starved: make([]int32, 0, conns)}
	for i := range g.io {
		g.io[i] = ringIO{head: -1, tail: -1}
	}
	return g, nil
}

// workUring runs slot's event loop on io_uring (see workEpoll).
func (h *http1) workUring(r *run, slot int, t *tally) {
	// The ring defers its completions' work to the thread that submits
	// (the kernel's cheapest mode), so the loop keeps its thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	epollLoopsStarted.Add(1)
	uringLoopsStarted.Add(1)
	lp, err := newEpLoop(h, r, slot, t)
	if err != nil {
		r.stop(EndFatal, sysError("apr_pollset_create", err))
		return
	}
	g, err := newH1Ring(len(lp.conns))
	if err != nil {
		lp.shutdown()
		r.stop(EndFatal, sysError("io_uring_setup", err))
		return
	}
	lp.ring, lp.noWatch = g, true
	defer func() {
		// The sockets close first; closing the ring then cancels what
		// is still in flight on them.
		lp.ring = nil
		lp.shutdown()
		g.close()
	}()
	e := g.sqe()
	e.opcode, e.fd, e.opFlags, e.userData = uringOpPollAdd, int32(lp.wake.fd), unix.POLLIN, uopWake<<56
	started, ok := lp.openFirst(r, t, slot)
	if !ok {
		return
	}
	for lp.active > 0 && !lp.stopped && !r.isStopped() {
		lp.more = len(lp.again) > 0
		if !lp.ringTurn() {
			return
		}
		started = lp.endTurn(r, started)
	}
}

// ringTurn is one turn: submit and wait, then handle the completions and
// pump the connections they concern. False if the ring failed (the run is
// then stopped).
func (lp *epLoop) ringTurn() bool {
	g := lp.ring
	if g.provided {
		g.provided = false
		lp.rearmStarved()
	}
	switch errno := lp.ringWait(); errno {
	case 0, unix.ETIME, unix.EINTR, unix.EBUSY:
	default:
		lp.r.stop(EndFatal, sysError("io_uring_enter", errno))
		return false
	}
	head, tail := g.completions()
	for i := head; i != tail; i++ {
		lp.ringEvent(g.cqe(i))
	}
	g.done(tail)
	for _, i := range g.ready {
		c := &lp.conns[i]
		g.io[i].inReady = false
		if !lp.stopped && !lp.r.isStopped() {
			lp.pump(c)
		}
	}
	g.ready = g.ready[:0]
	return true
}

// ringWait hands the queued submissions to the kernel and waits for
// completions as epPoller.wait waits for events: spinning (no wait) while
// the loop has input left or a core to spare, a raw wait of at most
// rawWaitMs that keeps the P, then, after a quiet one, waits through Syscall.
func (lp *epLoop) ringWait() syscall.Errno {
	p, g := &lp.epPoller, lp.ring
	g.publishBuffers()
	raw := (p.now >= p.syscallUntil && g.extArg) || p.more
	spinning := raw && (p.more || p.now-p.lastEvents < p.spinNs)
	var errno syscall.Errno
	before := p.now
	switch {
	case spinning:
		errno = g.enter(0, false, true)
	case raw:
		errno = g.enter(rawWaitMs, true, true)
	default:
		errno = g.enter(0, true, false)
	}
	p.tick()
	head, tail := g.completions()
	n := tail - head
	if n > 0 {
		p.lastEvents = p.now
		touchAt(p.t, p.now)
	}
	// A wait that also submitted returns the count submitted, not the
	// wait's EINTR (a signal: the runtime's preemption) or ETIME: only the
	// clock tells a wait that timed out.
	failed := errno != 0 && errno != unix.ETIME
	if raw && !spinning && n == 0 && !failed && p.now-before >= rawWaitMs*1e6 {
		p.syscallUntil = p.now + rawPause // see epPoller.wait
	}
	if raw && (failed || (n == 0 && !spinning) || p.now-p.lastYield >= uringYieldEvery) {
		runtime.Gosched()
		p.lastYield = p.tick()
	}
	return errno
}

// ringEvent handles one completion.
func (lp *epLoop) ringEvent(e *uringCQE) {
	op := e.userData >> 56
	if op == uopWake || op == uopCancel {
		return // the loop condition sees the stop; a cancellation's outcome does not matter
	}
	idx := int32(uint32(e.userData))
	gen := uint32(e.userData>>32) & 0xffffff
	c := &lp.conns[idx]
	stale := c.fd < 0 || uint32(c.gen)&0xffffff != gen
	switch op {
	case uopRecv:
		lp.ringRecv(c, e, stale)
	case uopSend, uopPollOut:
		switch {
		case stale:
		case c.tls != nil:
			lp.ringSentTLS(c, op, e.res)
		default:
			lp.ringSent(c, op, e.res)
		}
	case uopQuietSend:
		if !stale {
			lp.quietFailed(c, e.res)
		}
	}
}

// ringRecv takes a receive's completion: bytes queue on the connection, the
// end of the stream or an error after them.
func (lp *epLoop) ringRecv(c *epConn, e *uringCQE, stale bool) {
	g := lp.ring
	q := &g.io[c.idx]
	if e.flags&uringCQEFBuffer != 0 {
		bid := uint16(e.flags >> uringCQEBufferSft)
		if stale || e.res <= 0 {
			g.give(bid)
		} else {
			g.enqueue(q, bid, e.res)
		}
	}
	if stale {
		return
	}
	if e.flags&uringCQEFMore == 0 {
		q.armed = false
	}
	switch res := e.res; {
	case res > 0:
		if q.count >= uringConnBufs && q.armed && !q.capped {
			g.cancel(uringData(uopRecv, &c.epSock))
			q.capped = true
		}
		c.readable = true
		g.markReady(c.idx)
	case res == -int32(unix.ENOBUFS):
		q.capped = true // armed again once it has consumed, or when buffers come back
		if q.count == 0 && !q.starved {
			q.starved = true
			g.starved = append(g.starved, c.idx)
		}
	case res == -int32(unix.ECANCELED) || res == -int32(unix.EINTR) || res == -int32(unix.EAGAIN):
	default: // the end of the stream (0) or an error, after the queued bytes
		q.end = res
		if res == 0 {
			q.end = 1
		}
		c.readable = true
		g.markReady(c.idx)
	}
	// A receive that ended for another reason than the stream's end goes
	// on: at once, or, if capped, once the connection has consumed its
	// queue (ringRead), or, out of buffers, once some come back.
	if !q.armed && q.end == 0 && !q.starved && (!q.capped || q.count == 0) {
		q.capped = false
		g.arm(&c.epSock)
	}
}

// ringSent takes a send's (or its poll's) completion.
func (lp *epLoop) ringSent(c *epConn, op uint64, res int32) {
	g := lp.ring
	q := &g.io[c.idx]
	q.sending, q.polling = false, false
	g.markReady(c.idx)
	switch {
	case op == uopPollOut || res == 0 || res == -int32(unix.EINTR):
		return // writable (or not yet: the send says): pump sends again
	case res > 0:
		if c.state == epConnecting {
			lp.connected(c, lp.now)
		}
		if !q.armed && !q.capped && q.end == 0 {
			g.arm(&c.epSock) // connected: the receive cannot take the connect's error from the send
		}
		c.wrote += int(res)
		lp.t.TotalSent += int64(res)
	case res == -int32(unix.EAGAIN):
		lp.ringPollOut(c) // wait until the socket takes more
	default:
		lp.sendFailed(c, syscall.Errno(-res))
	}
}

// ringSend queues (the rest of) c's request, and the socket's receive with
// its first send. It returns false to wait for the completion.
func (lp *epLoop) ringSend(c *epConn) bool {
	g := lp.ring
	q := &g.io[c.idx]
	if q.sending {
		return false
	}
	if c.wrote == len(c.req) {
		lp.sent(c)
		return true
	}
	if !q.armed && !q.capped && q.end == 0 && c.state != epConnecting {
		g.arm(&c.epSock)
	}
	b := c.req[c.wrote:]
	e := g.sqeFor(&c.epSock)
	e.opcode, e.fd, e.userData = uringOpSend, int32(c.fd), uringData(uopSend, &c.epSock)
	e.addr, e.len, e.opFlags = uint64(uintptrOf(b)), uint32(len(b)), unix.MSG_NOSIGNAL
	if c.state == epWriting && c.wrote == 0 && len(b) <= uringQuietSend && q.armed {
		e.userData = uringData(uopQuietSend, &c.epSock)
		e.flags, e.opFlags = uringSQESkipSuccess, unix.MSG_NOSIGNAL|unix.MSG_WAITALL
		q.quiet = true
		c.wrote = len(b)
		lp.t.TotalSent += int64(len(b))
		return true // written as far as the loop can tell: on to the response
	}
	q.sending = true
	return false
}

// quietFailed takes the completion of a quiet send, which comes only when
// it failed (res < 0) or went out in part (res bytes): while no byte of
// the response has come, the request's write failed, as on epoll; a
// response already under way tells that the server had the request.
func (lp *epLoop) quietFailed(c *epConn, res int32) {
	if c.state != epRead || c.got {
		return
	}
	errno := unix.EPIPE
	if res < 0 {
		errno = syscall.Errno(-res)
	}
	lp.t.TotalSent -= int64(len(c.req) - int(max(res, 0)))
	lp.writeFailed(c, os.NewSyscallError("write", errno), lp.now)
	lp.ring.markReady(c.idx)
}

// ringRead reads what c's queue holds into p, as epSock.recv reads the
// socket: (0, nil) means nothing more for now.
func (lp *epLoop) ringRead(c *epConn, p []byte) (int, error) { return lp.ring.read(&c.epSock, p) }

// read reads what s's queue holds into p (plaintext, or a TLS link's
// records), the bytes counted against the turn's budget: (0, nil) means
// nothing more for now.
func (g *h1Ring) read(s *epSock, p []byte) (int, error) {
	q := &g.io[s.idx]
	n := 0
	for q.head >= 0 && n < len(p) {
		bid := q.head
		k := copy(p[n:], g.buffer(uint16(bid), int(g.blen[bid]))[q.off:])
		n += k
		if q.off += int32(k); q.off == g.blen[bid] {
			q.head, q.off = g.next[bid], 0
			q.count--
			if q.head < 0 {
				q.tail = -1
			}
			g.give(uint16(bid))
		}
	}
	if q.head < 0 && q.capped && !q.armed && q.end == 0 && s.fd >= 0 {
		q.capped = false
		g.arm(s)
	}
	if n > 0 {
		s.budget -= n
		if q.head < 0 && q.end == 0 {
			s.readable = false
		}
		return n, nil
	}
	switch {
	case q.end == 1:
		return 0, io.EOF
	case q.end < 0:
		return 0, os.NewSyscallError("read", syscall.Errno(-q.end))
	}
	s.readable = false
	return 0, nil
}

// send queues a send of b on s (a TLS link's output, which stays in place
// until the completion).
func (g *h1Ring) send(s *epSock, b []byte) {
	e := g.sqeFor(s)
	e.opcode, e.fd, e.userData = uringOpSend, int32(s.fd), uringData(uopSend, s)
	e.addr, e.len, e.opFlags = uint64(uintptrOf(b)), uint32(len(b)), unix.MSG_NOSIGNAL
	g.io[s.idx].sending = true
}

// ringPollOut queues a wait for c's socket to become writable (a connect
// under way, a full socket), unless a send or a poll is in flight.
func (lp *epLoop) ringPollOut(c *epConn) {
	g := lp.ring
	q := &g.io[c.idx]
	if q.sending {
		return
	}
	e := g.sqeFor(&c.epSock)
	e.opcode, e.fd, e.opFlags, e.userData = uringOpPollAdd, int32(c.fd), unix.POLLOUT, uringData(uopPollOut, &c.epSock)
	q.sending, q.polling = true, true
}

// ringSentTLS takes the completion of a TLS connection's send (its link's
// output) or of its poll: the link's output moves on, or keeps the error
// for its next flush; the connection is pumped again.
func (lp *epLoop) ringSentTLS(c *epConn, op uint64, res int32) {
	g := lp.ring
	q := &g.io[c.idx]
	q.sending, q.polling = false, false
	g.markReady(c.idx)
	if op == uopPollOut {
		return // connected or writable: the handshake or the flush goes on
	}
	l := c.tls
	l.flight = nil
	switch {
	case res > 0:
		if l.wpos += int(res); l.wpos == len(l.out) {
			l.out, l.wpos = l.out[:0], 0 // the next request reuses the buffer
		}
	case res == 0 || res == -int32(unix.EINTR):
	case res == -int32(unix.EAGAIN):
		lp.ringPollOut(c)
	default:
		l.werr = syscall.Errno(-res)
	}
}

// ringForget drops s's io_uring state before its socket closes: its
// requests are cancelled (at the next turn, or at once if one is still
// queued; their completions are stale by then) and its queued buffers go
// back to the kernel.
func (lp *epLoop) ringForget(s *epSock) {
	g := lp.ring
	q := &g.io[s.idx]
	if s.fd >= 0 {
		if q.armed {
			g.cancel(uringData(uopRecv, s))
		}
		if q.polling {
			g.cancel(uringData(uopPollOut, s))
		} else if q.sending {
			g.cancel(uringData(uopSend, s))
		}
		if q.quiet {
			g.cancel(uringData(uopQuietSend, s))
		}
		// A request still queued names the socket by its descriptor,
		// which the kernel resolves when it takes the request: once
		// closed, the number may go to the next socket (a TLS alert
		// queued before a failed handshake's close went out on the
		// connection opened after it). The queue goes to the kernel
		// before the socket closes.
		if int32(q.sqeEnd-atomic.LoadUint32(g.sqHead)) > 0 {
			g.enter(0, false, true)
		}
	}
	for b := q.head; b >= 0; b = g.next[b] {
		g.give(uint16(b))
	}
	*q = ringIO{head: -1, tail: -1, inReady: q.inReady, starved: q.starved}
}

// arm queues s's multishot receive.
func (g *h1Ring) arm(s *epSock) {
	e := g.sqeFor(s)
	e.opcode, e.fd, e.userData = uringOpRecv, int32(s.fd), uringData(uopRecv, s)
	e.flags, e.ioprio = uringSQEBufferSelect, uringRecvMultishot
	g.io[s.idx].armed = true
}

// sqeFor is sqe for a request that names s's socket by its descriptor,
// noting where it lies in the queue (see ringForget).
func (g *h1Ring) sqeFor(s *epSock) *uringSQE {
	e := g.sqe()
	g.io[s.idx].sqeEnd = g.tail
	return e
}

// cancel queues the cancellation of the request with user data ud.
func (g *h1Ring) cancel(ud uint64) {
	e := g.sqe()
	e.opcode, e.fd, e.addr, e.userData = uringOpAsyncCancel, -1, ud, uopCancel<<56
}

// give hands buffer bid back to the kernel.
func (g *h1Ring) give(bid uint16) {
	g.provide(bid)
	g.provided = true
}

// enqueue appends buffer bid (n bytes) to q.
func (g *h1Ring) enqueue(q *ringIO, bid uint16, n int32) {
	b := int32(bid)
	g.blen[b], g.next[b] = n, -1
	if q.tail >= 0 {
		g.next[q.tail] = b
	} else {
		q.head, q.off = b, 0
	}
	q.tail = b
	q.count++
}

func (g *h1Ring) markReady(idx int32) {
	if q := &g.io[idx]; !q.inReady {
		q.inReady = true
		g.ready = append(g.ready, idx)
	}
}

// rearmStarved arms again the receives that ran out of buffers, now that
// some came back.
func (lp *epLoop) rearmStarved() {
	g := lp.ring
	for _, i := range g.starved {
		q := &g.io[i]
		q.starved = false
		if c := &lp.conns[i]; c.fd >= 0 && q.capped && !q.armed && q.end == 0 && q.head < 0 {
			q.capped = false
			g.arm(&c.epSock)
		}
	}
	g.starved = g.starved[:0]
}

// uintptrOf is the address of b's first byte (b is not empty); b stays
// referenced by its connection until the send's completion.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// uringYieldEvery bounds, in ns, how long a busy io_uring loop keeps its P
// (yieldEvery for epoll): its goroutine is locked to its thread, so a
// yield hands the P to another thread and back (futex calls).
var uringYieldEvery int64 = 10e6
