package client

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// h3WantBuffer is the UDP socket buffer size quic-go asks for (its
// protocol.DesiredReceiveBufferSize, for sending too): with less, bursts of
// packets are dropped at high rates.
const h3WantBuffer = 7 << 20

// udpBufferNote checks, on a probe socket, whether quic-go will get the UDP
// buffers it asks for: it raises SO_RCVBUF and SO_SNDBUF, which
// net.core.rmem_max and wmem_max cap unless the process may force them
// (CAP_NET_ADMIN). It returns a one-line note saying how to raise the
// limits when they are too low, "" otherwise.
func udpBufferNote() string {
	return udpBufferNoteFor(sysctlInt("/proc/sys/net/core/rmem_max"), sysctlInt("/proc/sys/net/core/wmem_max"), udpBuffersForced)
}

// udpBufferNoteFor is udpBufferNote for the limits rmax and wmax (-1:
// unknown); forced is asked only when a limit is too low.
func udpBufferNoteFor(rmax, wmax int, forced func() bool) string {
	if rmax < 0 || wmax < 0 || rmax >= h3WantBuffer && wmax >= h3WantBuffer || forced() {
		return ""
	}
	return fmt.Sprintf("UDP socket buffers are capped below the %d bytes QUIC wants (net.core.rmem_max=%d, wmem_max=%d), which can drop packets at high rates; raise them with: sysctl -w net.core.rmem_max=7500000 net.core.wmem_max=7500000",
		h3WantBuffer, rmax, wmax)
}

// sysctlInt reads a number from a /proc/sys file, -1 if it cannot.
func sysctlInt(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// udpBuffersForced reports whether this process can set both buffers of a
// UDP socket past the limits, as quic-go tries to (SO_RCVBUFFORCE,
// SO_SNDBUFFORCE).
func udpBuffersForced() bool {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return false
	}
	defer c.Close()
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	ok := false
	_ = rc.Control(func(fd uintptr) {
		s := int(fd)
		if syscall.SetsockoptInt(s, syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, h3WantBuffer) != nil ||
			syscall.SetsockoptInt(s, syscall.SOL_SOCKET, syscall.SO_SNDBUFFORCE, h3WantBuffer) != nil {
			return
		}
		r, err1 := syscall.GetsockoptInt(s, syscall.SOL_SOCKET, syscall.SO_RCVBUF)
		w, err2 := syscall.GetsockoptInt(s, syscall.SOL_SOCKET, syscall.SO_SNDBUF)
		ok = err1 == nil && err2 == nil && r >= h3WantBuffer && w >= h3WantBuffer
	})
	return ok
}
