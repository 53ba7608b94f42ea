package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/quicvarint"

	"gab/internal/h3test"
)

// Hostile HTTP/3 servers: a QUIC server on 127.0.0.1 that writes HTTP/3
// frame by frame as a script says (resets, GOAWAY, connection closes,
// malformed responses, floods, stalls). Each test bounds the run's wall
// time, and the flood tests the heap as well: a server must not be able to
// hang or bloat gab.

// h3Hostile is the server; every request stream goes to its script.
type h3Hostile struct {
	tr       *quic.Transport
	ln       *quic.Listener
	conns    atomic.Int64 // QUIC connections accepted
	requests atomic.Int64 // requests read (to their FIN)
	answered atomic.Int64 // complete responses written (h3Conn.respond)
	flooded  atomic.Int64 // bytes the conn scripts' floods wrote (h3HostileConn.flood)
	wg       sync.WaitGroup
}

// h3HostileConn is one connection as the scripts see it.
type h3HostileConn struct {
	*quic.Conn
	srv  *h3Hostile
	ctrl *quic.SendStream // the server's control stream (SETTINGS sent)
	mu   sync.Mutex       // orders writes on ctrl
	data sync.Map         // per-connection state of a script

	flooded atomic.Int64 // bytes a flood of the conn script wrote on its streams
}

// h3Script is what the server does: conn (optional) runs once per
// connection after its control stream is open; stream gets each request
// stream once the request has been read to its FIN (n counts requests from
// 1 across the server).
type h3Script struct {
	conn   func(hc *h3HostileConn)
	stream func(hc *h3HostileConn, str *quic.Stream, n int64)
	// noControl leaves out the control stream (and SETTINGS).
	noControl bool
	// early hands each request stream to stream as it opens, unread.
	early bool
}

func startH3Hostile(tb testing.TB, sc h3Script) *h3Hostile {
	tb.Helper()
	s := &h3Hostile{tr: h3test.Transport(tb, nil)}
	var err error
	s.ln, err = s.tr.Listen(h3test.TLSConfig(tb), &quic.Config{MaxIncomingStreams: 1000, MaxIncomingUniStreams: 100})
	if err != nil {
		tb.Fatal(err)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := s.ln.Accept(context.Background())
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(c, sc)
			}()
		}
	}()
	tb.Cleanup(func() {
		_ = s.ln.Close()
		_ = s.tr.Close() // its connections end; h3test.Transport's cleanup closes the socket
		s.wg.Wait()
	})
	return s
}

func (s *h3Hostile) url() string {
	return fmt.Sprintf("https://127.0.0.1:%d/", s.tr.Conn.LocalAddr().(*net.UDPAddr).Port)
}

func (s *h3Hostile) serve(c *quic.Conn, sc h3Script) {
	defer c.CloseWithError(0, "") //nolint:errcheck // the connection may be gone already
	hc := &h3HostileConn{Conn: c, srv: s}
	if !sc.noControl {
		ctrl, err := c.OpenUniStream()
		if err != nil {
			return
		}
		hc.ctrl = ctrl
		if _, err := ctrl.Write([]byte{h3StreamControl, h3FrameSettings, 0}); err != nil {
			return
		}
	}
	go func() { // the client's uni streams: read and dropped
		for {
			str, err := c.AcceptUniStream(context.Background())
			if err != nil {
				return
			}
			go io.Copy(io.Discard, str) //nolint:errcheck // ends with the connection
		}
	}()
	if sc.conn != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			sc.conn(hc)
		}()
	}
	var streams sync.WaitGroup
	defer streams.Wait()
	for {
		str, err := c.AcceptStream(context.Background())
		if err != nil {
			return
		}
		streams.Add(1)
		go func() {
			defer streams.Done()
			if !sc.early {
				if _, err := io.Copy(io.Discard, str); err != nil {
					return
				}
			}
			n := s.requests.Add(1)
			if sc.stream != nil {
				sc.stream(hc, str, n)
			}
		}()
	}
}

// h3Frame is one HTTP/3 frame.
func h3Frame(typ uint64, payload []byte) []byte {
	b := quicvarint.Append(nil, typ)
	b = quicvarint.Append(b, uint64(len(payload)))
	return append(b, payload...)
}

// h3Section QPACK-encodes name, value pairs (static table and literals).
func h3Section(fields ...string) []byte {
	var buf bytes.Buffer
	enc := qpack.NewEncoder(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		_ = enc.WriteField(qpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return buf.Bytes()
}

// h3OK is a 200 response with body and its content-length.
func h3OK(body string) []byte {
	b := h3Frame(h3FrameHeaders, h3Section(":status", "200", "content-length", fmt.Sprint(len(body))))
	if body != "" {
		b = append(b, h3Frame(h3FrameData, []byte(body))...)
	}
	return b
}

// respond writes frames on str and ends it. The answer is counted before
// it is written (and the count taken back if the write fails): counted
// after, the client could read the last answer and end its run before this
// goroutine counted it, and the test would see one answer too few.
func (hc *h3HostileConn) respond(str *quic.Stream, frames []byte) {
	hc.srv.answered.Add(1)
	if _, err := str.Write(frames); err != nil || str.Close() != nil {
		hc.srv.answered.Add(-1)
	}
}

// control writes b on the server's control stream.
func (hc *h3HostileConn) control(b []byte) error {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	_, err := hc.ctrl.Write(b)
	return err
}

// h3Cfg is a --http3 run of n requests on c connections × streams against s.
func h3Cfg(t testing.TB, s *h3Hostile, n, c, streams int) Config {
	return h3TestConfig(t, s.url(), n, c, streams)
}

// A server that refuses every request with H3_REQUEST_REJECTED did not
// process any: each is sent again, at most 3 times, then it is an
// Exception. The server reads exactly 4 × n requests.
func TestHTTP3RequestRejected(t *testing.T) {
	checkEngineLeaks(t)
	s := startH3Hostile(t, h3Script{stream: func(hc *h3HostileConn, str *quic.Stream, _ int64) {
		h3Cancel(str, http3.ErrCodeRequestRejected)
	}})
	const n = 5
	res, err, _ := runH2Within(t, h3Cfg(t, s, n, 1, 2), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != n || res.Failed.Exceptions != n || res.Failed.Total != n || res.Retries != 3*n {
		t.Errorf("Complete %d Failed %+v Retries %d, want %d Exceptions after 3 retries each", res.Complete, res.Failed, res.Retries, n)
	}
	if got := s.requests.Load(); got != 4*n {
		t.Errorf("server read %d requests, want %d", got, 4*n)
	}
	if got := s.conns.Load(); got != 1 {
		t.Errorf("%d connections, want 1 (a rejected stream leaves its connection alone)", got)
	}
}

// A stream reset with another code is an Exception, never sent again.
func TestHTTP3ResetIsException(t *testing.T) {
	s := startH3Hostile(t, h3Script{stream: func(hc *h3HostileConn, str *quic.Stream, _ int64) {
		h3Cancel(str, http3.ErrCodeInternalError)
	}})
	res, err, _ := runH2Within(t, h3Cfg(t, s, 6, 1, 3), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != 6 || res.Failed.Exceptions != 6 || res.Retries != 0 || s.requests.Load() != 6 {
		t.Errorf("Complete %d Failed %+v Retries %d, server read %d; want 6 Exceptions, none sent twice", res.Complete, res.Failed, res.Retries, s.requests.Load())
	}
	if e := res.FirstError["exceptions"]; e != "stream reset by the server: H3_INTERNAL_ERROR" {
		t.Errorf("first exception %q", e)
	}
}

// A server that answers the first requests of each connection, then sends
// GOAWAY and leaves the requests at or above its stream ID unanswered: they
// were not processed, and go again on a new connection at once; nothing is
// lost or counted twice, and gab closes each old connection.
func TestHTTP3GoAwayReplacesConnection(t *testing.T) {
	checkEngineLeaks(t)
	const limit = 6 * 4 // the GOAWAY's stream ID: streams 0, 4, …, 20 are answered
	s := startH3Hostile(t, h3Script{stream: func(hc *h3HostileConn, str *quic.Stream, _ int64) {
		if int64(str.StreamID()) < limit {
			hc.respond(str, h3OK("hello"))
			return
		}
		if _, loaded := hc.data.LoadOrStore("goaway", true); loaded {
			return // not processed: left to the connection's close
		}
		_ = hc.control(h3Frame(h3FrameGoAway, quicvarint.Append(nil, limit)))
	}})
	const n = 50
	res, err, _ := runH2Within(t, h3Cfg(t, s, n, 1, 3), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != n || res.Failed.Total != 0 {
		t.Errorf("Complete %d Failed %+v, want %d and none", res.Complete, res.Failed, n)
	}
	if got := s.answered.Load(); got != n {
		t.Errorf("server answered %d requests, want exactly %d", got, n)
	}
	if res.Retries == 0 || s.conns.Load() < n/(limit/4) {
		t.Errorf("retries %d over %d connections: the GOAWAY did not replace connections", res.Retries, s.conns.Load())
	}
}

// goneAway reports whether the script has decided to send GOAWAY(0) on
// hc: a stream that comes then is not processed, left unanswered to the
// connection's close (as in TestHTTP3GoAwayReplacesConnection). Else it
// marks hc so, before the answer that precedes the GOAWAY.
func goneAway(hc *h3HostileConn) bool {
	_, gone := hc.data.LoadOrStore("goaway", true)
	return gone
}

// finBeforeGoAway is a -v 2 run's Events that holds the slot at each
// response head, read without the stream's end: it tells the server
// (head), which then ends the stream, waits until quic-go knows the
// stream's final size (the response is all in gab's hands), tells the
// server (fin), which then sends GOAWAY, and waits until gab has taken it.
type finBeforeGoAway struct {
	h1Events
	t         *testing.T
	tr        *h3Transport
	head, fin chan struct{}
}

// signal sends on ch, giving up after a while (the server has gone).
func (e *finBeforeGoAway) signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	case <-time.After(20 * time.Second):
		e.t.Error("the server stopped waiting")
	}
}

func (e *finBeforeGoAway) Status(code int) {
	e.h1Events.Status(code)
	e.signal(e.head)
	e.tr.connsMu.Lock()
	var c *h3Conn
	var str *quic.Stream
	for k := range e.tr.conns {
		if s := k.inflight[0].str.Load(); s != nil {
			c, str = k, s
		}
	}
	e.tr.connsMu.Unlock()
	if str == nil {
		e.t.Error("no stream in flight at a response head")
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for !h3Finished(str) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	e.signal(e.fin)
	select {
	case <-c.away:
	case <-time.After(20 * time.Second):
		e.t.Error("the GOAWAY never came")
	}
}

// A server that answers each POST in full, then sends GOAWAY(0), as if it
// had processed none, and leaves what comes after unanswered: the slot is
// held at the head (see finBeforeGoAway) until the stream's FIN has come and
// gab has taken the GOAWAY. The response is complete, so it is an answer
// whatever the GOAWAY says: the server answers each request once (the next
// request, if it raced the GOAWAY, was not processed and goes again on a
// new connection).
func TestHTTP3GoAwayAfterAnswer(t *testing.T) {
	ev := &finBeforeGoAway{t: t, head: make(chan struct{}), fin: make(chan struct{})}
	s := startH3Hostile(t, h3Script{stream: func(hc *h3HostileConn, str *quic.Stream, _ int64) {
		if goneAway(hc) {
			return
		}
		hc.srv.answered.Add(1)
		if _, err := str.Write(h3OK("hello")); err != nil {
			return
		}
		select { // the FIN once gab has read the response (without its end)
		case <-ev.head:
		case <-hc.Context().Done():
			return
		}
		_ = str.Close()
		select {
		case <-ev.fin:
		case <-hc.Context().Done():
			return
		}
		_ = hc.control(h3Frame(h3FrameGoAway, quicvarint.Append(nil, 0)))
	}})
	const n = 5
	cfg := h3Cfg(t, s, n, 1, 1)
	cfg.Spec.Method = "POST"
	cfg.Spec.Body, cfg.Spec.HasBody = []byte("payload"), true
	cfg.Events, cfg.Verbosity = ev, 2
	rn, err := newRunner(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ev.tr = rn.tr.(*h3Transport)
	res, err := rn.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != n || res.Failed.Total != 0 || res.BodyRead != 5*n {
		t.Errorf("Complete %d Failed %+v (%v) body %d, want %d answers", res.Complete, res.Failed, res.FirstError, res.BodyRead, n)
	}
	if got := s.answered.Load(); got != n {
		t.Errorf("server answered %d requests for -n %d: answered requests were sent again", got, n)
	}
}

// headSeen signals (without blocking) each response head gab has read:
// the engine reports the status (-v 2) once it has noted the final head.
type headSeen struct {
	h1Events
	seen chan struct{}
}

func (e *headSeen) Status(code int) {
	e.h1Events.Status(code)
	select {
	case e.seen <- struct{}{}:
	default:
	}
}

// A server that sends the response head, then GOAWAY(0) once gab has read
// the head, then the body: it had begun to answer, so it processed the
// request, which is not sent again. Its response completes (or, if the
// GOAWAY overtook the slot's note that the head had come, is an Exception:
// either way the server reads each request once).
func TestHTTP3GoAwayAfterHead(t *testing.T) {
	ev := &headSeen{seen: make(chan struct{}, 1)}
	s := startH3Hostile(t, h3Script{stream: func(hc *h3HostileConn, str *quic.Stream, _ int64) {
		if goneAway(hc) {
			return
		}
		hc.srv.answered.Add(1)
		if _, err := str.Write(h3Frame(h3FrameHeaders, h3Section(":status", "200", "content-length", "5"))); err != nil {
			return
		}
		select {
		case <-ev.seen:
		case <-hc.Context().Done():
			return
		}
		_ = hc.control(h3Frame(h3FrameGoAway, quicvarint.Append(nil, 0)))
		_, _ = str.Write(h3Frame(h3FrameData, []byte("hello")))
		_ = str.Close()
	}})
	const n = 6
	cfg := h3Cfg(t, s, n, 1, 1)
	cfg.Spec.Method = "POST"
	cfg.Spec.Body, cfg.Spec.HasBody = []byte("payload"), true
	cfg.Events, cfg.Verbosity = ev, 2
	res, err, _ := runH2Within(t, cfg, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != n || res.Failed.Total != res.Failed.Exceptions {
		t.Errorf("Complete %d Failed %+v (%v), want %d requests", res.Complete, res.Failed, res.FirstError, n)
	}
	if e := res.FirstError["exceptions"]; e != "" && e != errH3GoAwayAfterHead.Error() {
		t.Errorf("first exception %q", e)
	}
	if got := s.answered.Load(); got != n {
		t.Errorf("server began %d answers for -n %d: answered requests were sent again", got, n)
	}
}

// A server that closes its connection with an error (CONNECTION_CLOSE,
// H3_INTERNAL_ERROR) after answering a few requests: the requests it left
// unanswered may have been processed, so they are Receive failures, counted
// whatever -r says, never sent again; the connection is replaced and the run
// goes on to n.
func TestHTTP3ConnectionCloseIsReplaced(t *testing.T) {
	checkEngineLeaks(t)
	s := startH3Hostile(t, h3Script{stream: func(hc *h3HostileConn, str *quic.Stream, _ int64) {
		if str.StreamID() < 3*4 {
			hc.respond(str, h3OK("hello"))
			return
		}
		_ = hc.CloseWithError(quic.ApplicationErrorCode(http3.ErrCodeInternalError), "going\x1b[2J away")
	}})
	const n = 30
	cfg := h3Cfg(t, s, n, 1, 2)
	res, err, _ := runH2Within(t, cfg, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != n || res.Failed.Receive == 0 || res.Failed.Total != res.Failed.Receive {
		t.Errorf("Complete %d Failed %+v, want %d with Receive failures only", res.Complete, res.Failed, n)
	}
	// A request is sent again only if it never left (its stream could not
	// open on the closing connection): the server reads each at most once.
	if got := s.requests.Load(); got > n {
		t.Errorf("server read %d requests, want at most %d (none sent twice)", got, n)
	}
	if got, want := res.FirstError["receive"], `QUIC connection closed by the server: H3_INTERNAL_ERROR (reason "going\x1b[2J away")`; got != want {
		t.Errorf("first receive error %q, want %q (the reason escaped)", got, want)
	}
}

// Malformed responses and protocol errors are Exceptions, recorded; a
// connection error (gab closes the connection with the error's code) makes
// the next request open a new connection.
func TestHTTP3MalformedResponses(t *testing.T) {
	big := h3Frame(h3FrameHeaders, make([]byte, h3MaxHeadersFrame+1))
	for _, tc := range []struct {
		name   string
		frames []byte
		conn   bool // a connection error: every request on a new connection
		err    string
	}{
		{"data first", h3Frame(h3FrameData, []byte("x")), true, "HTTP/3 connection error H3_FRAME_UNEXPECTED: DATA frame before the response head"},
		{"no status", h3Frame(h3FrameHeaders, h3Section("server", "x")), false, errNoStatus.Error()},
		{"two statuses", h3Frame(h3FrameHeaders, h3Section(":status", "200", ":status", "204")), false, errDuplicateStatus.Error()},
		{"short body", append(h3Frame(h3FrameHeaders, h3Section(":status", "200", "content-length", "10")), h3Frame(h3FrameData, []byte("abc"))...), false, errH2LengthMismatch.Error()},
		{"status 101", h3Frame(h3FrameHeaders, h3Section(":status", "101")), false, errH3Status101.Error()},
		{"status -99", h3Frame(h3FrameHeaders, h3Section(":status", "-99", "content-length", "0")), false, errBadStatus.Error()},
		{"status 600", h3Frame(h3FrameHeaders, h3Section(":status", "600", "content-length", "0")), false, errBadStatus.Error()},
		{"status 99", h3Frame(h3FrameHeaders, h3Section(":status", "99", "content-length", "0")), false, errBadStatus.Error()},
		{"dynamic table", h3Frame(h3FrameHeaders, []byte{0, 0, 0x80}), true, errH3QPACK.Error()},
		{"bad huffman", h3Frame(h3FrameHeaders, []byte{0, 0, 0x54, 0x81, 0xff}), true, errH3QPACK.Error()}, // content-length: decoded
		{"truncated frame", func() []byte { b := h3OK("hello"); return b[:len(b)-2] }(), true, errH3Truncated.Error()},
		{"push promise", append(h3Frame(h3FramePushPromise, []byte{0}), h3OK("hi")...), true, errH3PushPromise.Error()},
		{"settings on a request", append(h3Frame(h3FrameSettings, nil), h3OK("hi")...), true, errH3FrameOnRequest.Error()},
		{"huge head", big, false, errH3HeadersTooLarge.Error()},
		{"33 informational heads", append(bytes.Repeat(h3Frame(h3FrameHeaders, h3Section(":status", "103")), maxInterim+1), h3OK("hi")...), false, errH3TooManyInterim.Error()},
		{"data after trailers", append(append(h3OK("hi"), h3Frame(h3FrameHeaders, h3Section("x-t", "1"))...), h3Frame(h3FrameData, []byte("x"))...), false, errH3AfterTrailers.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startH3Hostile(t, h3Script{stream: func(hc *h3HostileConn, str *quic.Stream, _ int64) {
				hc.respond(str, tc.frames)
			}})
			const n = 4
			res, err, _ := runH2Within(t, h3Cfg(t, s, n, 1, 1), 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if res.Complete != n || res.Failed.Exceptions != n || res.Failed.Total != n || len(res.StatusCounts) != 0 {
				t.Errorf("Complete %d Failed %+v statuses %v, want %d Exceptions and no status", res.Complete, res.Failed, res.StatusCounts, n)
			}
			if got := res.FirstError["exceptions"]; got != tc.err {
				t.Errorf("first exception %q, want %q", got, tc.err)
			}
			conns := s.conns.Load()
			if tc.conn && conns != n || !tc.conn && conns != 1 {
				t.Errorf("%d connections for %d requests (connection error: %v)", conns, n, tc.conn)
			}
		})
	}
}

// Well-formed but unusual responses: informational heads, unknown frame
// types, trailers, a HEAD response's content-length, a 204.
func TestHTTP3UnusualResponses(t *testing.T) {
	unknown := h3Frame(0x21, []byte("grease")) // 0x1f·N+0x21: reserved, to be ignored
	for _, tc := range []struct {
		name   string
		frames []byte
		method string
		body   int64
	}{
		{"interim heads", append(append(h3Frame(h3FrameHeaders, h3Section(":status", "100")), h3Frame(h3FrameHeaders, h3Section(":status", "103"))...), h3OK("hello")...), "GET", 5},
		{"32 interim heads", append(bytes.Repeat(h3Frame(h3FrameHeaders, h3Section(":status", "103")), maxInterim), h3OK("hello")...), "GET", 5},
		{"unknown frames", append(append(unknown, h3OK("hello")...), unknown...), "GET", 5},
		{"trailers", append(h3OK("hello"), h3Frame(h3FrameHeaders, h3Section("x-checksum", "1"))...), "GET", 5},
		{"head", h3Frame(h3FrameHeaders, h3Section(":status", "200", "content-length", "1000")), "HEAD", 0},
		{"no content", h3Frame(h3FrameHeaders, h3Section(":status", "204", "content-length", "7")), "GET", 0},
		{"literal names", append(h3Frame(h3FrameHeaders, h3Section(":status", "200", "x-long-name-literal", "v", "Server", "weird")), h3Frame(h3FrameData, []byte("hello"))...), "GET", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startH3Hostile(t, h3Script{stream: func(hc *h3HostileConn, str *quic.Stream, _ int64) {
				hc.respond(str, tc.frames)
			}})
			cfg := h3Cfg(t, s, 6, 1, 2)
			cfg.Spec.Method = tc.method
			res, err, _ := runH2Within(t, cfg, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if res.Complete != 6 || res.Failed.Total != 0 || res.BodyRead != 6*tc.body {
				t.Errorf("Complete %d Failed %+v (%v) body %d, want 6 good responses of %d bytes", res.Complete, res.Failed, res.FirstError, res.BodyRead, tc.body)
			}
		})
	}
}

// h3HeapLimit bounds the heap in use during a flood test: gab's buffers and
// quic-go's flow-control windows for a few connections, and the test
// server's, far below what an unbounded queue reaches in the same time.
const h3HeapLimit = 128 << 20

// floodStream writes b on str until the stream or connection fails.
func floodStream(str interface{ Write([]byte) (int, error) }, b []byte, gap time.Duration) {
	for {
		if _, err := str.Write(b); err != nil {
			return
		}
		if gap > 0 {
			time.Sleep(gap)
		}
	}
}

// A server that never answers, or answers with a response that never ends
// (endless DATA, endless frames of unknown type, a head trickled byte by
// byte), cannot hold gab past -t: the run ends at the time limit with its
// report, the heap stays flat, and what keeps arriving is activity, not the
// silence that -s ends.
func TestHTTP3StallsAndEndlessResponses(t *testing.T) {
	unknown := h3Frame(0x21, make([]byte, 8<<10))
	for _, tc := range []struct {
		name   string
		stream func(hc *h3HostileConn, str *quic.Stream, _ int64)
		silent bool // nothing arrives: -s ends the run when it is shorter than -t
	}{
		{"no answer", func(hc *h3HostileConn, str *quic.Stream, _ int64) { <-hc.Context().Done() }, true},
		{"endless data", func(hc *h3HostileConn, str *quic.Stream, _ int64) {
			_, _ = str.Write(h3Frame(h3FrameHeaders, h3Section(":status", "200")))
			_, _ = str.Write(quicvarint.Append([]byte{h3FrameData}, 1<<60))
			floodStream(str, make([]byte, 16<<10), 0)
		}, false},
		{"endless unknown frames", func(hc *h3HostileConn, str *quic.Stream, _ int64) {
			floodStream(str, unknown, 0)
		}, false},
		{"head trickle", func(hc *h3HostileConn, str *quic.Stream, _ int64) {
			_, _ = str.Write(quicvarint.Append([]byte{h3FrameHeaders}, 100000))
			floodStream(str, []byte{0}, 20*time.Millisecond)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startH3Hostile(t, h3Script{stream: tc.stream})
			cfg := h3Cfg(t, s, 100, 2, 2)
			cfg.TimeLimit = 1500 * time.Millisecond
			cfg.Timeout = 600 * time.Millisecond
			peak := heapPeak()
			res, err, took := runH2Within(t, cfg, 20*time.Second)
			heap := peak()
			if tc.silent {
				if err == nil || res.Ending != EndFatal || res.fatal.Exit != 119 {
					t.Errorf("ending %v (%v), want -s's timeout (exit 119)", res.Ending, err)
				}
			} else if err != nil || res.Ending != EndTimeLimit {
				t.Errorf("ending %v (%v), want the time limit: the server was never silent", res.Ending, err)
			}
			if took > 10*time.Second || heap > h3HeapLimit {
				t.Errorf("run took %v with a heap of up to %d MiB", took, heap>>20)
			}
		})
	}
}

// The server's control and QPACK streams: floods of what is allowed cost
// gab nothing that grows; what is not allowed (a QPACK instruction for a
// dynamic table gab refused, a push stream, a control stream without
// SETTINGS first, or closed) fails the connection, its requests being
// Exceptions.
func TestHTTP3ServerStreams(t *testing.T) {
	uni := func(kind byte, then func(str *quic.SendStream)) func(hc *h3HostileConn) {
		return func(hc *h3HostileConn) {
			str, err := hc.OpenUniStream()
			if err != nil {
				return
			}
			if _, err := str.Write([]byte{kind}); err != nil {
				return
			}
			then(str)
		}
	}
	wait := func(hc *h3HostileConn) func(str *quic.SendStream) {
		return func(*quic.SendStream) { <-hc.Context().Done() }
	}
	// afterFlood answers once the connection's flood has written least
	// bytes, most of which gab has had to read (flow control lets the
	// server get only a window ahead of gab's reads): the requests are
	// answered in the midst of the flood however slowly the machine runs,
	// where a -t run of fixed length could end before any was.
	afterFlood := func(least int64) func(hc *h3HostileConn, str *quic.Stream, _ int64) {
		return func(hc *h3HostileConn, str *quic.Stream, _ int64) {
			for hc.flooded.Load() < least {
				select {
				case <-hc.Context().Done():
					return
				case <-time.After(time.Millisecond):
				}
			}
			hc.respond(str, h3OK("hello"))
		}
	}
	answer := afterFlood(4 << 20)
	// late answers only if gab has not closed the connection by 20 s: every
	// case that uses it expects gab to close it, so no request is answered
	// first, however slow the machine (a gab that does not close it fails
	// the run's 15 s bound).
	late := func(hc *h3HostileConn, str *quic.Stream, _ int64) {
		select {
		case <-hc.Context().Done():
		case <-time.After(20 * time.Second):
			hc.respond(str, h3OK("hello"))
		}
	}
	for _, tc := range []struct {
		name   string
		script h3Script
		err    string // the requests' Exception, "" if they all succeed
	}{
		{"control flood", h3Script{conn: func(hc *h3HostileConn) {
			floodStream(counted(hc, writerFunc(hc.control)), h3Frame(0x21, make([]byte, 4<<10)), 0)
		}, stream: answer}, ""},
		{"qpack capacity flood", h3Script{conn: func(hc *h3HostileConn) {
			uni(h3StreamQPACKEncoder, func(str *quic.SendStream) { floodStream(counted(hc, str), bytes.Repeat([]byte{0x20}, 4<<10), 0) })(hc)
		}, stream: answer}, ""},
		{"qpack decoder flood", h3Script{conn: func(hc *h3HostileConn) {
			uni(h3StreamQPACKDecoder, func(str *quic.SendStream) { floodStream(counted(hc, str), bytes.Repeat([]byte{0x40}, 4<<10), 0) })(hc)
		}, stream: answer}, ""},
		{"unknown stream flood", h3Script{conn: func(hc *h3HostileConn) {
			for {
				str, err := hc.OpenUniStreamSync(hc.Context())
				if err != nil {
					return
				}
				n, _ := str.Write([]byte{0x21, 'x'})
				hc.flood(n)
			}
		}, stream: afterFlood(1000 * 2)}, ""}, // 1000 streams
		{"qpack insert", h3Script{conn: uni(h3StreamQPACKEncoder, func(str *quic.SendStream) { _, _ = str.Write([]byte{0x3f, 0xe1, 0x1f}) }), stream: late},
			"QUIC connection closed by gab: QPACK_ENCODER_STREAM_ERROR"},
		{"push stream", h3Script{conn: func(hc *h3HostileConn) { uni(h3StreamPush, wait(hc))(hc) }, stream: late},
			"QUIC connection closed by gab: H3_ID_ERROR"},
		{"second control stream", h3Script{conn: func(hc *h3HostileConn) {
			uni(h3StreamControl, func(str *quic.SendStream) { _, _ = str.Write([]byte{h3FrameSettings, 0}); <-hc.Context().Done() })(hc)
		}, stream: late}, "QUIC connection closed by gab: H3_STREAM_CREATION_ERROR"},
		{"no settings", h3Script{noControl: true, conn: func(hc *h3HostileConn) {
			uni(h3StreamControl, func(str *quic.SendStream) { _, _ = str.Write(h3Frame(h3FrameGoAway, []byte{0})); <-hc.Context().Done() })(hc)
		}, stream: late}, "QUIC connection closed by gab: H3_MISSING_SETTINGS"},
		{"control closed", h3Script{noControl: true, conn: func(hc *h3HostileConn) {
			uni(h3StreamControl, func(str *quic.SendStream) { _, _ = str.Write([]byte{h3FrameSettings, 0}); _ = str.Close() })(hc)
		}, stream: late}, "QUIC connection closed by gab: H3_CLOSED_CRITICAL_STREAM"},
		{"bad settings", h3Script{noControl: true, conn: func(hc *h3HostileConn) {
			uni(h3StreamControl, func(str *quic.SendStream) {
				_, _ = str.Write(h3Frame(h3FrameSettings, []byte{2, 0}))
				<-hc.Context().Done()
			})(hc)
		}, stream: late}, "QUIC connection closed by gab: H3_SETTINGS_ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startH3Hostile(t, tc.script)
			const n = 20 // a flood goes on for the whole run, each answer after some of it
			cfg := h3Cfg(t, s, n, 2, 2)
			peak := heapPeak()
			res, err, took := runH2Within(t, cfg, 30*time.Second)
			heap := peak()
			if err != nil {
				t.Fatal(err)
			}
			if tc.err == "" && (res.Ending != EndCompleted || res.Complete != n || res.Failed.Total != 0) {
				t.Errorf("ending %v, Complete %d Failed %+v (%v), the server flooded %d bytes; want %d good responses", res.Ending, res.Complete, res.Failed, res.FirstError, s.flooded.Load(), n)
			}
			if tc.err != "" && (res.Complete != n || res.Failed.Exceptions != n || res.FirstError["exceptions"] != tc.err) {
				t.Errorf("Complete %d Failed %+v (%q), write errors %d, non-2xx %d, retries %d, first errors %q; want %d Exceptions: %s",
					res.Complete, res.Failed, res.FirstError["exceptions"], res.WriteErrors, res.Non2xx, res.Retries, res.FirstError, n, tc.err)
			}
			if took > 15*time.Second || heap > h3HeapLimit {
				t.Errorf("run took %v with a heap of up to %d MiB", took, heap>>20)
			}
		})
	}
}

// A request whose write the breach cuts short (the server opens a second
// control stream while gab is still sending a large body, which the server
// does not read) is an Exception, as the requests in flight on the
// connection gab closed are: the write failed because gab ended the
// connection, not because the server refused the request, and how far the
// write got when the breach arrived must not change the count.
func TestHTTP3BreachDuringWrite(t *testing.T) {
	checkEngineLeaks(t)
	s := startH3Hostile(t, h3Script{early: true, stream: func(hc *h3HostileConn, str *quic.Stream, _ int64) {
		if _, loaded := hc.data.LoadOrStore("breach", true); loaded {
			return
		}
		ctrl, err := hc.OpenUniStream()
		if err != nil {
			return
		}
		_, _ = ctrl.Write([]byte{h3StreamControl, h3FrameSettings, 0})
		<-hc.Context().Done()
	}})
	const n = 4
	cfg := h3Cfg(t, s, n, 1, 1)
	cfg.Spec.Method = "POST"
	cfg.Spec.Body, cfg.Spec.HasBody = bytes.Repeat([]byte("p"), 4<<20), true
	res, err, _ := runH2Within(t, cfg, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const want = "QUIC connection closed by gab: H3_STREAM_CREATION_ERROR"
	if res.Complete != n || res.Failed.Exceptions != n || res.Failed.Total != n || res.WriteErrors != 0 || res.FirstError["exceptions"] != want {
		t.Errorf("Complete %d Failed %+v write errors %d (%v), want %d Exceptions: %s", res.Complete, res.Failed, res.WriteErrors, res.FirstError, n, want)
	}
}

// flood counts n bytes a flood wrote on the connection.
func (hc *h3HostileConn) flood(n int) {
	hc.flooded.Add(int64(n))
	hc.srv.flooded.Add(int64(n))
}

// counted is w, counting the bytes it took as hc's flood.
func counted(hc *h3HostileConn, w interface{ Write([]byte) (int, error) }) writerFunc {
	return func(b []byte) error {
		n, err := w.Write(b)
		hc.flood(n)
		return err
	}
}

// writerFunc makes a function an io.Writer.
type writerFunc func([]byte) error

func (f writerFunc) Write(b []byte) (int, error) {
	if err := f(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// A server may answer before the request's body has all arrived and then
// stop reading it with H3_NO_ERROR (RFC 9114 §4.1): the response counts,
// with no write error.
func TestHTTP3AnswerBeforeBody(t *testing.T) {
	s := startH3Hostile(t, h3Script{early: true, stream: func(hc *h3HostileConn, str *quic.Stream, _ int64) {
		var head [3]byte // the HEADERS frame's type and length (a 2-byte varint)
		if _, err := io.ReadFull(str, head[:]); err != nil {
			return
		}
		l, _, _ := quicvarint.Parse(head[1:])
		if _, err := io.CopyN(io.Discard, str, int64(l)); err != nil {
			return
		}
		hc.respond(str, h3OK("early"))
		str.CancelRead(quic.StreamErrorCode(http3.ErrCodeNoError))
	}})
	cfg := h3Cfg(t, s, 6, 1, 2)
	cfg.Spec.Method = "POST"
	cfg.Spec.Body, cfg.Spec.HasBody = bytes.Repeat([]byte("p"), 4<<20), true
	res, err, _ := runH2Within(t, cfg, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != 6 || res.Failed.Total != 0 || res.WriteErrors != 0 || res.BodyRead != 6*5 {
		t.Errorf("complete %d failed %+v write errors %d body %d (%v), want 6 good responses", res.Complete, res.Failed, res.WriteErrors, res.BodyRead, res.FirstError)
	}
}
