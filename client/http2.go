package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// The --http2 transport: c connections, each carrying up to --streams
// concurrent streams, driven directly with x/net/http2's Framer, x/net's
// hpack encoder and internal/hpackdec (http2.Transport allocates a request, a
// response and header maps per request and pools connections its own way).
//
// Slot i runs its requests on connection i % c, so each connection has exactly
// --streams slots and never more streams in flight than that (nor more than the
// server's SETTINGS_MAX_CONCURRENT_STREAMS). One reader goroutine per
// connection decodes frames and hands each stream's result to its slot. On the
// common path (a successful response, no --request-timeout, no body, no
// --rate) the reader records the result itself and sends the slot's next
// request, flushing once per batch of frames read, so the slot's goroutine is
// not woken for every request; the slot's tally is then written by the reader
// while the slot waits, a hand-over ordered by smu and the slot's done channel.
//
// The server must speak HTTP/2: over TLS, ALPN must select h2; over plain TCP
// its first frame must be SETTINGS. Otherwise the run ends with a FatalError
// (exit 1) when the first connection is set up, before any request is sent;
// checking there rather than in prepare keeps the server's count of
// connections at exactly c. A connection that goes away (GOAWAY, a close, a
// protocol error) is replaced. Of the streams it left unanswered, those the
// server provably did not process (above a GOAWAY's last stream ID, or reset
// with REFUSED_STREAM) are issued again on the new one, at most h2MaxRetries
// times; the others are failures (h2LostClass). The rules and limits are
// h2rules.go's, shared with the event loops.
//
// Byte counts: "Total transferred" (TotalRead) adds the payload length of every
// HEADERS, CONTINUATION and DATA frame received for the request's stream, i.e.
// the HPACK-compressed header block plus the body (padding included), without
// the 9-byte frame headers and without connection-level frames. "HTML
// transferred" (BodyRead) is the DATA bytes without padding. TotalSent likewise
// counts the request's header block and body bytes.
//
// Files: this one holds the transport, its slots and how a slot issues a
// request; h2request.go the request's header fields; h2rules.go the protocol
// rules and limits that both paths apply; h2conn.go the goroutine path's
// connection (set-up, stream table, write batching); h2reader.go its reader;
// http2_epoll_linux.go the event loops (h2c and h2 over TLS).

const (
	// h2Window is the receive window we advertise, for every stream and for the
	// connection: large, so a fast server is never held back by us.
	h2Window = 1 << 30
	// h2WindowRefill: a WINDOW_UPDATE is sent once this much has been consumed.
	h2WindowRefill = h2Window / 2
	// h2FrameSize is the largest frame we send: the minimum every peer accepts.
	h2FrameSize = 1 << 14
	// h2MaxStreamID is the last client stream ID; past it a new connection is opened.
	h2MaxStreamID = 1<<31 - 1
)

// h2Transport carries requests over HTTP/2.
type h2Transport struct {
	cfg       *Config
	tlsConfig *tls.Config // nil for h2c
	ramp      tlsRamp     // nil for h2c
	block     []byte      // the pre-encoded request header block, the same for every request
	urls      *h2URLs     // --urls: each request's block from the next URL (nil: block)
	pre       *prebuilt   // --targets: each target's block, built once
	body      []byte
	hasBody   bool
	headReq   bool   // the method is HEAD: a content-length comes without a body
	protocol  string // "h2" or "h2c"

	d       *dialer
	holders []h2Holder // one per -c

	connsMu sync.Mutex
	conns   map[*h2Conn]struct{} // open connections, for the final close
	readers sync.WaitGroup
	working atomic.Int32 // slots inside work()
	// loops > 0 selects the Linux HTTP/2 event loops (http2_epoll_linux.go)
	// with that many loops; 0 is the goroutine path of this file.
	loops int
}

// h2Holder is the connection that slots i with i % c == k share.
type h2Holder = connHolder[*h2Conn]

// connHolder is the connection that the slots i with i % c == k share
// (HTTP/2 and HTTP/3 on the goroutine paths).
type connHolder[C interface {
	comparable
	usable() bool
}] struct {
	mu     sync.Mutex
	c      C
	ramped bool // its first connection has been opened (or failed)
}

// get returns the holder's live connection, opening one with open if there
// is none; opened reports that this call opened it. The holder's first
// connection waits for a place in the TLS ramp-up (nil: none), and its
// request then starts after the wait.
func (hd *connHolder[C]) get(r *run, ramp tlsRamp, o *outcome, open func() (C, error)) (c C, opened bool, err error) {
	hd.mu.Lock()
	defer hd.mu.Unlock()
	var none C
	if c := hd.c; c != none && c.usable() {
		return c, false, nil
	}
	if ramp != nil && !hd.ramped {
		hd.ramped = true
		if !ramp.enter(r.stopCh) {
			return none, false, context.Canceled
		}
		defer ramp.leave()
		now := r.clock()
		o.Start, o.TCPDone, o.Connect = now, now, now
	}
	if c, err = open(); err != nil {
		return none, false, err
	}
	hd.c = c
	return c, true, nil
}

func newHTTP2(cfg *Config) (transport, error) {
	if cfg.ProxyHost != "" {
		return nil, errors.New("gab: -X (proxy) cannot be used with --http2")
	}
	h := &h2Transport{
		cfg:      cfg,
		body:     cfg.Spec.Body,
		hasBody:  cfg.Spec.HasBody && len(cfg.Spec.Body) > 0,
		headReq:  cfg.Spec.Method == "HEAD",
		protocol: "h2c",
		conns:    map[*h2Conn]struct{}{},
	}
	if cfg.Target.TLS {
		base, err := buildTLSConfig(cfg)
		if err != nil {
			return nil, err
		}
		// http/1.1 is offered too, so that a server without h2 says so in the
		// handshake rather than failing it with an alert.
		h.tlsConfig = withALPN(base, "h2", "http/1.1")
		h.protocol = "h2"
		h.ramp = newTLSRamp()
	}
	block, err := h2HeaderBlock(cfg)
	if err != nil {
		return nil, err
	}
	h.block = block
	switch {
	case cfg.URLs != nil && cfg.URLs.Targets():
		if h.pre, err = newPrebuilt(cfg, h2HeaderBlock); err != nil {
			return nil, err
		}
		h.hasBody = cfg.URLs.anyBody()
	case cfg.URLs != nil:
		if h.urls, err = newH2URLs(cfg); err != nil {
			return nil, err
		}
	}
	return h, nil
}

func (h *h2Transport) prepare(ctx context.Context, r *run) error {
	d, err := resolve(ctx, h.cfg)
	if err != nil {
		return err
	}
	h.d = d
	h.holders = make([]h2Holder, h.cfg.Concurrency)
	r.protocol = h.protocol
	h.loops = h2EpollLoops(h)
	return nil
}

func (h *h2Transport) slots() int {
	if h.loops > 0 {
		return h.loops
	}
	return h.cfg.Concurrency * h.cfg.Streams
}

// request is the header block, body and HEAD-ness of the request just
// claimed: h.block, with --urls the next URL's block assembled in *buf, with
// --targets the next target's, built once.
// entry is the URL's list index plus 1 (0 without a list).
func (h *h2Transport) request(buf *[]byte, t *tally) (block, body []byte, head bool, entry int32) {
	switch {
	case h.pre != nil:
		i := h.pre.next(t)
		sp := &h.pre.specs[i]
		if sp.HasBody {
			body = sp.Body
		}
		return h.pre.reqs[i], body, sp.Method == "HEAD", int32(i + 1)
	case h.urls != nil:
		if *buf == nil {
			*buf = make([]byte, 0, h.urls.maxLen())
		}
		var i int
		*buf, i = h.urls.block(*buf, t)
		return *buf, h.body, h.headReq, int32(i + 1)
	}
	return h.block, h.body, h.headReq, 0
}

// h2Stream is one slot's stream state, reused for each of its requests. The
// reader goroutine fills the response fields while holding the connection's
// smu and then signals done; the slot reads them after receiving from done.
type h2Stream struct {
	tally *tally
	done  chan struct{} // one value per completed request
	id    uint32
	conn  *h2Conn

	sendWindow int64 // under conn.smu

	h2Resp

	// owes is the connection whose writers count the reader raised for this
	// slot when it completed the stream: the slot is about to write its next
	// request there, so nobody flushes before it has (one write syscall for a
	// batch of requests). settle gives the count back if it writes elsewhere.
	owes *h2Conn

	// The request in flight and how far it got. The slot owns these, except
	// while the reader runs the fast path for it (see h2Conn.finishFast).
	o           outcome
	opened      bool // the request opened its connection
	retries     int  // times the request was sent again
	fastAllowed bool // the slot lets the reader finish its requests and send its next ones
	fastOK      bool // ... for the request in flight (under smu: set once st.o is complete)
	// block, body and head are the request in flight's header block, body
	// and HEAD-ness (h2Transport.request).
	block, blockBuf, reqBody []byte
	head                     bool
	next                     h2Handoff // what the reader left the slot to do
}

// h2Handoff is why the reader woke a slot.
type h2Handoff uint8

const (
	h2Completed h2Handoff = iota // the request in st.o ended: account for it
	h2Stop                       // the reader recorded the request and the run is over
	h2Continue                   // the reader recorded the request; claim the next one
	h2Claimed                    // the reader recorded the request and claimed the next; issue it
)

// settle gives back st's place among its connection's writers, flushing if it
// was the last one.
func (st *h2Stream) settle() {
	c := st.owes
	if c == nil {
		return
	}
	st.owes = nil
	if c.writers.Add(-1) == 0 {
		c.wmu.Lock()
		if c.writers.Load() == 0 {
			_ = c.bw.Flush() // an error means the connection failed; its reader reports that
		}
		c.wmu.Unlock()
	}
}

func (s *h2Stream) reset() { s.h2Resp = h2Resp{} }

func (h *h2Transport) work(r *run, slot int, t *tally) {
	if h.loops > 0 {
		h.workEpoll(r, slot, t)
		return
	}
	h.working.Add(1)
	defer func() {
		if h.working.Add(-1) == 0 {
			h.closeAll()
			h.readers.Wait()
		}
	}()
	st := &h2Stream{tally: t, done: make(chan struct{}, 1)}
	defer st.settle()
	hd := &h.holders[slot%len(h.holders)]
	var timer *time.Timer
	if h.cfg.RequestTimeout > 0 {
		timer = time.NewTimer(h.cfg.RequestTimeout)
		timer.Stop()
		defer timer.Stop()
	}
	// The reader may finish requests and send the next ones itself only when
	// nothing needs this goroutine in between: no per-request timer, no body
	// (sending one can wait for flow-control window), no send schedule.
	st.fastAllowed = timer == nil && !h.hasBody && r.sched == nil
	var registered net.Conn
	claimed := false
	for {
		if !claimed {
			if r.sched != nil {
				st.settle() // claim waits for the request's send time
			}
			if !r.claim(t) {
				return
			}
		}
		switch h.issue(r, hd, st, t, timer, &registered) {
		case h2Stop:
			return
		case h2Claimed:
			claimed = true
		default:
			claimed = false
		}
	}
}

// issue runs one request to its end and reports it. It returns h2Stop when
// the slot should stop, h2Claimed when the reader has claimed the slot's next
// request, and h2Continue otherwise.
func (h *h2Transport) issue(r *run, hd *h2Holder, st *h2Stream, t *tally, timer *time.Timer, registered *net.Conn) h2Handoff {
	now := r.clock()
	st.o = outcome{Start: now, TCPDone: now, Connect: now}
	st.block, st.reqBody, st.head, st.o.entry = h.request(&st.blockBuf, t)
	st.opened, st.retries = false, 0
	o := &st.o
	finish := func() h2Handoff {
		if r.finish(t, o) {
			return h2Continue
		}
		return h2Stop
	}
	for {
		c, opened, err := h.connection(r, hd, t, o)
		if err != nil {
			o.End, o.Err, o.Class = r.clock(), err, r.openFailClass(err)
			return finish()
		}
		st.opened = opened
		if c.nc != *registered {
			if !t.setConn(r, c.nc) {
				o.Class = failAbandoned
				return finish()
			}
			*registered = c.nc
		}
		t.touch(r)
		st.fastOK = false // not registered anywhere now: no reader reads it
		switch c.send(st) {
		case h2SendRetry:
			// The connection went away before the request was written: the
			// next one gets it (counted, so that a server that sends GOAWAY
			// on every new connection cannot keep the slot dialling).
			if !h2Resend(r, o, &st.retries, r.clock()) {
				return finish()
			}
			continue
		case h2SendFailed:
			// Usually the server closed the connection as we wrote (an idle
			// close or GOAWAY not yet read). Without a body, write(2) failing
			// means the request did not leave; a body the server may have
			// begun to read is never sent twice.
			if !h.hasBody && !r.isStopped() && st.retries < h2MaxRetries {
				st.retries++
				t.Retries++
				continue
			}
			o.Class, o.Err, o.End = failWrite, st.err, r.clock()
			return finish()
		}
		o.WriteEnd = r.clock()
		if st.fastAllowed {
			// From here the reader may take the request over; smu orders
			// everything written above before its reads.
			c.smu.Lock()
			st.fastOK = true
			c.smu.Unlock()
		}
		if timer != nil {
			timer.Reset(h.cfg.RequestTimeout)
			select {
			case <-st.done:
				timer.Stop()
			case <-timer.C:
				if c.cancel(st) {
					o.Class = failException
					if r.isStopped() {
						o.Class = failAbandoned // the run ended meanwhile: not counted
					}
					o.Err = fmt.Errorf("no response within --request-timeout %v", h.cfg.RequestTimeout)
					o.End = r.clock()
					o.FirstByte = o.End
					t.TotalRead += st.read
					t.BodyRead += st.body
					t.TotalSent += int64(len(st.block)) + int64(len(st.reqBody))
					return finish()
				}
				<-st.done
			}
		} else {
			<-st.done
		}
		if st.next != h2Completed {
			// The reader recorded the request (and maybe others after it);
			// st.o may now hold a newer request that it sent.
			return st.next
		}
		t.TotalRead += st.read
		t.BodyRead += st.body
		if st.retry {
			if !h2Resend(r, o, &st.retries, st.end) {
				return finish()
			}
			t.Retries++
			continue
		}
		h.account(st.tally, &st.h2Resp, o, st.opened, len(st.block)+len(st.reqBody))
		return finish()
	}
}

// account fills in the outcome of a request whose stream ended.
func (h *h2Transport) account(t *tally, st *h2Resp, o *outcome, opened bool, sent int) {
	t.TotalSent += int64(sent)
	o.Status, o.Body, o.Class, o.Err = st.status, st.body, st.class, st.err
	o.End = st.end
	o.FirstByte = st.firstByte
	if o.FirstByte == 0 {
		o.FirstByte = o.End
	}
	o.KeptAlive = h.cfg.KeepAlive && !opened
}

// connection returns the holder's live connection, opening a new one if there
// is none; opened reports that this call opened it (o.TCPDone and o.Connect
// are then set).
func (h *h2Transport) connection(r *run, hd *h2Holder, t *tally, o *outcome) (*h2Conn, bool, error) {
	return hd.get(r, h.ramp, o, func() (*h2Conn, error) { return h.open(r, t, o) })
}

// errNotH2 is the fatal error for a server that does not speak HTTP/2.
func errNotH2(detail string) *FatalError {
	return &FatalError{Message: "gab: server does not speak HTTP/2 (" + detail + ")\n", Exit: 1}
}
