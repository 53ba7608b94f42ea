package client

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Hostile h2c servers: floods, malformed responses, frames on streams gab
// never opened, refusals of every request. Each test runs on both HTTP/2
// paths (TestHTTP2HostileBothPaths) and bounds the run's wall time, and the
// flood tests the heap as well: a server must not be able to hang or bloat gab.

// h2Hostile is a raw h2c server whose connections are run by a script.
type h2Hostile struct {
	fs       *faultServer
	requests atomic.Int64 // HEADERS frames read from gab (requests received)
	protoErr atomic.Int64 // GOAWAY(PROTOCOL_ERROR) frames read from gab
	calm     atomic.Int64 // RST_STREAM(ENHANCE_YOUR_CALM) frames read from gab
}

// h2HostileConn is one connection as its script sees it.
type h2HostileConn struct {
	net.Conn
	srv  *h2Hostile
	fr   *http2.Framer // the write side, the script's alone
	reqs chan uint32   // stream IDs of the requests read; closed when gab closes the connection
	hbuf bytes.Buffer
	enc  *hpack.Encoder
}

// startH2Hostile runs script on every connection, after the preface and the
// server's SETTINGS. With read, a goroutine reads gab's frames and lists its
// requests on reqs; without, nothing past the preface is ever read.
func startH2Hostile(tb testing.TB, read bool, script func(hc *h2HostileConn)) *h2Hostile {
	return startH2HostileTLS(tb, nil, read, script)
}

// startH2HostileTLS is startH2Hostile behind crypto/tls with conf (which
// must offer h2 by ALPN), or plain when conf is nil.
func startH2HostileTLS(tb testing.TB, conf *tls.Config, read bool, script func(hc *h2HostileConn)) *h2Hostile {
	s := &h2Hostile{}
	s.fs = newFaultServerTLS(tb, conf, func(fc *faultConn) {
		preface := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(fc.br, preface); err != nil {
			return
		}
		hc := &h2HostileConn{Conn: fc.Conn, srv: s, reqs: make(chan uint32, 1024)}
		hc.fr = http2.NewFramer(fc.Conn, nil)
		hc.enc = hpack.NewEncoder(&hc.hbuf)
		if hc.fr.WriteSettings() != nil {
			return
		}
		if read {
			go hc.readLoop(fc)
		}
		script(hc)
	})
	return s
}

func (s *h2Hostile) url() string { return "http://127.0.0.1:" + strconv.Itoa(s.fs.port()) + "/" }

func (hc *h2HostileConn) readLoop(fc *faultConn) {
	defer close(hc.reqs)
	fr := http2.NewFramer(io.Discard, fc.br)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		if g, ok := f.(*http2.GoAwayFrame); ok && g.ErrCode == http2.ErrCodeProtocol {
			hc.srv.protoErr.Add(1)
		}
		if r, ok := f.(*http2.RSTStreamFrame); ok && r.ErrCode == http2.ErrCodeEnhanceYourCalm {
			hc.srv.calm.Add(1)
		}
		if h, ok := f.(*http2.HeadersFrame); ok {
			hc.srv.requests.Add(1)
			select {
			case hc.reqs <- h.StreamID:
			case <-fc.srv.closed:
				return
			}
		}
	}
}

// block encodes name, value pairs as a header block.
func (hc *h2HostileConn) block(fields ...string) []byte {
	hc.hbuf.Reset()
	for i := 0; i+1 < len(fields); i += 2 {
		_ = hc.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return bytes.Clone(hc.hbuf.Bytes())
}

// respond answers stream id with a head of fields and body (none if empty).
func (hc *h2HostileConn) respond(id uint32, body string, fields ...string) error {
	if err := hc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hc.block(fields...), EndHeaders: true, EndStream: body == ""}); err != nil {
		return err
	}
	if body == "" {
		return nil
	}
	return hc.fr.WriteData(id, true, []byte(body))
}

// floodFrames is n copies of the frame that write puts into a Framer.
func floodFrames(n int, write func(fr *http2.Framer) error) []byte {
	var buf bytes.Buffer
	fr := http2.NewFramer(&buf, nil)
	for range n {
		if err := write(fr); err != nil {
			panic(err)
		}
	}
	return buf.Bytes()
}

// flood writes buf until gab closes the connection.
func (hc *h2HostileConn) flood(buf []byte) {
	for {
		if _, err := hc.Write(buf); err != nil {
			return
		}
	}
}

// h2FieldsPayload is n bytes (rounded down to whole fields) of valid HPACK:
// "x-a: b" literals that are never indexed.
func h2FieldsPayload(n int) []byte {
	field := []byte{0x10, 3, 'x', '-', 'a', 1, 'b'}
	return bytes.Repeat(field, n/len(field))
}

// continuationFlood opens the response head of the first request on each
// connection and continues it, never ending it: a frame of size bytes every
// gap (0: as fast as the socket takes them).
func continuationFlood(size int, gap time.Duration) func(hc *h2HostileConn) {
	payload := h2FieldsPayload(size)
	return func(hc *h2HostileConn) {
		id, ok := <-hc.reqs
		if !ok {
			return
		}
		if hc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hc.block(":status", "200")}) != nil {
			return
		}
		frames := floodFrames(1, func(fr *http2.Framer) error { return fr.WriteContinuation(id, false, payload) })
		for {
			if _, err := hc.Write(frames); err != nil {
				return
			}
			if gap > 0 {
				time.Sleep(gap)
			}
		}
	}
}

// heapPeak samples the heap in use until the returned function is called,
// which reports the largest sample.
func heapPeak() func() uint64 {
	runtime.GC() // what earlier tests left is not this test's
	stop, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var ms runtime.MemStats
		var most uint64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			most = max(most, ms.HeapInuse)
			select {
			case <-stop:
				peak <- most
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(stop); return <-peak }
}

// runH2Within runs cfg and fails the test if the run has not ended within
// limit (a run that ignores -t, -s and its context leaks; the server's
// cleanup ends it). It reports the run's wall time.
func runH2Within(t *testing.T, cfg Config, limit time.Duration) (*Result, error, time.Duration) {
	t.Helper()
	rn, err := newRunner(t, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	type ended struct {
		res *Result
		err error
	}
	done := make(chan ended, 1)
	start := time.Now()
	go func() {
		res, err := rn.Run(t.Context())
		done <- ended{res, err}
	}()
	select {
	case e := <-done:
		return e.res, e.err, time.Since(start)
	case <-time.After(limit):
		t.Fatalf("the run did not end within %v", limit)
		return nil, nil, 0
	}
}

// h2HeapLimit bounds the heap in use during a flood test: gab's buffers for
// a few connections and the test's own, far below what an unbounded queue
// reaches in the same time (gigabytes).
const h2HeapLimit = 96 << 20

// An endless header block (CONTINUATION frames, never END_HEADERS) fails
// its connection past h2MaxHeaderBlock: the request is an Exception and the
// run goes on with a new connection.
func testH2ContinuationFlood(t *testing.T) {
	s := startH2Hostile(t, true, continuationFlood(16<<10, 0))
	cfg := h2TestConfig(t, s.url(), 4, 1, 1)
	cfg.Timeout = 10 * time.Second
	peak := heapPeak()
	res, err, took := runH2Within(t, cfg, 30*time.Second)
	heap := peak()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 4 || res.Failed.Exceptions != 4 || res.Failed.Total != 4 {
		t.Errorf("Complete %d Failed %+v, want 4 requests, all Exceptions", res.Complete, res.Failed)
	}
	if got := s.requests.Load(); got != 4 {
		t.Errorf("server read %d requests, want 4 (none sent twice)", got)
	}
	// Each request ends at the limit, long before -s.
	if took > cfg.Timeout/2 || heap > h2HeapLimit {
		t.Errorf("run took %v (-s %v) with a heap of up to %d MiB", took, cfg.Timeout, heap>>20)
	}
}

// A header block trickled slowly never looks like silence: the run ends at
// -t with its report, not with the -s idle timeout (exit 119).
func testH2ContinuationTrickle(t *testing.T) {
	s := startH2Hostile(t, true, continuationFlood(512, 10*time.Millisecond))
	cfg := h2TestConfig(t, s.url(), 100, 1, 1)
	cfg.Timeout = 300 * time.Millisecond
	cfg.TimeLimit = 1200 * time.Millisecond
	res, err, took := runH2Within(t, cfg, 8*time.Second)
	if err != nil {
		t.Fatalf("Run: %v, want the -t report (the server never went quiet)", err)
	}
	if res.Ending != EndTimeLimit || took > 4*time.Second {
		t.Errorf("Ending %v after %v, want the time limit", res.Ending, took)
	}
}

// headerListBomb answers every request with a header block of about 60 KiB
// that decodes to about 240 MB: one 4000-byte field put in the HPACK dynamic
// table, then indexed again and again (one byte each).
func headerListBomb(hc *h2HostileConn) {
	var blk bytes.Buffer
	enc := hpack.NewEncoder(&blk)
	_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	_ = enc.WriteField(hpack.HeaderField{Name: "x-big", Value: string(bytes.Repeat([]byte("b"), 4000))})
	block := append(blk.Bytes(), bytes.Repeat([]byte{0x80 | 62}, 60000)...) // 62: the first dynamic entry
	for id := range hc.reqs {
		rest := block
		first := rest[:h2FrameSize]
		rest = rest[len(first):]
		if hc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: first, EndStream: true}) != nil {
			return
		}
		for len(rest) > 0 {
			frag := rest[:min(len(rest), h2FrameSize)]
			rest = rest[len(frag):]
			if hc.fr.WriteContinuation(id, len(rest) == 0, frag) != nil {
				return
			}
		}
	}
}

// A header block that HPACK's indexing decodes to hundreds of MB fails its
// connection past h2MaxHeaderList decoded bytes: Exceptions, memory flat.
func testH2HeaderListBomb(t *testing.T) { testHeaderListBomb(t, 0) }

// With -v 2 (which dumps heads, on the goroutine path) the head's text is
// bounded too.
func TestHTTP2HeaderListBombVerbose(t *testing.T) { testHeaderListBomb(t, 2) }

func testHeaderListBomb(t *testing.T, verbosity int) {
	s := startH2Hostile(t, true, headerListBomb)
	cfg := h2TestConfig(t, s.url(), 3, 1, 1)
	cfg.Verbosity = verbosity
	peak := heapPeak()
	res, err, took := runH2Within(t, cfg, 20*time.Second)
	heap := peak()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 3 || res.Failed.Exceptions != 3 || res.Failed.Total != 3 {
		t.Errorf("Complete %d Failed %+v, want 3 Exceptions", res.Complete, res.Failed)
	}
	if took > 5*time.Second || heap > h2HeapLimit {
		t.Errorf("run took %v with a heap of up to %d MiB", took, heap>>20)
	}
}

// Floods of PING or SETTINGS frames (100 per write, forever), from a server
// that reads what gab sends or one that never does: gab's output for them is
// bounded, and -t ends the run with its report.
func testH2ControlFlood(t *testing.T) {
	ping := floodFrames(100, func(fr *http2.Framer) error { return fr.WritePing(false, [8]byte{1}) })
	settings := floodFrames(100, func(fr *http2.Framer) error { return fr.WriteSettings() })
	for _, tc := range []struct {
		name  string
		read  bool
		frame []byte
	}{
		{"ping/reading", true, ping},
		{"ping/not-reading", false, ping},
		{"settings/reading", true, settings},
		{"settings/not-reading", false, settings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startH2Hostile(t, tc.read, func(hc *h2HostileConn) { hc.flood(tc.frame) })
			cfg := h2TestConfig(t, s.url(), 100000, 2, 2)
			cfg.TimeLimit = 700 * time.Millisecond
			peak := heapPeak()
			res, err, took := runH2Within(t, cfg, 15*time.Second)
			heap := peak()
			if err != nil {
				t.Fatalf("Run: %v, want the -t report", err)
			}
			if res.Ending != EndTimeLimit && res.Ending != EndCompleted {
				t.Errorf("Ending %v", res.Ending)
			}
			// Ends at -t, with a few seconds for a loaded machine to get
			// through the frames already read.
			if took > cfg.TimeLimit+4*time.Second || heap > h2HeapLimit {
				t.Errorf("run took %v (-t %v) with a heap of up to %d MiB", took, cfg.TimeLimit, heap>>20)
			}
		})
	}
}

// pushPromiseEvery answers every request with a PUSH_PROMISE.
func pushPromiseEvery(hc *h2HostileConn) {
	for id := range hc.reqs {
		if hc.fr.WritePushPromise(http2.PushPromiseParam{StreamID: id, PromiseID: 2, EndHeaders: true,
			BlockFragment: hc.block(":method", "GET", ":scheme", "http", ":authority", "x", ":path", "/p")}) != nil {
			return
		}
	}
}

// A server that sends PUSH_PROMISE (push is disabled) breaks the protocol:
// the connection fails, the request is an Exception and is never sent again
// (the server saw it).
func testH2PushPromise(t *testing.T) { testPushPromise(t, nil) }

// testPushPromise runs -n 5 with body (none if nil) against pushPromiseEvery.
func testPushPromise(t *testing.T, body []byte) {
	s := startH2Hostile(t, true, pushPromiseEvery)
	cfg := h2TestConfig(t, s.url(), 5, 1, 1)
	if body != nil {
		cfg.Spec.Method, cfg.Spec.Body, cfg.Spec.HasBody = "POST", body, true
	}
	res, err, _ := runH2Within(t, cfg, 10*time.Second)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 5 || res.Failed.Exceptions != 5 || res.Retries != 0 {
		t.Errorf("Complete %d Failed %+v Retries %d, want 5 Exceptions, no retry", res.Complete, res.Failed, res.Retries)
	}
	if got := s.requests.Load(); got != 5 {
		t.Errorf("server received %d requests for -n 5", got)
	}
}

// GOAWAY with last stream ID 0 on every request: the server processed none,
// so each is sent again, at most h2MaxRetries times, then an Exception.
func testH2GoAwayEveryRequest(t *testing.T) {
	s := startH2Hostile(t, true, func(hc *h2HostileConn) {
		for range hc.reqs {
			if hc.fr.WriteGoAway(0, http2.ErrCodeNo, nil) != nil {
				return
			}
		}
	})
	cfg := h2TestConfig(t, s.url(), 20, 1, 1)
	res, err, _ := runH2Within(t, cfg, 10*time.Second)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 20 || res.Failed.Exceptions != 20 || res.Retries != 20*h2MaxRetries {
		t.Errorf("Complete %d Failed %+v Retries %d, want 20 Exceptions after %d retries", res.Complete, res.Failed, res.Retries, 20*h2MaxRetries)
	}
	if got := s.requests.Load(); got != 20*(1+h2MaxRetries) {
		t.Errorf("server received %d requests for -n 20, want %d", got, 20*(1+h2MaxRetries))
	}
}

// A server that sends a response head, then GOAWAY with last stream ID 0,
// as if it had processed nothing, then the body: the head proves it
// processed the request, which is not sent again, and its response
// completes.
func testH2GoAwayAfterHead(t *testing.T) {
	s := startH2Hostile(t, true, func(hc *h2HostileConn) {
		for id := range hc.reqs {
			head := http2.HeadersFrameParam{StreamID: id, BlockFragment: hc.block(":status", "200", "content-length", "5"), EndHeaders: true}
			if hc.fr.WriteHeaders(head) != nil || hc.fr.WriteGoAway(0, http2.ErrCodeNo, nil) != nil || hc.fr.WriteData(id, true, []byte("hello")) != nil {
				return
			}
		}
	})
	const n = 6
	cfg := h2TestConfig(t, s.url(), n, 1, 1)
	res, err, _ := runH2Within(t, cfg, 30*time.Second)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != n || res.Failed.Total != 0 || res.Retries != 0 || res.BodyRead != 5*n {
		t.Errorf("Complete %d Failed %+v (%v) Retries %d body %d, want %d answers, none sent again", res.Complete, res.Failed, res.FirstError, res.Retries, res.BodyRead, n)
	}
	if got := s.requests.Load(); got != n {
		t.Errorf("server received %d requests for -n %d", got, n)
	}
}

// Malformed responses (two :status fields; a :status that is not three
// digits from 100 to 599; a body shorter than its content-length) are
// Exceptions; a HEAD response's content-length needs no body.
func testH2MalformedResponses(t *testing.T) {
	for _, tc := range []struct {
		name       string
		method     string
		body       string
		fields     []string
		exceptions int
		err        error // the first exception, when set
		interim    int   // 103 heads before the response
	}{
		{"two :status", "GET", "hello", []string{":status", "200", ":status", "204", "content-length", "5"}, 6, errDuplicateStatus, 0},
		{"status -99", "GET", "hello", []string{":status", "-99", "content-length", "5"}, 6, errBadStatus, 0},
		{"status 600", "GET", "hello", []string{":status", "600", "content-length", "5"}, 6, errBadStatus, 0},
		{"status 099", "GET", "hello", []string{":status", "099", "content-length", "5"}, 6, errBadStatus, 0},
		{"status 2000", "GET", "hello", []string{":status", "2000", "content-length", "5"}, 6, errBadStatus, 0},
		{"short body", "GET", "hello", []string{":status", "200", "content-length", "100"}, 6, errH2LengthMismatch, 0},
		{"long body", "GET", "hello", []string{":status", "200", "content-length", "2"}, 6, errH2LengthMismatch, 0},
		{"bad content-length", "GET", "hello", []string{":status", "200", "content-length", "5x"}, 6, errH2ContentLength, 0},
		{"well formed", "GET", "hello", []string{":status", "200", "content-length", "5"}, 0, nil, 0},
		{"status 599", "GET", "hello", []string{":status", "599", "content-length", "5"}, 0, nil, 0},
		{"HEAD", "HEAD", "", []string{":status", "200", "content-length", "100"}, 0, nil, 0},
		{"32 informational heads", "GET", "hello", []string{":status", "200", "content-length", "5"}, 0, nil, maxInterim},
		{"33 informational heads", "GET", "hello", []string{":status", "200", "content-length", "5"}, 6, errTooManyInterim, maxInterim + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startH2Hostile(t, true, func(hc *h2HostileConn) {
				for id := range hc.reqs {
					for range tc.interim {
						if hc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hc.block(":status", "103"), EndHeaders: true}) != nil {
							return
						}
					}
					if hc.respond(id, tc.body, tc.fields...) != nil {
						return
					}
				}
			})
			cfg := h2TestConfig(t, s.url(), 6, 2, 2)
			cfg.Spec.Method = tc.method
			res, err, _ := runH2Within(t, cfg, 10*time.Second)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Complete != 6 || res.Failed.Exceptions != tc.exceptions || res.Failed.Total != tc.exceptions {
				t.Errorf("Complete %d Failed %+v, want 6 with %d Exceptions", res.Complete, res.Failed, tc.exceptions)
			}
			if tc.err != nil && res.FirstError["exceptions"] != tc.err.Error() {
				t.Errorf("first exception %q, want %q", res.FirstError["exceptions"], tc.err)
			}
			if res.Complete-tc.exceptions != statusTotal(res.StatusCounts) {
				t.Errorf("status counts %v for %d answers", res.StatusCounts, res.Complete-tc.exceptions)
			}
		})
	}
}

// HEADERS on a stream gab never opened is a connection error: the
// connection is replaced, the request on it is an Exception, and the run
// ends promptly instead of waiting for -s.
func testH2UnopenedStream(t *testing.T) {
	s := startH2Hostile(t, true, func(hc *h2HostileConn) {
		for id := range hc.reqs {
			if hc.respond(id+100, "hello", ":status", "200") != nil {
				return
			}
		}
	})
	cfg := h2TestConfig(t, s.url(), 6, 2, 1)
	cfg.Timeout = 10 * time.Second
	res, err, took := runH2Within(t, cfg, 30*time.Second)
	var fe *FatalError
	if errors.As(err, &fe) {
		t.Fatalf("Run: %q (exit %d), want the run to go on", fe.Message, fe.Exit)
	} else if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 6 || res.Failed.Exceptions != 6 || took > cfg.Timeout/2 {
		t.Errorf("Complete %d Failed %+v after %v (-s %v), want 6 Exceptions at once", res.Complete, res.Failed, took, cfg.Timeout)
	}
	if got := s.fs.accepted.Load(); got < 6 {
		t.Errorf("%d connections, want one per request (each is replaced)", got)
	}
	// Each connection is closed with GOAWAY(PROTOCOL_ERROR), which the server
	// reads after the run (in the test's own time): the wait ends as soon
	// as all six are read, and its bound is generous, since a loaded
	// machine can leave the server's reading goroutines unscheduled for
	// seconds.
	deadline := time.Now().Add(20 * time.Second)
	for s.protoErr.Load() < 6 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := s.protoErr.Load(); got < 6 {
		t.Errorf("server read %d GOAWAY(PROTOCOL_ERROR), want one per connection (6)", got)
	}
}

// A server that sends informational (103) heads for ever on every stream
// would hold each request for ever, -s included (every head is activity):
// past maxInterim heads the request is an Exception and gab resets its
// stream with ENHANCE_YOUR_CALM, so the run ends with every request
// counted. The connection goes on (the server's further heads on the reset
// streams are read and dropped).
func testH2EndlessInformational(t *testing.T) {
	s := startH2Hostile(t, true, func(hc *h2HostileConn) {
		var open []uint32
		for {
			select {
			case id, ok := <-hc.reqs:
				if !ok {
					return
				}
				open = append(open, id)
			default:
				if len(open) == 0 {
					id, ok := <-hc.reqs
					if !ok {
						return
					}
					open = append(open, id)
				}
			}
			for _, id := range open {
				head := http2.HeadersFrameParam{StreamID: id, BlockFragment: hc.block(":status", "103", "link", "</a.css>; rel=preload"), EndHeaders: true}
				if hc.fr.WriteHeaders(head) != nil {
					return
				}
			}
		}
	})
	const n = 4
	cfg := h2TestConfig(t, s.url(), n, 1, 2)
	cfg.Timeout = 10 * time.Second
	res, err, _ := runH2Within(t, cfg, 30*time.Second)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != n || res.Failed.Exceptions != n || res.Failed.Total != n || res.Retries != 0 {
		t.Errorf("Complete %d Failed %+v Retries %d, want %d Exceptions", res.Complete, res.Failed, res.Retries, n)
	}
	if got := res.FirstError["exceptions"]; got != errTooManyInterim.Error() {
		t.Errorf("first exception %q, want %q", got, errTooManyInterim)
	}
	if got := s.fs.accepted.Load(); got != 1 {
		t.Errorf("%d connections, want 1 (a stream error leaves the connection alone)", got)
	}
	// The server reads the resets in its own time (see testH2UnopenedStream).
	// The last request's may never leave: its failure ends the run, which
	// closes the connection (and so every stream on it) at once.
	deadline := time.Now().Add(20 * time.Second)
	for s.calm.Load() < n-1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := s.calm.Load(); got < n-1 || got > n {
		t.Errorf("server read %d RST_STREAM(ENHANCE_YOUR_CALM), want one per request (%d, the last one perhaps not)", got, n)
	}
}

// A POST whose connection the server breaks after reading it (PUSH_PROMISE)
// is never sent again: the server may have read the body. (Request bodies
// take the goroutine path.)
func TestHTTP2BodyNeverResentAfterProtocolError(t *testing.T) { testPushPromise(t, []byte("payload")) }

// TestHTTP2HostileBothPaths runs the hostile-server tests on the event loop
// and on the goroutine path.
func TestHTTP2HostileBothPaths(t *testing.T) {
	tests := []pathTest{
		{"ContinuationFlood", testH2ContinuationFlood},
		{"ContinuationTrickle", testH2ContinuationTrickle},
		{"ControlFlood", testH2ControlFlood},
		{"PushPromise", testH2PushPromise},
		{"GoAwayEveryRequest", testH2GoAwayEveryRequest},
		{"GoAwayAfterHead", testH2GoAwayAfterHead},
		{"MalformedResponses", testH2MalformedResponses},
		{"UnopenedStream", testH2UnopenedStream},
		{"HeaderListBomb", testH2HeaderListBomb},
		{"EndlessInformational", testH2EndlessInformational},
	}
	h2Paths(t, func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.name, tc.fn)
		}
	})
}

// statusTotal is the number of responses counts holds.
func statusTotal(counts map[int]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
