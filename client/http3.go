package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/quicvarint"
)

// The --http3 transport: HTTP/3 (RFC 9114) over QUIC (RFC 9000), with
// quic-go carrying the QUIC connections and gab the HTTP/3 frames on them
// (http3rules.go). -c QUIC connections are opened and kept explicitly, each
// on its own UDP socket: the server sees -c client addresses, as it sees -c
// TCP connections for HTTP/1 and HTTP/2 (a server that spreads connections
// over its workers by address, SO_REUSEPORT, spreads gab's too), and each
// socket has its own reader goroutine in quic-go instead of one
// demultiplexing every connection's packets. Each connection carries
// --streams request streams at once.
//
// Slot i runs its requests on connection i % c. A slot opens a stream,
// writes the pre-encoded request (one HEADERS frame, and one DATA frame with
// -p/-u) with FIN, and reads the response into its own fixed buffer until
// the server's FIN: no goroutine, timer or allocation of gab's per request
// (quic-go allocates its stream state). The requests a connection's slots
// have ready at once are written together (send), so that quic-go packs
// them into one packet. The server's unidirectional streams
// (control, QPACK encoder and decoder) are read by a goroutine each; GOAWAY
// on the control stream stops new streams on the connection, which is
// replaced once its requests are done.
//
// A request is sent again only when the server provably did not process it
// (the stream reset with H3_REQUEST_REJECTED before any response, or a
// stream ID at or above a GOAWAY's), at most h2MaxRetries times. A
// connection that ends (CONNECTION_CLOSE, stateless reset, idle timeout) is
// replaced; its unanswered requests are Receive failures, counted whatever
// -r says, or Exceptions when gab closed it because the server broke the
// protocol. A handshake that fails (timeout, version negotiation, TLS) is a
// Connect failure, issued again, as a TCP connect failure is; a server whose
// TLS does not offer h3 in ALPN ends the run before any request.
//
// Byte counts: "Total transferred" (TotalRead) is every byte received on the
// request's stream (the HTTP/3 frames: HEADERS with its QPACK section, DATA
// with the body, frame headers included), i.e. the QUIC stream payload;
// "HTML transferred" (BodyRead) the DATA payload; TotalSent the request's
// frames.

// h3ReadBuffer is each slot's read buffer.
const h3ReadBuffer = 16 << 10

// h3Transport carries requests over HTTP/3.
type h3Transport struct {
	cfg      *Config
	tlsConf  *tls.Config
	quicConf *quic.Config
	request  []byte    // the request's frames, the same for every request
	urls     *h3URLs   // --urls: each request from the next URL (nil: request)
	pre      *prebuilt // --targets: each target's request, built once
	headReq  bool      // the method is HEAD: a content-length comes without a body
	ramp     tlsRamp

	d       *dialer
	holders []h3Holder // one per -c

	connsMu sync.Mutex
	conns   map[*h3Conn]struct{} // open connections, for the final close
	connWG  sync.WaitGroup       // each connection's stream reader
	working atomic.Int32         // slots inside work()

	// opened counts the QUIC connections the run set up, mostStreams the
	// most request streams open at once on one of them (tests read both).
	opened      atomic.Int64
	mostStreams atomic.Int32

	statsMu sync.Mutex
	stats   QUICStats // the ended connections' counters

	// noEarly: a server rejected 0-RTT data (--early-data), so new
	// connections make a full handshake before their requests.
	noEarly atomic.Bool
}

// QUICStats are quic-go's counters (quic.ConnectionStats) summed over a
// run's QUIC connections as each ends. quic-go sends a lost packet's frames
// again in new packets, so PacketsLost is also what was retransmitted.
type QUICStats struct {
	Connections                  int
	PacketsSent, PacketsReceived uint64
	PacketsLost                  uint64
	BytesSent, BytesReceived     uint64
	BytesLost                    uint64
	MinRTT                       time.Duration // the least of the connections'
	// EarlyData counts the connections whose 0-RTT data (--early-data) the
	// server accepted.
	EarlyData int
}

// add sums one ended connection's counters into s.
func (s *QUICStats) add(c quic.ConnectionStats) {
	if s.Connections == 0 || c.MinRTT > 0 && c.MinRTT < s.MinRTT {
		s.MinRTT = c.MinRTT
	}
	s.Connections++
	s.PacketsSent += c.PacketsSent
	s.PacketsReceived += c.PacketsReceived
	s.PacketsLost += c.PacketsLost
	s.BytesSent += c.BytesSent
	s.BytesReceived += c.BytesReceived
	s.BytesLost += c.BytesLost
}

// quicStats is the run's QUIC counters, once every connection has ended
// (the run's result is gathered after its slots, the last of which waits for
// the connections).
func (h *h3Transport) quicStats() *QUICStats {
	h.statsMu.Lock()
	defer h.statsMu.Unlock()
	st := h.stats
	return &st
}

// h3Holder is the connection that slots i with i % c == k share.
type h3Holder = connHolder[*h3Conn]

func newHTTP3(cfg *Config) (transport, error) {
	if cfg.ProxyHost != "" || cfg.Proxy {
		return nil, errors.New("gab: -X (proxy) cannot be used with --http3")
	}
	if !cfg.Target.TLS {
		return nil, errors.New("gab: --http3 needs an https:// URL")
	}
	base, err := buildTLSConfig(cfg)
	if err != nil {
		return nil, err
	}
	tc := withALPN(base, "h3")
	tc.MinVersion, tc.MaxVersion = tls.VersionTLS13, tls.VersionTLS13 // QUIC is TLS 1.3 only
	if tc.ClientSessionCache != nil {
		tc.ClientSessionCache = h3SessionCache{tc.ClientSessionCache}
	}
	request, err := h3Request(cfg)
	if err != nil {
		return nil, err
	}
	// gab says itself when the UDP buffers are too small (prepare).
	_ = os.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true")
	var urls *h3URLs
	var pre *prebuilt
	switch {
	case cfg.URLs != nil && cfg.URLs.Targets():
		if pre, err = newPrebuilt(cfg, h3Request); err != nil {
			return nil, err
		}
	case cfg.URLs != nil:
		if urls, err = newH3URLs(cfg); err != nil {
			return nil, err
		}
	}
	return &h3Transport{
		urls:    urls,
		pre:     pre,
		cfg:     cfg,
		tlsConf: tc,
		quicConf: &quic.Config{
			MaxIncomingStreams:    -1, // the server may open no request streams
			MaxIncomingUniStreams: h3MaxUniStreams,
			KeepAlivePeriod:       10 * time.Second, // an idle connection (a slow --rate) stays open
			// ab's -s bounds each connect too; 0 is quic-go's default (5 s).
			HandshakeIdleTimeout: max(cfg.Timeout, 0),
		},
		request: request,
		headReq: cfg.Spec.Method == "HEAD",
		ramp:    newTLSRamp(),
		conns:   map[*h3Conn]struct{}{},
	}, nil
}

func (h *h3Transport) prepare(ctx context.Context, r *run) error {
	d, err := resolve(ctx, h.cfg)
	if err != nil {
		return err
	}
	h.d = d
	h.holders = make([]h3Holder, h.cfg.Concurrency)
	r.protocol = "h3"
	if !h.cfg.KeepAlive {
		r.events.Notice("--http3 keeps its QUIC connections open for the whole run (-k implied)")
	}
	if note := udpBufferNote(); note != "" {
		r.events.Notice(note)
	}
	return nil
}

func (h *h3Transport) slots() int { return h.cfg.Concurrency * h.cfg.Streams }

// h3Slot is one slot's state, reused for each of its requests.
type h3Slot struct {
	buf        []byte
	resp       h3Resp
	fields     *h3Fields
	o          outcome
	registered *h3Conn
	pos        int // the slot's place among its connection's streams (h3Conn.inflight)

	// The request's stream as send left it (written by the connection's
	// leader while the slot waits on sent).
	sent  chan struct{}
	str   *quic.Stream
	id    int64 // str's ID, -1 without one
	stage h3Stage
	err   error
	// req is the request in flight's bytes: h3Transport.request, or with
	// --urls assembled in reqBuf.
	req, reqBuf []byte
	head        bool // the request's method is HEAD
}

func (h *h3Transport) work(r *run, slot int, t *tally) {
	h.working.Add(1)
	defer func() {
		if h.working.Add(-1) == 0 {
			h.closeAll()
			h.connWG.Wait()
		}
	}()
	s := &h3Slot{buf: make([]byte, h3ReadBuffer), fields: newH3Fields(r), pos: slot / len(h.holders), sent: make(chan struct{}, 1)}
	hd := &h.holders[slot%len(h.holders)]
	for r.claim(t) {
		if !h.issue(r, hd, s, t) {
			return
		}
	}
}

// h3Result is how one attempt on a stream ended.
type h3Result uint8

const (
	h3Done  h3Result = iota // s.o is settled: report it
	h3Retry                 // not processed by the server: send it again
)

// issue runs one request to its end and reports it; false when the slot
// should stop.
func (h *h3Transport) issue(r *run, hd *h3Holder, s *h3Slot, t *tally) bool {
	now := r.clock()
	o := &s.o
	*o = outcome{Start: now, TCPDone: now, Connect: now}
	s.req, s.head = h.request, h.headReq
	if h.pre != nil { // --targets: the next target's request
		i := h.pre.next(t)
		s.req, s.head, o.entry = h.pre.reqs[i], h.pre.specs[i].Method == "HEAD", int32(i+1)
	} else if h.urls != nil { // --urls: the next URL's request, in the slot's buffer
		if s.reqBuf == nil {
			s.reqBuf = make([]byte, 0, h.urls.maxLen())
		}
		var i int
		s.reqBuf, i = h.urls.request(s.reqBuf, t)
		s.req, o.entry = s.reqBuf, int32(i+1)
	}
	retries := 0
	for {
		c, opened, err := h.connection(r, hd, t, o)
		if err != nil {
			o.End, o.Err, o.Class = r.clock(), err, r.openFailClass(err)
			o.FirstByte, o.WriteEnd = o.End, o.End
			return r.finish(t, o)
		}
		if c != s.registered {
			if !t.setConn(r, c) {
				o.Class = failAbandoned
				return r.finish(t, o)
			}
			s.registered = c
		}
		t.touch(r)
		if h.roundTrip(r, c, s, t) == h3Retry {
			t.TotalRead += s.resp.read // what the refused stream brought
			if !h2Resend(r, o, &retries, r.clock()) {
				return r.finish(t, o)
			}
			t.Retries++
			continue
		}
		o.KeptAlive = !opened
		return r.finish(t, o)
	}
}

// roundTrip sends the request on a new stream of c and reads its response,
// settling s.o unless it returns h3Retry.
func (h *h3Transport) roundTrip(r *run, c *h3Conn, s *h3Slot, t *tally) h3Result {
	c.active.Add(1)
	defer c.release()
	s.resp.reset()
	c.send(s)
	str := s.str
	if str != nil {
		defer c.ended(s)
	}
	switch s.stage {
	case h3NotOpened:
		// Nothing was sent: the connection ended, the server sent GOAWAY
		// or the run stopped while the stream waited for stream credit.
		return h.lost(r, t, c, s, -1, s.err)
	case h3Refused:
		return h.lost(r, t, c, s, -1, errGoAwayRefused)
	case h3WriteFailed:
		if h.lost(r, t, c, s, s.id, s.err) == h3Retry {
			return h3Retry
		}
		// A write cut short because gab closed the connection for the
		// server's breach of the protocol is an Exception, as the requests
		// in flight on it are (lost classed it so); any other failed write
		// is a write error, as ab's.
		if s.o.Class != failAbandoned && !gabClosedForBreach(s.err) {
			s.o.Class = failWrite
		}
		return h3Done
	}
	t.TotalSent += int64(len(s.req))
	begun := false // the final head is read, and c.inflight says so
	for {
		n, err := str.Read(s.buf)
		if n > 0 {
			now := r.clock()
			t.touch(r)
			if perr := s.resp.take(r, s.fields, now, s.buf[:n]); perr != nil {
				c.fault(str, perr)
				h.settle(r, t, s, failException, perr)
				return h3Done
			}
			if !begun && s.resp.final {
				begun = true
				c.inflight[s.pos].begun.Store(true)
			}
		}
		switch {
		case err == io.EOF:
			class, cerr := s.resp.ended(s.head)
			if cerr == errH3Truncated {
				c.fault(str, errH3Truncated)
			}
			h.settle(r, t, s, class, cerr)
			return h3Done
		case err != nil:
			h3Cancel(str, http3.ErrCodeRequestCanceled)
			return h.lost(r, t, c, s, s.id, err)
		case r.isStopped():
			h3Cancel(str, http3.ErrCodeRequestCanceled)
			h.settle(r, t, s, failAbandoned, errRunStopped)
			return h3Done
		}
	}
}

// h3Stage is how far send got with a slot's request.
type h3Stage uint8

const (
	h3Sent        h3Stage = iota // written, FIN included (s.str)
	h3NotOpened                  // no stream could be opened (s.err)
	h3Refused                    // the stream is at or above the server's GOAWAY: nothing sent
	h3WriteFailed                // the write failed (s.err; s.str cancelled)
)

// send writes s's request on a new stream of c. The requests of the
// connection's slots that are ready at the same time go out together: the
// first slot to send (the leader) yields once, so that the slots the same
// packets woke can queue theirs, then writes every queued request back to
// back and hands each slot its stream. quic-go then packs them into one
// packet (a slot that wrote alone as soon as it could would have quic-go's
// send loop, which its write wakes, send a packet per request: a system
// call each).
func (c *h3Conn) send(s *h3Slot) {
	if c.h.cfg.Streams == 1 {
		c.write(s) // a connection's requests go one at a time
		return
	}
	c.wmu.Lock()
	if c.writing {
		c.pending = append(c.pending, s)
		c.wmu.Unlock()
		<-s.sent
		return
	}
	c.writing = true
	c.wmu.Unlock()
	runtime.Gosched()
	c.write(s)
	for {
		c.wmu.Lock()
		batch := c.pending
		c.pending, c.spare = c.spare[:0], batch
		if len(batch) == 0 {
			c.writing = false
			c.wmu.Unlock()
			return
		}
		c.wmu.Unlock()
		for _, p := range batch {
			c.write(p)
			p.sent <- struct{}{}
		}
	}
}

// write opens a stream for s and writes its request with FIN (the slot
// itself or its connection's leader, while s waits).
func (c *h3Conn) write(s *h3Slot) {
	s.str, s.err, s.id = nil, nil, -1
	str, err := c.qc.OpenStreamSync(c)
	if err != nil {
		s.stage, s.err = h3NotOpened, err
		return
	}
	s.str, s.id = str, int64(str.StreamID())
	c.inflight[s.pos].begun.Store(false)
	c.inflight[s.pos].str.Store(str)
	if open := c.streams.Add(1); open > c.h.mostStreams.Load() {
		c.h.noteStreams(open)
	}
	if g := c.goaway.Load(); g >= 0 && s.id >= g {
		h3Cancel(str, http3.ErrCodeRequestCanceled)
		s.stage = h3Refused
		return
	}
	if c.h.cfg.RequestTimeout > 0 {
		_ = str.SetDeadline(time.Now().Add(c.h.cfg.RequestTimeout)) // an error means the stream is gone; Read reports it
	}
	_, err = str.Write(s.req)
	if err == nil {
		err = str.Close()
	}
	if err != nil {
		if cause := context.Cause(str.Context()); cause != nil {
			err = cause // Close says only that the stream was cancelled
		}
	}
	if err != nil && !h3StoppedAnswered(err) {
		h3Cancel(str, http3.ErrCodeRequestCanceled)
		s.stage, s.err = h3WriteFailed, err
		return
	}
	s.stage = h3Sent
	s.o.WriteEnd = c.r.clock()
}

// h3StoppedAnswered reports whether a write failed because the server
// stopped reading with H3_NO_ERROR: it has answered already, and its response
// is read. (A function of its own, so that the error path's variable is not
// allocated for every request.)
func h3StoppedAnswered(err error) bool {
	var se *quic.StreamError
	return errors.As(err, &se) && se.Remote && se.ErrorCode == quic.StreamErrorCode(http3.ErrCodeNoError)
}

// ended ends s's stream's place on c.
func (c *h3Conn) ended(s *h3Slot) {
	c.inflight[s.pos].str.Store(nil)
	c.streams.Add(-1)
}

// noteStreams raises mostStreams to open.
func (h *h3Transport) noteStreams(open int32) {
	for {
		most := h.mostStreams.Load()
		if open <= most || h.mostStreams.CompareAndSwap(most, open) {
			return
		}
	}
}

// h3Cancel abandons both directions of a request stream with code.
func h3Cancel(str *quic.Stream, code http3.ErrCode) {
	str.CancelWrite(quic.StreamErrorCode(code))
	str.CancelRead(quic.StreamErrorCode(code))
}

// settle fills in the outcome of a request whose stream ended.
func (h *h3Transport) settle(r *run, t *tally, s *h3Slot, class failClass, err error) {
	o, resp := &s.o, &s.resp
	t.TotalRead += resp.read
	t.BodyRead += resp.body
	o.End = r.clock()
	o.Status, o.Body, o.Class, o.Err = resp.status, resp.body, class, err
	o.FirstByte = resp.firstByte
	if o.FirstByte == 0 {
		o.FirstByte = o.End
	}
}

// lost settles a request whose stream failed with err (id is the stream's,
// -1 if the request was never sent): h3Retry if the server provably did
// not process it (issue counts what its stream brought), else its failure
// class in s.o.
func (h *h3Transport) lost(r *run, t *tally, c *h3Conn, s *h3Slot, id int64, err error) h3Result {
	var se *quic.StreamError
	g := c.goaway.Load()
	switch {
	case r.isStopped():
		h.settle(r, t, s, failAbandoned, err)
	case errors.Is(err, quic.Err0RTTRejected):
		c.rejected()
		return h3Retry // the server discarded the 0-RTT data
	case errors.As(err, &se) && se.Remote:
		if se.ErrorCode == quic.StreamErrorCode(http3.ErrCodeRequestRejected) && !s.resp.final {
			return h3Retry
		}
		h.settle(r, t, s, failException, errors.New(h3StreamErrorText(se.ErrorCode)))
	case errors.Is(err, os.ErrDeadlineExceeded):
		h.settle(r, t, s, failException, fmt.Errorf("no response within --request-timeout %v", h.cfg.RequestTimeout))
	case id < 0 || g >= 0 && id >= g && !s.resp.final:
		if id < 0 && !errors.Is(err, errGoAwayRefused) {
			c.shut(quic.ApplicationErrorCode(http3.ErrCodeNoError)) // no stream opens on it: it has ended
		}
		return h3Retry // never sent, or at or above the server's GOAWAY
	case g >= 0 && id >= g:
		// The GOAWAY says the server did not process the request, but its
		// response head had come: it did. The request is not sent again;
		// its response, cut short (goAway cancelled the stream before the
		// slot had read the head), is a failure of the server's making.
		h.settle(r, t, s, failException, errH3GoAwayAfterHead)
	default:
		if cause := context.Cause(c.qc.Context()); cause != nil {
			err = cause // the connection's end, not what it did to this stream
		}
		class, lerr := h3LostClass(err)
		h.settle(r, t, s, class, lerr)
	}
	return h3Done
}

// connection returns the holder's live connection, opening a new one if there
// is none; opened reports that this call opened it (o.Connect is then set).
func (h *h3Transport) connection(r *run, hd *h3Holder, t *tally, o *outcome) (*h3Conn, bool, error) {
	return hd.get(r, h.ramp, o, func() (*h3Conn, error) {
		c, err := h.open(r, t)
		if err == nil {
			o.Connect = r.clock()
		}
		return c, err
	})
}

// h3Conn is one QUIC connection and the HTTP/3 state gab keeps for it.
type h3Conn struct {
	h      *h3Transport
	r      *run
	qc     *quic.Conn
	tr     *quic.Transport
	udp    *net.UDPConn
	owner  *tally        // touched on connection-level activity (-s)
	goaway atomic.Int64  // the stream ID of the server's GOAWAY, -1 before one
	away   chan struct{} // closed once the server's first GOAWAY is taken (goAway)
	// inflight holds each of the connection's slots' stream in flight, so
	// that a GOAWAY can end those the server did not process.
	inflight []h3Inflight
	active   atomic.Int32 // requests on the connection

	// The slots' requests waiting for the leader's write (send).
	wmu            sync.Mutex
	writing        bool
	pending, spare []*h3Slot

	streams atomic.Int32 // request streams open on it
	closed  atomic.Bool  // gab closed it
	unis    sync.WaitGroup
	kinds   [4]atomic.Bool // the server's control and QPACK streams seen (by stream type)
}

// open sets up a QUIC connection (its own UDP socket, the handshake), opens
// gab's control stream and starts the reader of the server's streams.
func (h *h3Transport) open(r *run, t *tally) (*h3Conn, error) {
	ctx := stopContext{r}
	for {
		idx := h.d.current.Load()
		c, err := h.dial(ctx, r, t)
		if err == nil {
			return c, nil
		}
		if h.d.fallback(idx, ctx.Err() != nil) {
			continue
		}
		return nil, err
	}
}

func (h *h3Transport) dial(ctx context.Context, r *run, t *tally) (*h3Conn, error) {
	ip := h.d.addrs[int(h.d.current.Load())%len(h.d.addrs)]
	raddr := &net.UDPAddr{IP: ip.IP, Zone: ip.Zone, Port: h.d.port}
	network := "udp6"
	if ip.IP.To4() != nil {
		network = "udp4"
	}
	var laddr *net.UDPAddr
	if l := h.d.local; l != nil {
		laddr = &net.UDPAddr{IP: l.IP, Zone: l.Zone}
	}
	udp, err := net.ListenUDP(network, laddr)
	if err != nil {
		return nil, err
	}
	tr := &quic.Transport{Conn: udp}
	early := h.cfg.TLS.EarlyData && !h.noEarly.Load()
	var qc *quic.Conn
	if early {
		// Returns before the handshake completes when the session cache
		// holds a ticket that allows 0-RTT: the requests go at once.
		qc, err = tr.DialEarly(ctx, raddr, h.tlsConf, h.quicConf)
	} else {
		qc, err = tr.Dial(ctx, raddr, h.tlsConf, h.quicConf)
	}
	if err != nil {
		_ = tr.Close() // the handshake failed; nothing to keep
		_ = udp.Close()
		if fe := h3NotH3(err); fe != nil {
			r.stop(EndFatal, fe)
		} else if !r.isStopped() && h3IsTLSError(err) {
			r.events.TLSHandshakeFailed(handshakeError(err))
		}
		return nil, h3ConnLost(err)
	}
	h.d.markWorked(nil, 0) // a QUIC connection's opening includes the server's handshake: not ConnOpening's
	h.opened.Add(1)
	if !early {
		cs := qc.ConnectionState().TLS
		r.quicTLSDone(&cs)
	}
	c := &h3Conn{h: h, r: r, qc: qc, tr: tr, udp: udp, owner: t, away: make(chan struct{}),
		inflight: make([]h3Inflight, h.cfg.Streams)}
	c.goaway.Store(-1)
	r.conns.Add(1)
	ctrl, err := qc.OpenUniStream()
	if err == nil {
		_, err = ctrl.Write(h3ControlPreface)
	}
	if err != nil {
		c.shut(quic.ApplicationErrorCode(http3.ErrCodeInternalError))
		c.cleanup()
		return nil, h3ConnLost(err)
	}
	h.connsMu.Lock()
	h.conns[c] = struct{}{}
	h.connsMu.Unlock()
	h.connWG.Add(1)
	go c.acceptUni()
	return c, nil
}

// h3SessionCache is --tls-resume's session cache for QUIC: each connection
// that resumes a session gets its own copy of it, since quic-go writes to
// the session state it resumes with (connections that resume the same
// session at once must not share one).
type h3SessionCache struct{ tls.ClientSessionCache }

func (c h3SessionCache) Get(key string) (*tls.ClientSessionState, bool) {
	cs, ok := c.ClientSessionCache.Get(key)
	if !ok || cs == nil {
		return cs, ok
	}
	ticket, state, err := cs.ResumptionState()
	if err != nil || state == nil {
		return nil, false
	}
	b, err := state.Bytes()
	if err != nil {
		return nil, false
	}
	if state, err = tls.ParseSessionState(b); err != nil {
		return nil, false
	}
	if cs, err = tls.NewResumptionState(ticket, state); err != nil {
		return nil, false
	}
	return cs, true
}

// quicTLSDone notes a QUIC connection's handshake as tlsDone notes a TLS
// connection's: the first fills Result.TLS; -v ≥ 2 reports each.
func (r *run) quicTLSDone(cs *tls.ConnectionState) {
	if r.tlsInfo.Load() == nil {
		r.setTLS(tlsInfoOf(cs))
	}
	if r.cfg.Verbosity >= 2 {
		r.events.TLSHandshake(cs)
	}
}

// h3Inflight is a slot's stream in flight on a connection (nil between
// requests) and whether its final response head has been read.
type h3Inflight struct {
	str   atomic.Pointer[quic.Stream]
	begun atomic.Bool
}

// goAway takes the server's GOAWAY (RFC 9114 §5.2): no new streams, and
// the requests in flight at or above id, which the server says it did not
// process, end now (their slots send them again on a new connection); the
// connection closes when its last request is done. A stream whose response
// proves otherwise is left to end as it ends: one whose final head the slot
// has read, or one the server has finished (h3Finished: its response, FIN
// included, is on its way, possibly in quic-go's buffer still, which
// cancelling the stream would discard).
func (c *h3Conn) goAway(id int64) {
	first := c.goaway.Swap(id) < 0
	for i := range c.inflight {
		f := &c.inflight[i]
		if str := f.str.Load(); str != nil && int64(str.StreamID()) >= id && !f.begun.Load() && !h3Finished(str) {
			str.CancelRead(quic.StreamErrorCode(http3.ErrCodeRequestCanceled))
		}
	}
	if first {
		close(c.away) // once the streams it refuses are cancelled
	}
	if c.active.Load() == 0 {
		c.shut(quic.ApplicationErrorCode(http3.ErrCodeNoError))
	}
}

// h3Finished reports whether the server has finished str's response side:
// a FIN (or a RESET_STREAM) has told quic-go the stream's final size. (Only
// at a GOAWAY: the probe costs an allocation.) A final size that becomes
// known meanwhile may be missed: the stream is then treated as unfinished.
func h3Finished(str *quic.Stream) bool {
	known := new(atomic.Bool)
	str.SetReceiveFinalSizeCallback(func(int64) { known.Store(true) }) // called at once if the size is known
	str.SetReceiveFinalSizeCallback(nil)
	return known.Load()
}

// c is the context of the streams gab opens on the connection: done when
// the server has sent GOAWAY or the run stops (the connection then closes).
func (c *h3Conn) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *h3Conn) Value(any) any               { return nil }
func (c *h3Conn) Done() <-chan struct{}       { return c.away }
func (c *h3Conn) Err() error {
	select {
	case <-c.away:
		return errGoAwayRefused
	default:
		return nil
	}
}

// Close ends the connection: the run is stopping (tally.setConn).
func (c *h3Conn) Close() error {
	c.shut(quic.ApplicationErrorCode(http3.ErrCodeNoError))
	return nil
}

// shut closes the QUIC connection with code (once).
func (c *h3Conn) shut(code quic.ApplicationErrorCode) {
	if c.closed.CompareAndSwap(false, true) {
		c.r.conns.Add(-1)
		_ = c.qc.CloseWithError(code, "") // an error means it is closed already
	}
}

// fault ends what a protocol error spoiled: the stream (cancelled with the
// error's code) or the whole connection.
func (c *h3Conn) fault(str *quic.Stream, e *h3Error) {
	h3Cancel(str, e.code)
	if e.conn {
		c.shut(quic.ApplicationErrorCode(e.code))
	}
}

// usable reports whether new requests may go on c.
func (c *h3Conn) usable() bool {
	return c.qc.Context().Err() == nil && c.goaway.Load() < 0 && !c.closed.Load()
}

// release ends a request on c; a connection the server is shutting down
// (GOAWAY) is closed when its last request is done.
func (c *h3Conn) release() {
	if c.active.Add(-1) == 0 && c.goaway.Load() >= 0 {
		c.shut(quic.ApplicationErrorCode(http3.ErrCodeNoError))
	}
}

// closeAll closes every connection still open: the run is over.
func (h *h3Transport) closeAll() {
	h.connsMu.Lock()
	conns := make([]*h3Conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.connsMu.Unlock()
	for _, c := range conns {
		c.shut(quic.ApplicationErrorCode(http3.ErrCodeNoError))
	}
}

// cleanup releases the connection's sockets once it has ended.
func (c *h3Conn) cleanup() {
	if c.closed.CompareAndSwap(false, true) {
		c.r.conns.Add(-1) // the peer (or an idle timeout) ended it, not shut
	}
	_ = c.tr.Close() // errors: already closed
	_ = c.udp.Close()
	c.h.connsMu.Lock()
	delete(c.h.conns, c)
	c.h.connsMu.Unlock()
}

// acceptUni reads the server's unidirectional streams until the
// connection ends, then releases the connection's sockets.
func (c *h3Conn) acceptUni() {
	defer c.h.connWG.Done()
	select { // an --early-data connection's handshake may still be under way
	case <-c.qc.HandshakeComplete():
		if c.h.cfg.TLS.EarlyData {
			cs := c.qc.ConnectionState().TLS
			c.r.quicTLSDone(&cs)
		}
	case <-c.qc.Context().Done():
	}
	for {
		str, err := c.qc.AcceptUniStream(context.Background())
		if err != nil {
			if errors.Is(err, quic.Err0RTTRejected) {
				c.rejected()
			}
			break // the connection has ended, or is given up
		}
		c.unis.Add(1)
		go c.uni(str)
	}
	c.unis.Wait()
	st := c.qc.ConnectionStats()
	early := c.qc.ConnectionState().Used0RTT
	c.h.statsMu.Lock()
	c.h.stats.add(st)
	if early {
		c.h.stats.EarlyData++
	}
	c.h.statsMu.Unlock()
	c.cleanup()
}

// uni reads one of the server's unidirectional streams by its type (RFC
// 9114 §6.2): the control stream, QPACK's encoder and decoder streams; a
// push stream is an error (gab allows no push); others are refused.
func (c *h3Conn) uni(str *quic.ReceiveStream) {
	defer c.unis.Done()
	kind, err := quicvarint.Read(quicvarint.NewReader(str))
	if err != nil {
		str.CancelRead(quic.StreamErrorCode(http3.ErrCodeRequestIncomplete))
		return
	}
	switch kind {
	case h3StreamControl, h3StreamQPACKEncoder, h3StreamQPACKDecoder:
		if c.kinds[kind].Swap(true) {
			c.fail(errH3DuplicateStream)
			return
		}
	case h3StreamPush:
		c.fail(errH3PushStream)
		return
	default:
		str.CancelRead(quic.StreamErrorCode(http3.ErrCodeStreamCreationError))
		return
	}
	var e *h3Error
	switch kind {
	case h3StreamControl:
		e = c.control(str)
	case h3StreamQPACKEncoder:
		e = c.qpackEncoder(str)
	default:
		e = c.discard(str)
	}
	if e != nil {
		c.fail(e)
	}
}

// rejected gives up a connection whose 0-RTT data the server rejected: its
// requests were not processed and go again, on connections that make a
// full handshake first.
func (c *h3Conn) rejected() {
	c.h.noEarly.Store(true)
	c.shut(quic.ApplicationErrorCode(http3.ErrCodeNoError))
}

// fail closes the connection for a protocol error on the server's streams.
func (c *h3Conn) fail(e *h3Error) {
	if c.qc.Context().Err() == nil {
		c.shut(quic.ApplicationErrorCode(e.code))
	}
}

// criticalEnded is the error for one of the server's critical streams
// (control, QPACK) that ended: none while the connection or the run is
// ending, else H3_CLOSED_CRITICAL_STREAM.
func (c *h3Conn) criticalEnded() *h3Error {
	if c.qc.Context().Err() != nil || c.r.isStopped() {
		return nil
	}
	return errH3ControlClosed
}

// control reads the server's control stream (RFC 9114 §6.2.1, §7.2): a
// SETTINGS frame first, then GOAWAY frames; frames of unknown types are
// skipped, every frame is activity for -s, and the stream may not end
// while the connection lives.
func (c *h3Conn) control(str *quic.ReceiveStream) *h3Error {
	br := &h3ByteReader{r: str}
	var buf []byte
	first := true
	for {
		if c.r.isStopped() {
			return nil
		}
		typ, err := quicvarint.Read(br)
		var n uint64
		if err == nil {
			n, err = quicvarint.Read(br)
		}
		if err != nil {
			return c.criticalEnded()
		}
		c.owner.touch(c.r)
		if first != (typ == h3FrameSettings) {
			if first {
				return errH3NoSettings
			}
			return errH3SecondSettings
		}
		first = false
		switch typ {
		case h3FrameSettings, h3FrameGoAway:
			if n > h3MaxControlFrame {
				return errH3ControlTooLarge
			}
			buf = buf[:0]
			buf = append(buf, make([]byte, n)...)
			if _, err := io.ReadFull(br, buf); err != nil {
				return c.criticalEnded()
			}
			if typ == h3FrameSettings {
				if e := h3Settings(buf); e != nil {
					return e
				}
				continue
			}
			id, e := h3GoAway(buf, c.goaway.Load())
			if e != nil {
				return e
			}
			c.goAway(id)
		case h3FrameData, h3FrameHeaders, h3FramePushPromise, h3FrameMaxPushID, 0x2, 0x6, 0x8, 0x9:
			return errH3ControlFrame
		case h3FrameCancelPush:
			return errH3CancelPush
		default:
			if err := br.skip(n); err != nil {
				return c.criticalEnded()
			}
		}
	}
}

// qpackEncoder reads the server's QPACK encoder stream: gab allows no
// dynamic table, so the only instruction it may carry is Set Dynamic Table
// Capacity 0 (RFC 9204 §4.3.1), one byte, any number of times.
func (c *h3Conn) qpackEncoder(str *quic.ReceiveStream) *h3Error {
	var buf [512]byte
	for {
		n, err := str.Read(buf[:])
		for _, b := range buf[:n] {
			if b != 0x20 {
				return errH3QPACKInstruction
			}
		}
		if err != nil {
			return c.criticalEnded()
		}
	}
}

// discard reads the server's QPACK decoder stream, which tells about gab's
// encoder's dynamic table (it uses none): its instructions are read and
// dropped, and the stream may not end while the connection lives.
func (c *h3Conn) discard(str *quic.ReceiveStream) *h3Error {
	var buf [512]byte
	for {
		if _, err := str.Read(buf[:]); err != nil {
			return c.criticalEnded()
		}
	}
}

// h3ByteReader reads a stream byte by byte through a small buffer (the
// control stream's varints and payloads).
type h3ByteReader struct {
	r    io.Reader
	buf  [256]byte
	i, n int
}

func (b *h3ByteReader) fill() error {
	n, err := b.r.Read(b.buf[:])
	b.i, b.n = 0, n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

func (b *h3ByteReader) ReadByte() (byte, error) {
	if b.i == b.n {
		if err := b.fill(); err != nil {
			return 0, err
		}
	}
	c := b.buf[b.i]
	b.i++
	return c, nil
}

func (b *h3ByteReader) Read(p []byte) (int, error) {
	if b.i == b.n {
		if err := b.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, b.buf[b.i:b.n])
	b.i += n
	return n, nil
}

// skip drops n bytes.
func (b *h3ByteReader) skip(n uint64) error {
	for n > 0 {
		if b.i == b.n {
			if err := b.fill(); err != nil {
				return err
			}
		}
		k := min(uint64(b.n-b.i), n)
		b.i += int(k)
		n -= k
	}
	return nil
}

// h3LostError is a QUIC connection's end, in gab's words: the server's
// reason phrase, which reaches the reports, is quoted in ASCII.
type h3LostError struct {
	text string
	err  error
}

func (e *h3LostError) Error() string { return e.text }
func (e *h3LostError) Unwrap() error { return e.err }

// h3ConnLost describes err, an error quic-go returned for a connection.
func h3ConnLost(err error) error {
	var (
		ae *quic.ApplicationError
		te *quic.TransportError
		it *quic.IdleTimeoutError
		ht *quic.HandshakeTimeoutError
		sr *quic.StatelessResetError
		vn *quic.VersionNegotiationError
	)
	by := func(remote bool) string {
		if remote {
			return "the server"
		}
		return "gab"
	}
	reason := func(s string) string {
		if s == "" {
			return ""
		}
		if len(s) > 64 {
			s = s[:64]
		}
		return " (reason " + strconv.QuoteToASCII(s) + ")"
	}
	var text string
	switch {
	case errors.As(err, &ae):
		text = fmt.Sprintf("QUIC connection closed by %s: %s%s", by(ae.Remote), h3CodeName(uint64(ae.ErrorCode)), reason(ae.ErrorMessage))
	case errors.As(err, &te):
		text = fmt.Sprintf("QUIC connection closed by %s: %s%s", by(te.Remote), te.ErrorCode.String(), reason(te.ErrorMessage))
	case errors.As(err, &it):
		text = "QUIC idle timeout: nothing received from the server"
	case errors.As(err, &ht):
		text = "QUIC handshake timeout: the server did not answer"
	case errors.As(err, &sr):
		text = "QUIC stateless reset from the server"
	case errors.As(err, &vn):
		text = "QUIC version negotiation failed: " + vn.Error()
	default:
		return err
	}
	return &h3LostError{text: text, err: err}
}

// h3LostClass is the class of a request whose connection ended with err
// before its response did. Such a request is never sent again: the server
// may have processed it. When gab ended the connection because the server
// broke the protocol (or quic-go found a QUIC protocol violation), it is an
// Exception; otherwise a Receive failure counted whatever -r says.
func h3LostClass(err error) (failClass, error) {
	if gabClosedForBreach(err) {
		return failException, h3ConnLost(err)
	}
	return failReceiveCounted, h3ConnLost(err)
}

// gabClosedForBreach reports a connection error of gab's own: gab closed
// the connection because the server broke the protocol, or quic-go did for
// a QUIC protocol violation.
func gabClosedForBreach(err error) bool {
	var (
		ae *quic.ApplicationError
		te *quic.TransportError
	)
	return errors.As(err, &ae) && !ae.Remote && ae.ErrorCode != quic.ApplicationErrorCode(http3.ErrCodeNoError) ||
		errors.As(err, &te) && !te.Remote
}

// h3NotH3 is the fatal error for a server whose TLS does not offer h3 in
// ALPN (the TLS alert no_application_protocol), nil for other errors.
func h3NotH3(err error) *FatalError {
	var te *quic.TransportError
	if errors.As(err, &te) && te.ErrorCode == quic.TransportErrorCode(0x100+120) {
		return &FatalError{Message: "gab: server does not speak HTTP/3 (ALPN: no h3)\n", Exit: 1, Err: err}
	}
	return nil
}

// h3IsTLSError reports a handshake that failed in TLS (a CRYPTO_ERROR: an
// alert sent or received).
func h3IsTLSError(err error) bool {
	var te *quic.TransportError
	return errors.As(err, &te) && te.ErrorCode.IsCryptoError()
}
