package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The --http2 transport: c connections, each carrying up to --streams
// concurrent streams, driven directly with x/net/http2's Framer and hpack
// (http2.Transport allocates a request, a response and header maps per
// request and pools connections its own way).
//
// Slot i runs its requests on connection i % c, so each connection has exactly
// --streams slots and never more streams in flight than that (nor more than the
// server's SETTINGS_MAX_CONCURRENT_STREAMS). One reader goroutine per
// connection decodes frames and hands each stream's result to its slot. On the
// common path (a successful response, no --request-timeout, no body, no
// --rate) the reader records the result itself and sends the slot's next
// request, flushing once per batch of frames read, so the slot's goroutine is
// not woken for every request; the slot's Tally is then written by the reader
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

func init() { transportFactories[HTTP2] = newHTTP2 }

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
	block     []byte      // the pre-encoded request header block, the same for every request
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
	// loops > 0 selects the Linux h2c event loops (http2_epoll_linux.go)
	// with that many loops; 0 is the goroutine path of this file.
	loops int
}

// h2Holder is the connection that slots i with i % c == k share.
type h2Holder struct {
	mu sync.Mutex
	c  *h2Conn
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
	}
	block, err := h2HeaderBlock(cfg)
	if err != nil {
		return nil, err
	}
	h.block = block
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

// h2Fields lists the request's header fields in the order they are sent:
// pseudo-headers, then what ab sends, lower-cased. Connection-specific headers
// (which HTTP/2 forbids) and -H lines without a colon are left out.
func h2Fields(cfg *Config) []hpack.HeaderField {
	spec := cfg.Spec
	method := spec.Method
	if method == "" {
		method = "GET"
	}
	path := spec.Target
	if path == "" {
		path = cfg.Target.Path
	}
	if path == "" {
		path = "/"
	}
	scheme := "http"
	if cfg.Target.TLS {
		scheme = "https"
	}
	authority := spec.Host
	if authority == "" {
		authority = cfg.Target.HostHeader()
	}
	var extra []hpack.HeaderField
	userAgent, accept := true, true
	for _, line := range spec.Headers {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.TrimSpace(value)
		switch name {
		case "host":
			authority = value
			continue
		case "user-agent":
			userAgent = false
		case "accept":
			accept = false
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			continue
		case "":
			continue
		}
		extra = append(extra, hpack.HeaderField{Name: name, Value: value})
	}
	fields := []hpack.HeaderField{
		{Name: ":method", Value: method},
		{Name: ":scheme", Value: scheme},
		{Name: ":authority", Value: authority},
		{Name: ":path", Value: path},
	}
	if userAgent {
		fields = append(fields, hpack.HeaderField{Name: "user-agent", Value: "ApacheBench/2.3"})
	}
	if accept {
		fields = append(fields, hpack.HeaderField{Name: "accept", Value: "*/*"})
	}
	fields = append(fields, extra...)
	if spec.Cookie != "" || spec.HasCookie {
		fields = append(fields, hpack.HeaderField{Name: "cookie", Value: spec.Cookie})
	}
	for _, line := range spec.Auth {
		name, value, ok := strings.Cut(line, ":")
		if ok {
			fields = append(fields, hpack.HeaderField{Name: strings.ToLower(strings.TrimSpace(name)), Value: strings.TrimSpace(value)})
		}
	}
	if spec.HasBody {
		ct := spec.ContentType
		if ct == "" {
			ct = "text/plain"
		}
		fields = append(fields,
			hpack.HeaderField{Name: "content-type", Value: ct},
			hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(spec.Body))})
	}
	return fields
}

// RequestHead is the request head that -v 2 shows: ab's request bytes, or
// for --http2 the header fields sent (pseudo-headers first), one
// "name: value" line each.
func (cfg *Config) RequestHead() []byte {
	if cfg.Protocol != HTTP2 {
		return cfg.Request[:cfg.HeadLen]
	}
	var b []byte
	for _, f := range h2Fields(cfg) {
		b = append(append(append(append(b, f.Name...), ": "...), f.Value...), "\r\n"...)
	}
	return append(b, "\r\n"...)
}

// h2HeaderBlock encodes the request's header block once. Every field is a
// never-indexed literal (or a static-table entry), so the block leaves the
// server's dynamic table untouched and can be sent again byte for byte.
func h2HeaderBlock(cfg *Config) ([]byte, error) {
	var buf strings.Builder
	enc := hpack.NewEncoder(&buf)
	for _, f := range h2Fields(cfg) {
		f.Sensitive = true
		if err := enc.WriteField(f); err != nil {
			return nil, err
		}
	}
	return []byte(buf.String()), nil
}

// h2Stream is one slot's stream state, reused for each of its requests. The
// reader goroutine fills the response fields while holding the connection's
// smu and then signals done; the slot reads them after receiving from done.
type h2Stream struct {
	tally *Tally
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
	o           Outcome
	opened      bool      // the request opened its connection
	retries     int       // times the request was sent again
	fastAllowed bool      // the slot lets the reader finish its requests and send its next ones
	fastOK      bool      // ... for the request in flight (under smu: set once st.o is complete)
	next        h2Handoff // what the reader left the slot to do
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

// h2Conn is one HTTP/2 connection.
type h2Conn struct {
	h      *h2Transport
	r      *run
	nc     net.Conn // what the slots register (the TLS connection for h2)
	raw    net.Conn // the TCP connection, closed to end the connection without waiting
	bw     *bufio.Writer
	br     *bufio.Reader
	fr     *http2.Framer
	heads  *h2HeadDecoder
	owner  *Tally // touched on connection-level activity (-s)
	closed atomic.Bool

	// Writing. writers counts goroutines in or waiting for a write section: the
	// last one out flushes, so that frames from several streams share a syscall.
	wmu     sync.Mutex
	writers atomic.Int32
	nextID  uint32

	// Stream state, shared by the reader and the slots.
	smu        sync.Mutex
	cond       sync.Cond
	streams    map[uint32]*h2Stream
	active     int
	maxStreams int
	peerWindow int64 // the peer's SETTINGS_INITIAL_WINDOW_SIZE
	sendWindow int64 // connection-level send window
	goaway     bool  // GOAWAY received or stream IDs exhausted: no new streams
	lastID     uint32
	dead       bool

	// Reader-only state.
	sawSettings bool
	connUnacked uint32
	cur         *h2Stream   // stream whose header block is being decoded (nil: unknown)
	fast        []*h2Stream // streams that ended well, for finishFast
	batching    bool        // the reader holds a place among the writers for requests it wrote
}

func (h *h2Transport) work(r *run, slot int, t *Tally) {
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
func (h *h2Transport) issue(r *run, hd *h2Holder, st *h2Stream, t *Tally, timer *time.Timer, registered *net.Conn) h2Handoff {
	now := r.clock()
	st.o = Outcome{Start: now, TCPDone: now, Connect: now}
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
			if !t.SetConn(r, c.nc) {
				o.Class = FailAbandoned
				return finish()
			}
			*registered = c.nc
		}
		t.Touch(r)
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
			o.Class, o.Err, o.End = FailWrite, st.err, r.clock()
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
					o.Class = FailException
					if r.isStopped() {
						o.Class = FailAbandoned // the run ended meanwhile: not counted
					}
					o.Err = fmt.Errorf("no response within --request-timeout %v", h.cfg.RequestTimeout)
					o.End = r.clock()
					o.FirstByte = o.End
					t.TotalRead += st.read
					t.BodyRead += st.body
					t.TotalSent += int64(len(h.block)) + int64(len(h.body))
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
		h.account(st.tally, &st.h2Resp, o, st.opened)
		return finish()
	}
}

// account fills in the outcome of a request whose stream ended.
func (h *h2Transport) account(t *Tally, st *h2Resp, o *Outcome, opened bool) {
	t.TotalSent += int64(len(h.block)) + int64(len(h.body))
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
func (h *h2Transport) connection(r *run, hd *h2Holder, t *Tally, o *Outcome) (c *h2Conn, opened bool, err error) {
	hd.mu.Lock()
	defer hd.mu.Unlock()
	if c := hd.c; c != nil && c.usable() {
		return c, false, nil
	}
	c, err = h.open(r, t, o)
	if err != nil {
		return nil, false, err
	}
	hd.c = c
	return c, true, nil
}

// stopContext is cancelled when the run stops, so that dials and handshakes end.
type stopContext struct{ r *run }

func (stopContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (s stopContext) Done() <-chan struct{}     { return s.r.stopCh }
func (stopContext) Value(any) any               { return nil }
func (s stopContext) Err() error {
	select {
	case <-s.r.stopCh:
		return context.Canceled
	default:
		return nil
	}
}

// errNotH2 is the fatal error for a server that does not speak HTTP/2.
func errNotH2(detail string) *FatalError {
	return &FatalError{Message: "gab: server does not speak HTTP/2 (" + detail + ")\n", Exit: 1}
}

// open dials, handshakes (h2 over TLS with ALPN, or h2c with prior knowledge),
// sends the connection preface and starts the connection's reader.
func (h *h2Transport) open(r *run, t *Tally, o *Outcome) (*h2Conn, error) {
	ctx := stopContext{r}
	raw, err := h.d.connect(ctx)
	if err != nil {
		return nil, err
	}
	nc := raw
	o.TCPDone = r.clock()
	if h.tlsConfig != nil {
		if !t.SetConn(r, raw) { // so that a stopping run interrupts the handshake
			_ = raw.Close() // the run stopped
			return nil, context.Canceled
		}
		tc, err := handshakeTLS(r, raw, h.tlsConfig)
		if err != nil {
			_ = raw.Close() // the handshake failed; nothing to keep
			if strings.Contains(err.Error(), "no application protocol") {
				r.stop(EndFatal, errNotH2("ALPN: "+err.Error()))
			}
			return nil, err
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			_ = raw.Close() // wrong protocol; the run ends
			if p == "" {
				p = "none"
			}
			r.stop(EndFatal, errNotH2("ALPN offered h2, the server chose "+p))
			return nil, errors.New("server does not speak HTTP/2")
		}
		nc = tc
	}
	h.d.markWorked()
	c := &h2Conn{
		h:          h,
		r:          r,
		nc:         nc,
		raw:        raw,
		owner:      t,
		nextID:     1,
		streams:    make(map[uint32]*h2Stream, h.cfg.Streams),
		maxStreams: int(^uint(0) >> 1),
		peerWindow: 65535,
		sendWindow: 65535,
	}
	c.cond.L = &c.smu
	c.bw = bufio.NewWriterSize(nc, 32<<10)
	c.br = bufio.NewReaderSize(nc, 32<<10)
	c.fr = http2.NewFramer(c.bw, c.br)
	c.fr.SetReuseFrames()
	c.fr.SetMaxReadFrameSize(h2FrameSize)
	c.heads = newH2HeadDecoder(r, r.cfg.Verbosity >= 2) // -v ≥ 2 dumps response heads

	c.lockWrite()
	_, err = c.bw.WriteString(http2.ClientPreface)
	if err == nil {
		err = c.fr.WriteSettings(
			http2.Setting{ID: http2.SettingEnablePush, Val: 0},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window},
		)
	}
	if err == nil {
		err = c.fr.WriteWindowUpdate(0, h2Window-65535)
	}
	if ferr := c.unlockWrite(); err == nil {
		err = ferr
	}
	if err != nil {
		_ = nc.Close() // the preface could not be sent
		return nil, err
	}
	o.Connect = r.clock()
	h.connsMu.Lock()
	h.conns[c] = struct{}{}
	h.connsMu.Unlock()
	h.readers.Add(1)
	go c.readLoop()
	return c, nil
}

// closeAll closes every connection still open: the run is over.
func (h *h2Transport) closeAll() {
	h.connsMu.Lock()
	defer h.connsMu.Unlock()
	for c := range h.conns {
		c.close()
	}
}

func (c *h2Conn) close() {
	if c.closed.CompareAndSwap(false, true) {
		_ = c.raw.Close() // the reader sees the error and exits
	}
}

// usable reports whether new streams may be opened on c.
func (c *h2Conn) usable() bool {
	c.smu.Lock()
	ok := !c.dead && !c.goaway
	c.smu.Unlock()
	return ok
}

// lockWrite and unlockWrite bracket every use of the Framer's write side.
func (c *h2Conn) lockWrite() {
	c.writers.Add(1)
	c.wmu.Lock()
}

func (c *h2Conn) unlockWrite() error {
	var err error
	if c.writers.Add(-1) == 0 {
		err = c.bw.Flush()
	}
	c.wmu.Unlock()
	return err
}

type h2SendResult int

const (
	h2Sent h2SendResult = iota
	h2SendRetry
	h2SendFailed
)

// send opens a stream for st and writes the request (HEADERS, CONTINUATION
// and DATA frames as needed).
func (c *h2Conn) send(st *h2Stream) h2SendResult {
	h := c.h
	c.smu.Lock()
	if !c.dead && !c.goaway && c.active >= c.maxStreams {
		c.smu.Unlock()
		st.settle() // others' requests must go out while we wait
		c.smu.Lock()
		for !c.dead && !c.goaway && c.active >= c.maxStreams {
			c.cond.Wait()
		}
	}
	if c.dead || c.goaway {
		c.smu.Unlock()
		return h2SendRetry
	}
	c.active++
	st.reset()
	st.conn = c
	st.sendWindow = c.peerWindow
	c.smu.Unlock()

	if st.owes == c {
		st.owes = nil // the reader counted us among the writers already
		c.wmu.Lock()
	} else {
		st.settle()
		c.lockWrite()
	}
	c.smu.Lock()
	if c.dead || c.goaway { // it ended while we waited for the write section
		c.release()
		c.smu.Unlock()
		_ = c.unlockWrite() // nothing of ours was written
		return h2SendRetry
	}
	c.openStream(st)
	c.smu.Unlock()
	err := c.writeHeaders(st.id, !h.hasBody)
	if err == nil && h.hasBody {
		err = c.writeBody(st)
	}
	if ferr := c.unlockWrite(); err == nil {
		err = ferr
	}
	if err == nil {
		return h2Sent
	}
	c.close()
	if c.take(st) {
		st.err = err
		return h2SendFailed
	}
	return h2Sent // the reader has already completed the stream
}

func (c *h2Conn) writeHeaders(id uint32, endStream bool) error {
	block := c.h.block
	first := block
	if len(first) > h2FrameSize {
		first = first[:h2FrameSize]
	}
	block = block[len(first):]
	err := c.fr.WriteHeaders(http2.HeadersFrameParam{
		StreamID:      id,
		BlockFragment: first,
		EndStream:     endStream,
		EndHeaders:    len(block) == 0,
	})
	for err == nil && len(block) > 0 {
		frag := block
		if len(frag) > h2FrameSize {
			frag = frag[:h2FrameSize]
		}
		block = block[len(frag):]
		err = c.fr.WriteContinuation(id, len(block) == 0, frag)
	}
	return err
}

// writeBody sends the body in DATA frames within the flow-control windows;
// called inside a write section, which it leaves while waiting for window.
func (c *h2Conn) writeBody(st *h2Stream) error {
	body := c.h.body
	for len(body) > 0 {
		c.smu.Lock()
		if c.dead || c.streams[st.id] != st {
			// The stream ended (reset, connection lost, or answered before the
			// body was all sent): the reader reports it. A server that answered
			// early without resetting still waits for the rest; cancel it.
			cancel := !c.dead && !st.peerReset
			c.smu.Unlock()
			if cancel {
				return c.fr.WriteRSTStream(st.id, http2.ErrCodeCancel)
			}
			return nil
		}
		if c.sendWindow <= 0 || st.sendWindow <= 0 {
			c.smu.Unlock()
			if err := c.unlockWrite(); err != nil {
				c.lockWrite()
				return err
			}
			c.smu.Lock()
			for !c.dead && (c.sendWindow <= 0 || st.sendWindow <= 0) && c.streams[st.id] == st {
				c.cond.Wait()
			}
			c.smu.Unlock()
			c.lockWrite()
			continue
		}
		n := min(int64(len(body)), h2FrameSize, c.sendWindow, st.sendWindow)
		c.sendWindow -= n
		st.sendWindow -= n
		c.smu.Unlock()
		if err := c.fr.WriteData(st.id, int(n) == len(body), body[:n]); err != nil {
			return err
		}
		body = body[n:]
	}
	return nil
}

// take removes st from c if it is still open there, so that the caller reports
// it; false means the reader has completed it (a value is on st.done).
func (c *h2Conn) take(st *h2Stream) bool {
	c.smu.Lock()
	defer c.smu.Unlock()
	if c.streams[st.id] != st {
		return false
	}
	c.forget(st)
	return true
}

// forget removes st from the open streams; smu held.
func (c *h2Conn) forget(st *h2Stream) {
	delete(c.streams, st.id)
	c.release()
}

// release gives back a stream's place; smu held.
func (c *h2Conn) release() {
	c.active--
	c.cond.Broadcast()
	if c.goaway && c.active == 0 {
		c.close() // drained: nothing more will come on it
	}
}

// complete ends st with its result and wakes its slot; smu held.
func (c *h2Conn) complete(st *h2Stream, class FailClass, err error) {
	st.end = c.r.clock()
	st.class, st.err = class, err
	st.next = h2Completed
	c.forget(st)
	c.writers.Add(1)
	st.owes = c
	st.done <- struct{}{}
}

// ended is called when st's response is complete; smu held. A successful
// response of a slot that allows it is left to finishFast, which runs once smu
// is released.
func (c *h2Conn) ended(st *h2Stream) {
	class, err := st.endClass(c.h.headReq)
	if class != OK || !st.fastOK {
		c.complete(st, class, err)
		return
	}
	st.end = c.r.clock()
	st.class, st.err = OK, nil
	c.forget(st)
	c.fast = append(c.fast, st)
}

// finishFast is the reader's fast path: it records the finished requests of
// c.fast and sends each slot's next request itself, so that the slot's
// goroutine is not woken for every request. Requests it writes are flushed
// when the reader is about to wait for the socket (flushIfIdle).
func (c *h2Conn) finishFast() {
	r, h := c.r, c.h
	for i, st := range c.fast {
		c.fast[i] = nil
		t, o := st.tally, &st.o
		t.TotalRead += st.read
		t.BodyRead += st.body
		h.account(t, &st.h2Resp, o, st.opened)
		next := h2Stop
		if r.finish(t, o) {
			next = h2Continue
			if r.claim(t) {
				next = h2Claimed
				if c.sendNext(st) {
					continue
				}
			}
		}
		st.next = next
		st.done <- struct{}{}
	}
	c.fast = c.fast[:0]
}

// sendNext starts st's next request on c without waiting: false if c cannot
// take a stream now (the slot then issues the request itself).
func (c *h2Conn) sendNext(st *h2Stream) bool {
	now := c.r.clock()
	if !c.batching {
		c.batching = true
		c.writers.Add(1)
	}
	c.wmu.Lock()
	c.smu.Lock()
	if c.dead || c.goaway || c.active >= c.maxStreams {
		c.smu.Unlock()
		c.wmu.Unlock()
		return false
	}
	c.active++
	st.reset()
	st.o = Outcome{Start: now, TCPDone: now, Connect: now}
	st.opened, st.retries = false, 0
	c.openStream(st)
	c.smu.Unlock()
	err := c.writeHeaders(st.id, true)
	c.wmu.Unlock()
	st.tally.activity.Store(now)
	st.o.WriteEnd = c.r.clock()
	if err != nil {
		c.close() // the reader sees it fail and completes the stream
	}
	return true
}

// flushIfIdle flushes the requests the reader wrote once no complete frame is
// left in the read buffer, i.e. before the reader waits for the socket.
func (c *h2Conn) flushIfIdle() {
	if !c.batching {
		return
	}
	if n := c.br.Buffered(); n >= 9 {
		if hdr, err := c.br.Peek(9); err == nil && n >= 9+(int(hdr[0])<<16|int(hdr[1])<<8|int(hdr[2])) {
			return // another frame is ready: more requests may join the batch
		}
	}
	c.batching = false
	if c.writers.Add(-1) == 0 {
		c.wmu.Lock()
		if c.writers.Load() == 0 {
			_ = c.bw.Flush() // an error means the connection failed; the next read reports it
		}
		c.wmu.Unlock()
	}
}

// cancel gives up on an overdue stream (--request-timeout): RST_STREAM(CANCEL).
// False means the response completed meanwhile.
func (c *h2Conn) cancel(st *h2Stream) bool {
	if !c.take(st) {
		return false
	}
	c.lockWrite()
	err := c.fr.WriteRSTStream(st.id, http2.ErrCodeCancel)
	if ferr := c.unlockWrite(); err == nil {
		err = ferr
	}
	if err != nil {
		c.close()
	}
	return true
}

// readLoop reads and dispatches frames until the connection ends.
func (c *h2Conn) readLoop() {
	defer c.h.readers.Done()
	var err error
	for {
		var f http2.Frame
		f, err = c.fr.ReadFrame()
		if err != nil {
			break
		}
		if err = c.handle(f); err != nil {
			break
		}
		if c.r.isStopped() {
			err = errRunStopped
			break
		}
		if len(c.fast) > 0 {
			c.finishFast()
		}
		c.flushIfIdle()
	}
	if len(c.fast) > 0 {
		c.finishFast() // a frame ended streams and then failed
	}
	if c.batching {
		c.batching = false
		c.writers.Add(-1)
	}
	c.shutdown(err)
}

func (c *h2Conn) handle(f http2.Frame) error {
	if !c.sawSettings {
		if _, ok := f.(*http2.SettingsFrame); !ok {
			return errFirstFrame
		}
	}
	switch f := f.(type) {
	case *http2.DataFrame:
		return c.onData(f)
	case *http2.HeadersFrame:
		c.smu.Lock()
		defer c.smu.Unlock()
		st := c.streams[f.StreamID]
		var resp *h2Resp
		if st != nil {
			now := c.r.clock()
			st.tally.activity.Store(now)
			if st.firstByte == 0 {
				st.firstByte = now
			}
			st.read += int64(f.Length)
			resp = &st.h2Resp
		} else if h2Unopened(f.StreamID, c.nextID) {
			return errUnopenedStream
		} else {
			c.owner.Touch(c.r)
		}
		c.cur = st
		c.heads.begin(resp, f.StreamEnded())
		return c.headerFragmentLocked(f.Length, f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.ContinuationFrame:
		c.owner.Touch(c.r) // the server is not silent, whatever the block is for
		c.smu.Lock()
		defer c.smu.Unlock()
		if st := c.cur; st != nil && c.streams[f.StreamID] == st {
			st.read += int64(f.Length)
		}
		return c.headerFragmentLocked(f.Length, f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.RSTStreamFrame:
		c.smu.Lock()
		if st := c.streams[f.StreamID]; st == nil && h2Unopened(f.StreamID, c.nextID) {
			c.smu.Unlock()
			return errUnopenedStream
		} else if st != nil {
			if f.ErrCode == http2.ErrCodeRefusedStream && !st.final {
				st.retry = true
			}
			st.peerReset = true
			c.complete(st, FailException, fmt.Errorf("stream reset by the server: %v", f.ErrCode))
		}
		c.smu.Unlock()
	case *http2.SettingsFrame:
		return c.onSettings(f)
	case *http2.WindowUpdateFrame:
		c.smu.Lock()
		if f.StreamID == 0 {
			c.sendWindow += int64(f.Increment)
		} else if st := c.streams[f.StreamID]; st != nil {
			st.sendWindow += int64(f.Increment)
		}
		c.cond.Broadcast()
		c.smu.Unlock()
	case *http2.PingFrame:
		c.owner.Touch(c.r)
		if !f.IsAck() {
			c.lockReply()
			defer c.wmu.Unlock()
			return c.fr.WritePing(true, f.Data)
		}
	case *http2.GoAwayFrame:
		c.owner.Touch(c.r)
		c.smu.Lock()
		c.goaway = true
		c.lastID = f.LastStreamID
		for id, st := range c.streams {
			if id > f.LastStreamID {
				st.retry = true
				c.complete(st, FailException, errors.New("stream refused by GOAWAY"))
			}
		}
		if c.active == 0 {
			c.close()
		}
		c.cond.Broadcast()
		c.smu.Unlock()
	case *http2.PushPromiseFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol) // we disabled push
	}
	return nil
}

// headerFragmentLocked feeds one fragment of a header block to the
// connection's decoder; smu held.
func (c *h2Conn) headerFragmentLocked(frameLen uint32, frag []byte, endHeaders bool) error {
	if complete, err := c.heads.fragment(frameLen, frag, endHeaders); !complete {
		return err
	}
	st := c.cur
	c.cur = nil
	if c.heads.done() {
		c.ended(st)
	}
	return nil
}

// lockReply enters the write section for a frame of the reader's own (an
// acknowledgement, a WINDOW_UPDATE): the reader keeps a place among the
// writers, so its frames go out with the batch (flushIfIdle), one write for a
// burst of PINGs or SETTINGS. A full buffer is written at once, which blocks
// the reader while the server does not read: gab's output stays bounded.
// The caller unlocks wmu.
func (c *h2Conn) lockReply() {
	if !c.batching {
		c.batching = true
		c.writers.Add(1)
	}
	c.wmu.Lock()
}

func (c *h2Conn) onData(f *http2.DataFrame) error {
	n := f.Length
	c.smu.Lock()
	if st := c.streams[f.StreamID]; st == nil && h2Unopened(f.StreamID, c.nextID) {
		c.smu.Unlock()
		return errUnopenedStream
	} else if st == nil {
		c.owner.Touch(c.r)
	} else {
		now := c.r.clock()
		st.tally.activity.Store(now)
		if st.firstByte == 0 {
			st.firstByte = now
		}
		st.read += int64(n)
		st.body += int64(len(f.Data()))
		if f.StreamEnded() {
			c.ended(st)
			n += st.unacked // nothing to give back to a closed stream
			st.unacked = 0
		} else {
			st.unacked += n
		}
	}
	var streamRefill uint32
	var id uint32
	if st := c.streams[f.StreamID]; st != nil && st.unacked >= h2WindowRefill {
		streamRefill, id, st.unacked = st.unacked, st.id, 0
	}
	c.smu.Unlock()
	c.connUnacked += f.Length
	if c.connUnacked < h2WindowRefill && streamRefill == 0 {
		return nil
	}
	c.lockWrite()
	var err error
	if c.connUnacked >= h2WindowRefill {
		err = c.fr.WriteWindowUpdate(0, c.connUnacked)
		c.connUnacked = 0
	}
	if err == nil && streamRefill > 0 {
		err = c.fr.WriteWindowUpdate(id, streamRefill)
	}
	if ferr := c.unlockWrite(); err == nil {
		err = ferr
	}
	return err
}

func (c *h2Conn) onSettings(f *http2.SettingsFrame) error {
	c.owner.Touch(c.r)
	if f.IsAck() {
		return nil
	}
	c.sawSettings = true
	c.smu.Lock()
	err := f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingMaxConcurrentStreams:
			c.maxStreams = int(s.Val)
		case http2.SettingInitialWindowSize:
			if s.Val > h2MaxStreamID {
				return http2.ConnectionError(http2.ErrCodeFlowControl)
			}
			delta := int64(s.Val) - c.peerWindow
			c.peerWindow = int64(s.Val)
			for _, st := range c.streams {
				st.sendWindow += delta
			}
		}
		return nil
	})
	c.cond.Broadcast()
	c.smu.Unlock()
	if err != nil {
		return err
	}
	c.lockReply()
	defer c.wmu.Unlock()
	return c.fr.WriteSettingsAck()
}

// shutdown ends the connection after its reader stopped: every open stream is
// completed (re-issued if it was not answered at all, abandoned if the run is
// stopping, a receive failure otherwise).
func (c *h2Conn) shutdown(err error) {
	c.close()
	r := c.r
	stopping := r.isStopped()
	if !c.sawSettings && !stopping && !errors.Is(err, net.ErrClosed) && isH2ProtocolError(err) {
		r.stop(EndFatal, errNotH2("no HTTP/2 SETTINGS from the server: "+err.Error()))
		stopping = true
	}
	c.smu.Lock()
	c.dead = true
	for _, st := range c.streams {
		st.retry = false // the server may have processed it
		c.complete(st, h2LostClass(stopping || r.isStopped(), &st.h2Resp, c.sawSettings, err), err)
	}
	c.cond.Broadcast()
	c.smu.Unlock()
	c.h.connsMu.Lock()
	delete(c.h.conns, c)
	c.h.connsMu.Unlock()
}

// openStream gives st the connection's next stream ID; past the last ID the
// connection takes no new streams, as if it had received a GOAWAY. The caller
// holds c.smu.
func (c *h2Conn) openStream(st *h2Stream) {
	st.id = c.nextID
	c.nextID += 2
	c.streams[st.id] = st
	if c.nextID > h2MaxStreamID {
		c.goaway = true
		c.lastID = h2MaxStreamID
	}
}
