//go:build linux

package client

import (
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// The Linux fast path of the HTTP/1 transport: min(max(GOMAXPROCS-1, 1), c)
// event loops, each a goroutine with its own epoll instance and a share of the
// c connections, on raw non-blocking sockets. Go's netpoller wakes a
// goroutine per response and reads once more to see EAGAIN; here one
// epoll_wait serves every connection that became readable, and a read shorter
// than the buffer ends the reading of that socket (edge-triggered epoll
// reports the next arrival). A socket is registered once, edge-triggered, for
// input, and for output only while a connect or a write waits: no epoll_ctl
// per request.
//
// Timing: one clock reading after each epoll_wait serves the first-byte and
// end times of every response found in that batch (the bytes were there when
// the clock was read), and every write and connect takes its own reading; the
// loop's clock only moves forward, so no phase is negative.
//
// Everything ab counts still goes through core.go (claim, finish, sawHeader,
// setServer), and the response through h1reader.go's reader, as on the
// goroutine path; error classes are http1.go's. Each wake-up reads at most
// readBudget bytes per connection (docs/DESIGN.md, "Reading from a peer").
//
// With --engine uring the same loops and state machine run on io_uring
// (http1_uring_linux.go): lp.ring replaces send, read, close and the wait.
//
// TLS connections run on the loops too (tlsloop_linux.go): the handshake in
// a coroutine of the loop, then crypto/tls's records read and written
// through the connection's tlsLink.
//
// The portable path is used instead for -b, -B, --rate,
// --request-timeout, a ramp-up (Config.RampUp: each slot opens at its own
// time), an injected Config.Dial, IPv6 zones, https:// with --pipeline
// (plain http:// pipelines here: http1pipe_epoll_linux.go), and whenever
// Config.Portable asks for it (the command line sets it from GAB_NETPOLL=go).

// epollLoopsStarted counts event loops started, so tests can tell which path ran.
var epollLoopsStarted atomic.Int64

// epollLoops is the number of event loops for this run, or 0 for the portable path.
func epollLoops(cfg *Config, d *dialer) int {
	if cfg.Portable || cfg.Dial != nil || cfg.SocketBuffer != 0 || cfg.LocalAddr != "" ||
		cfg.Rate > 0 || cfg.RampUp > 0 || cfg.ConnectDelay > 0 || cfg.RequestTimeout > 0 || cfg.Concurrency <= 0 ||
		cfg.Pipeline > 1 && cfg.Target.TLS {
		return 0
	}
	for _, a := range d.addrs {
		if a.Zone != "" || (a.IP.To4() == nil && len(a.IP) != net.IPv6len) {
			return 0
		}
	}
	if cfg.Workers > 0 { // -W
		return min(cfg.Workers, cfg.Concurrency)
	}
	// One P is left for the rest of the process (the run's timers, an
	// in-process server) unless there is only one.
	return min(max(runtime.GOMAXPROCS(0)-1, 1), cfg.Concurrency)
}

// epState is where a connection's current request stands.
type epState uint8

const (
	epIdle       epState = iota // no request: not started, or no ticket left
	epNext                      // the previous request is accounted for: claim another
	epStart                     // a ticket is held: reuse the connection or open one
	epConnecting                // connect in progress; the request is not written yet
	epHandshake                 // TLS: connect in progress or handshake under way
	epWriting                   // the request is partly written
	epRead                      // reading the response (h1Reader)
	epDrain                     // response complete; waiting for the server's close
	epDone                      // the attempt's outcome is final: finish it
)

// epConn is one of the loop's connections and its current request.
type epConn struct {
	epSock
	state epState
	buf   []byte
	// buf[pos:have] holds unconsumed bytes (past the previous response on a kept connection).
	pos, have  int
	wrote      int   // request bytes written
	drained    int   // stray bytes read while waiting for the server's close
	wantOut    bool  // the socket is registered for EPOLLOUT too
	queued     bool  // in the loop's again list
	got        bool  // a byte of the current response has arrived
	reused     bool  // the attempt runs on a kept-alive connection
	retried    bool  // the request was already sent again once
	start      int64 // the request's start (kept across a retry)
	lastEnd    int64 // end of the previous response on this connection
	lastRead   int64 // clock of the last read that returned data
	rd         h1Reader
	out        outcome
	req, wbuf  []byte  // the request in flight's bytes (http1.request)
	head, idem bool    // its method is HEAD; is idempotent
	entry      int32   // its URL list index plus 1 (outcome.entry)
	pipe       *h1Pipe // --pipeline: the connection's requests (nil without)
	writeDead  bool    // --pipeline: a write failed; what was written whole is still read
}

// readBudget bounds the bytes one connection reads per wake-up of the loop:
// past it the connection goes to the back of the queue (the again list) and
// the loop waits again, without blocking, so that a server that never stops
// sending cannot keep the loop from its other connections, its stop flag and
// the run's clock.
const readBudget = 256 << 10

// epLoop is one event loop: its poller, its connections and its tally.
type epLoop struct {
	epPoller
	h       *http1
	conns   []epConn
	active  int  // connections not idle
	stopped bool // finish said the run ended
	// again lists the connections that spent their read budget with bytes
	// still to read: edge-triggered epoll will not report them again, so the
	// loop pumps them after its next (non-blocking) wait. spare is the other
	// half of the double buffer; both hold len(conns) without growing.
	again, spare []int32
	// ring is the loop's io_uring (http1_uring_linux.go); nil on epoll.
	ring *h1Ring
}

// workEpoll runs slot's event loop: connections slot, slot+loops, slot+2·loops, …
func (h *http1) workEpoll(r *run, slot int, t *tally) {
	if h.engine == EngineUring {
		h.workUring(r, slot, t)
		return
	}
	// Not locked to its thread: a locked goroutine's Gosched hands the P to
	// another thread and back (futex wake-ups), an unlocked one just goes on.
	epollLoopsStarted.Add(1)
	lp, err := newEpLoop(h, r, slot, t)
	if err != nil {
		r.stop(EndFatal, sysError("apr_pollset_create", err))
		return
	}
	defer lp.shutdown()
	started, ok := lp.openFirst(r, t, slot)
	if !ok {
		return
	}
	// Reading from a peer (docs/DESIGN.md): each turn waits, handles what is
	// ready with readBudget bytes per connection, then the connections that
	// spent their budget, and checks the stop flag again.
	for lp.active > 0 && !lp.stopped && !r.isStopped() {
		lp.more = len(lp.again) > 0
		events, ok := lp.ready()
		if !ok {
			return
		}
		for i := range events {
			ev := &events[i]
			if ev.Fd == wakeID {
				continue // the loop condition sees the stop
			}
			if c := &lp.conns[ev.Fd]; c.take(ev) {
				lp.pump(c)
			}
			if lp.stopped {
				break
			}
		}
		started = lp.endTurn(r, started)
	}
}

// rampTo is where the ramp-up may go from started: every connection, or
// over TLS as many as keep tlsRampHandshakes handshakes under way at once.
func (lp *epLoop) rampTo(started int) int {
	if lp.h.tlsConf == nil {
		return len(lp.conns)
	}
	return started + min(len(lp.conns)-started, max(tlsRampShare(lp.h.loops)-lp.opening, 0))
}

// pumpAgain pumps, with a new budget, the connections that spent theirs.
func (lp *epLoop) pumpAgain() {
	touchAt(lp.t, lp.now) // bytes were waiting: the server is not silent
	cur := lp.again
	lp.again = lp.spare[:0]
	for _, i := range cur {
		c := &lp.conns[i]
		c.queued = false
		if !lp.stopped && !lp.r.isStopped() {
			lp.pump(c)
		}
	}
	lp.spare = cur[:0]
}

func newEpLoop(h *http1, r *run, slot int, t *tally) (*epLoop, error) {
	count := (h.cfg.Concurrency - slot + h.loops - 1) / h.loops
	lp := &epLoop{h: h, conns: make([]epConn, count),
		again: make([]int32, 0, count), spare: make([]int32, 0, count)}
	for i := range lp.conns {
		lp.conns[i] = epConn{epSock: epSock{idx: int32(i), fd: -1}, buf: make([]byte, readBufSize)}
		if epPipelining(h.cfg) {
			lp.conns[i].pipe = newH1Pipe(h, r, t)
		}
	}
	if err := lp.init(r, t, h.d, count+1, h.loops); err != nil {
		return nil, err
	}
	lp.nodelay = h.tlsConf != nil
	return lp, nil
}

// shutdown closes every socket, the waker and the epoll instance. A request
// still connecting, being written or waiting for its response is left in
// flight (a complete response waiting for the server's close is answered).
func (lp *epLoop) shutdown() {
	lp.t.setConn(lp.r, nil)
	for i := range lp.conns {
		c := &lp.conns[i]
		switch {
		case !lp.r.isStopped():
		case c.pipe != nil:
			c.pipe.leave() // the ring's requests (c.out is not used), whatever the state
		case c.state == epConnecting, c.state == epHandshake, c.state == epWriting, c.state == epRead:
			lp.r.leftInFlight(lp.t, &c.out)
		}
		lp.closeConn(c)
	}
	lp.close()
}

func (lp *epLoop) startConns(from, to int) {
	for i := from; i < to && !lp.stopped; i++ {
		c := &lp.conns[i]
		lp.active++
		c.state = epNext
		lp.pump(c)
	}
}

// pump moves c's requests forward until it must wait for an event, or has
// read readBudget bytes (then it is queued in the again list).
func (lp *epLoop) pump(c *epConn) {
	if c.pipe != nil {
		lp.pumpPipe(c)
		return
	}
	c.budget = readBudget
	for !lp.stopped {
		switch c.state {
		case epIdle:
			return
		case epNext:
			if !lp.r.claim(lp.t) {
				lp.closeConn(c)
				c.state = epIdle
				lp.active--
				return
			}
			c.out = outcome{}
			c.retried, c.start = false, -1
			c.req, c.head, c.idem, c.entry = lp.h.request(&c.wbuf, lp.t)
			c.state = epStart
		case epStart:
			lp.attempt(c)
		case epHandshake:
			if !lp.handshake(c) {
				lp.requeue(c)
				return
			}
		case epConnecting, epWriting:
			if c.tls != nil {
				if !lp.sendTLS(c) {
					return
				}
			} else if !lp.send(c) {
				return
			}
		case epRead:
			if !lp.readResp(c) {
				lp.requeue(c)
				return
			}
		case epDrain:
			if !lp.drain(c) {
				lp.requeue(c)
				return
			}
		case epDone:
			c.out.entry = c.entry
			if !lp.r.finish(lp.t, &c.out) {
				lp.stopped = true
				return
			}
			c.state = epNext
		}
	}
}

// requeue puts c in the again list if it stopped reading for its budget
// rather than for want of bytes.
func (lp *epLoop) requeue(c *epConn) {
	if c.spent() && !c.queued {
		c.queued = true
		lp.again = append(lp.again, c.idx)
	}
}

// attempt sends the request on the kept connection, or opens a new one.
func (lp *epLoop) attempt(c *epConn) {
	o := &c.out
	c.wrote = 0
	if c.fd >= 0 {
		c.reused = true
		c.start = c.lastEnd
		o.Start, o.TCPDone, o.Connect = c.start, c.start, c.start
		c.state = epWriting
		return
	}
	c.reused = false
	if c.start < 0 {
		c.start = lp.tick()
	}
	o.Start = c.start
	lp.open(c)
}

// open starts a non-blocking connect; the first write tells how it went.
func (lp *epLoop) open(c *epConn) {
	if err := lp.dial(&c.epSock, false); err != nil {
		lp.failOpen(c, err)
		return
	}
	c.wantOut, c.pos, c.have = false, 0, 0
	c.state = epConnecting
	if conf := lp.h.tlsConf; conf != nil {
		lp.openTLS(&c.epSock, conf)
		c.tls.ring = lp.ring
		c.state = epHandshake
	}
}

// failOpen ends an attempt that got no connection.
func (lp *epLoop) failOpen(c *epConn, err error) {
	lp.r.failOpen(&c.out, lp.tick(), err)
	c.state = epDone
}

// send writes (the rest of) the request. It returns false to wait for EPOLLOUT.
func (lp *epLoop) send(c *epConn) bool {
	if lp.ring != nil {
		return lp.ringSend(c)
	}
	req := c.req
	for c.wrote < len(req) {
		var before int64
		if c.state == epConnecting {
			before = lp.tick()
		}
		n, errno := rawWrite(c.fd, req[c.wrote:])
		if errno == 0 {
			if c.state == epConnecting {
				lp.connected(c, before)
			}
			c.wrote += n
			lp.t.TotalSent += int64(n)
			continue
		}
		switch errno {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return lp.waitOutput(c)
		}
		lp.sendFailed(c, errno)
		return true
	}
	lp.sent(c)
	return true
}

// sendFailed ends a write that failed with errno: a failed connect, or a
// write error.
func (lp *epLoop) sendFailed(c *epConn, errno syscall.Errno) {
	if c.state == epConnecting && errno != unix.EPIPE && errno != unix.ECONNRESET {
		// The connect failed (refused, unreachable, timed out).
		lp.closeConn(c)
		if lp.fallback(c.addrIdx) {
			lp.open(c)
			return
		}
		lp.failOpen(c, os.NewSyscallError("connect", errno))
		return
	}
	now := lp.tick()
	if c.state == epConnecting {
		lp.connected(c, now)
	}
	lp.writeFailed(c, os.NewSyscallError("write", errno), now)
}

// writeFailed ends an attempt whose request could not be written: on a
// kept connection the server may have closed it (noAnswer decides).
func (lp *epLoop) writeFailed(c *epConn, err error, now int64) {
	o := &c.out
	o.WriteEnd, o.FirstByte = now, now
	switch {
	case lp.r.isStopped():
		lp.fail(c, failAbandoned, err, now)
	case c.reused:
		o.End, o.Err = now, err
		lp.noAnswer(c)
	default:
		lp.fail(c, failWrite, err, now)
	}
}

// sent notes the request written and starts reading the response.
func (lp *epLoop) sent(c *epConn) {
	o := &c.out
	o.WriteEnd = lp.tick()
	// A response starts with whatever the previous one left over.
	if c.pos > 0 {
		c.have = copy(c.buf, c.buf[c.pos:c.have])
		c.pos = 0
	}
	c.got = c.have > 0
	if c.got {
		o.FirstByte = o.WriteEnd
	}
	c.lastRead = o.WriteEnd
	c.rd.start(c.head)
	c.state = epRead
}

// waitOutput asks for EPOLLOUT (once per socket) and returns false, or
// returns true if that fails (the attempt has then failed).
func (lp *epLoop) waitOutput(c *epConn) bool {
	if lp.ring != nil {
		lp.ringPollOut(c)
		return false
	}
	if c.wantOut {
		return false
	}
	c.wantOut = true
	if err := lp.watch(c.fd, c.idx, c.gen, true, true); err != nil {
		if c.state == epConnecting {
			lp.closeConn(c)
			lp.failOpen(c, err)
		} else {
			lp.fail(c, failWrite, err, lp.tick())
		}
		return true
	}
	return false
}

// connected notes an established connection.
func (lp *epLoop) connected(c *epConn, at int64) {
	c.out.TCPDone, c.out.Connect = at, at
	c.state = epWriting
	lp.d.markWorked(lp.r, at)
}

// read reads into p; (0, nil) means nothing more for now. A read shorter than
// p drains the socket, unless the peer has closed (then EOF is still to read).
func (lp *epLoop) read(c *epConn, p []byte) (int, error) {
	var n int
	var err error
	if lp.ring != nil && c.tls == nil {
		n, err = lp.ringRead(c, p)
	} else {
		n, err = c.recv(p)
	}
	if n > 0 {
		c.lastRead = lp.now
		lp.t.TotalRead += int64(n)
	}
	return n, err
}

// readResp feeds the response's bytes to c.rd as they arrive (see
// h1conn.readResponse, the same loop on blocking reads). It returns false to
// wait for input, or when the wake-up's budget is spent.
func (lp *epLoop) readResp(c *epConn) bool {
	o, rd := &c.out, &c.rd
	for {
		used, step := rd.feed(c.buf[c.pos:c.have])
		c.pos += used
		switch step {
		case h1Head:
			lp.r.headDone(o, &rd.head, c.buf[c.pos-rd.headLen:c.have], lp.h.verbose)
			continue
		case h1Done:
			lp.complete(c)
			return true
		case h1Fail:
			lp.endBody(c)
			lp.fail(c, h1FailClass(rd.err), rd.err, c.lastRead)
			return true
		}
		c.buf, c.have = rd.room(c.buf, c.pos, c.have)
		c.pos = 0
		if !c.canRead() {
			return false
		}
		n, err := lp.read(c, c.buf[c.have:])
		if n > 0 {
			if !c.got {
				o.FirstByte, c.got = c.lastRead, true
			}
			c.have += n
			if lp.h.verbose && rd.inHead() {
				lp.r.events.HeaderReceived(c.buf[:min(c.have, maxHeadLen)])
			}
			continue
		}
		switch {
		case err == nil:
			continue
		case rd.inHead():
			lp.readFailed(c, err, c.got)
			return true
		case isEOF(err) && rd.endsAtClose():
			lp.endBody(c)
			o.End = c.lastRead
			lp.closeConn(c)
			c.state = epDone
			return true
		}
		lp.endBody(c)
		if isEOF(err) {
			lp.fail(c, failReceiveCounted, errTruncated, c.lastRead)
			return true
		}
		lp.readFailed(c, err, true)
		return true
	}
}

func (lp *epLoop) endBody(c *epConn) {
	lp.t.BodyRead += c.rd.body
	c.out.Body = c.rd.body
}

// complete ends a framed response: keep the connection, or wait for the
// server's close as ab does, or close it.
func (lp *epLoop) complete(c *epConn) {
	lp.endBody(c)
	o := &c.out
	o.End = c.lastRead
	switch {
	case lp.h.keep(&c.rd.head):
		o.KeptAlive = true
		c.lastEnd = o.End
		c.state = epDone
	case lp.h.serverCloses(&c.rd.head):
		c.state, c.drained = epDrain, 0
	default:
		lp.closeConn(c)
		c.state = epDone
	}
}

// drain reads until the server closes (see h1conn.drain); false to wait.
func (lp *epLoop) drain(c *epConn) bool {
	for {
		if !c.canRead() {
			return false
		}
		n, err := lp.read(c, c.buf)
		if c.drained += n; err != nil || c.drained >= maxDrain {
			lp.closeConn(c) // EOF, an error that no longer matters, or a server that will not close
			c.state = epDone
			return true
		}
	}
}

// readFailed classifies a read error with http1.go's readFailure (the fast
// path never has --request-timeout).
func (lp *epLoop) readFailed(c *epConn, err error, got bool) {
	now := lp.tick()
	class, cause, noAnswer := readFailure(err, got, c.reused, lp.r.isStopped(), false)
	if noAnswer {
		o := &c.out
		o.FirstByte, o.End, o.Err = now, now, err
		lp.noAnswer(c)
		return
	}
	lp.fail(c, class, cause, now)
}

// noAnswer handles a connection closed before any byte of the answer: an
// idempotent request on a reused connection is sent once more on a new one.
func (lp *epLoop) noAnswer(c *epConn) {
	lp.closeConn(c)
	if c.reused && c.idem && !c.retried {
		c.retried = true
		lp.t.Retries++
		c.out = outcome{}
		c.state = epStart
		return
	}
	c.out.Class, c.out.Err = failReceiveCounted, errNoAnswer
	c.state = epDone
}

// fail ends the attempt with class and closes the connection.
func (lp *epLoop) fail(c *epConn, class failClass, err error, now int64) {
	o := &c.out
	o.Class, o.Err, o.End = class, err, now
	if o.FirstByte == 0 {
		o.FirstByte = now
	}
	lp.closeConn(c)
	c.state = epDone
}

// closeConn closes c's socket and drops what its buffer held.
func (lp *epLoop) closeConn(c *epConn) {
	if lp.ring != nil {
		lp.ringForget(&c.epSock)
	}
	lp.closeSock(&c.epSock)
	c.pos, c.have = 0, 0
}

// handshake moves a TLS connection's connect and handshake forward. It
// returns false to wait for an event (or for the next turn, when the read
// budget is spent).
func (lp *epLoop) handshake(c *epConn) bool {
	l := c.tls
	for {
		if !l.started {
			if lp.ring != nil && lp.ring.io[c.idx].sending {
				return false // the poll for the connect is in flight
			}
			before := lp.tick()
			switch errno := connectOutcome(c.fd); errno {
			case 0:
				c.out.TCPDone = before
				lp.d.markWorked(lp.r, before)
				if lp.ring != nil {
					lp.ring.arm(&c.epSock) // connected: the receive cannot take the connect's error
				}
				l.start()
			case unix.EAGAIN:
				return lp.waitOutput(c)
			default:
				lp.closeConn(c)
				if lp.fallback(c.addrIdx) {
					lp.open(c)
					return true
				}
				lp.failOpen(c, os.NewSyscallError("connect", errno))
				return true
			}
		}
		if l.hsDone {
			if l.hsErr != nil {
				_ = l.flush() // the alert, if crypto/tls sent one: one try
				lp.tlsFailed(c, l.hsErr)
				return true
			}
			// The handshake's last flight (TLS 1.3: the client's
			// Finished) stays in the link and goes out with the
			// request, in one write: two small writes would have
			// Nagle hold the request for the server's delayed ACK.
			now := lp.tick()
			touchAt(lp.t, now)
			lp.r.tlsDone(l.tc)
			lp.opened(&c.epSock)
			c.out.Connect = now
			c.state = epWriting
			return true
		}
		if l.pending() {
			switch errno := l.flush(); errno {
			case 0:
			case unix.EAGAIN:
				return lp.waitOutput(c)
			default:
				lp.tlsFailed(c, os.NewSyscallError("write", errno))
				return true
			}
		}
		if !c.canRead() {
			return false
		}
		l.step()
	}
}

// tlsFailed ends an attempt whose handshake failed, as the goroutine path
// does (handshakeTLS, then failOpen).
func (lp *epLoop) tlsFailed(c *epConn, err error) {
	lp.r.tlsFailed(err)
	lp.closeConn(c)
	lp.failOpen(c, err)
}

// sendTLS writes the request through crypto/tls (once) and then what the
// socket has not taken. It returns false to wait for EPOLLOUT.
func (lp *epLoop) sendTLS(c *epConn) bool {
	l := c.tls
	if c.wrote == 0 {
		req := c.req
		n, err := l.tc.Write(req)
		c.wrote = len(req)
		lp.t.TotalSent += int64(n)
		if err != nil {
			lp.writeFailed(c, err, lp.tick())
			return true
		}
	}
	if l.pending() {
		switch errno := l.flush(); errno {
		case 0:
		case unix.EAGAIN:
			return lp.waitOutput(c)
		default:
			lp.writeFailed(c, os.NewSyscallError("write", errno), lp.tick())
			return true
		}
	}
	lp.sent(c)
	return true
}

// endTurn ends a turn of the loop: the connections that spent their read
// budget are served again, and once a response head has arrived the
// ramp-up opens the connections it now allows. It returns how many are
// started.
func (lp *epLoop) endTurn(r *run, started int) int {
	if len(lp.again) > 0 && !lp.stopped {
		lp.pumpAgain()
	}
	if started < len(lp.conns) && !lp.stopped && r.headerSeen.Load() {
		to := lp.rampTo(started)
		lp.startConns(started, to)
		started = to
	}
	return started
}

// openFirst registers the loop's wake-up with the tally and opens its first
// connections: as many as the ramp allows now, or connection 0 alone until
// a response head arrives (the ramp-up of slot 0). It returns how many it
// started; false if the run stopped.
func (lp *epLoop) openFirst(r *run, t *tally, slot int) (started int, ok bool) {
	if !t.setConn(r, lp.wake) {
		return 0, false
	}
	started = lp.rampTo(0)
	if slot == 0 && !r.headerSeen.Load() {
		started = 1 // ramp-up: connection 0 alone until a response head arrives
	}
	lp.startConns(0, started)
	return started, true
}
