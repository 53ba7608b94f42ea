package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gab/internal/testtool"
)

// checkGoroutines fails the test if goroutines started during it are still
// running once everything registered after it has been cleaned up.
func checkGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(goroutineEndWait)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				t.Errorf("goroutines leaked: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// h1Events records what the engine reports.
type h1Events struct {
	nopEvents
	mu        sync.Mutex
	heads     []string
	statuses  []int
	tlsOK     atomic.Int64
	tlsFailed atomic.Int64
	recvErrs  atomic.Int64
}

func (e *h1Events) HeaderReceived(b []byte) {
	e.mu.Lock()
	e.heads = append(e.heads, string(b))
	e.mu.Unlock()
}
func (e *h1Events) Status(code int) {
	e.mu.Lock()
	e.statuses = append(e.statuses, code)
	e.mu.Unlock()
}
func (e *h1Events) TLSHandshake(*tls.ConnectionState) { e.tlsOK.Add(1) }
func (e *h1Events) TLSHandshakeFailed(error)          { e.tlsFailed.Add(1) }
func (e *h1Events) ReceiveError(*FatalError)          { e.recvErrs.Add(1) }

// answerEach reads requests and answers each with resp until the client closes.
func answerEach(resp string) func(fc *faultConn) {
	return func(fc *faultConn) {
		for {
			if _, ok := fc.readRequest(); !ok {
				return
			}
			fc.write(resp)
		}
	}
}

// answerOnce answers one request and closes.
func answerOnce(resp string) func(fc *faultConn) {
	return func(fc *faultConn) {
		if _, ok := fc.readRequest(); ok {
			fc.write(resp)
		}
	}
}

func wantCounts(t *testing.T, res *Result, complete int, failed Failures) {
	t.Helper()
	if res.Complete != complete {
		t.Errorf("Complete = %d, want %d", res.Complete, complete)
	}
	if res.Failed != failed {
		t.Errorf("Failed = %+v, want %+v (first errors %v)", res.Failed, failed, res.FirstError)
	}
}

func TestHTTP1PlainCountsBytes(t *testing.T) {
	checkGoroutines(t)
	resp := respond100(false)
	srv := newFaultServer(t, answerOnce(resp))
	cfg := h1Config(srv.port(), 20, 3, false)
	res, err := h1Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 20, Failures{})
	if res.TotalRead != int64(20*len(resp)) || res.BodyRead != 2000 || res.TotalSent != int64(20*len(cfg.Request)) {
		t.Errorf("bytes read %d body %d sent %d, want %d 2000 %d", res.TotalRead, res.BodyRead, res.TotalSent, 20*len(resp), 20*len(cfg.Request))
	}
	if res.DocLength != 100 || res.ServerSoftware != "fault/1.0" || res.KeepAlive != 0 || res.StatusCounts[200] != 20 {
		t.Errorf("doclen %d server %q keepalive %d statuses %v", res.DocLength, res.ServerSoftware, res.KeepAlive, res.StatusCounts)
	}
	if got := srv.accepted.Load(); got != 20 {
		t.Errorf("connections = %d, want one per request (20)", got)
	}
	if res.Samples.Len() != 20 {
		t.Errorf("samples = %d", res.Samples.Len())
	}
}

func TestHTTP1KeepAliveReusesConnections(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, answerEach(respond100(true)))
	res, err := h1Run(t, h1Config(srv.port(), 50, 5, true))
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 50, Failures{})
	if res.KeepAlive != 50 {
		t.Errorf("KeepAlive = %d, want 50", res.KeepAlive)
	}
	if got := srv.accepted.Load(); got > 5 {
		t.Errorf("connections = %d, want at most 5", got)
	}
	if got := srv.requests.Load(); got < 50 || got > 55 {
		t.Errorf("server saw %d requests, want 50 (up to c more in flight at the end)", got)
	}
}

// Without "keep-alive" in the response ab does not keep the connection, -k or not.
func TestHTTP1KeepAliveNeedsServerSignal(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, answerEach("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"))
	res, err := h1Run(t, h1Config(srv.port(), 10, 1, true))
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 10, Failures{})
	if res.KeepAlive != 0 || srv.accepted.Load() != 10 {
		t.Errorf("KeepAlive = %d, connections %d; want 0 and 10", res.KeepAlive, srv.accepted.Load())
	}
}

func TestHTTP1KeepAliveAgainstNetHTTP(t *testing.T) {
	checkGoroutines(t)
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("a", 100))
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	port := ts.Listener.Addr().(*net.TCPAddr).Port
	res, err := h1Run(t, h1Config(port, 100, 4, true))
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 100, Failures{})
	if res.KeepAlive != 100 || res.DocLength != 100 || res.BodyRead != 10000 || conns.Load() > 4 {
		t.Errorf("keepalive %d doclen %d body %d conns %d", res.KeepAlive, res.DocLength, res.BodyRead, conns.Load())
	}
}

func TestHTTP1HTTP11Persistence(t *testing.T) {
	checkGoroutines(t)
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMinor != 1 {
			w.WriteHeader(400)
		}
		_, _ = io.WriteString(w, "hello")
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	port := ts.Listener.Addr().(*net.TCPAddr).Port
	cfg := h1Config(port, 30, 2, true)
	cfg.Protocol = HTTP11
	cfg.Request = []byte(fmt.Sprintf("GET /x HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port))
	res, err := h1Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 30, Failures{})
	if res.KeepAlive != 30 || conns.Load() > 2 || res.StatusCounts[200] != 30 {
		t.Errorf("keepalive %d conns %d statuses %v", res.KeepAlive, conns.Load(), res.StatusCounts)
	}

	// Without -k the run asks for Connection: close and opens a connection per request.
	before := conns.Load()
	cfg.KeepAlive = false
	cfg.Request = []byte(fmt.Sprintf("GET /x HTTP/1.1\r\nConnection: close\r\nHost: 127.0.0.1:%d\r\n\r\n", port))
	res, err = h1Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 30, Failures{})
	if res.KeepAlive != 0 || conns.Load()-before != 30 {
		t.Errorf("keepalive %d conns %d", res.KeepAlive, conns.Load()-before)
	}
}

const chunkedResponse = "HTTP/1.1 200 OK\r\nServer: fault\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n" +
	"28;ext=1\r\n" + "0123456789012345678901234567890123456789" + "\r\n" +
	"3C\r\n" + "012345678901234567890123456789012345678901234567890123456789" + "\r\n" +
	"0\r\nX-Trailer: yes\r\n\r\n"

// gab decodes chunked bodies: Document Length is the data, Total transferred the wire.
func TestHTTP1ChunkedDecoded(t *testing.T) {
	checkGoroutines(t)
	for _, ka := range []bool{true, false} {
		t.Run(fmt.Sprint("keepalive=", ka), func(t *testing.T) {
			script := answerEach(chunkedResponse)
			if !ka {
				script = answerOnce(chunkedResponse)
			}
			srv := newFaultServer(t, script)
			res, err := h1Run(t, h1Config(srv.port(), 8, 2, ka))
			if err != nil {
				t.Fatal(err)
			}
			wantCounts(t, res, 8, Failures{})
			if res.DocLength != 100 || res.BodyRead != 800 || res.TotalRead != int64(8*len(chunkedResponse)) {
				t.Errorf("doclen %d body %d total %d", res.DocLength, res.BodyRead, res.TotalRead)
			}
			want := 0
			if ka {
				want = 8
			}
			if res.KeepAlive != want {
				t.Errorf("KeepAlive = %d, want %d", res.KeepAlive, want)
			}
		})
	}
}

// A chunked body that arrives one byte at a time decodes the same.
func TestHTTP1ChunkedByteByByte(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, func(fc *faultConn) {
		if _, ok := fc.readRequest(); !ok {
			return
		}
		fc.inChunks(chunkedResponse, 1)
	})
	res, err := h1Run(t, h1Config(srv.port(), 2, 1, false))
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 2, Failures{})
	if res.DocLength != 100 || res.TotalRead != int64(2*len(chunkedResponse)) {
		t.Errorf("doclen %d total %d", res.DocLength, res.TotalRead)
	}
}

// -k with keep-alive but no length: the body ends when the server closes (ab: at the first read).
func TestHTTP1KeepAliveWithoutLengthEndsAtClose(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, func(fc *faultConn) {
		if _, ok := fc.readRequest(); !ok {
			return
		}
		fc.write("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\n" + strings.Repeat("n", 60))
		time.Sleep(20 * time.Millisecond)
		fc.write(strings.Repeat("n", 40))
	})
	res, err := h1Run(t, h1Config(srv.port(), 4, 1, true))
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 4, Failures{})
	if res.DocLength != 100 || res.KeepAlive != 0 || srv.accepted.Load() != 4 {
		t.Errorf("doclen %d keepalive %d conns %d", res.DocLength, res.KeepAlive, srv.accepted.Load())
	}
}

// 1xx interim responses are skipped; their bytes still count.
func TestHTTP1SkipsInterimResponses(t *testing.T) {
	checkGoroutines(t)
	resp := "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + respond100(true)
	srv := newFaultServer(t, answerEach(resp))
	res, err := h1Run(t, h1Config(srv.port(), 6, 1, true))
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 6, Failures{})
	if res.StatusCounts[200] != 6 || res.DocLength != 100 || res.TotalRead != int64(6*len(resp)) || res.KeepAlive != 6 {
		t.Errorf("statuses %v doclen %d total %d keepalive %d", res.StatusCounts, res.DocLength, res.TotalRead, res.KeepAlive)
	}
}

// A server that answers one request per kept-alive connection, then closes
// when the next arrives.
func oneAnswerThenClose(fc *faultConn) {
	if _, ok := fc.readRequest(); !ok {
		return
	}
	fc.write(respond100(true))
	fc.readRequest()
}

func TestHTTP1RetriesIdempotentOnClosedKeepAlive(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, oneAnswerThenClose)
	res, err := h1Run(t, h1Config(srv.port(), 10, 1, true))
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 10, Failures{})
	if res.Retries != 9 || res.KeepAlive != 10 || srv.accepted.Load() != 10 {
		t.Errorf("retries %d keepalive %d conns %d; want 9 10 10", res.Retries, res.KeepAlive, srv.accepted.Load())
	}
}

func TestHTTP1PostNotRetried(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, oneAnswerThenClose)
	cfg := h1Config(srv.port(), 10, 1, true)
	body := "a=1&b=2"
	cfg.Request = []byte(fmt.Sprintf("POST /x HTTP/1.0\r\nConnection: Keep-Alive\r\nContent-length: %d\r\nContent-type: text/plain\r\nHost: 127.0.0.1\r\n\r\n%s", len(body), body))
	cfg.Spec = RequestSpec{Method: "POST", HasBody: true, Body: []byte(body)}
	res, err := h1Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Requests 2, 4, … meet a closed connection; 1, 3, … open a new one.
	wantCounts(t, res, 10, Failures{Total: 5, Receive: 5})
	if res.Retries != 0 || res.TotalSent != int64(10*len(cfg.Request)) {
		t.Errorf("retries %d sent %d", res.Retries, res.TotalSent)
	}
}

// A fresh connection closed before any byte: a counted receive failure, the run goes on.
func TestHTTP1FreshConnectionClosedWithoutAnswer(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, func(fc *faultConn) { fc.readRequest() })
	res, err := h1Run(t, h1Config(srv.port(), 5, 1, false))
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 5, Failures{Total: 5, Receive: 5})
	if res.DocLength != 0 || res.TotalRead != 0 {
		t.Errorf("doclen %d read %d", res.DocLength, res.TotalRead)
	}
}

func TestHTTP1ResetIsFatalWithoutR(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, func(fc *faultConn) {
		if _, ok := fc.readRequest(); ok {
			fc.reset()
		}
	})
	_, err := h1Run(t, h1Config(srv.port(), 5, 1, false))
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Exit != 104 || fe.Message != "apr_socket_recv: Connection reset by peer (104)\n" {
		t.Fatalf("err = %#v", err)
	}
	cfg := h1Config(srv.port(), 5, 1, false)
	cfg.KeepGoing = true
	cfg.Verbosity = 1
	ev := &h1Events{}
	cfg.Events = ev
	res, err := h1Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 5, Failures{Total: 5, Receive: 5})
	if ev.recvErrs.Load() != 5 {
		t.Errorf("receive error events = %d, want 5", ev.recvErrs.Load())
	}
}

// closedPort returns a loopback port on which a connect is refused.
func closedPort(t *testing.T) int { return testtool.ClosedPort(t) }

func TestHTTP1Refused(t *testing.T) {
	checkGoroutines(t)
	port := closedPort(t)
	res, err := h1Run(t, h1Config(port, 3, 1, false))
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Exit != 111 || fe.Message != "apr_socket_recv: Connection refused (111)\n" {
		t.Fatalf("err = %#v", err)
	}
	if res.Complete != 0 {
		t.Errorf("Complete = %d", res.Complete)
	}
	cfg := h1Config(port, 3, 1, false)
	cfg.KeepGoing = true
	res, err = h1Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 3, Failures{Total: 3, Connect: 3})
}

func TestHTTP1NetworkUnreachableAborts(t *testing.T) {
	checkGoroutines(t)
	var dials atomic.Int64
	cfg := h1Config(80, 5, 1, false)
	cfg.Target.Host = "192.0.2.1" // never dialled: the injected Dial fails first
	cfg.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		dials.Add(1)
		return nil, &net.OpError{Op: "dial", Net: network, Err: &osSyscallError{syscall.ENETUNREACH}}
	}
	res, err := h1Run(t, cfg)
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Exit != 101 ||
		fe.Message != "\nTest aborted after 10 failures\n\napr_socket_connect(): Network is unreachable (101)\n" {
		t.Fatalf("err = %#v", err)
	}
	if dials.Load() != 12 || res.Complete != 0 {
		t.Errorf("dials %d complete %d, want 12 and 0", dials.Load(), res.Complete)
	}
}

// osSyscallError wraps an errno the way the net package does.
type osSyscallError struct{ errno syscall.Errno }

func (e *osSyscallError) Error() string { return "connect: " + e.errno.Error() }
func (e *osSyscallError) Unwrap() error { return e.errno }

type failingResolver struct{}

func (failingResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestHTTP1ResolveFailure(t *testing.T) {
	checkGoroutines(t)
	cfg := h1Config(80, 1, 1, false)
	cfg.Target.Host = "nosuch.invalid"
	cfg.Resolver = failingResolver{}
	_, err := h1Run(t, cfg)
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Exit != 50 ||
		fe.Message != "apr_sockaddr_info_get() for nosuch.invalid: Name or service not known (670002)\n" {
		t.Fatalf("err = %#v", err)
	}
}

func TestHTTP1MalformedResponses(t *testing.T) {
	checkGoroutines(t)
	cases := []struct {
		name, resp string
		want       Failures
	}{
		{"garbage status", "HTTP/1.1 OK 200\r\n\r\n", Failures{Total: 3, Exceptions: 3}},
		{"http09 body", "<html>hello</html>", Failures{Total: 3, Exceptions: 3}},
		{"bad content-length", "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n1", Failures{Total: 3, Exceptions: 3}},
		{"negative content-length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", Failures{Total: 3, Exceptions: 3}},
		{"conflicting content-length", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc", Failures{Total: 3, Exceptions: 3}},
		{"bad chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", Failures{Total: 3, Exceptions: 3}},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this", Failures{Total: 3, Receive: 3}},
		{"truncated head", "HTTP/1.1 200 OK\r\nContent-Le", Failures{Total: 3, Receive: 3}},
		{"truncated chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc", Failures{Total: 3, Receive: 3}},
		{"equal duplicate content-length", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3, 3\r\n\r\nabc", Failures{}},
		{"bare LF head", "HTTP/1.0 200 OK\nContent-Length: 3\n\nabc", Failures{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFaultServer(t, answerOnce(tc.resp))
			res, err := h1Run(t, h1Config(srv.port(), 3, 1, false))
			if err != nil {
				t.Fatal(err)
			}
			wantCounts(t, res, 3, tc.want)
			if res.TotalRead != int64(3*len(tc.resp)) {
				t.Errorf("TotalRead = %d, want %d", res.TotalRead, 3*len(tc.resp))
			}
		})
	}
}

// A head over 8191 bytes is ab's header overflow: not recorded, re-issued, and
// the 12th failure aborts the run with exit 1.
func TestHTTP1HeaderOverflowAborts(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, answerOnce("HTTP/1.1 200 OK\r\nX-Pad: "+strings.Repeat("p", 9000)))
	res, err := h1Run(t, h1Config(srv.port(), 2, 1, false))
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Exit != 1 || fe.Message != "\nTest aborted after 10 failures\n\n\n" {
		t.Fatalf("err = %#v", err)
	}
	if res.Complete != 0 || res.Non2xx != 11 || srv.accepted.Load() != 12 {
		t.Errorf("complete %d non2xx %d conns %d", res.Complete, res.Non2xx, srv.accepted.Load())
	}
}

// HEAD, 204 and 304 responses have no body even with a Content-Length.
func TestHTTP1BodilessResponses(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, func(fc *faultConn) {
		for {
			req, ok := fc.readRequest()
			if !ok {
				return
			}
			switch {
			case strings.HasPrefix(string(req), "HEAD"):
				fc.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: keep-alive\r\n\r\n")
			case strings.Contains(string(req), "/204"):
				fc.write("HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n")
			default:
				fc.write("HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\nConnection: keep-alive\r\n\r\n")
			}
		}
	})
	for _, tc := range []struct{ method, path string }{{"HEAD", "/x"}, {"GET", "/204"}, {"GET", "/304"}} {
		cfg := h1Config(srv.port(), 5, 1, true)
		cfg.Request = h1Request(tc.method, tc.path, srv.port(), true)
		cfg.Spec.Method, cfg.Spec.HeadMethod = tc.method, tc.method == "HEAD"
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		wantCounts(t, res, 5, Failures{})
		if res.DocLength != 0 || res.KeepAlive != 5 {
			t.Errorf("%s %s: doclen %d keepalive %d", tc.method, tc.path, res.DocLength, res.KeepAlive)
		}
	}
}

func TestHTTP1ServerSoftwareQuirks(t *testing.T) {
	checkGoroutines(t)
	for resp, want := range map[string]string{
		"HTTP/1.1 200 OK\r\nServer:nospace\r\nContent-Length: 0\r\n\r\n":                 "ospace",
		"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n":                                   "",
		"HTTP/1.1 200 OK\r\nX-Server: Apache/2.4 (Debian)\r\nContent-Length: 0\r\n\r\n":  "Apache/2.4",
		"HTTP/1.1 200 OK\r\nsERVER: caddy\r\nServer: other\r\nContent-Length: 0\r\n\r\n": "caddy",
	} {
		srv := newFaultServer(t, answerOnce(resp))
		res, err := h1Run(t, h1Config(srv.port(), 1, 1, false))
		if err != nil {
			t.Fatal(err)
		}
		if res.ServerSoftware != want {
			t.Errorf("%q: server %q, want %q", resp, res.ServerSoftware, want)
		}
	}
}

func TestHTTP1VerboseEvents(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, func(fc *faultConn) {
		if _, ok := fc.readRequest(); !ok {
			return
		}
		fc.write("HTTP/1.1 404 Not Found\r\n")
		time.Sleep(20 * time.Millisecond)
		fc.write("Content-Length: 2\r\n\r\nno")
	})
	ev := &h1Events{}
	cfg := h1Config(srv.port(), 1, 1, false)
	cfg.Verbosity = 2
	cfg.Events = ev
	res, err := h1Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Non2xx != 1 {
		t.Errorf("Non2xx = %d", res.Non2xx)
	}
	if len(ev.heads) != 2 || ev.heads[0] != "HTTP/1.1 404 Not Found\r\n" || !strings.HasSuffix(ev.heads[1], "\r\n\r\nno") {
		t.Errorf("header events %q", ev.heads)
	}
	if len(ev.statuses) != 1 || ev.statuses[0] != 404 {
		t.Errorf("status events %v", ev.statuses)
	}
}

// ab opens the other c−1 connections only once the first response head is in.
func TestHTTP1RampUp(t *testing.T) {
	checkGoroutines(t)
	var seenBeforeFirstHead atomic.Int64
	var srv *faultServer
	srv = newFaultServer(t, func(fc *faultConn) {
		if _, ok := fc.readRequest(); !ok {
			return
		}
		if fc.index == 0 {
			time.Sleep(100 * time.Millisecond)
			seenBeforeFirstHead.Store(fc.srv.accepted.Load()) // fc.srv: nothing the race detector sees orders srv's assignment before this
		}
		fc.write(respond100(false))
	})
	res, err := h1Run(t, h1Config(srv.port(), 30, 3, false))
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 30, Failures{})
	if seenBeforeFirstHead.Load() != 1 {
		t.Errorf("%d connections were open before the first response", seenBeforeFirstHead.Load())
	}
}

func TestHTTP1IdleTimeoutIsFatal(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, answerThenStall(2, ""))
	cfg := h1Config(srv.port(), 5, 1, false)
	cfg.Timeout = 300 * time.Millisecond
	began := time.Now()
	res, err := h1Run(t, cfg)
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Exit != 119 || fe.Message != "apr_pollset_poll: The timeout specified has expired (70007)\n" {
		t.Fatalf("err = %#v", err)
	}
	if res.Complete != 2 {
		t.Errorf("Complete = %d, want 2", res.Complete)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestHTTP1TimeLimitEnds(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, answerEach(respond100(true)))
	// Some requests complete in 1 s even on a loaded machine, and none
	// completes them all.
	cfg := h1Config(srv.port(), 1<<30, 2, true)
	cfg.TimeLimit, cfg.SampleLimit = time.Second, 1000
	res, err := h1Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ending != EndTimeLimit || res.Complete == 0 || res.Complete >= cfg.Requests || res.Failed.Total != 0 {
		t.Errorf("ending %v complete %d failed %+v", res.Ending, res.Complete, res.Failed)
	}
	if res.Elapsed < cfg.TimeLimit || res.Elapsed > 5*time.Second {
		t.Errorf("elapsed %v", res.Elapsed)
	}
}

func TestHTTP1CancelGivesPartialResult(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, answerThenStall(5, ""))
	cfg := h1Config(srv.port(), 20, 1, false)
	rn, err := newRunner(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for srv.accepted.Load() < 6 { // the 6th connection is never answered
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	res, err := rn.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ending != EndInterrupted || res.Complete != 5 || res.Failed.Total != 0 {
		t.Errorf("ending %v complete %d failed %+v", res.Ending, res.Complete, res.Failed)
	}
}

func TestHTTP1RequestTimeout(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, answerThenStall(1, ""))
	cfg := h1Config(srv.port(), 3, 1, false)
	cfg.RequestTimeout = 150 * time.Millisecond
	began := time.Now()
	res, err := h1Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 3, Failures{Total: 2, Exceptions: 2})
	if d := time.Since(began); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestHTTP1WriteFailure(t *testing.T) {
	checkGoroutines(t)
	// The server reads one byte (gab has begun the request: a reset before
	// that, after a stall of gab's on a loaded machine, would be a request
	// never sent) and resets: a 32 MiB request cannot all be written.
	srv := newFaultServer(t, func(fc *faultConn) {
		var b [1]byte
		if _, err := io.ReadFull(fc.Conn, b[:]); err != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
		fc.reset()
	})
	cfg := h1Config(srv.port(), 3, 1, false)
	cfg.Request = append(h1Request("PUT", "/x", srv.port(), false), make([]byte, 32<<20)...)
	cfg.Spec.Method = "PUT"
	cfg.KeepGoing = true
	cfg.Interval = MinInterval
	res, err := h1Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != 3 || res.WriteErrors != 3 || res.Failed.Total != 0 || res.TotalSent >= int64(3*len(cfg.Request)) {
		t.Errorf("complete %d write errors %d failed %+v", res.Complete, res.WriteErrors, res.Failed)
	}
	// The timeline counts each write error in the interval it ended in.
	var werr int64
	for _, iv := range res.Timeline.Intervals {
		werr += iv.WriteErrors
	}
	if werr != 3 {
		t.Errorf("the timeline's intervals hold %d write errors, want 3", werr)
	}
}

func TestHTTP1StatusCounts(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, answerOnce("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\nerror"))
	res, err := h1Run(t, h1Config(srv.port(), 4, 2, false))
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 4, Failures{})
	if res.Non2xx != 4 || res.StatusCounts[500] != 4 || res.DocLength != 5 {
		t.Errorf("non2xx %d statuses %v doclen %d", res.Non2xx, res.StatusCounts, res.DocLength)
	}
}

// Times are ordered as ab's columns expect.
func TestHTTP1SampleTimes(t *testing.T) {
	checkGoroutines(t)
	const delay = 50 * time.Millisecond
	srv := newFaultServer(t, func(fc *faultConn) {
		for {
			if _, ok := fc.readRequest(); !ok {
				return
			}
			time.Sleep(delay)
			fc.write(respond100(true))
		}
	})
	began := time.Now()
	res, err := h1Run(t, h1Config(srv.port(), 5, 1, true))
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	exact := res.Samples.Exact()
	if len(exact) != 5 {
		t.Fatalf("%d samples, want 5", len(exact))
	}
	// The server answers delay after it has read the request: Total spans
	// all of it, and Wait (from when gab saw its write end) most of it,
	// less however late a loaded machine let gab read the clock after the
	// write, which half the delay leaves room for. One connection, one
	// request at a time: the requests' spans do not overlap and all lie
	// within the run, so their Totals add up to no more than the run took,
	// however slowly the machine ran it.
	var sum time.Duration
	for i, s := range exact {
		if int64(s.Total) < delay.Microseconds() || int64(s.Wait) < delay.Microseconds()/2 || s.Total < s.Wait {
			t.Errorf("sample %d: %+v", i, s)
		}
		if i > 0 && s.Connect != 0 {
			t.Errorf("sample %d on a reused connection has connect %d", i, s.Connect)
		}
		sum += time.Duration(s.Total) * time.Microsecond
	}
	if sum > took {
		t.Errorf("the Totals add up to %v, more than the run took (%v): %+v", sum, took, exact)
	}
}

// Without keep-alive gab, like ab, waits for the server to close first (so the
// server, not the client, holds TIME_WAIT), but the request ends with its response.
func TestHTTP1ServerClosesFirst(t *testing.T) {
	checkGoroutines(t)
	// The server holds each connection open this long after its response,
	// then closes: a Total that waited for the close is longer than hold
	// (it also spans the request), while one that ends with the response
	// takes a few ms, and on a loaded machine, where gab can wait hundreds
	// of ms for a CPU, still far less than a second.
	const hold = time.Second
	var clientClosedFirst, finished atomic.Int64
	srv := newFaultServer(t, func(fc *faultConn) {
		defer finished.Add(1)
		if _, ok := fc.readRequest(); !ok {
			return
		}
		fc.write(respond100(false))
		_ = fc.SetReadDeadline(time.Now().Add(hold))
		if _, err := fc.br.ReadByte(); !isTimeout(err) {
			clientClosedFirst.Add(1)
		}
	})
	res, err := h1Run(t, h1Config(srv.port(), 2, 1, false))
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 2, Failures{})
	for deadline := time.Now().Add(goroutineEndWait); finished.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if clientClosedFirst.Load() != 0 {
		t.Errorf("the client closed first %d times", clientClosedFirst.Load())
	}
	for i, s := range res.Samples.Exact() {
		if s.Total >= uint32(hold.Microseconds())*5/6 {
			t.Errorf("request %d: total %d µs includes the wait for the server's close (%v)", i, s.Total, hold)
		}
	}
}

// Large bodies (which switch the worker to a larger read buffer) are counted exactly.
func TestHTTP1LargeBodies(t *testing.T) {
	checkGoroutines(t)
	big := strings.Repeat("x", 1<<20)
	for name, resp := range map[string]string{
		"content-length": "HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\nConnection: keep-alive\r\n\r\n" + big,
		"until close":    "HTTP/1.0 200 OK\r\n\r\n" + big,
		"chunked":        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n" + big + "\r\n0\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			srv := newFaultServer(t, answerOnce(resp))
			res, err := h1Run(t, h1Config(srv.port(), 4, 2, false))
			if err != nil {
				t.Fatal(err)
			}
			wantCounts(t, res, 4, Failures{})
			if res.DocLength != 1<<20 || res.BodyRead != 4<<20 || res.TotalRead != int64(4*len(resp)) {
				t.Errorf("doclen %d body %d total %d", res.DocLength, res.BodyRead, res.TotalRead)
			}
		})
	}
}
