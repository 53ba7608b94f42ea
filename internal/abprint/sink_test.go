package abprint

import (
	"bytes"
	"crypto/tls"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gab/client"
)

// lockedWriter serialises the sink's writes from many goroutines, as gab's
// own writers do.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func newTestSink(verbosity, every int) (s *Sink, out, errb *bytes.Buffer) {
	out, errb = new(bytes.Buffer), new(bytes.Buffer)
	s = NewSink(&lockedWriter{w: out}, &lockedWriter{w: errb}, verbosity, every)
	s.now = func() time.Time { return time.Unix(1795996874, 0) }
	return s, out, errb
}

func TestSinkCompletedInOrder(t *testing.T) {
	s, _, errb := newTestSink(0, 100)
	// Workers can report 300 before 100 and 200; each line comes once, in order.
	s.Completed(300)
	s.Completed(100)
	s.Completed(200)
	s.Completed(400)
	want := "Completed 100 requests\nCompleted 200 requests\nCompleted 300 requests\nCompleted 400 requests\n"
	if errb.String() != want {
		t.Errorf("progress lines %q, want %q", errb.String(), want)
	}
}

func TestSinkCompletedConcurrent(t *testing.T) {
	s, _, errb := newTestSink(0, 10)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 10 * (w + 1); i <= 1000; i += 80 {
				s.Completed(i)
			}
		}(w)
	}
	wg.Wait()
	var want strings.Builder
	for i := 10; i <= 1000; i += 10 {
		want.WriteString("Completed " + strconv.Itoa(i) + " requests\n")
	}
	if errb.String() != want.String() {
		t.Errorf("concurrent progress lines:\n%s", errb.String())
	}
}

func TestSinkNoProgress(t *testing.T) {
	s, out, errb := newTestSink(1, 0)
	s.Completed(100)
	s.HeaderReceived([]byte("HTTP/1.0 200 OK\r\n"))
	s.Status(500)
	if out.Len()+errb.Len() != 0 {
		t.Errorf("printed %q / %q with progress off and -v 1", out.String(), errb.String())
	}
}

func TestSinkVerboseLines(t *testing.T) {
	s, out, _ := newTestSink(2, 0)
	s.HeaderReceived([]byte("HTTP/1.1 200 OK\r\nX: a\x00hidden"))
	s.Status(404)
	s.Status(200) // -v 3 only
	s.SendFailed()
	s.SendTimedOut()
	want := "LOG: header received:\nHTTP/1.1 200 OK\r\nX: a\n" +
		"WARNING: Response code not 2xx (404)\n" +
		"Send request failed!\nSend request timed out!\n"
	if out.String() != want {
		t.Errorf("-v 2 stdout %q, want %q", out.String(), want)
	}
	s, out, _ = newTestSink(3, 0)
	s.Status(204)
	if out.String() != "LOG: Response code = 204\n" {
		t.Errorf("-v 3 stdout %q", out.String())
	}
}

func TestSinkErrors(t *testing.T) {
	s, out, errb := newTestSink(1, 0)
	s.ReceiveError(&client.FatalError{Message: "apr_socket_recv: Connection refused (111)\n", Exit: 111})
	s.TLSHandshakeFailed(&tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"})
	s.Notice("-k has no effect\nwith --cgi")
	want := "apr_socket_recv: Connection refused (111)\n" +
		"SSL handshake failed (1).\ntls: first record does not look like a TLS handshake\n" +
		"gab: -k has no effect with --cgi\n"
	if errb.String() != want || out.Len() != 0 {
		t.Errorf("stderr %q (stdout %q), want %q", errb.String(), out.String(), want)
	}
}

func TestSinkHeaderEscapesControlBytes(t *testing.T) {
	for _, v := range []int{2, 4} {
		s, out, _ := newTestSink(v, 0)
		s.HeaderReceived([]byte("HTTP/1.1 200 OK\r\nServer: \x1b[2J\x1b]52;c;aGk=\x07x\x7f\tcafé\xc2\x9b\xff\r\n\r\n"))
		want := "LOG: header received:\nHTTP/1.1 200 OK\r\nServer: \\x1b[2J\\x1b]52;c;aGk=\\x07x\\x7f\tcafé\\xc2\\x9b\\xff\r\n\r\n\n"
		if out.String() != want {
			t.Errorf("-v %d stdout %q, want %q", v, out.String(), want)
		}
	}
	s, out, _ := newTestSink(3, 0)
	s.Status(200)
	if out.String() != "LOG: Response code = 200\n" {
		t.Errorf("-v 3 status line %q", out.String())
	}
}
