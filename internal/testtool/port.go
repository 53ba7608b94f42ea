package testtool

import (
	"syscall"
	"testing"
)

// ClosedPort returns a loopback TCP port on which a connect is refused, for
// the rest of the test. A port found by listening and closing again can be
// taken meanwhile by another test's listener, or become a client's own
// ephemeral port (a connect to it then connects the socket to itself); this
// one stays bound, without listening, until the test ends.
func ClosedPort(t testing.TB) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(fd) // a program the test starts must not hold the port
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return sa.(*syscall.SockaddrInet4).Port
}
