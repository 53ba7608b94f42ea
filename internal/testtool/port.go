package testtool

import (
	"net"
	"sync"
	"syscall"
	"testing"
)

// ClosedPort returns a loopback TCP port on which a connect is refused, for
// the rest of the test (ReserveClosedPort, released when the test ends).
func ClosedPort(t testing.TB) int {
	t.Helper()
	port, release, err := ReserveClosedPort()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return port
}

// ReserveClosedPort returns a loopback TCP port on which a connect is
// refused until release is called. A port found by listening and closing
// again can be taken meanwhile by another test's listener, or become a
// client's own ephemeral port (a connect to it then connects the socket to
// itself); this one stays bound, without listening, until release (which
// may be called more than once).
func ReserveClosedPort() (port int, release func(), err error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return 0, nil, err
	}
	syscall.CloseOnExec(fd)                                   // a program the test starts must not hold the port
	release = sync.OnceFunc(func() { _ = syscall.Close(fd) }) // an fd closed twice may be another's
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		release()
		return 0, nil, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		release()
		return 0, nil, err
	}
	return sa.(*syscall.SockaddrInet4).Port, release, nil
}

// FreePort returns a loopback TCP port that was free a moment ago, for a
// program the test starts that must bind the port itself (Prometheus, the
// Slurm daemons). Another listener may take it meanwhile: where that
// matters, the caller starts its program again on a new port.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
