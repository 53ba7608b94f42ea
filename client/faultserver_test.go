package client

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return newFaultServerOn(tb, ln, script)
}

// newFaultServerOn is newFaultServer on a listener of the caller's (e.g. TLS).
func newFaultServerOn(tb testing.TB, ln net.Listener, script func(fc *faultConn)) *faultServer {
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
		Target:      Target{Host: "127.0.0.1", Port: port, Path: "/x", PortGiven: true},
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
	rn, err := New(cfg)
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
