package client

import (
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// More fault-server behaviours for faults_test.go (issue 6).

// stallForever keeps the connection open, silent, until the client or the server closes it.
func stallForever(fc *faultConn) { fc.waitClosed() }

// answerThenStall answers every request until `answered` connections have been
// served, then writes part on later connections and stalls.
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
