//go:build linux

package client

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"golang.org/x/net/http2"
	"golang.org/x/sys/unix"
)

// The Linux fast path of --http2 (h2c and h2 over TLS): event loops like the HTTP/1 ones
// (epoll_linux.go), each owning a share of the c connections and all of their
// --streams slots, instead of a reader goroutine per connection and a
// goroutine per slot. A loop reads what every ready socket holds, decodes the
// complete frames with x/net's Framer, records the streams that ended and
// starts the slots' next requests, then writes each connection's frames with
// one write(2): no goroutine hand-off, lock or channel operation per request.
//
// The rules and limits are h2rules.go's (h2HeadDecoder, h2Resp, h2Resend,
// h2LostClass), as on the goroutine path; this file only drives them, within
// the budget of the rule for loops that read from a peer: at most
// h2ReadBudget bytes from one connection per turn (a connection with more to
// read waits on lp.pending, and the next wait does not sleep), the stop flag
// checked at every frame, and at most h2MaxOutput bytes of output queued.
// h2 over TLS runs here too, through a tlsLink per connection
// (tlsloop_linux.go), as HTTP/1 does. Request bodies (flow control),
// --request-timeout, --rate, -v ≥ 2 and whatever epollLoops refuses take the
// goroutine path.

// h2EpollLoopsStarted counts HTTP/2 event loops started, so tests can tell which path ran.
var h2EpollLoopsStarted atomic.Int64

// h2EpollLoops is the number of event loops for this run, or 0 for the goroutine path.
func h2EpollLoops(h *h2Transport) int {
	if h.hasBody || h.cfg.Verbosity >= 2 || len(h.block) > h2FrameSize || h.urls != nil && h.urls.maxLen() > h2FrameSize ||
		h.pre != nil && h.pre.max > h2FrameSize {
		return 0
	}
	return epollLoops(h.cfg, h.d)
}

// h2eState is where a slot stands.
type h2eState uint8

const (
	h2eIdle    h2eState = iota // no ticket (not started, or none left)
	h2eWaiting                 // a request is claimed and not yet on a stream
	h2eOpen                    // the request is on a stream of its connection
)

// h2eSlot is one of a connection's --streams slots and its current request.
type h2eSlot struct {
	h2Resp
	state   h2eState
	id      uint32
	o       outcome
	opened  bool // the request opened its connection
	retries int  // times the request was sent again
	done    bool // no ticket was left for it: never started again
	// block and head are the request in flight's header block and HEAD-ness
	// (h2Transport.request).
	block, blockBuf []byte
	head            bool
}

// h2eConn is one of the loop's connections with its slots.
type h2eConn struct {
	epSock
	lp         *h2Loop
	connecting bool // connect(2) not confirmed yet (no write has gone through)
	opener     *h2eSlot
	slots      []h2eSlot

	sawSettings bool
	goaway      bool
	nextID      uint32
	maxStreams  int
	active      int
	streams     map[uint32]*h2eSlot

	in   []byte // read buffer: in[pos:have] is not decoded yet
	pos  int
	have int

	out       []byte     // frames not yet written
	unflushed []*h2eSlot // requests in out: their WriteEnd is the write's
	dirty     bool       // listed in lp.dirty

	fr          *http2.Framer
	src         h2eSource
	heads       *h2HeadDecoder
	cur         *h2eSlot // slot whose header block is being decoded (nil: none)
	connUnacked uint32
	pending     bool // listed in lp.pending: the socket may hold more than the last turn read
}

// h2eSource feeds the Framer one complete frame from the read buffer.
type h2eSource struct{ b []byte }

func (s *h2eSource) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, errors.New("gab: frame source ran dry") // cannot happen: only complete frames are fed
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// h2eSink collects the Framer's output in the connection's out buffer.
type h2eSink struct{ c *h2eConn }

func (s h2eSink) Write(p []byte) (int, error) {
	s.c.out = append(s.c.out, p...)
	if !s.c.dirty {
		s.c.dirty = true
		s.c.lp.dirty = append(s.c.lp.dirty, s.c)
	}
	return len(p), nil
}

// h2Loop is one HTTP/2 event loop.
type h2Loop struct {
	epPoller
	h       *h2Transport
	conns   []h2eConn
	dirty   []*h2eConn
	pending []*h2eConn // connections whose read budget ran out with input left
	busy    int        // slots not idle
	stopped bool       // finish said the run ended
	ramped  bool       // every slot has been started
	// rampNext is the next connection the ramp-up starts.
	rampNext int
}

// h2ReadBuf holds a full frame of the largest size we accept and more.
const h2ReadBuf = 64 << 10

var errOutputStuck = errors.New("gab: the server does not read what gab sends")

func (h *h2Transport) workEpoll(r *run, slot int, t *tally) {
	h2EpollLoopsStarted.Add(1)
	lp := &h2Loop{h: h}
	count := (h.cfg.Concurrency - slot + h.loops - 1) / h.loops
	lp.conns = make([]h2eConn, count)
	if err := lp.init(r, t, h.d, count+1, h.loops); err != nil {
		r.stop(EndFatal, sysError("apr_pollset_create", err))
		return
	}
	lp.nodelay = h.tlsConfig != nil
	for i := range lp.conns {
		c := &lp.conns[i]
		*c = h2eConn{epSock: epSock{idx: int32(i), fd: -1}, lp: lp, slots: make([]h2eSlot, h.cfg.Streams),
			in: make([]byte, h2ReadBuf), streams: make(map[uint32]*h2eSlot, h.cfg.Streams)}
	}
	defer lp.shutdown()
	if !t.setConn(r, lp.wake) {
		return
	}
	if slot == 0 && !r.headerSeen.Load() {
		lp.start(&lp.conns[0], 1) // ramp-up: one request alone until a response head arrives
	} else {
		lp.startAll()
	}
	lp.flush()
	for lp.busy > 0 && !lp.stopped && !r.isStopped() {
		lp.more = len(lp.pending) > 0 // input left over: look for events without sleeping
		events, ok := lp.ready()
		if !ok {
			return
		}
		for i := range events {
			ev := &events[i]
			if ev.Fd == wakeID {
				continue // the loop condition sees the stop
			}
			c := &lp.conns[ev.Fd]
			if !c.take(ev) {
				continue
			}
			if c.connecting || (ev.Events&unix.EPOLLOUT != 0 && (len(c.out) > 0 || c.tls != nil && c.tls.pending())) {
				lp.write(c) // the connect's outcome, or room for what waited
			}
			if c.fd >= 0 && c.readable {
				lp.read(c)
			}
			if lp.stopped {
				break
			}
		}
		lp.resume()
		if !lp.ramped && !lp.stopped && r.headerSeen.Load() {
			lp.startAll()
		}
		lp.flush()
	}
}

// resume reads on from the connections whose last turn used up its budget.
func (lp *h2Loop) resume() {
	for k := len(lp.pending); k > 0 && !lp.stopped; k-- {
		c := lp.pending[0]
		lp.pending = lp.pending[:copy(lp.pending, lp.pending[1:])]
		c.pending = false
		if c.fd >= 0 && c.readable {
			touchAt(lp.t, lp.tick()) // input without a new event is activity too (-s)
			lp.read(c)               // may list c again, at the end
		}
	}
}

// startAll starts every slot not started yet: over TLS, connection by
// connection while fewer than the loop's share of tlsRampHandshakes are
// under way (the loop calls it again until all are started).
func (lp *h2Loop) startAll() {
	for lp.rampNext < len(lp.conns) && !lp.stopped {
		if lp.h.tlsConfig != nil && lp.opening >= tlsRampShare(lp.h.loops) {
			return
		}
		c := &lp.conns[lp.rampNext]
		lp.rampNext++
		lp.start(c, len(c.slots))
	}
	lp.ramped = true
}

// start claims requests for c's first k slots that have none yet and issues them.
func (lp *h2Loop) start(c *h2eConn, k int) {
	for i := range c.slots[:k] {
		if st := &c.slots[i]; st.state == h2eIdle && !st.done && !lp.stopped {
			lp.busy++
			lp.next(st)
		}
	}
	lp.issue(c)
}

// next claims the slot's next request (the slot is busy); false when none is left.
func (lp *h2Loop) next(st *h2eSlot) bool {
	if lp.stopped || !lp.r.claim(lp.t) {
		st.state, st.done = h2eIdle, true
		lp.busy--
		return false
	}
	now := lp.tick()
	st.state = h2eWaiting
	st.o = outcome{Start: now, TCPDone: now, Connect: now}
	st.block, _, st.head, st.o.entry = lp.h.request(&st.blockBuf, lp.t) // no body: h2EpollLoops
	st.opened, st.retries = false, 0
	return true
}

// issue puts c's waiting requests on streams, opening the connection if needed.
func (lp *h2Loop) issue(c *h2eConn) {
	for c.fd < 0 || c.goaway {
		if c.fd >= 0 {
			if c.active > 0 {
				return // draining after GOAWAY; replaced once its streams end
			}
			lp.closeConn(c)
		}
		opener := c.firstWaiting()
		if opener == nil || lp.stopped {
			return
		}
		if lp.open(c, opener) {
			break
		}
	}
	for i := range c.slots {
		st := &c.slots[i]
		if st.state != h2eWaiting {
			continue
		}
		if c.goaway || c.active >= c.maxStreams {
			return
		}
		st.h2Resp = h2Resp{}
		st.id = c.nextID
		c.nextID += 2
		if c.nextID > h2MaxStreamID {
			c.goaway = true // no IDs left: as if the server had sent GOAWAY
		}
		c.streams[st.id] = st
		c.active++
		st.state = h2eOpen
		_ = c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: st.id, BlockFragment: st.block, EndStream: true, EndHeaders: true})
		c.unflushed = append(c.unflushed, st)
	}
}

// newFramer gives c a Framer with no state: a Framer remembers a header
// block left open (it wants a CONTINUATION next), which must not outlive the
// connection it came on.
func (c *h2eConn) newFramer() {
	c.src.b = nil
	c.fr = http2.NewFramer(h2eSink{c}, &c.src)
	c.fr.SetReuseFrames()
	c.fr.SetMaxReadFrameSize(h2FrameSize)
}

func (c *h2eConn) firstWaiting() *h2eSlot {
	for i := range c.slots {
		if c.slots[i].state == h2eWaiting {
			return &c.slots[i]
		}
	}
	return nil
}

// open starts a connection for c with opener's request; false if that
// request has failed instead (another waiting one may try again).
func (lp *h2Loop) open(c *h2eConn, opener *h2eSlot) bool {
	// EPOLLOUT stays registered: it says when the connect is done, and when
	// output that the socket did not take can go on.
	if err := lp.dial(&c.epSock, true); err != nil {
		lp.openFailed(opener, err)
		return false
	}
	c.connecting, c.opener, opener.opened = true, opener, true
	// closeConn left the buffers and stream table empty; the protocol state starts afresh.
	c.sawSettings, c.goaway, c.nextID, c.maxStreams = false, false, 1, int(^uint(0)>>1)
	c.connUnacked, c.cur = 0, nil
	c.heads = newH2HeadDecoder(lp.r, false) // a new connection starts a new table
	c.newFramer()                           // nor may the old one's unfinished header block carry over
	if conf := lp.h.tlsConfig; conf != nil {
		// The preface and requests below wait in c.out for the handshake.
		lp.openTLS(&c.epSock, conf)
	}
	_, _ = h2eSink{c}.Write([]byte(http2.ClientPreface))
	_ = c.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window},
	)
	_ = c.fr.WriteWindowUpdate(0, h2Window-65535)
	return true
}

// openFailed ends the request whose connection could not be opened.
func (lp *h2Loop) openFailed(st *h2eSlot, err error) {
	st.o.TCPDone = 0 // set to the start for a reused connection; this one never connected
	lp.r.failOpen(&st.o, lp.tick(), err)
	lp.finish(st)
}

// finish records st's request and claims its next one.
func (lp *h2Loop) finish(st *h2eSlot) {
	if !lp.r.finish(lp.t, &st.o) {
		lp.stopped = true
		st.state = h2eIdle
		return
	}
	lp.next(st)
}

// flush writes every connection's pending frames (a write that fails may
// open a replacement connection, which joins the list).
func (lp *h2Loop) flush() {
	for k := len(lp.dirty) - 1; k >= 0; k = len(lp.dirty) - 1 {
		c := lp.dirty[k]
		lp.dirty[k] = nil
		lp.dirty = lp.dirty[:k]
		c.dirty = false
		if c.fd >= 0 && !lp.stopped {
			lp.write(c)
		}
	}
}

// write writes c.out; what the socket does not take waits for EPOLLOUT.
func (lp *h2Loop) write(c *h2eConn) {
	if c.tls != nil {
		lp.writeTLS(c)
		return
	}
	for len(c.out) > 0 {
		var before int64
		if c.connecting {
			before = lp.tick()
		}
		n, errno := rawWrite(c.fd, c.out)
		switch errno {
		case 0:
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			if len(c.out) >= h2MaxOutput {
				lp.lost(c, errOutputStuck)
			}
			return // EPOLLOUT (always registered, edge-triggered) says when
		default:
			err := os.NewSyscallError("write", errno)
			if c.connecting && errno != unix.EPIPE && errno != unix.ECONNRESET {
				lp.connectFailed(c, os.NewSyscallError("connect", errno), true)
				return
			}
			lp.lost(c, err)
			return
		}
		if c.connecting {
			c.connecting = false
			lp.d.markWorked(lp.r, before)
			if st := c.opener; st != nil && st.opened {
				st.o.TCPDone, st.o.Connect = before, before
			}
			c.opener = nil
		}
		c.out = c.out[:copy(c.out, c.out[n:])]
	}
	lp.written(c)
}

// written stamps the requests whose frames are all written.
func (lp *h2Loop) written(c *h2eConn) {
	if len(c.unflushed) > 0 {
		now := lp.tick()
		for i, st := range c.unflushed {
			c.unflushed[i] = nil
			if st.state == h2eOpen && st.o.WriteEnd == 0 {
				st.o.WriteEnd = now
			}
		}
		c.unflushed = c.unflushed[:0]
	}
}

// connectFailed handles a connection that could not be established (its
// connect, or its TLS handshake): its opener's request fails (after trying
// the next address if next), the others wait for the next connection.
func (lp *h2Loop) connectFailed(c *h2eConn, err error, next bool) {
	opener, idx := c.opener, c.addrIdx
	for i := range c.slots {
		if st := &c.slots[i]; st.state == h2eOpen {
			st.state = h2eWaiting // never sent
		}
	}
	lp.closeConn(c)
	if opener != nil && opener.state == h2eWaiting {
		if next && lp.fallback(idx) {
			opener.opened = false
		} else {
			lp.openFailed(opener, err)
		}
	}
	lp.issue(c)
}

// read reads and decodes what c's socket holds, up to h2ReadBudget bytes:
// a connection with more waits on lp.pending for the next turn. It stops
// with the run, as decode does: a stopped decode leaves its frames in the
// buffer, which would fill up, and over TLS a read into no room is
// crypto/tls's Read of an empty slice, (0, nil), which spends no budget.
func (lp *h2Loop) read(c *h2eConn) {
	c.budget = h2ReadBudget
	if c.tls != nil && !c.tls.hsDone && !lp.handshake(c) {
		return
	}
	for c.canRead() && c.fd >= 0 && !lp.stopped && !lp.r.isStopped() {
		if c.pos > 0 && c.pos == c.have {
			c.pos, c.have = 0, 0
		} else if c.have == len(c.in) {
			c.have = copy(c.in, c.in[c.pos:c.have])
			c.pos = 0
		}
		n, err := c.recv(c.in[c.have:])
		if n > 0 {
			c.have += n
			if err := lp.decode(c); err != nil {
				lp.lost(c, err)
				return
			}
			continue
		}
		if err != nil {
			lp.lost(c, err)
			return
		}
	}
	lp.queue(c)
	lp.issue(c)
}

// queue lists c in lp.pending when its budget ran out with input left.
func (lp *h2Loop) queue(c *h2eConn) {
	if c.fd >= 0 && c.spent() && !c.pending && !lp.stopped {
		c.pending = true
		lp.pending = append(lp.pending, c)
	}
}

// decode handles every complete frame in the read buffer, checking for stop
// at each; when the output queued reaches h2MaxOutput it writes it first, and
// the connection fails if the socket does not take it.
func (lp *h2Loop) decode(c *h2eConn) error {
	for c.fd >= 0 && !lp.stopped && !lp.r.isStopped() {
		if len(c.out) >= h2MaxOutput {
			lp.write(c) // fails the connection if it stays stuck
			continue
		}
		buf := c.in[c.pos:c.have]
		if len(buf) < 9 {
			return nil
		}
		size := int(buf[0])<<16 | int(buf[1])<<8 | int(buf[2])
		if size <= h2FrameSize && len(buf) < 9+size {
			return nil // the rest of the frame is still to come
		}
		c.src.b = buf
		f, err := c.fr.ReadFrame()
		c.pos += len(buf) - len(c.src.b)
		if err != nil {
			return err
		}
		if err := lp.handle(c, f); err != nil {
			return err
		}
	}
	return nil
}

func (lp *h2Loop) handle(c *h2eConn, f http2.Frame) error {
	if !c.sawSettings {
		if _, ok := f.(*http2.SettingsFrame); !ok {
			return errFirstFrame
		}
	}
	switch f := f.(type) {
	case *http2.DataFrame:
		return lp.onData(c, f)
	case *http2.HeadersFrame:
		st := c.streams[f.StreamID]
		var resp *h2Resp
		if st != nil {
			st.arrived(lp.now, f.Length)
			resp = &st.h2Resp
		} else if h2Unopened(f.StreamID, c.nextID) {
			return errUnopenedStream
		}
		c.cur = st
		c.heads.begin(resp, f.StreamEnded())
		return lp.headerFragment(c, f.Length, f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.ContinuationFrame:
		if st := c.cur; st != nil && c.streams[f.StreamID] == st {
			st.read += int64(f.Length) // firstByte was set by the HEADERS frame
		}
		return lp.headerFragment(c, f.Length, f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.RSTStreamFrame:
		if st := c.streams[f.StreamID]; st == nil && h2Unopened(f.StreamID, c.nextID) {
			return errUnopenedStream
		} else if st != nil {
			lp.end(c, st, failException, st.takeReset(f.ErrCode))
		}
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		c.sawSettings = true
		var window int64 // no request bodies here: the send window is not used
		if err := h2Settings(f, &c.maxStreams, &window); err != nil {
			return err
		}
		return c.fr.WriteSettingsAck()
	case *http2.PingFrame:
		if !f.IsAck() {
			return c.fr.WritePing(true, f.Data)
		}
	case *http2.GoAwayFrame:
		c.goaway = true
		for id, st := range c.streams {
			if st.refusedBy(id, f.LastStreamID) {
				st.retry = true
				lp.end(c, st, failException, errGoAwayRefused)
			}
		}
		if c.active == 0 {
			lp.closeConn(c) // issue opens the next one for the waiting slots
		}
	case *http2.PushPromiseFrame:
		return errPushPromise
	}
	return nil
}

func (lp *h2Loop) onData(c *h2eConn, f *http2.DataFrame) error {
	n := f.Length
	if st := c.streams[f.StreamID]; st == nil && h2Unopened(f.StreamID, c.nextID) {
		return errUnopenedStream
	} else if st != nil {
		if st.takeData(lp.now, f) {
			class, err := st.endClass(st.head)
			lp.end(c, st, class, err)
		} else if st.unacked += n; st.unacked >= h2WindowRefill {
			if err := c.fr.WriteWindowUpdate(st.id, st.unacked); err != nil {
				return err
			}
			st.unacked = 0
		}
	}
	if c.connUnacked += n; c.connUnacked >= h2WindowRefill {
		if err := c.fr.WriteWindowUpdate(0, c.connUnacked); err != nil {
			return err
		}
		c.connUnacked = 0
	}
	return nil
}

// headerFragment feeds one fragment of a header block to the decoder (which
// must see every block, whatever its stream, to keep its table in step).
func (lp *h2Loop) headerFragment(c *h2eConn, frameLen uint32, frag []byte, endHeaders bool) error {
	if complete, err := c.heads.fragment(frameLen, frag, endHeaders); !complete {
		return err
	}
	st := c.cur
	c.cur = nil
	switch ends, err := c.heads.done(); {
	case err != nil: // the stream fails: an Exception, and reset
		werr := c.fr.WriteRSTStream(st.id, h2ResetInterim) // before end, which may send the slot's next request
		lp.end(c, st, failException, err)
		return werr
	case ends:
		class, err := st.endClass(st.head)
		lp.end(c, st, class, err)
	}
	return nil
}

// end ends st's stream with class: the request is recorded and the slot's
// next one claimed, or it waits to be issued again (st.retry).
func (lp *h2Loop) end(c *h2eConn, st *h2eSlot, class failClass, err error) {
	delete(c.streams, st.id)
	c.active--
	if c.cur == st {
		c.cur = nil
	}
	st.end = lp.now
	st.class, st.err = class, err
	t := lp.t
	t.TotalRead += st.read
	t.BodyRead += st.body
	o := &st.o
	if st.retry {
		st.retry = false
		if !h2Resend(lp.r, o, &st.retries, lp.now) {
			lp.finish(st)
			return
		}
		t.Retries++
		st.state = h2eWaiting
		st.o.WriteEnd, st.opened = 0, false
		return
	}
	if o.WriteEnd == 0 {
		o.WriteEnd = lp.now // answered before our write returned
	}
	lp.h.account(t, &st.h2Resp, o, st.opened, len(st.block))
	lp.finish(st)
}

// lost ends connection c after err: its streams end as h2LostClass says.
func (lp *h2Loop) lost(c *h2eConn, err error) {
	r := lp.r
	stopping := r.isStopped()
	if !c.sawSettings && !stopping && isH2ProtocolError(err) {
		r.stop(EndFatal, errNotH2("no HTTP/2 SETTINGS from the server: "+err.Error()))
		stopping = true
	}
	if errors.Is(err, errOutputStuck) {
		err = fmt.Errorf("%w (%d bytes unsent)", err, len(c.out))
	}
	for i := range c.slots {
		st := &c.slots[i]
		if st.state != h2eOpen {
			continue
		}
		st.retry = false // the server may have processed it
		lp.end(c, st, h2LostClass(stopping || r.isStopped(), &st.h2Resp, c.sawSettings, err), err)
		if lp.stopped {
			break
		}
	}
	if code, ok := h2GoAwayCode(err); ok && c.sawSettings && c.fd >= 0 {
		_ = c.fr.WriteGoAway(0, code, nil)
		if c.tls != nil {
			_, _ = c.tls.tc.Write(c.out) // one try: the connection is closed next
		} else {
			_, _ = rawWrite(c.fd, c.out) // one try: the connection is closed next
		}
	}
	lp.closeConn(c)
	if !lp.stopped {
		lp.issue(c) // a new connection for the requests to issue again
	}
}

// closeConn closes c's socket (which also leaves the epoll set).
func (lp *h2Loop) closeConn(c *h2eConn) {
	lp.closeSock(&c.epSock)
	c.connecting, c.opener = false, nil
	clear(c.streams)
	c.active = 0
	c.out, c.unflushed = c.out[:0], c.unflushed[:0]
	c.pos, c.have = 0, 0
}

// shutdown closes every socket, the waker and the epoll instance. A slot's
// request still waiting for its stream or its response is left in flight.
func (lp *h2Loop) shutdown() {
	lp.t.setConn(lp.r, nil)
	for i := range lp.conns {
		c := &lp.conns[i]
		for j := range c.slots {
			if st := &c.slots[j]; st.state != h2eIdle && lp.r.isStopped() {
				lp.r.leftInFlight(lp.t, &st.o)
			}
		}
		lp.closeConn(c)
	}
	lp.close()
}

// writeTLS is write for h2 over TLS: the connect's outcome starts the
// handshake, whose output goes first; after it c.out goes through
// crypto/tls, and what the socket does not take waits in the link (c.out
// then grows up to h2MaxOutput, as on h2c).
func (lp *h2Loop) writeTLS(c *h2eConn) {
	l := c.tls
	if c.connecting {
		before := lp.tick()
		switch errno := connectOutcome(c.fd); errno {
		case 0:
		case unix.EAGAIN:
			return // EPOLLOUT (always registered) says when
		default:
			lp.connectFailed(c, os.NewSyscallError("connect", errno), true)
			return
		}
		c.connecting = false
		lp.d.markWorked(lp.r, before)
		if st := c.opener; st != nil && st.opened {
			st.o.TCPDone = before
		}
		l.start()
		if l.hsDone { // failed before it needed the server
			lp.tlsFailed(c, l.hsErr)
			return
		}
	}
	if !l.hsDone {
		lp.flushTLS(c)
		return
	}
	// After the handshake its last flight (TLS 1.3: the client's Finished)
	// goes out with the preface and requests, in one write (two small
	// writes would have Nagle hold the second for a delayed ACK); later,
	// output waits while the socket has not taken the link's.
	if len(c.out) > 0 && (l.fresh || !l.pending()) {
		l.fresh = false
		_, err := l.tc.Write(c.out)
		c.out = c.out[:0]
		if err != nil {
			lp.lost(c, err)
			return
		}
	}
	if !lp.flushTLS(c) {
		return
	}
	lp.written(c)
}

// flushTLS writes what the link holds; false if some is left (or the
// connection failed).
func (lp *h2Loop) flushTLS(c *h2eConn) bool {
	l := c.tls
	if !l.pending() {
		return true
	}
	switch errno := l.flush(); errno {
	case 0:
		return true
	case unix.EAGAIN:
		if len(c.out) >= h2MaxOutput {
			lp.lost(c, errOutputStuck)
		}
	default:
		err := os.NewSyscallError("write", errno)
		if !l.hsDone {
			lp.tlsFailed(c, err)
		} else {
			lp.lost(c, err)
		}
	}
	return false
}

// handshake moves c's TLS handshake on with what its socket holds; true
// once it has ended well and the preface and requests have gone out.
func (lp *h2Loop) handshake(c *h2eConn) bool {
	l := c.tls
	if !l.started {
		return false // the connect's outcome comes first (write)
	}
	for !l.hsDone && c.canRead() {
		l.step()
	}
	if !l.hsDone {
		lp.flushTLS(c)
		lp.queue(c)
		return false
	}
	if !lp.handshaken(c) {
		return false
	}
	lp.write(c) // the handshake's last flight, the preface and the requests
	return c.fd >= 0
}

// handshaken finishes c's handshake: ALPN must have chosen h2 (otherwise
// the run ends, as on the goroutine path). False if c failed.
func (lp *h2Loop) handshaken(c *h2eConn) bool {
	l := c.tls
	if l.hsErr != nil {
		_ = l.flush() // the alert, if crypto/tls sent one: one try
		lp.tlsFailed(c, l.hsErr)
		return false
	}
	if p := l.tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		if p == "" {
			p = "none"
		}
		lp.r.stop(EndFatal, errNotH2("ALPN offered h2, the server chose "+p))
		lp.connectFailed(c, errors.New("server does not speak HTTP/2"), false)
		return false
	}
	now := lp.tick()
	touchAt(lp.t, now)
	lp.r.tlsDone(l.tc)
	lp.opened(&c.epSock)
	if st := c.opener; st != nil && st.opened {
		st.o.Connect = now
	}
	c.opener = nil
	return true
}

// tlsFailed ends a connection whose handshake failed: its opener's request
// fails as on the goroutine path (failOpen), the others wait for the next
// connection.
func (lp *h2Loop) tlsFailed(c *h2eConn, err error) {
	lp.r.tlsFailed(err)
	if strings.Contains(err.Error(), "no application protocol") {
		lp.r.stop(EndFatal, errNotH2("ALPN: "+err.Error()))
	}
	lp.connectFailed(c, err, false)
}
