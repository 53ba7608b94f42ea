package testsrv

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
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
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(request))
	c.SetReadDeadline(time.Now().Add(wait))
	var out bytes.Buffer
	buf := make([]byte, 65536)
	for {
		n, err := c.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			return out.Bytes()
		}
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
	got = readAll(t, p.Addr(), get("/a", true)+get("/b", true), 300*time.Millisecond)
	one := "HTTP/1.1 200 OK\r\nServer: pysrv/1.0 (test)\r\nContent-Length: 100\r\nConnection: keep-alive\r\n\r\n" + strings.Repeat("z", 100)
	if string(got) != one+one {
		t.Fatalf("keep-alive: got %q", got)
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
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	port, err := ClosedPort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "../../testdata/golden/harness/pysrv.py", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "AB_CAPTURE_LOG="+t.TempDir()+"/requests.log")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pyAddr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", pyAddr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("pysrv.py did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	goPy := newPy(t)
	// The Python server's counter is global, so the sequence starts with it
	// at 0 on both sides and every request below is counted on both.
	requests := []struct {
		req  string
		wait time.Duration
	}{
		{get("/var", false), time.Second},
		{get("/var", true) + get("/var", true), 200 * time.Millisecond},
		{get("/status500", false), time.Second},
		{get("/kaclose", true), time.Second},
		{get("/kanolen", true), 200 * time.Millisecond},
		{get("/chunked", false), time.Second},
		{get("/chunked", true), 200 * time.Millisecond},
		{get("/noserver", false), time.Second},
		{get("/oddserver", false), time.Second},
		{get("/us/0/1000/2", false), time.Second},
		{get("/slow", false), time.Second},
		{get("/bigheader", false), 2 * time.Second},
		{"PUT /put HTTP/1.0\r\nContent-length: 7\r\nHost: h\r\n\r\na=1&b=2", time.Second},
		{get("/sometimes", false), time.Second},
		{get("/sometimes", false), time.Second},
		{get("/sometimes", false), 300 * time.Millisecond}, // the 18th request: n%3 == 0 hangs
	}
	for _, r := range requests {
		want := readAll(t, pyAddr, r.req, r.wait)
		got := readAll(t, goPy.Addr(), r.req, r.wait)
		if !bytes.Equal(got, want) {
			t.Errorf("%q:\n got %q\nwant %q", r.req, trim(got), trim(want))
		}
	}
}
