//go:build linux

package client

import (
	"crypto/tls"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// trickleConn writes each byte on its own, when the test says so.
type trickleConn struct {
	net.Conn
	next chan struct{}
}

func (c trickleConn) Write(p []byte) (int, error) {
	for i := range p {
		<-c.next
		if _, err := c.Conn.Write(p[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(p), nil
}

// TestTLSLinkPartialRecords checks what the event loops rely on in
// crypto/tls: a handshake driven by the link's coroutine, and after it a
// Read that finds no complete record returns errWouldBlock without making it
// the connection's error, keeps the partial record, and returns the data
// once the record's last byte has arrived. The server's record reaches the
// client's non-blocking socket one byte at a time.
func TestTLSLinkPartialRecords(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fds[1]), "peer")
	peer, err := net.FileConn(f)
	_ = f.Close() // FileConn made its own copy (the File, not unix.Close: its finalizer would close the number again)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	next := make(chan struct{})
	srvConf := tlsServerConfig(t)
	srvConf.MinVersion = tls.VersionTLS13
	srv := tls.Server(trickleConn{peer, next}, srvConf)
	served := make(chan error, 1)
	go func() {
		if err := srv.Handshake(); err != nil {
			served <- err
			return
		}
		_, err := srv.Write([]byte("hello, loop"))
		served <- err
	}()

	s := &epSock{fd: fds[0], budget: 1 << 20}
	p := &epPoller{raddrs: []net.Addr{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}}}
	p.openTLS(s, &tls.Config{InsecureSkipVerify: true})
	l := s.tls
	waitReadable := func() {
		t.Helper()
		pfd := []unix.PollFd{{Fd: int32(fds[0]), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 5000)
		for err == unix.EINTR { // a signal (the runtime's preemption) interrupted it
			n, err = unix.Poll(pfd, 5000)
		}
		if n != 1 || err != nil {
			t.Fatalf("poll: %d %v", n, err)
		}
		s.readable = true
	}
	// The handshake: the server's flight arrives a byte at a time, and the
	// coroutine yields for each.
	l.start()
	yields := 0
	for !l.hsDone {
		if errno := l.flush(); errno != 0 {
			t.Fatalf("flush: %v", errno)
		}
		select {
		case next <- struct{}{}:
		case err := <-served:
			t.Fatalf("server: %v", err)
		case <-time.After(5 * time.Second):
			t.Fatal("handshake stuck")
		}
		waitReadable()
		l.step()
		yields++
	}
	if l.hsErr != nil {
		t.Fatalf("handshake: %v", l.hsErr)
	}
	if errno := l.flush(); errno != 0 { // the client's Finished
		t.Fatalf("flush: %v", errno)
	}
	if yields < 100 {
		t.Errorf("the handshake resumed %d times for a flight sent a byte at a time", yields)
	}

	// The data record, a byte at a time: every Read before its last byte
	// is errWouldBlock, and the connection is not broken by it.
	buf := make([]byte, 64)
	handed := l.handed
	for i := 0; ; i++ {
		next <- struct{}{}
		waitReadable()
		n, err := l.tc.Read(buf)
		if err == errWouldBlock {
			if s.readable {
				t.Fatal("errWouldBlock with the socket still readable")
			}
			continue
		}
		if err != nil || string(buf[:n]) != "hello, loop" {
			t.Fatalf("after %d bytes: Read %q, %v", i+1, buf[:n], err)
		}
		if i < 20 {
			t.Errorf("data after %d bytes: a record of 11 bytes of data is longer", i+1)
		}
		break
	}
	if l.handed != handed+1 {
		t.Errorf("the link counted %d complete records, want 1", l.handed-handed)
	}
	if err := <-served; err != nil {
		t.Fatalf("server: %v", err)
	}
	// Nothing more: errWouldBlock again, still not sticky.
	if _, err := l.tc.Read(buf); err != errWouldBlock {
		t.Fatalf("Read with nothing sent: %v, want errWouldBlock", err)
	}
	l.close()
}

// TestTLSLinkFraming: the link counts complete records however the raw
// stream is cut (whole headers, headers split across reads, empty records).
func TestTLSLinkFraming(t *testing.T) {
	var stream []byte
	var ends []int // offset just past each record
	for _, n := range []int{0, 1, 5, 300, 0, 16401, 2, 0} {
		stream = append(stream, 0x17, 3, 3, byte(n>>8), byte(n))
		stream = append(stream, make([]byte, n)...)
		ends = append(ends, len(stream))
	}
	for _, cut := range []int{1, 2, 3, 4, 5, 6, 7, 11, 512, len(stream)} {
		l := &tlsLink{}
		for off := 0; off < len(stream); off += cut {
			end := min(off+cut, len(stream))
			l.frame(stream[off:end])
			want := int64(0)
			for _, e := range ends {
				if e <= end {
					want++
				}
			}
			if l.handed != want {
				t.Fatalf("cut %d: after %d bytes %d records counted, want %d", cut, end, l.handed, want)
			}
		}
	}
}

// FuzzTLSLinkFraming: any byte stream, cut anywhere, gives the same count
// of complete records as one walk over the whole of it.
func FuzzTLSLinkFraming(f *testing.F) {
	f.Add([]byte{0x17, 3, 3, 0, 2, 'h', 'i', 0x17, 3, 3, 0, 0}, uint8(1))
	f.Add([]byte{0x16, 3, 1, 0x40, 0, 1, 2}, uint8(3))
	f.Fuzz(func(t *testing.T, stream []byte, cut uint8) {
		var want int64
		for off := 0; off+5 <= len(stream); {
			end := off + 5 + (int(stream[off+3])<<8 | int(stream[off+4]))
			if end > len(stream) {
				break
			}
			want++
			off = end
		}
		l := &tlsLink{}
		step := int(cut%64) + 1
		for off := 0; off < len(stream); off += step {
			l.frame(stream[off:min(off+step, len(stream))])
		}
		if l.handed != want {
			t.Fatalf("cut every %d bytes: %d records, want %d", step, l.handed, want)
		}
	})
}
