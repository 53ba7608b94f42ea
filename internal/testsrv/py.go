package testsrv

import (
	"bytes"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Py is a byte-faithful Go port of the Python server (harness/pysrv.py) that
// answered the pysrv cases of the ab goldens. It answers any path with 200 and
// 100 bytes, except the special paths documented on handleRequest. Unlike the
// Python original, each Py has its own request counter, so /var, /us/... and
// /sometimes behave the same way in every test.
type Py struct {
	base
	counter atomic.Int64

	captureMu  sync.Mutex
	capture    bytes.Buffer
	captureAll atomic.Bool
}

// CaptureAll makes the server capture every request, not only those whose
// path contains "capture" (an extension to pysrv.py for differential tests).
func (p *Py) CaptureAll() { p.captureAll.Store(true) }

// NewPy starts a Py server on 127.0.0.1 with a fresh request counter.
func NewPy() (*Py, error) {
	p := &Py{}
	if err := p.start(nil, p.serveConn); err != nil {
		return nil, err
	}
	return p, nil
}

// URL is "http://127.0.0.1:port".
func (p *Py) URL() string { return "http://" + p.HostPort() }

// Requests is how many requests the server has counted so far.
func (p *Py) Requests() int64 { return p.counter.Load() }

// Captured returns, in arrival order, every request whose path contains
// "capture": its head and body exactly as received, each followed by
// "\n=====\n" (the layout of the golden request-capture.raw).
func (p *Py) Captured() []byte {
	p.captureMu.Lock()
	defer p.captureMu.Unlock()
	return bytes.Clone(p.capture.Bytes())
}

// ResetCapture forgets the captured requests.
func (p *Py) ResetCapture() {
	p.captureMu.Lock()
	p.capture.Reset()
	p.captureMu.Unlock()
}

// readPyRequest reads one request the way pysrv.py's read_request does: the
// head up to the first CRLFCRLF, then Content-Length bytes of body (fewer if
// the peer closes). ok is false when the connection ended before a full head
// or the Content-Length value is not a number (Python raises there).
func readPyRequest(c net.Conn, buf []byte) (head, body, rest []byte, ok bool) {
	chunk := make([]byte, 65536)
	for !bytes.Contains(buf, []byte("\r\n\r\n")) {
		n, err := c.Read(chunk)
		if n > 0 {
			buf = append(buf, chunk[:n]...)
			continue
		}
		if err != nil {
			return nil, nil, buf, false
		}
	}
	i := bytes.Index(buf, []byte("\r\n\r\n"))
	head = buf[:i+4]
	rest = buf[i+4:]
	contentLength := 0
	lines := bytes.Split(buf[:i], []byte("\r\n"))
	for _, line := range lines[1:] {
		k, v, _ := bytes.Cut(line, []byte(":"))
		if strings.EqualFold(string(bytes.TrimSpace(k)), "content-length") {
			n, err := pyInt(string(v))
			if err != nil {
				return nil, nil, nil, false
			}
			contentLength = n
		}
	}
	for len(rest) < contentLength {
		n, err := c.Read(chunk)
		if n > 0 {
			rest = append(rest, chunk[:n]...)
			continue
		}
		if err != nil {
			break
		}
	}
	if contentLength < 0 {
		contentLength = 0
	}
	end := min(contentLength, len(rest))
	body = rest[:end]
	rest = append([]byte(nil), rest[end:]...)
	return append([]byte(nil), head...), append([]byte(nil), body...), rest, true
}

// pyInt parses like Python's int(str): surrounding whitespace allowed.
func pyInt(s string) (int, error) {
	return strconv.Atoi(strings.TrimSpace(s))
}

func (p *Py) serveConn(c net.Conn) {
	var buf []byte
	for {
		head, body, rest, ok := readPyRequest(c, buf)
		if !ok {
			return
		}
		buf = rest
		if !p.handleRequest(c, head, body) {
			return
		}
	}
}

const pyServer = "Server: pysrv/1.0 (test)\r\n"

// handleRequest answers one request and reports whether the connection stays
// open. Paths, as in pysrv.py (checked in this order, by prefix):
//
//	/hang        never answers (until Close)
//	/slow        200 ms delay, then the normal answer
//	/us/A/B/K    sleeps B µs on every K-th request, else A µs, then the normal answer
//	/jitter      50 ms delay on every 4th request
//	/sometimes   every 3rd request hangs
//	/bigheader   a header over 8 KiB with no end, then close after 1 s
//	/status500   500 with a 5-byte body, close
//	/kaclose     claims keep-alive, closes after 50 ms
//	/kanolen     keep-alive, no Content-Length
//	/var         body of 100 + n mod 7 bytes
//	/noserver    no Server header, 50-byte body
//	/oddserver   "Server:nospace", 50-byte body
//	/chunked     Transfer-Encoding: chunked, 100 bytes in one chunk
//
// The connection is kept iff the request head contains "keep-alive" in any case.
func (p *Py) handleRequest(c net.Conn, head, body []byte) bool {
	firstLine, _, _ := bytes.Cut(head, []byte("\r\n"))
	parts := strings.Split(string(firstLine), " ")
	path := "/"
	if len(parts) > 1 {
		path = parts[1]
	}
	keepAlive := bytes.Contains(bytes.ToLower(head), []byte("keep-alive"))
	if strings.Contains(path, "capture") || p.captureAll.Load() {
		p.captureMu.Lock()
		p.capture.Write(head)
		p.capture.Write(body)
		p.capture.WriteString("\n=====\n")
		p.captureMu.Unlock()
	}
	n := p.counter.Add(1)
	server := pyServer
	switch {
	case strings.HasPrefix(path, "/hang"):
		p.sleep(time.Hour)
		return false
	case strings.HasPrefix(path, "/slow"):
		if !p.sleep(200 * time.Millisecond) {
			return false
		}
	case strings.HasPrefix(path, "/us/"):
		fields := strings.Split(path, "/")
		if len(fields) < 5 {
			return false
		}
		a, errA := pyInt(fields[2])
		b, errB := pyInt(fields[3])
		k, errK := pyInt(fields[4])
		if errA != nil || errB != nil || errK != nil || k == 0 {
			return false
		}
		us := a
		if pyMod(n, int64(k)) == 0 {
			us = b
		}
		if !p.sleep(time.Duration(us) * time.Microsecond) {
			return false
		}
	}
	if strings.HasPrefix(path, "/jitter") && n%4 == 0 {
		if !p.sleep(50 * time.Millisecond) {
			return false
		}
	}
	if strings.HasPrefix(path, "/sometimes") && n%3 == 0 {
		p.sleep(time.Hour)
		return false
	}
	switch {
	case strings.HasPrefix(path, "/bigheader"):
		c.Write([]byte("HTTP/1.1 200 OK\r\nServer: big\r\nX-Pad: " + strings.Repeat("p", 9000)))
		p.sleep(time.Second)
		return false
	case strings.HasPrefix(path, "/status500"):
		c.Write([]byte("HTTP/1.1 500 Internal Server Error\r\nServer: pysrv/1.0\r\nContent-Length: 5\r\nConnection: close\r\n\r\nerror"))
		return false
	case strings.HasPrefix(path, "/kaclose"):
		c.Write([]byte("HTTP/1.1 200 OK\r\nServer: pysrv/1.0\r\nContent-Length: 100\r\nConnection: keep-alive\r\n\r\n" + strings.Repeat("k", 100)))
		p.sleep(50 * time.Millisecond)
		return false
	case strings.HasPrefix(path, "/kanolen"):
		_, err := c.Write([]byte("HTTP/1.1 200 OK\r\nServer: pysrv/1.0\r\nConnection: keep-alive\r\n\r\n" + strings.Repeat("n", 100)))
		return err == nil
	}
	var out string
	switch {
	case strings.HasPrefix(path, "/var"):
		out = strings.Repeat("v", 100+int(n%7))
	case strings.HasPrefix(path, "/noserver"):
		server = ""
		out = strings.Repeat("x", 50)
	case strings.HasPrefix(path, "/oddserver"):
		server = "Server:nospace\r\n"
		out = strings.Repeat("x", 50)
	case strings.HasPrefix(path, "/chunked"):
		resp := "HTTP/1.1 200 OK\r\n" + server + "Transfer-Encoding: chunked\r\n" +
			connectionHeader(keepAlive) + "\r\n64\r\n" + strings.Repeat("y", 100) + "\r\n0\r\n\r\n"
		_, err := c.Write([]byte(resp))
		return keepAlive && err == nil
	default:
		out = strings.Repeat("z", 100)
	}
	resp := "HTTP/1.1 200 OK\r\n" + server +
		"Content-Length: " + strconv.Itoa(len(out)) + "\r\n" +
		connectionHeader(keepAlive) + "\r\n" + out
	_, err := c.Write([]byte(resp))
	return keepAlive && err == nil
}

func connectionHeader(keepAlive bool) string {
	if keepAlive {
		return "Connection: keep-alive\r\n"
	}
	return "Connection: close\r\n"
}

// pyMod is Python's %, whose result takes the sign of the divisor.
func pyMod(a, b int64) int64 {
	m := a % b
	if m != 0 && (m < 0) != (b < 0) {
		m += b
	}
	return m
}
