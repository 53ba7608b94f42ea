package client

// The client tests' shared helpers: faultServer, a raw TCP server whose
// connections run scripts (and the scripts several tests use), the usual
// HTTP/1 run (h1Config, h1Run), and scriptTransport, a transport that sends
// nothing and reports the outcomes a script builds.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// faultServer is a raw TCP server on 127.0.0.1 whose every connection is run by
// a script, so tests can produce any misbehaviour byte by byte: early closes,
// resets, garbage, 1xx, chunked bodies, stalls.
type faultServer struct {
	ln       net.Listener
	script   func(fc *faultConn)
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	accepted atomic.Int64 // connections accepted
	requests atomic.Int64 // request heads read, over all connections
	closed   chan struct{}
}

// faultConn is one accepted connection as its script sees it.
type faultConn struct {
	net.Conn
	srv   *faultServer
	br    *bufio.Reader
	index int64 // 0 for the first connection accepted
}

func newFaultServer(tb testing.TB, script func(fc *faultConn)) *faultServer {
	tb.Helper()
	return newFaultServerTLS(tb, nil, script)
}

// newFaultServerTLS is newFaultServer behind crypto/tls with conf, or plain
// when conf is nil.
func newFaultServerTLS(tb testing.TB, conf *tls.Config, script func(fc *faultConn)) *faultServer {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	if conf != nil {
		ln = tls.NewListener(ln, conf)
	}
	return newFaultServerOn(tb, ln, script)
}

// newFaultServerOn is newFaultServer on a listener of the test's making.
func newFaultServerOn(tb testing.TB, ln net.Listener, script func(fc *faultConn)) *faultServer {
	tb.Helper()
	s := &faultServer{ln: ln, script: script, conns: map[net.Conn]struct{}{}, closed: make(chan struct{})}
	s.wg.Add(1)
	go s.serve()
	tb.Cleanup(s.close)
	return s
}

func (s *faultServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		fc := &faultConn{Conn: c, srv: s, br: bufio.NewReader(c), index: s.accepted.Add(1) - 1}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				_ = c.Close() // the script may have closed it already
			}()
			s.script(fc)
		}()
	}
}

// close stops the listener, closes every open connection and waits for the scripts.
func (s *faultServer) close() {
	select {
	case <-s.closed:
		return
	default:
	}
	close(s.closed)
	_ = s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *faultServer) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// readRequest reads one request (head, and a body of Content-length bytes).
// It returns false when the client closed the connection.
func (fc *faultConn) readRequest() ([]byte, bool) {
	var req []byte
	clen := 0
	for {
		line, err := fc.br.ReadSlice('\n')
		if err != nil {
			return req, false
		}
		req = append(req, line...)
		if bytes.Equal(line, []byte("\r\n")) {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && equalFoldASCII(bytes.TrimSpace(k), "content-length") {
			clen, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	body := make([]byte, clen)
	if _, err := io.ReadFull(fc.br, body); err != nil {
		return req, false
	}
	fc.srv.requests.Add(1)
	return append(req, body...), true
}

// write sends raw bytes, ignoring errors (the client may be gone).
func (fc *faultConn) write(s string) { _, _ = io.WriteString(fc.Conn, s) }

// reset closes the connection with an RST instead of a FIN.
func (fc *faultConn) reset() {
	if tc, ok := fc.Conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = fc.Conn.Close()
}

// waitClosed blocks until the client closes or the server shuts down.
func (fc *faultConn) waitClosed() {
	go func() {
		<-fc.srv.closed
		_ = fc.Conn.Close()
	}()
	_, _ = io.Copy(io.Discard, fc.br)
}

// respond100 is a 100-byte 200 response; ka adds ab's keep-alive signal.
func respond100(ka bool) string {
	conn := "Connection: close\r\n"
	if ka {
		conn = "Connection: keep-alive\r\n"
	}
	return "HTTP/1.1 200 OK\r\nServer: fault/1.0 (test)\r\nContent-Length: 100\r\n" + conn + "\r\n" + string(bytes.Repeat([]byte("z"), 100))
}

// h1Request is ab's default GET request for port, with -k's header when ka.
func h1Request(method, path string, port int, ka bool) []byte {
	s := method + " " + path + " HTTP/1.0\r\n"
	if ka {
		s += "Connection: Keep-Alive\r\n"
	}
	return []byte(s + "Host: 127.0.0.1:" + strconv.Itoa(port) + "\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n")
}

// h1Config is a run of n requests at concurrency c against 127.0.0.1:port.
func h1Config(port, n, c int, ka bool) Config {
	req := h1Request("GET", "/x", port, ka)
	return Config{
		Target:      Target{Host: "127.0.0.1", Port: port, Path: "/x"},
		Request:     req,
		HeadLen:     len(req),
		Spec:        RequestSpec{Method: "GET", Target: "/x", KeepAlive: ka},
		Requests:    n,
		Concurrency: c,
		Timeout:     10 * time.Second,
		KeepAlive:   ka,
	}
}

// h1Run runs cfg, failing the test if it takes over 20 s.
func h1Run(tb testing.TB, cfg Config) (*Result, error) {
	tb.Helper()
	rn, err := newRunner(tb, cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := rn.Run(ctx)
	if ctx.Err() != nil {
		tb.Fatalf("run did not end by itself")
	}
	return res, err
}

// stallForever keeps the connection open, silent, until the client or the server closes it.
func stallForever(fc *faultConn) { fc.waitClosed() }

// answerThenStall answers every request until `answered` connections have been
// served, then writes part (if any) on later connections and stalls.
func answerThenStall(answered int64, part string) func(fc *faultConn) {
	return func(fc *faultConn) {
		if _, ok := fc.readRequest(); !ok {
			return
		}
		if fc.index < answered {
			fc.write(respond100(false))
			return
		}
		fc.write(part)
		fc.waitClosed()
	}
}

// trickle writes s one byte per gap, stopping early if the server shuts down.
func (fc *faultConn) trickle(s string, gap time.Duration) {
	for i := 0; i < len(s); i++ {
		select {
		case <-fc.srv.closed:
			return
		case <-time.After(gap):
		}
		fc.write(s[i : i+1])
	}
}

// inChunks writes s in pieces of at most size bytes, each its own write.
func (fc *faultConn) inChunks(s string, size int) {
	for len(s) > 0 {
		k := min(size, len(s))
		fc.write(s[:k])
		s = s[k:]
	}
}

// keepAliveCloseAfter answers k requests per connection with keep-alive, then
// reads one more request and closes without answering it (the lost request the
// client must send again).
func keepAliveCloseAfter(k int) func(fc *faultConn) {
	return func(fc *faultConn) {
		for i := 0; i < k; i++ {
			if _, ok := fc.readRequest(); !ok {
				return
			}
			fc.write(respond100(true))
		}
		fc.readRequest()
	}
}

// keepAliveIdleClose answers with keep-alive and closes a connection that has
// been idle for idle.
func keepAliveIdleClose(idle time.Duration) func(fc *faultConn) {
	return func(fc *faultConn) {
		for {
			_ = fc.SetReadDeadline(time.Now().Add(idle))
			if _, ok := fc.readRequest(); !ok {
				return
			}
			_ = fc.SetReadDeadline(time.Time{})
			fc.write(respond100(true))
		}
	}
}

// neverReads accepts and holds the connection without reading a byte, so a
// large request fills the socket buffers and the client's write blocks.
func neverReads(fc *faultConn) {
	<-fc.srv.closed
}

// fullBacklogListener is a listening socket with a backlog of 0 that never
// accepts: the kernel completes one handshake into the accept queue, and later
// SYNs are dropped, so those connects stall (slow accept, backlog full).
func fullBacklogListener(tb testing.TB) int {
	tb.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		tb.Fatal(err)
	}
	syscall.CloseOnExec(fd) // SOCK_CLOEXEC is Linux-only; this builds everywhere
	sa := &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if err := syscall.Bind(fd, sa); err != nil {
		_ = syscall.Close(fd)
		tb.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		_ = syscall.Close(fd)
		tb.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "backlog-0")
	ln, err := net.FileListener(f) // dups fd; used only to learn the port and to close
	_ = f.Close()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// hugeHead is a response head of more than 100 KiB that never ends.
var hugeHead = "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Filler: "+strings.Repeat("f", 1014)+"\r\n", 101)

// testPaths holds the path (epoll or go) each test asked for with usePath, by
// test name.
var testPaths sync.Map

// usePath selects the path ("epoll", the default; "uring": the event loops
// on io_uring; or "go": Config.Portable) for the runs that tb and its subtests start with newRunner or the run
// helpers.
func usePath(tb testing.TB, path string) {
	name := tb.Name()
	testPaths.Store(name, path)
	tb.Cleanup(func() { testPaths.Delete(name) })
}

// newRunner is New(cfg) on the path usePath chose for tb or a test enclosing it.
func newRunner(tb testing.TB, cfg Config) (*Runner, error) {
	for name := tb.Name(); ; {
		if p, ok := testPaths.Load(name); ok {
			cfg.Portable = p == "go"
			if p == "uring" {
				cfg.Engine = EngineUring
			}
			break
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			break
		}
		name = name[:i]
	}
	return New(cfg)
}

// fakeProtocol marks a run on scriptTransport: a transport that sends nothing
// and reports outcomes built by a script, so the accounting of extra figures
// can be checked exactly, without sockets.
const fakeProtocol Protocol = 200

func newScriptTransport(cfg *Config) (transport, error) { return &scriptTransport{cfg: cfg}, nil }

// scriptFunc builds the outcome of the k-th request a worker sends (k counts
// across all workers, from 0). sent is r.clock() right after claim returned;
// it may sleep to simulate a slow server.
type scriptFunc func(r *run, k int64, sent int64) outcome

var scripts sync.Map // *Config.Target.Path → scriptFunc

type scriptTransport struct {
	cfg *Config
	mu  sync.Mutex
	k   int64
}

func (s *scriptTransport) prepare(ctx context.Context, r *run) error {
	if s.cfg.Target.Host == "" {
		return nil
	}
	_, err := resolve(ctx, s.cfg)
	return err
}

func (s *scriptTransport) slots() int { return s.cfg.Concurrency }

func (s *scriptTransport) work(r *run, slot int, t *tally) {
	v, _ := scripts.Load(s.cfg.Target.Path)
	script := v.(scriptFunc)
	for r.claim(t) {
		sent := r.clock()
		s.mu.Lock()
		k := s.k
		s.k++
		s.mu.Unlock()
		o := script(r, k, sent)
		t.touch(r)
		r.sawHeader()
		if !r.finish(t, &o) {
			return
		}
	}
}

// scriptedOutcome is a script's 200 response that lasted from start to end,
// connected, written and answered at start.
func scriptedOutcome(start, end int64) outcome {
	return outcome{Start: start, TCPDone: start, Connect: start, WriteEnd: start, FirstByte: start, End: end, Status: 200}
}

// runScript runs the fake transport with cfg's counts and the given script.
func runScript(t *testing.T, cfg Config, script scriptFunc) *Result {
	t.Helper()
	cfg.Protocol, cfg.transport = fakeProtocol, newScriptTransport
	cfg.Target.Path = t.Name()
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	scripts.Store(cfg.Target.Path, script)
	defer scripts.Delete(cfg.Target.Path)
	rn, err := newRunner(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rn.Run(context.Background())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

// benchThousand runs cfg for 1000 requests each benchmark iteration and
// reports the time per request.
func benchThousand(b *testing.B, cfg Config) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cfg.Requests = 1000
		rn, err := newRunner(b, cfg)
		if err != nil {
			b.Fatal(err)
		}
		res, err := rn.Run(context.Background())
		if err != nil || res.Complete != 1000 {
			b.Fatalf("Run: %v, %d complete", err, res.Complete)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/request")
}
