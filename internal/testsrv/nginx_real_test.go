package testsrv

import (
	"bytes"
	"net"
	"regexp"
	"strconv"
	"testing"
	"time"

	"gab/internal/testtool"
)

// startRealNginx runs the nginx binary with the goldens' configuration on a
// free loopback port and returns that port. It fails under CI when nginx is
// missing and skips otherwise.
func startRealNginx(t *testing.T) int {
	t.Helper()
	n := testtool.StartNginx(t, nginxFiles, 1, `    access_log off;
    server {
        listen 127.0.0.1:%[2]d;
        server_name localhost;
        root %[1]s/www;
        location = /notfound { return 404; }
        location = /post { client_max_body_size 10m; return 200 "posted\n"; }
    }`)
	return n.Ports[0]
}

// exchange sends one raw request and reads until the server closes or the
// expected byte count arrives.
func exchange(t *testing.T, addr, request string) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte(request)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	buf := make([]byte, 65536)
	for {
		n, err := c.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
		// A kept-alive answer: stop once the head and its Content-Length body are in.
		if complete(out.Bytes(), request) {
			break
		}
	}
	return out.Bytes()
}

var contentLengthRE = regexp.MustCompile(`\r\nContent-Length: (\d+)\r\n`)

func complete(resp []byte, request string) bool {
	i := bytes.Index(resp, []byte("\r\n\r\n"))
	if i < 0 {
		return false
	}
	if bytes.HasPrefix([]byte(request), []byte("HEAD ")) {
		return true
	}
	m := contentLengthRE.FindSubmatch(resp[:i+2])
	if m == nil {
		return false
	}
	n, _ := strconv.Atoi(string(m[1]))
	return len(resp) >= i+4+n
}

// headerValues masks the values that legitimately differ between two nginx
// instances (dates and the mtime part of ETag), keeping their lengths.
var headerValues = regexp.MustCompile(`(Date: |Last-Modified: )[^\r]*|ETag: "[0-9a-f]+-`)

func TestNginxHeadsMatchRealNginx(t *testing.T) {
	port := startRealNginx(t)
	real := "127.0.0.1:" + strconv.Itoa(port)
	fake, err := NewNginx()
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	requests := []string{
		"GET /f100.txt HTTP/1.0\r\nHost: x\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n",
		"GET /f10k.txt HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: x\r\n\r\n",
		"GET /f1m.txt HTTP/1.0\r\nHost: x\r\n\r\n",
		"HEAD /f100.txt HTTP/1.0\r\nHost: x\r\n\r\n",
		"HEAD /f100.txt HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: x\r\n\r\n",
		"GET /notfound HTTP/1.0\r\nHost: x\r\n\r\n",
		"GET /notfound HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: x\r\n\r\n",
		"GET /missing HTTP/1.0\r\nHost: x\r\n\r\n",
		"POST /post HTTP/1.0\r\nContent-length: 7\r\nContent-type: text/plain\r\nHost: x\r\n\r\na=1&b=2",
		"PUT /post HTTP/1.0\r\nConnection: Keep-Alive\r\nContent-length: 7\r\nHost: x\r\n\r\na=1&b=2",
		"POST /f100.txt HTTP/1.0\r\nContent-length: 7\r\nHost: x\r\n\r\na=1&b=2",
		"DELETE /f100.txt HTTP/1.0\r\nHost: x\r\n\r\n",
		"GET /f100.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /f100.txt?q=1 HTTP/1.1\r\nHost: x\r\n\r\n",
		"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", // a TLS ClientHello's start: 400
	}
	for _, req := range requests {
		want := headerValues.ReplaceAll(exchange(t, real, req), []byte("$1*"))
		got := headerValues.ReplaceAll(exchange(t, fake.Addr(), req), []byte("$1*"))
		if !bytes.Equal(got, want) {
			t.Errorf("request %q:\n got %q\nwant %q", req, trim(got), trim(want))
		}
	}
}

func trim(b []byte) []byte {
	if len(b) > 600 {
		return b[:600]
	}
	return b
}
