package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"time"
)

// The HTTP/1 transport: one goroutine per connection on Go's netpoller, ab's
// request bytes written with one Write, responses parsed in place in one
// reusable buffer per connection. The keep-alive loop allocates nothing.

// readBufSize is the per-connection read buffer; it must hold a whole head (8191 bytes).
const readBufSize = 16 << 10

// A worker that meets a body over bigBody bytes switches, once, to a
// bigReadBufSize buffer: a quarter of the read calls for large documents, while
// runs of small responses keep 16 KiB per connection.
const (
	bigBody        = 256 << 10
	bigReadBufSize = 64 << 10
)

type http1 struct {
	cfg     *Config
	tlsConf *tls.Config
	d       *dialer
	ctx     context.Context // cancelled when the run stops, so blocked dials return

	headRequest  bool // HEAD: responses have no body
	idempotent   bool // the request may be re-sent on a new connection
	http11       bool // --http1.1: HTTP/1.1 persistence rules
	askKeepAlive bool // -k: ab's keep-alive rules
	verbose      bool // -v ≥ 2 events
	reqTimeout   time.Duration
	ramp         tlsRamp // nil for http://
	// urls builds each request's bytes from --urls (nil: cfg.Request);
	// pre holds --targets' requests, each built once.
	urls *h1URLs
	pre  *prebuilt
	// loops > 0 selects the Linux epoll fast path (http1_epoll_linux.go) with
	// that many event loops; 0 is the portable goroutine-per-connection path.
	loops int
	// engine is the loops' I/O: EngineEpoll, EngineUring or enginePortable.
	engine string
}

func newHTTP1(cfg *Config) (transport, error) {
	method := cfg.Spec.Method
	if method == "" {
		if i := bytes.IndexByte(cfg.Request, ' '); i > 0 {
			method = string(cfg.Request[:i])
		}
	}
	h := &http1{
		cfg:          cfg,
		headRequest:  cfg.Spec.HeadMethod || method == "HEAD",
		idempotent:   isIdempotent(method),
		http11:       cfg.Protocol == HTTP11,
		askKeepAlive: cfg.KeepAlive,
		verbose:      cfg.Verbosity >= 2,
		reqTimeout:   cfg.RequestTimeout,
	}
	if cfg.URLs != nil && cfg.URLs.Targets() {
		pre, err := newPrebuilt(cfg, func(c *Config) ([]byte, error) {
			req, _ := BuildRequest(c.Spec)
			return req, nil
		})
		if err != nil {
			return nil, err
		}
		h.pre = pre
	} else if cfg.URLs != nil {
		u, err := newH1URLs(cfg)
		if err != nil {
			return nil, err
		}
		h.urls = u
	}
	// ab sets up its TLS context (-Z, -E) even for http:// URLs, so their
	// errors end the run before the banner either way.
	if cfg.Target.TLS || cfg.TLS.Ciphers != "" || cfg.TLS.CertFile != "" {
		conf, err := buildTLSConfig(cfg)
		if err != nil {
			return nil, err
		}
		if cfg.Target.TLS {
			h.tlsConf = conf
			h.ramp = newTLSRamp()
		}
	}
	return h, nil
}

func isIdempotent(method string) bool {
	switch method {
	case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE":
		return true
	}
	return false
}

func (h *http1) prepare(ctx context.Context, r *run) error {
	d, err := resolve(ctx, h.cfg)
	if err != nil {
		return err
	}
	h.d = d
	h.loops = epollLoops(h.cfg, d)
	if h.engine, err = chooseEngine(h.cfg, h.loops, h.tlsConf != nil); err != nil {
		return err
	}
	r.engine = h.engine
	dialCtx, cancel := context.WithCancel(context.Background())
	h.ctx = dialCtx
	go func() {
		<-r.stopCh // every run ends with stop (n recorded, -t, -s, signal, fatal)
		cancel()
	}()
	return nil
}

func (h *http1) slots() int {
	if h.loops > 0 {
		return h.loops
	}
	return h.cfg.Concurrency
}

func (h *http1) work(r *run, slot int, t *tally) {
	if h.loops > 0 {
		h.workEpoll(r, slot, t)
		return
	}
	if h.cfg.Pipeline > 1 {
		h.workPipe(r, t)
		return
	}
	c := &h1conn{h: h, r: r, t: t, buf: make([]byte, readBufSize)}
	defer c.close()
	for r.claim(t) {
		c.req, c.head, c.idem, c.entry = h.request(&c.wbuf, t)
		c.roundTrip()
		c.out.entry = c.entry
		if !r.finish(t, &c.out) {
			return
		}
	}
}

// h1conn is one request loop and its current connection.
type h1conn struct {
	h    *http1
	r    *run
	t    *tally
	raw  net.Conn // the TCP connection (deadlines and interruption act on it)
	conn net.Conn // raw, or the TLS connection over it
	buf  []byte
	// buf[pos:have] holds bytes read past the previous response on a kept connection.
	pos, have int
	rerr      error // a read error that came together with data, delivered on the next read
	lastEnd   int64 // when the previous response on this connection ended
	lastRead  int64 // clock of the last read that returned data
	rd        h1Reader
	out       outcome
	ramped    bool // the slot's first connection has been opened (or failed)
	// req is the request in flight's bytes: cfg.Request, or with --urls
	// assembled in wbuf (which grows once to the longest request).
	req, wbuf  []byte
	head, idem bool  // the request's method is HEAD; is idempotent
	entry      int32 // the request's URL list index plus 1 (outcome.entry)
}

// request is the bytes of the request just claimed: cfg.Request, with
// --urls the next URL's request assembled in *buf, with --targets the next
// target's, built once; head and idem say whether its method is HEAD and is
// idempotent.
// entry is the URL's list index plus 1 (0 without a list).
func (h *http1) request(buf *[]byte, t *tally) (req []byte, head, idem bool, entry int32) {
	switch {
	case h.pre != nil:
		i := h.pre.next(t)
		m := h.pre.specs[i].Method
		return h.pre.reqs[i], m == "HEAD", isIdempotent(m), int32(i + 1)
	case h.urls != nil:
		if *buf == nil {
			*buf = make([]byte, 0, h.urls.maxLen())
		}
		var i int
		*buf, i = h.urls.request(*buf, t)
		return *buf, h.headRequest, h.idempotent, int32(i + 1)
	}
	return h.cfg.Request, h.headRequest, h.idempotent, 0
}

// touchAt records socket activity for ab's -s watchdog with a timestamp already taken.
func touchAt(t *tally, now int64) { t.activity.Store(now) }

func (c *h1conn) close() {
	if c.conn != nil {
		_ = c.conn.Close() // nothing to do about a failed close
		c.conn, c.raw = nil, nil
		c.t.setConn(c.r, nil)
		c.t.connClosed()
	}
	c.pos, c.have, c.rerr = 0, 0, nil
}

// roundTrip performs one request and leaves its outcome in c.out. A request
// whose reused connection was closed before any answer is sent again once on a
// new connection when its method is idempotent.
func (c *h1conn) roundTrip() {
	o := &c.out
	*o = outcome{}
	start := int64(-1)
	retried := false
	for {
		reused := c.conn != nil
		if reused {
			// In rate mode the request waited for its slot after the previous
			// response: it starts when that wait ended (0 otherwise), so that
			// --request-timeout's deadline counts from there.
			s := max(c.lastEnd, c.t.Sent)
			start = s
			o.Start, o.TCPDone, o.Connect = s, s, s
		} else {
			entered := false
			if start < 0 {
				if !c.ramped { // the slot's first connection: the request starts after the wait
					c.ramped = true
					entered = c.h.ramp.enter(c.h.ctx.Done()) // if the run stopped, open fails at once
				}
				start = c.r.clock()
			}
			o.Start = start
			opened := c.open(o)
			if entered {
				c.h.ramp.leave()
			}
			if !opened {
				return
			}
		}
		if !c.exchange(o, reused) {
			return
		}
		// The server closed the connection without a byte of answer.
		c.close()
		if reused && c.idem && !retried {
			retried = true
			c.t.Retries++
			*o = outcome{}
			continue
		}
		o.Class, o.Err = failReceiveCounted, errNoAnswer
		return
	}
}

// open connects (and handshakes) for a request starting at o.Start.
func (c *h1conn) open(o *outcome) bool {
	r, t := c.r, c.t
	ctx := c.h.ctx
	if c.h.reqTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, r.start.Add(time.Duration(o.Start)+c.h.reqTimeout))
		defer cancel()
	}
	raw, err := c.h.d.connect(ctx)
	now := r.clock()
	if err != nil {
		r.failOpen(o, now, err)
		// The dialer's own deadline can fire before the context records it.
		if o.Class != failAbandoned && c.h.reqTimeout > 0 && (ctx.Err() == context.DeadlineExceeded || isTimeout(err)) {
			o.Class, o.Err = failException, errRequestTimeout
		}
		return false
	}
	c.h.d.markWorked(r, now)
	touchAt(t, now)
	o.TCPDone = now
	if !t.setConn(r, raw) {
		_ = raw.Close() // the run stopped
		r.failOpen(o, now, context.Canceled)
		return false
	}
	c.raw, c.conn = raw, raw
	t.connOpened()
	c.pos, c.have, c.rerr = 0, 0, nil
	if c.h.reqTimeout > 0 {
		_ = raw.SetDeadline(r.start.Add(time.Duration(o.Start) + c.h.reqTimeout))
	}
	if c.h.tlsConf != nil {
		tc, err := handshakeTLS(r, raw, c.h.tlsConf)
		now = r.clock()
		if err != nil {
			c.close()
			r.failOpen(o, now, err)
			if o.Class != failAbandoned && c.h.reqTimeout > 0 && isTimeout(err) {
				o.Class, o.Err = failException, errRequestTimeout
			}
			return false
		}
		touchAt(t, now)
		c.conn = tc
	}
	o.Connect = now
	return true
}

// exchange writes the request and reads the response. It returns true when the
// connection was closed before any byte of the answer arrived (the caller
// retries or fails); otherwise o holds the result.
func (c *h1conn) exchange(o *outcome, reused bool) (noAnswer bool) {
	r, t := c.r, c.t
	if c.h.reqTimeout > 0 && reused {
		_ = c.raw.SetDeadline(r.start.Add(time.Duration(o.Start) + c.h.reqTimeout))
		if r.isStopped() { // the deadline above may have replaced stop's interruption
			c.fail(o, failAbandoned, context.Canceled, r.clock())
			return false
		}
	}
	n, err := c.conn.Write(c.req)
	t.TotalSent += int64(n)
	now := r.clock()
	if err != nil {
		o.WriteEnd, o.FirstByte = now, now
		switch {
		case r.isStopped():
			c.fail(o, failAbandoned, err, now)
		case c.h.reqTimeout > 0 && isTimeout(err):
			c.fail(o, failException, errRequestTimeout, now)
		case reused:
			return true // the server had closed the kept connection
		default:
			c.fail(o, failWrite, err, now)
		}
		return false
	}
	touchAt(t, now)
	o.WriteEnd = now
	return c.readResponse(o, reused)
}

// fail ends the attempt with class and closes the connection.
func (c *h1conn) fail(o *outcome, class failClass, err error, now int64) {
	o.Class, o.Err, o.End = class, err, now
	if o.FirstByte == 0 {
		o.FirstByte = now
	}
	c.close()
}

// read reads into p, holding back an error that arrived with data until the
// data is processed. Bytes are counted and activity noted here, and the stop
// flag checked: every loop that reads from the server reads through it.
func (c *h1conn) read(p []byte) (int, error) {
	if c.r.isStopped() {
		return 0, context.Canceled // the run's stop closes the connection too; this is the turn's check
	}
	if c.rerr != nil {
		err := c.rerr
		c.rerr = nil
		return 0, err
	}
	n, err := c.conn.Read(p)
	if n > 0 {
		if err != nil {
			c.rerr, err = err, nil
		}
		now := c.r.clock()
		c.lastRead = now
		touchAt(c.t, now)
		c.t.TotalRead += int64(n)
	}
	return n, err
}

// readResponse reads one response, fed to h1Reader as it arrives. It returns
// true when the connection closed before any byte of it (see exchange).
func (c *h1conn) readResponse(o *outcome, reused bool) (noAnswer bool) {
	buf := c.buf
	pos, have := c.pos, c.have // bytes left over from the previous response start this one
	if pos > 0 {
		have, pos = copy(buf, buf[pos:have]), 0
	}
	got := have > 0
	if got {
		o.FirstByte = o.WriteEnd
	}
	c.lastRead = o.WriteEnd
	rd := &c.rd
	rd.start(c.head)
	for {
		used, step := rd.feed(buf[pos:have])
		pos += used
		switch step {
		case h1Head:
			c.r.headDone(o, &rd.head, buf[pos-rd.headLen:have], c.h.verbose)
			continue
		case h1Done:
			c.endBody(o)
			o.End = c.lastRead
			c.complete(o, pos, have)
			return false
		case h1Fail:
			c.endBody(o)
			c.fail(o, h1FailClass(rd.err), rd.err, c.lastRead)
			return false
		}
		buf, have = rd.room(buf, pos, have)
		c.buf, pos = buf, 0
		n, err := c.read(buf[have:])
		if n > 0 {
			if !got {
				o.FirstByte, got = c.lastRead, true
			}
			have += n
			if c.h.verbose && rd.inHead() {
				c.r.events.HeaderReceived(buf[:min(have, maxHeadLen)])
			}
			continue
		}
		switch {
		case err == nil:
			continue
		case rd.inHead():
			return c.readFailed(o, err, got, reused)
		case isEOF(err) && rd.endsAtClose():
			c.endBody(o)
			o.End = c.lastRead
			c.close()
			return false
		}
		c.endBody(o)
		if isEOF(err) {
			c.fail(o, failReceiveCounted, errTruncated, c.lastRead)
			return false
		}
		return c.readFailed(o, err, true, false)
	}
}

// headDone accounts for a response's final head, on either path: ab's
// "header seen", its Server cut (taken from the head and whatever followed it
// in the buffer, as ab searches its buffer) and the -v 2 status line.
func (r *run) headDone(o *outcome, h *respHead, from []byte, verbose bool) {
	r.sawHeader()
	if r.wantServer() {
		r.setServer(abServerSoftware(from[:min(len(from), maxHeadLen)]))
	}
	o.Status = h.status
	if verbose {
		r.events.Status(h.status)
	}
}

func (c *h1conn) endBody(o *outcome) {
	c.t.BodyRead += c.rd.body
	o.Body = c.rd.body
}

// complete ends a framed response whose bytes end at pos: keep the
// connection (buf[pos:have] starts the next response), or wait for the
// server's close as ab does, or close it.
func (c *h1conn) complete(o *outcome, pos, have int) {
	h := &c.rd.head
	if c.h.keep(h) {
		o.KeptAlive = true
		c.pos, c.have = pos, have
		c.lastEnd = o.End
		return
	}
	if c.h.serverCloses(h) {
		c.drain()
	}
	c.close()
}

// serverCloses reports whether the server will close after this response, as
// ab expects when it reads to EOF.
func (t *http1) serverCloses(h *respHead) bool {
	if h.status == 101 {
		return false // another protocol now: nothing more to wait for
	}
	return h.connClose || !t.askKeepAlive || (h.minor == 0 && !h.connKeepAlive)
}

// drain reads until the server closes, as ab does, so that the server and not
// gab closes first and keeps the TIME_WAIT state: a client closing first would
// tie up one local port per request for a minute. The FIN has usually arrived
// with the response, so this is one read returning 0. Stray bytes are counted,
// up to maxDrain: a server that keeps sending instead of closing is closed on.
func (c *h1conn) drain() {
	for left := maxDrain; left > 0; {
		n, err := c.read(c.buf)
		if err != nil {
			return // EOF, or an error that no longer matters: the response is complete
		}
		left -= n
	}
}

// maxDrain bounds the stray bytes read after a complete response while gab
// waits for the server's close (both paths). Past it gab closes: the request
// is complete, and a server that streams instead of closing must not hold it.
const maxDrain = 64 << 10

// keep decides whether a complete, framed response leaves the connection open.
func (t *http1) keep(h *respHead) bool {
	if h.status == 101 || h.connClose {
		return false
	}
	if t.http11 {
		// HTTP/1.1 persistence, unless this run asked for Connection: close (no -k).
		return t.askKeepAlive && (h.minor >= 1 || h.connKeepAlive)
	}
	return t.askKeepAlive && h.keepAliveText
}

// readFailed classifies a read error; got tells whether any byte of the
// response had arrived. It returns true for "closed before any answer".
func (c *h1conn) readFailed(o *outcome, err error, got, reused bool) bool {
	now := c.r.clock()
	class, cause, noAnswer := readFailure(err, got, reused, c.r.isStopped(), c.h.reqTimeout > 0 && isTimeout(err))
	if noAnswer {
		o.FirstByte, o.End, o.Err = now, now, err
		return true
	}
	c.fail(o, class, cause, now)
	return false
}

// readFailure is how a read error ends an HTTP/1 attempt, on either path.
// noAnswer means nothing of the answer came back on a closed (or, when reused,
// reset) connection: the caller may send the request again.
func readFailure(err error, got, reused, stopped, timedOut bool) (class failClass, cause error, noAnswer bool) {
	switch {
	case stopped:
		return failAbandoned, err, false
	case timedOut:
		return failException, errRequestTimeout, false
	case !got && (isEOF(err) || reused):
		return classOK, err, true
	case isEOF(err):
		return failReceiveCounted, errTruncated, false
	case tlsGaveUp(err):
		return failReceiveCounted, err, false
	}
	return failReceive, err, false
}

func isEOF(err error) bool {
	return err == io.EOF || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
