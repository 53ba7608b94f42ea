package testsrv

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"gab/internal/testtool"
)

func newPy(t *testing.T) *Py {
	t.Helper()
	p, err := NewPy()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// readAll sends request and reads until the server closes or wait passes.
func readAll(t *testing.T, addr, request string, wait time.Duration) []byte {
	t.Helper()
	out, _, _ := converse(t, addr, request, wait, nil)
	return out
}

// answerDeadline bounds readAnswer; it is only reached when a server is
// broken (or the machine is stalled far beyond anything a test run sees).
const answerDeadline = 10 * time.Second

// readAnswer sends request and reads until the server closes or, when complete
// is not nil, until complete reports the expected answer in; it then reads for
// another 100 ms, so that bytes or a close that should not come are caught.
// Completion is decided by the data itself, never by a wall-clock window, so a
// slow server yields the same bytes as a fast one. closed is whether the
// server closed the connection.
func readAnswer(t *testing.T, addr, request string, complete func([]byte) bool) (answer []byte, closed bool) {
	t.Helper()
	answer, closed, settled := converse(t, addr, request, answerDeadline, complete)
	if !closed && !settled {
		t.Errorf("%q: no complete answer within %v", request, answerDeadline)
	}
	return answer, closed
}

// converse sends request and reads until the server closes or wait passes;
// once complete (if not nil) reports the answer in, it reads 100 ms more.
// closed is whether the server closed the connection, settled whether
// complete reported the answer in.
func converse(t *testing.T, addr, request string, wait time.Duration, complete func([]byte) bool) (out []byte, closed, settled bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(request))
	c.SetReadDeadline(time.Now().Add(wait))
	var b bytes.Buffer
	buf := make([]byte, 65536)
	for {
		n, err := c.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.Bytes(), !errors.Is(err, os.ErrDeadlineExceeded), settled
		}
		if !settled && complete != nil && complete(b.Bytes()) {
			settled = true
			c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		}
	}
}

// responses returns a completion test for readAnswer: b holds n complete
// responses, each framed by Content-Length or chunked encoding, or, when it
// has neither, by unframed bytes of body (the /kanolen answer).
func responses(n, unframed int) func([]byte) bool {
	return func(b []byte) bool {
		for range n {
			i := bytes.Index(b, []byte("\r\n\r\n"))
			if i < 0 {
				return false
			}
			head := strings.ToLower(string(b[:i]))
			b = b[i+4:]
			switch {
			case strings.Contains(head, "\r\ncontent-length:"):
				_, v, _ := strings.Cut(head, "\r\ncontent-length:")
				v, _, _ = strings.Cut(v, "\r\n")
				length, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil || len(b) < length {
					return false
				}
				b = b[length:]
			case strings.Contains(head, "\r\ntransfer-encoding: chunked"):
				for {
					line, rest, ok := bytes.Cut(b, []byte("\r\n"))
					if !ok {
						return false
					}
					size, err := strconv.ParseInt(string(line), 16, 64)
					if err != nil || int64(len(rest)) < size+2 {
						return false
					}
					b = rest[size+2:]
					if size == 0 {
						break
					}
				}
			default:
				if len(b) < unframed {
					return false
				}
				b = b[unframed:]
			}
		}
		return true
	}
}

func get(path string, keepAlive bool) string {
	ka := ""
	if keepAlive {
		ka = "Connection: Keep-Alive\r\n"
	}
	return "GET " + path + " HTTP/1.0\r\n" + ka + "Host: 127.0.0.1\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"
}

func TestPyPlainAndKeepAlive(t *testing.T) {
	p := newPy(t)
	got := readAll(t, p.Addr(), get("/f", false), 2*time.Second)
	want := "HTTP/1.1 200 OK\r\nServer: pysrv/1.0 (test)\r\nContent-Length: 100\r\nConnection: close\r\n\r\n" + strings.Repeat("z", 100)
	if string(got) != want {
		t.Fatalf("got %q", got)
	}
	// Two pipelined keep-alive requests are both answered on one connection.
	got, closed := readAnswer(t, p.Addr(), get("/a", true)+get("/b", true), responses(2, 0))
	one := "HTTP/1.1 200 OK\r\nServer: pysrv/1.0 (test)\r\nContent-Length: 100\r\nConnection: keep-alive\r\n\r\n" + strings.Repeat("z", 100)
	if string(got) != one+one || closed {
		t.Fatalf("keep-alive: got %q, closed %v", got, closed)
	}
	if p.Requests() != 3 {
		t.Fatalf("counter %d, want 3", p.Requests())
	}
}

func TestPyCountersArePerServer(t *testing.T) {
	for range 2 {
		p := newPy(t)
		var lengths []int
		for range 8 {
			resp := readAll(t, p.Addr(), get("/var", false), 2*time.Second)
			_, body, _ := bytes.Cut(resp, []byte("\r\n\r\n"))
			lengths = append(lengths, len(body))
		}
		want := []int{101, 102, 103, 104, 105, 106, 100, 101}
		for i := range want {
			if lengths[i] != want[i] {
				t.Fatalf("lengths %v, want %v", lengths, want)
			}
		}
	}
}

func TestPyCaptureKeepsRequestBytes(t *testing.T) {
	p := newPy(t)
	req := "POST /capture3 HTTP/1.0\r\nContent-length: 7\r\nContent-type: text/plain\r\nHost: h\r\n\r\na=1&b=2"
	readAll(t, p.Addr(), req, 2*time.Second)
	readAll(t, p.Addr(), get("/nocapt", false), 2*time.Second)
	if got, want := string(p.Captured()), req+"\n=====\n"; got != want {
		t.Fatalf("captured %q, want %q", got, want)
	}
	p.ResetCapture()
	if len(p.Captured()) != 0 {
		t.Fatal("ResetCapture kept data")
	}
	p.CaptureAll()
	readAll(t, p.Addr(), get("/other", false), 2*time.Second)
	if got, want := string(p.Captured()), get("/other", false)+"\n=====\n"; got != want {
		t.Fatalf("CaptureAll: captured %q, want %q", got, want)
	}
}

func TestPyHangEndsOnClose(t *testing.T) {
	p, err := NewPy()
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(get("/hang", false)))
	for deadline := time.Now().Add(5 * time.Second); p.Requests() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the /hang request never arrived")
		}
	}
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the hanging handler")
	}
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := c.Read(make([]byte, 10)); n != 0 || err == nil {
		t.Fatalf("hanging request got %d bytes, err %v", n, err)
	}
}

// TestPyMatchesPythonOriginal runs the Python harness server and Py side by
// side on the same request sequences and compares the raw answers.
func TestPyMatchesPythonOriginal(t *testing.T) {
	python := testtool.Need(t, "python3", "python3")
	// pysrv.py listens on a port of the system's choosing and prints it:
	// a port picked here and closed before it bound could be taken by then.
	cmd := exec.Command(python, "../../testdata/golden/harness/pysrv.py", "0")
	cmd.Env = append(os.Environ(), "AB_CAPTURE_LOG="+t.TempDir()+"/requests.log")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n') // ends with the process if it fails
	port, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil || port <= 0 {
		t.Fatalf("pysrv.py did not say its port: %q %v", line, err)
	}
	pyAddr := "127.0.0.1:" + strconv.Itoa(port)
	goPy := newPy(t)
	// The Python server's counter is global, so the sequence starts with it
	// at 0 on both sides and every request below is counted on both.
	// Every exchange but the last is read until its answer is complete
	// (a close, or the responses a keep-alive connection must carry), so
	// how fast either server is scheduled does not change the bytes.
	requests := []struct {
		req      string
		complete func([]byte) bool
	}{
		{get("/var", false), nil},
		{get("/var", true) + get("/var", true), responses(2, 0)},
		{get("/status500", false), nil},
		{get("/kaclose", true), nil},
		{get("/kanolen", true), responses(1, 100)},
		{get("/chunked", false), nil},
		{get("/chunked", true), responses(1, 0)},
		{get("/noserver", false), nil},
		{get("/oddserver", false), nil},
		{get("/us/0/1000/2", false), nil},
		{get("/slow", false), nil},
		{get("/bigheader", false), nil},
		{get("/sometimes", false), nil}, // the 14th request: answered
		{"PUT /put HTTP/1.0\r\nContent-length: 7\r\nHost: h\r\n\r\na=1&b=2", nil},
		{get("/sometimes", false), nil},
		{get("/sometimes", false), nil},
	}
	for _, r := range requests {
		want, wantClosed := readAnswer(t, pyAddr, r.req, r.complete)
		got, closed := readAnswer(t, goPy.Addr(), r.req, r.complete)
		if !bytes.Equal(got, want) || closed != wantClosed {
			t.Errorf("%q:\n got %q (closed %v)\nwant %q (closed %v)", r.req, trim(got), closed, trim(want), wantClosed)
		}
	}
	// The 18th request (n%3 == 0) hangs: neither server may send anything.
	// It comes last, so no later request can be counted before it. The Go
	// side is read only once it has counted the request, so its silence is
	// that of the hanging handler, not of a request not yet read.
	hang := get("/sometimes", false)
	if want := readAll(t, pyAddr, hang, 300*time.Millisecond); len(want) != 0 {
		t.Errorf("pysrv.py answered the 18th request: %q", trim(want))
	}
	c, err := net.Dial("tcp", goPy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(hang))
	for deadline := time.Now().Add(answerDeadline); goPy.Requests() < 18; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Py counted %d requests, want 18", goPy.Requests())
		}
	}
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := c.Read(make([]byte, 100)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Py answered the 18th request: %d bytes, %v", n, err)
	}
}
