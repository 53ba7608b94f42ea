package testsrv

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Nginx serves the documents of the ab goldens with response heads laid out
// byte for byte as nginx 1.22.1 lays them out (same headers, order and
// lengths; only the Date, Last-Modified and ETag values differ), so that
// "Total transferred" equals the goldens:
//
//	/f100.txt  100 × 'a'
//	/f10k.txt  "0123456789abcdef" × 640
//	/f1m.txt   1024 lines of 1023 × 'x' + '\n'
//	/notfound  404 with nginx's 153-byte page
//	/post      200 "posted\n" for any method (nginx's `return 200`)
//
// Any other path is a 404; POST, PUT and other methods on a file are 405.
// Keep-alive follows nginx: HTTP/1.1 keeps the connection unless the request
// says Connection: close; HTTP/1.0 keeps it only with Connection: keep-alive.
type Nginx struct {
	base
	requests atomic.Int64
	modTime  time.Time
}

// NewNginx starts a plain-HTTP Nginx on 127.0.0.1.
func NewNginx() (*Nginx, error) { return newNginx(nil) }

// NewNginxTLS starts an HTTPS Nginx on 127.0.0.1 with a self-signed RSA 2048
// CN=localhost certificate (generated once per process), TLS 1.2 and 1.3.
func NewNginxTLS() (*Nginx, error) {
	cfg, err := ServerTLSConfig()
	if err != nil {
		return nil, err
	}
	return newNginx(cfg)
}

func newNginx(cfg *tls.Config) (*Nginx, error) {
	s := &Nginx{modTime: time.Now().Add(-time.Hour).Truncate(time.Second)}
	if err := s.start(cfg, s.serveConn); err != nil {
		return nil, err
	}
	return s, nil
}

// Requests is how many requests the server has answered so far.
func (s *Nginx) Requests() int64 { return s.requests.Load() }

// URL is "http://127.0.0.1:port" (use "https://" for a TLS server).
func (s *Nginx) URL() string { return "http://" + s.HostPort() }

// Documents served by Nginx, by path.
var nginxFiles = map[string][]byte{
	"/f100.txt": bytes.Repeat([]byte("a"), 100),
	"/f10k.txt": bytes.Repeat([]byte("0123456789abcdef"), 640),
	"/f1m.txt":  bytes.Repeat(append(bytes.Repeat([]byte("x"), 1023), '\n'), 1024),
}

// NginxDocument returns the body served for path, or nil.
func NginxDocument(path string) []byte { return nginxFiles[path] }

func nginxErrorPage(status string) []byte {
	return []byte("<html>\r\n<head><title>" + status + "</title></head>\r\n<body>\r\n<center><h1>" +
		status + "</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n")
}

type nginxRequest struct {
	method, target, proto string
	keepAlive             bool
	bad                   bool // not HTTP (a TLS ClientHello, say): 400 and close
}

// badMethodStart reports whether buf cannot start an HTTP request: nginx
// accepts only upper-case letters, '_' and '-' in a method.
func badMethodStart(buf []byte) bool {
	for _, ch := range buf {
		switch {
		case ch == ' ':
			return false
		case ch >= 'A' && ch <= 'Z', ch == '_', ch == '-':
		default:
			return true
		}
	}
	return false
}

// readNginxRequest reads one request head and discards its Content-Length body.
func readNginxRequest(c net.Conn, buf []byte) (req nginxRequest, rest []byte, ok bool) {
	chunk := make([]byte, 32768)
	for !bytes.Contains(buf, []byte("\r\n\r\n")) {
		if len(buf) > 64<<10 {
			return req, nil, false
		}
		n, err := c.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if badMethodStart(buf) {
			req.bad = true
			return req, nil, true
		}
		if n == 0 && err != nil {
			return req, nil, false
		}
	}
	i := bytes.Index(buf, []byte("\r\n\r\n"))
	lines := strings.Split(string(buf[:i]), "\r\n")
	rest = buf[i+4:]
	fields := strings.Fields(lines[0])
	if len(fields) != 3 {
		return req, nil, false
	}
	req.method, req.target, req.proto = fields[0], fields[1], fields[2]
	connection := ""
	contentLength := 0
	for _, line := range lines[1:] {
		k, v, _ := strings.Cut(line, ":")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "connection":
			connection = strings.ToLower(strings.TrimSpace(v))
		case "content-length":
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				return req, nil, false
			}
			contentLength = n
		}
	}
	if req.proto == "HTTP/1.1" {
		req.keepAlive = connection != "close"
	} else {
		req.keepAlive = connection == "keep-alive"
	}
	for len(rest) < contentLength {
		n, err := c.Read(chunk)
		rest = append(rest, chunk[:n]...)
		if n == 0 && err != nil {
			return req, nil, false
		}
	}
	return req, append([]byte(nil), rest[contentLength:]...), true
}

func (s *Nginx) serveConn(c net.Conn) {
	var buf []byte
	for {
		req, rest, ok := readNginxRequest(c, buf)
		if !ok {
			return
		}
		buf = rest
		s.requests.Add(1)
		if err := s.write(c, s.respond(req)); err != nil || !req.keepAlive || req.bad {
			return
		}
	}
}

// write sends a response. Over TLS it goes through a 16 KiB buffer, as
// nginx's ssl_buffer_size does, so the head and the start of the body share
// a TLS record (a client's first read then sees both, as with nginx).
func (s *Nginx) write(c net.Conn, parts [][]byte) error {
	if _, isTLS := c.(*tls.Conn); !isTLS {
		out := net.Buffers(parts)
		_, err := out.WriteTo(c)
		return err
	}
	w := bufio.NewWriterSize(c, 16384)
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return w.Flush()
}

// respond builds the head and body nginx 1.22.1 sends for req.
func (s *Nginx) respond(req nginxRequest) [][]byte {
	path := req.target
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		// An absolute target: nginx serves its path.
		rest := path[strings.Index(path, "//")+2:]
		path = "/"
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			path = rest[j:]
		}
	}
	if j := strings.IndexAny(path, "?#"); j >= 0 {
		path = path[:j]
	}
	var status, contentType string
	var body []byte
	fileHeaders := ""
	switch doc, isFile := nginxFiles[path]; {
	case req.bad:
		status, contentType, body = "400 Bad Request", "text/html", nginxErrorPage("400 Bad Request")
	case path == "/post":
		status, contentType, body = "200 OK", "text/plain", []byte("posted\n")
	case isFile && (req.method == "GET" || req.method == "HEAD"):
		status, contentType, body = "200 OK", "text/plain", doc
		fileHeaders = "Last-Modified: " + httpDate(s.modTime) + "\r\n"
	case isFile:
		status, contentType, body = "405 Not Allowed", "text/html", nginxErrorPage("405 Not Allowed")
	default:
		status, contentType, body = "404 Not Found", "text/html", nginxErrorPage("404 Not Found")
	}
	var h strings.Builder
	h.WriteString("HTTP/1.1 " + status + "\r\nServer: nginx/1.22.1\r\nDate: " + httpDate(time.Now()) + "\r\n")
	h.WriteString("Content-Type: " + contentType + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n")
	h.WriteString(fileHeaders)
	if req.keepAlive {
		h.WriteString("Connection: keep-alive\r\n")
	} else {
		h.WriteString("Connection: close\r\n")
	}
	if fileHeaders != "" {
		h.WriteString("ETag: \"" + strconv.FormatInt(s.modTime.Unix(), 16) + "-" + strconv.FormatInt(int64(len(body)), 16) + "\"\r\n")
		h.WriteString("Accept-Ranges: bytes\r\n")
	}
	h.WriteString("\r\n")
	if req.method == "HEAD" {
		return [][]byte{[]byte(h.String())}
	}
	return [][]byte{[]byte(h.String()), body}
}

func httpDate(t time.Time) string { return t.UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT") }
