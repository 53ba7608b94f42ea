package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2TestConfig is a hand-built --http2 configuration for rawURL ("http://127.0.0.1:port/path").
func h2TestConfig(t testing.TB, rawURL string, n, c, streams int) Config {
	t.Helper()
	cfg := urlConfig(t, rawURL, n, c, HTTP2)
	cfg.Streams = streams
	return cfg
}

func runH2(t *testing.T, cfg Config) (*Result, error) {
	t.Helper()
	rn, err := newRunner(t, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return rn.Run(ctx)
}

// h2Counter is an http.Handler and ConnState hook that checks what the client
// does: the number of requests and connections, the protocol of each request,
// and the most streams in flight at once on one connection.
type h2Counter struct {
	requests    atomic.Int64
	notHTTP2    atomic.Int64
	connections atomic.Int64
	delay       time.Duration
	body        []byte

	mu        sync.Mutex
	inFlight  map[string]int // by client address (one per connection)
	maxFlight int
	lastReq   *http.Request
	lastBody  []byte
}

func newH2Counter(delay time.Duration, body []byte) *h2Counter {
	return &h2Counter{delay: delay, body: body, inFlight: map[string]int{}}
}

// flight returns, under the handler's lock, how many client addresses
// (connections) sent requests and the most requests in flight on one.
func (h *h2Counter) flight() (addresses, most int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.inFlight), h.maxFlight
}

func (h *h2Counter) connState(_ net.Conn, s http.ConnState) {
	if s == http.StateNew {
		h.connections.Add(1)
	}
}

func (h *h2Counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.requests.Add(1)
	if r.ProtoMajor != 2 {
		h.notHTTP2.Add(1)
	}
	reqBody, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.inFlight[r.RemoteAddr]++
	h.maxFlight = max(h.maxFlight, h.inFlight[r.RemoteAddr])
	h.lastReq, h.lastBody = r, reqBody
	h.mu.Unlock()
	if h.delay > 0 {
		time.Sleep(h.delay)
	}
	h.mu.Lock()
	h.inFlight[r.RemoteAddr]--
	h.mu.Unlock()
	w.Header().Set("Server", "GoTest/1.0 (test)")
	w.Header().Set("Content-Length", strconv.Itoa(len(h.body)))
	_, _ = w.Write(h.body)
}

func startGoH2(t *testing.T, h *h2Counter, useTLS bool) *httptest.Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ConnState = h.connState
	if useTLS {
		ts.EnableHTTP2 = true
		ts.StartTLS()
	} else {
		ts.Config.Protocols = new(http.Protocols)
		ts.Config.Protocols.SetUnencryptedHTTP2(true)
		ts.Start()
	}
	t.Cleanup(ts.Close)
	return ts
}

func TestHTTP2AgainstGoServer(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 100)
	for _, tc := range []struct {
		name               string
		tls                bool
		n, c, streams      int
		wantProto, wantURL string
	}{
		{name: "h2c c=1 streams=1", n: 50, c: 1, streams: 1, wantProto: "h2c"},
		{name: "h2c c=3 streams=4", n: 300, c: 3, streams: 4, wantProto: "h2c"},
		{name: "h2 c=2 streams=5", tls: true, n: 200, c: 2, streams: 5, wantProto: "h2"},
		{name: "h2 c=4 streams=1", tls: true, n: 100, c: 4, streams: 1, wantProto: "h2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newH2Counter(2*time.Millisecond, body)
			ts := startGoH2(t, h, tc.tls)
			cfg := h2TestConfig(t, ts.URL+"/doc", tc.n, tc.c, tc.streams)
			res, err := runH2(t, cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := h.requests.Load(); got != int64(tc.n) {
				t.Errorf("server saw %d requests, want %d", got, tc.n)
			}
			if got := h.notHTTP2.Load(); got != 0 {
				t.Errorf("%d requests were not HTTP/2", got)
			}
			if got := h.connections.Load(); got != int64(tc.c) {
				t.Errorf("server saw %d connections, want %d", got, tc.c)
			}
			h.mu.Lock()
			maxFlight := h.maxFlight
			h.mu.Unlock()
			if maxFlight > tc.streams {
				t.Errorf("%d streams in flight on one connection, want at most %d", maxFlight, tc.streams)
			}
			if tc.streams > 1 && maxFlight < 2 {
				t.Errorf("streams were never concurrent (max %d in flight)", maxFlight)
			}
			if res.Complete != tc.n || res.Failed.Total != 0 || res.Non2xx != 0 || res.WriteErrors != 0 {
				t.Errorf("Complete %d Failed %+v Non2xx %d WriteErrors %d, want %d/0/0/0", res.Complete, res.Failed, res.Non2xx, res.WriteErrors, tc.n)
			}
			if res.Protocol != tc.wantProto {
				t.Errorf("Protocol %q, want %q", res.Protocol, tc.wantProto)
			}
			if res.ServerSoftware != "GoTest/1.0" {
				t.Errorf("ServerSoftware %q, want ab's cut %q", res.ServerSoftware, "GoTest/1.0")
			}
			if res.DocLength != 100 || res.BodyRead != int64(100*tc.n) {
				t.Errorf("DocLength %d BodyRead %d, want 100 and %d", res.DocLength, res.BodyRead, 100*tc.n)
			}
			if res.TotalRead <= res.BodyRead {
				t.Errorf("TotalRead %d does not include the header blocks (BodyRead %d)", res.TotalRead, res.BodyRead)
			}
			if res.KeepAlive != 0 {
				t.Errorf("KeepAlive %d without -k, want 0", res.KeepAlive)
			}
			if tc.tls && (res.TLS == nil || res.TLS.Protocol == "") {
				t.Errorf("TLS info missing: %+v", res.TLS)
			}
			if !tc.tls && res.TLS != nil {
				t.Errorf("TLS info %+v for h2c", res.TLS)
			}
		})
	}
}

// With -k, requests that reused their connection are Keep-Alive requests:
// all but the one that opened each connection.
func TestHTTP2KeepAliveCountsReusedConnections(t *testing.T) {
	h := newH2Counter(0, []byte("hello"))
	ts := startGoH2(t, h, false)
	cfg := h2TestConfig(t, ts.URL+"/", 40, 2, 1)
	cfg.KeepAlive = true
	res, err := runH2(t, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 40 || res.KeepAlive != 38 {
		t.Errorf("Complete %d KeepAlive %d, want 40 and 38", res.Complete, res.KeepAlive)
	}
	zeroConnect := 0
	for _, s := range res.Samples.Exact() {
		if s.Connect == 0 {
			zeroConnect++
		}
	}
	if zeroConnect < 38 {
		t.Errorf("%d samples with Connect 0, want at least 38 (reused connections)", zeroConnect)
	}
}

func TestHTTP2RequestHeadersAndBody(t *testing.T) {
	h := newH2Counter(0, []byte("posted\n"))
	ts := startGoH2(t, h, true)
	cfg := h2TestConfig(t, ts.URL+"/post?q=1", 3, 1, 1)
	body := bytes.Repeat([]byte("0123456789"), 20000) // 200 kB: more than one window and many frames
	cfg.Spec.Method = "POST"
	cfg.Spec.Body = body
	cfg.Spec.HasBody = true
	cfg.Spec.ContentType = "application/x-www-form-urlencoded"
	cfg.Spec.Cookie = "a=b"
	cfg.Spec.Auth = []string{"Authorization: Basic dTpw"}
	cfg.Spec.Headers = []string{"Host: example.test", "X-Test: one two", "Connection: close", "Accept: text/plain"}
	res, err := runH2(t, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 3 || res.Failed.Total != 0 || res.DocLength != 7 {
		t.Fatalf("Complete %d Failed %+v DocLength %d", res.Complete, res.Failed, res.DocLength)
	}
	h.mu.Lock()
	req, got := h.lastReq, h.lastBody
	h.mu.Unlock()
	if !bytes.Equal(got, body) {
		t.Errorf("server read %d body bytes, want %d", len(got), len(body))
	}
	checks := map[string]string{
		"method":         req.Method,
		"host":           req.Host,
		"uri":            req.RequestURI,
		"User-Agent":     req.Header.Get("User-Agent"),
		"Accept":         req.Header.Get("Accept"),
		"Cookie":         req.Header.Get("Cookie"),
		"Authorization":  req.Header.Get("Authorization"),
		"X-Test":         req.Header.Get("X-Test"),
		"Content-Type":   req.Header.Get("Content-Type"),
		"Content-Length": strconv.FormatInt(req.ContentLength, 10),
	}
	want := map[string]string{
		"method":         "POST",
		"host":           "example.test",
		"uri":            "/post?q=1",
		"User-Agent":     "ApacheBench/2.3",
		"Accept":         "text/plain",
		"Cookie":         "a=b",
		"Authorization":  "Basic dTpw",
		"X-Test":         "one two",
		"Content-Type":   "application/x-www-form-urlencoded",
		"Content-Length": strconv.Itoa(len(body)),
	}
	for k, w := range want {
		if checks[k] != w {
			t.Errorf("%s = %q, want %q", k, checks[k], w)
		}
	}
	if res.TotalSent <= int64(3*len(body)) {
		t.Errorf("TotalSent %d, want the bodies plus the header blocks", res.TotalSent)
	}
}

func TestHTTP2HeaderFields(t *testing.T) {
	cfg := Config{
		Target: Target{Host: "::1", Port: 8080, Path: "/p"},
		Spec: RequestSpec{
			Method:  "PUT",
			Target:  "/p",
			Host:    "[::1]:8080",
			Cookie:  "c=1",
			Auth:    []string{"Proxy-Authorization: Basic eDp5"},
			Headers: []string{"User-Agent: me", "Keep-Alive: 5", "bogus", "X-A:  v "},
			Body:    []byte("abc"),
			HasBody: true,
		},
	}
	var got []string
	for _, f := range h2Fields(&cfg) {
		got = append(got, f.Name+": "+f.Value)
	}
	want := []string{
		":method: PUT", ":scheme: http", ":authority: [::1]:8080", ":path: /p",
		"accept: */*", "user-agent: me", "x-a: v", "cookie: c=1",
		"proxy-authorization: Basic eDp5", "content-type: text/plain", "content-length: 3",
	}
	if len(got) != len(want) {
		t.Fatalf("fields\n%q\nwant\n%q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("field %d = %q, want %q", i, got[i], want[i])
		}
	}
	// The block must decode to the same fields, and twice in a row (it is reused).
	block, err := h2HeaderBlock(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	dec := hpack.NewDecoder(4096, nil)
	for round := 0; round < 2; round++ {
		fields, err := dec.DecodeFull(block)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(fields) != len(want) || fields[2].Value != "[::1]:8080" {
			t.Errorf("round %d decoded %v", round, fields)
		}
	}
}

func TestHTTP2RefusesServerWithoutH2(t *testing.T) {
	t.Run("ALPN", func(t *testing.T) {
		h := newH2Counter(0, []byte("x"))
		ts := httptest.NewUnstartedServer(h)
		ts.Config.ConnState = h.connState
		ts.Config.ErrorLog = log.New(io.Discard, "", 0) // our client hangs up mid-handshake on purpose
		ts.StartTLS()                                   // EnableHTTP2 false: ALPN offers http/1.1 only
		defer ts.Close()
		res, err := runH2(t, h2TestConfig(t, ts.URL+"/", 10, 2, 1))
		var fe *FatalError
		if !errors.As(err, &fe) || fe.Exit != 1 || fe.Message != "gab: server does not speak HTTP/2 (ALPN offered h2, the server chose http/1.1)\n" {
			t.Fatalf("err %#v, want the ALPN FatalError", err)
		}
		if res.Complete != 0 || h.requests.Load() != 0 {
			t.Errorf("Complete %d, server requests %d, want 0 and 0", res.Complete, h.requests.Load())
		}
	})
	t.Run("h2c against HTTP/1", func(t *testing.T) {
		h := newH2Counter(0, []byte("x"))
		ts := httptest.NewServer(h)
		defer ts.Close()
		_, err := runH2(t, h2TestConfig(t, ts.URL+"/", 10, 2, 1))
		var fe *FatalError
		if !errors.As(err, &fe) || fe.Exit != 1 || !bytes.HasPrefix([]byte(fe.Message), []byte("gab: server does not speak HTTP/2 (")) {
			t.Fatalf("err %#v, want the not-HTTP/2 FatalError", err)
		}
	})
}

func TestHTTP2RefusedConnectionIsFatalWithoutR(t *testing.T) {
	_, err := runH2(t, h2TestConfig(t, "http://127.0.0.1:"+strconv.Itoa(closedPort(t))+"/", 5, 1, 1))
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Message != "apr_socket_recv: Connection refused (111)\n" || fe.Exit != 111 {
		t.Fatalf("err %#v, want ab's connection-refused error", err)
	}
}

// rawH2Server is an HTTP/2 server written with the Framer, for faults that a
// real server does not produce on demand. act decides, for the k-th request
// the server reads (1-based, over all connections), what happens to it.
type rawH2Server struct {
	act         func(k int64, perConn int) h2Action
	maxStreams  uint32 // SETTINGS_MAX_CONCURRENT_STREAMS, 0 for none
	goawayAfter int    // per connection: GOAWAY after answering this many (0: never)
	window      uint32 // SETTINGS_INITIAL_WINDOW_SIZE, 0 for the default
	closeAfter  int    // per connection: close the socket, without GOAWAY, after answering this many
	// literalHeads: each head is sent as nginx sends it, every field a
	// Huffman-coded literal with incremental indexing that never refers
	// back to the table (by default heads come from x/net's encoder, which
	// indexes a field once and refers to it after).
	literalHeads bool

	bodyMu sync.Mutex
	bodies []int // request body sizes, in the order the requests ended

	requests atomic.Int64 // HEADERS read
	answered atomic.Int64 // responses sent
	resets   atomic.Int64 // RST_STREAM sent
	cancels  atomic.Int64 // RST_STREAM(CANCEL) received
	fs       *faultServer // accepts and runs the connections (fs.accepted counts them)
}

type h2Action int

const (
	h2Answer h2Action = iota
	h2Reset
	h2Stall
)

func startRawH2(tb testing.TB, s *rawH2Server) *rawH2Server {
	tb.Helper()
	s.fs = newFaultServer(tb, func(fc *faultConn) { s.serve(fc.Conn) })
	return s
}

func (s *rawH2Server) url() string { return "http://127.0.0.1:" + strconv.Itoa(s.fs.port()) + "/" }

func (s *rawH2Server) serve(c net.Conn) {
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	fr := http2.NewFramer(c, c)
	var settings []http2.Setting
	if s.maxStreams > 0 {
		settings = append(settings, http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: s.maxStreams})
	}
	if s.window > 0 {
		settings = append(settings, http2.Setting{ID: http2.SettingInitialWindowSize, Val: s.window})
	}
	if fr.WriteSettings(settings...) != nil {
		return
	}
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	dec := hpack.NewDecoder(4096, nil)
	answeredHere := 0
	goneAway := false
	bodySize := map[uint32]int{} // streams whose request body is still coming
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		var id uint32
		switch f := f.(type) {
		case *http2.DataFrame:
			n, ok := bodySize[f.StreamID]
			if !ok {
				continue
			}
			bodySize[f.StreamID] = n + len(f.Data())
			if f.Length > 0 {
				// Give the window back, as a server reading the body would.
				if fr.WriteWindowUpdate(0, f.Length) != nil || fr.WriteWindowUpdate(f.StreamID, f.Length) != nil {
					return
				}
			}
			if !f.StreamEnded() {
				continue
			}
			s.bodyMu.Lock()
			s.bodies = append(s.bodies, bodySize[f.StreamID])
			s.bodyMu.Unlock()
			delete(bodySize, f.StreamID)
			id = f.StreamID
		case *http2.SettingsFrame:
			if !f.IsAck() && fr.WriteSettingsAck() != nil {
				return
			}
		case *http2.RSTStreamFrame:
			if f.ErrCode == http2.ErrCodeCancel {
				s.cancels.Add(1)
			}
		case *http2.HeadersFrame:
			if _, err := dec.DecodeFull(f.HeaderBlockFragment()); err != nil {
				return
			}
			if goneAway {
				continue // above the GOAWAY's last stream: never processed
			}
			if !f.StreamEnded() {
				bodySize[f.StreamID] = 0 // answered when the body has come
				continue
			}
			id = f.StreamID
		}
		if id != 0 {
			k := s.requests.Add(1)
			action := h2Answer
			if s.act != nil {
				action = s.act(k, answeredHere+1)
			}
			switch action {
			case h2Reset:
				s.resets.Add(1) // before the write, as above
				if fr.WriteRSTStream(id, http2.ErrCodeInternal) != nil {
					return
				}
				continue
			case h2Stall:
				continue
			}
			hbuf.Reset()
			if s.literalHeads {
				hbuf.Write(literalHead(0x88, // :status 200, static index 8
					54, "raw/1.0", 33, time.Now().UTC().Format(http.TimeFormat), 31, "text/plain",
					28, "5", 34, `"6b0e3fa9-5"`))
			} else {
				_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
				_ = enc.WriteField(hpack.HeaderField{Name: "server", Value: "raw/1.0"})
				_ = enc.WriteField(hpack.HeaderField{Name: "content-length", Value: "5"})
			}
			if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndHeaders: true}) != nil {
				return
			}
			s.answered.Add(1) // before the write: the client may finish as soon as it is read
			answeredHere++
			if fr.WriteData(id, true, []byte("hello")) != nil {
				return
			}
			if s.closeAfter > 0 && answeredHere == s.closeAfter {
				// An abrupt close without GOAWAY: streams still open are
				// never answered. The socket's write side closes first and
				// what the client sent is read to its end, so that no RST
				// (which would drop answers not yet read, or fail a write
				// gab makes before it has read the FIN) ends it. The end
				// is gab's close once it has read the FIN (or the test's
				// end), however late a loaded machine lets it read it: the
				// deadline only bounds a client that never closes.
				if tc, ok := c.(interface{ CloseWrite() error }); ok {
					_ = tc.CloseWrite()
					_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
					_, _ = io.Copy(io.Discard, c)
				}
				return
			}
			if s.goawayAfter > 0 && answeredHere == s.goawayAfter {
				goneAway = true
				if fr.WriteGoAway(id, http2.ErrCodeNo, nil) != nil {
					return
				}
			}
		}
	}
}

// literalHead encodes a head as nginx does: the first byte (an indexed
// field), then for each static name index and value a literal with
// incremental indexing and a Huffman-coded value.
func literalHead(first byte, fields ...any) []byte {
	b := []byte{first}
	for i := 0; i < len(fields); i += 2 {
		v := fields[i+1].(string)
		b = append(b, 0x40|byte(fields[i].(int)), 0x80|byte(hpack.HuffmanEncodeLength(v)))
		b = hpack.AppendHuffmanString(b, v)
	}
	return b
}

// Against a server that sends every field of every head as a new literal,
// as nginx does, gab decodes heads without allocating: x/net's own decoder
// allocated each decoded string (nine allocations per nginx head).
func TestHTTP2LiteralHeadsDoNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few thousand loopback requests")
	}
	checkH2Allocations(t, func(t *testing.T) string {
		return startRawH2(t, &rawH2Server{literalHeads: true}).url()
	}, func(res *Result) bool {
		return res.Failed.Total == 0 && res.ServerSoftware == "raw/1.0" && res.DocLength == 5
	})
}

func TestHTTP2GoAwayReplacesConnection(t *testing.T) {
	for _, streams := range []int{1, 4} {
		t.Run("streams="+strconv.Itoa(streams), func(t *testing.T) {
			s := startRawH2(t, &rawH2Server{goawayAfter: 7})
			cfg := h2TestConfig(t, s.url(), 100, 2, streams)
			res, err := runH2(t, cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Complete != 100 || res.Failed.Total != 0 || res.WriteErrors != 0 {
				t.Errorf("Complete %d Failed %+v WriteErrors %d, want 100 and none", res.Complete, res.Failed, res.WriteErrors)
			}
			if got := s.answered.Load(); got != 100 {
				t.Errorf("server answered %d requests, want exactly 100 (none lost, none twice)", got)
			}
			if got := s.fs.accepted.Load(); got < 100/7 {
				t.Errorf("only %d connections for 100 requests with GOAWAY after 7", got)
			}
			if res.ServerSoftware != "raw/1.0" || res.DocLength != 5 {
				t.Errorf("ServerSoftware %q DocLength %d", res.ServerSoftware, res.DocLength)
			}
		})
	}
}

// A server that closes its connections without GOAWAY (an abrupt close): the
// connection is replaced and the run goes on; the streams left unanswered are
// receive failures, never sent again (the server may have processed them).
func TestHTTP2ClosedConnectionIsReplaced(t *testing.T) {
	s := startRawH2(t, &rawH2Server{closeAfter: 5})
	res, err := runH2(t, h2TestConfig(t, s.url(), 60, 2, 3))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 60 || res.Failed.Total != res.Failed.Receive || res.WriteErrors != 0 || res.Retries != 0 {
		t.Errorf("Complete %d Failed %+v WriteErrors %d Retries %d, want 60, receive failures only, no retry", res.Complete, res.Failed, res.WriteErrors, res.Retries)
	}
	// An answer written just before the close may be lost to the RST that
	// the close sends (gab's HEADERS were left unread): answered ≥ successes.
	if got := s.answered.Load(); got+int64(res.Failed.Total) < 60 {
		t.Errorf("server answered %d requests and %d failed, want at least 60 in all", got, res.Failed.Total)
	}
	if got := s.requests.Load(); got > 60 {
		t.Errorf("server read %d requests for -n 60: some were sent twice", got)
	}
	if got := s.fs.accepted.Load(); got < 60/(5+3) {
		t.Errorf("%d connections for 60 requests closed after 5 each (3 streams each)", got)
	}
}

func TestHTTP2ResetStreamsAreExceptions(t *testing.T) {
	s := startRawH2(t, &rawH2Server{act: func(k int64, _ int) h2Action {
		if k%5 == 0 {
			return h2Reset
		}
		return h2Answer
	}})
	res, err := runH2(t, h2TestConfig(t, s.url(), 50, 2, 3))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 50 || res.Failed.Exceptions != 10 || res.Failed.Total != 10 {
		t.Errorf("Complete %d Failed %+v, want 50 with 10 exceptions", res.Complete, res.Failed)
	}
	if s.answered.Load() != 40 || s.resets.Load() != 10 {
		t.Errorf("server answered %d and reset %d, want 40 and 10", s.answered.Load(), s.resets.Load())
	}
}

func TestHTTP2RespectsServerMaxConcurrentStreams(t *testing.T) {
	h := newH2Counter(2*time.Millisecond, []byte("ok"))
	ts := httptest.NewUnstartedServer(h)
	ts.Config.Protocols = new(http.Protocols)
	ts.Config.Protocols.SetUnencryptedHTTP2(true)
	ts.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 2}
	ts.Start()
	defer ts.Close()
	res, err := runH2(t, h2TestConfig(t, ts.URL+"/", 60, 1, 8))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	h.mu.Lock()
	maxFlight := h.maxFlight
	h.mu.Unlock()
	if res.Complete != 60 || res.Failed.Total != 0 || h.requests.Load() != 60 {
		t.Errorf("Complete %d Failed %+v server %d, want 60/none/60", res.Complete, res.Failed, h.requests.Load())
	}
	if maxFlight > 2 {
		t.Errorf("%d streams in flight, server allows 2", maxFlight)
	}
}

func TestHTTP2StalledStreamEndsWithIdleTimeout(t *testing.T) {
	s := startRawH2(t, &rawH2Server{act: func(k int64, _ int) h2Action {
		if k == 5 {
			return h2Stall
		}
		return h2Answer
	}})
	cfg := h2TestConfig(t, s.url(), 20, 1, 2)
	cfg.Timeout = 300 * time.Millisecond
	start := time.Now()
	res, err := runH2(t, cfg)
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Exit != 119 || fe.Message != "apr_pollset_poll: The timeout specified has expired (70007)\n" {
		t.Fatalf("err %#v, want ab's -s timeout", err)
	}
	if res.Complete != 19 {
		t.Errorf("Complete %d, want 19 (all but the stalled one)", res.Complete)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("run took %v", time.Since(start))
	}
}

func TestHTTP2RequestTimeoutResetsLateStream(t *testing.T) {
	s := startRawH2(t, &rawH2Server{act: func(k int64, _ int) h2Action {
		if k == 3 || k == 8 {
			return h2Stall
		}
		return h2Answer
	}})
	cfg := h2TestConfig(t, s.url(), 20, 2, 2)
	cfg.RequestTimeout = 200 * time.Millisecond
	res, err := runH2(t, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 20 || res.Failed.Exceptions != 2 || res.Failed.Total != 2 {
		t.Errorf("Complete %d Failed %+v, want 20 with 2 exceptions", res.Complete, res.Failed)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.cancels.Load() != 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := s.cancels.Load(); got != 2 {
		t.Errorf("server received %d RST_STREAM(CANCEL), want 2", got)
	}
}

func TestHTTP2TimeLimitStopsStalledRun(t *testing.T) {
	s := startRawH2(t, &rawH2Server{act: func(k int64, _ int) h2Action { return h2Stall }})
	cfg := h2TestConfig(t, s.url(), 1000, 2, 2)
	cfg.TimeLimit = 300 * time.Millisecond
	res, err := runH2(t, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Ending != EndTimeLimit || res.Complete != 0 {
		t.Errorf("Ending %v Complete %d, want the time limit and 0", res.Ending, res.Complete)
	}
}

// A body larger than the server's windows is sent as the server gives window
// back, every byte of it.
func TestHTTP2BodyRespectsFlowControl(t *testing.T) {
	s := startRawH2(t, &rawH2Server{window: 1000})
	cfg := h2TestConfig(t, s.url(), 6, 2, 2)
	body := bytes.Repeat([]byte("b"), 150_000) // > the 65535-byte connection window too
	cfg.Spec.Method, cfg.Spec.Body, cfg.Spec.HasBody = "POST", body, true
	res, err := runH2(t, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 6 || res.Failed.Total != 0 {
		t.Errorf("Complete %d Failed %+v, want 6 and none", res.Complete, res.Failed)
	}
	s.bodyMu.Lock()
	defer s.bodyMu.Unlock()
	if len(s.bodies) != 6 {
		t.Fatalf("server received %d bodies, want 6", len(s.bodies))
	}
	for i, n := range s.bodies {
		if n != len(body) {
			t.Errorf("body %d: %d bytes, want %d", i, n, len(body))
		}
	}
}

// BenchmarkHTTP2 measures the client against the in-process Framer server
// (which costs CPU in the same process: compare runs, not absolute figures).
func BenchmarkHTTP2(b *testing.B) {
	for _, streams := range []int{1, 10} {
		b.Run("c=2/streams="+strconv.Itoa(streams), func(b *testing.B) {
			s := startRawH2(b, &rawH2Server{})
			cfg := h2TestConfig(b, s.url(), 0, 2, streams)
			benchThousand(b, cfg)
		})
	}
}

// Without a server field Server Software is empty, as in ab.
func TestHTTP2NoServerField(t *testing.T) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	ts.Config.Protocols = new(http.Protocols)
	ts.Config.Protocols.SetUnencryptedHTTP2(true)
	ts.Start()
	defer ts.Close()
	res, err := runH2(t, h2TestConfig(t, ts.URL+"/", 20, 2, 2))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.ServerSoftware != "" || res.Complete != 20 || res.DocLength != 2 {
		t.Errorf("ServerSoftware %q Complete %d DocLength %d, want \"\", 20, 2", res.ServerSoftware, res.Complete, res.DocLength)
	}
}

func TestAbServerCut(t *testing.T) {
	for in, want := range map[string]string{
		"nginx/1.22.1":            "nginx/1.22.1",
		"Apache/2.4.57 (Debian)":  "Apache/2.4.57",
		"":                        "",
		"tab\there":               "tab",
		"caf\xc3\xa9":             "caf",
		strings.Repeat("x", 2000): strings.Repeat("x", 1023),
	} {
		if got := abServerCut(in); got != want {
			t.Errorf("abServerCut(%.20q) = %.20q (%d bytes), want %d bytes", in, got, len(got), len(want))
		}
	}
}

// headEvents records the -v 2 events.
type headEvents struct {
	nopEvents
	mu       sync.Mutex
	heads    []string
	statuses []int
}

func (e *headEvents) HeaderReceived(buf []byte) {
	e.mu.Lock()
	e.heads = append(e.heads, string(buf))
	e.mu.Unlock()
}

func (e *headEvents) Status(code int) {
	e.mu.Lock()
	e.statuses = append(e.statuses, code)
	e.mu.Unlock()
}

// With -v 2 each response head is dumped, HTTP/1-style, as ab dumps heads.
func TestHTTP2VerboseDumpsResponseHeads(t *testing.T) {
	s := startRawH2(t, &rawH2Server{})
	cfg := h2TestConfig(t, s.url(), 3, 1, 1)
	ev := &headEvents{}
	cfg.Events, cfg.Verbosity = ev, 2
	if _, err := runH2(t, cfg); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := "HTTP/2 200\r\nserver: raw/1.0\r\ncontent-length: 5\r\n\r\n"
	if len(ev.heads) != 3 || ev.heads[0] != want || ev.heads[2] != want {
		t.Errorf("heads %q, want 3 × %q", ev.heads, want)
	}
	if len(ev.statuses) != 3 || ev.statuses[0] != 200 {
		t.Errorf("statuses %v, want 3 × 200", ev.statuses)
	}
}

func TestRequestHeadShowsHTTP2Fields(t *testing.T) {
	cfg := h2TestConfig(t, "http://127.0.0.1:8080/p?q=1", 1, 1, 1)
	cfg.Spec.Headers = []string{"X-Test: yes", "Connection: close"}
	want := ":method: GET\r\n:scheme: http\r\n:authority: 127.0.0.1:8080\r\n:path: /p?q=1\r\n" +
		"user-agent: ApacheBench/2.3\r\naccept: */*\r\nx-test: yes\r\n\r\n"
	if got := string(cfg.RequestHead()); got != want {
		t.Errorf("RequestHead() = %q, want %q", got, want)
	}
	cfg.Protocol = HTTP10
	cfg.Request, cfg.HeadLen = []byte("GET / HTTP/1.0\r\n\r\nbody"), 18
	if got := string(cfg.RequestHead()); got != "GET / HTTP/1.0\r\n\r\n" {
		t.Errorf("HTTP/1 RequestHead() = %q", got)
	}
}
