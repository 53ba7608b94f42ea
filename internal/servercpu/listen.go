package servercpu

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// Listening finds the server of a loopback URL: the processes, other than
// gab itself, that hold a socket bound to port on one of addrs (or on the
// wildcard address) that listens for connections (TCP's LISTEN state, or an
// unconnected UDP socket with udp, for HTTP/3). nginx's master and its
// workers all hold the listening socket: each is found. A process of
// another user whose descriptors gab may not read is not found. Linux only
// (from /proc/net and /proc/PID/fd); elsewhere it finds nothing.
func Listening(addrs []netip.Addr, port int, udp bool) []int {
	return listening(addrs, port, udp)
}

// TCP's LISTEN and an unconnected UDP socket's state in /proc/net/tcp and
// /proc/net/udp (TCP_CLOSE).
const (
	stateListen = "0A"
	stateUDP    = "07"
)

// maxSocketLines bounds the lines read of one /proc/net table (a busy
// machine's TIME_WAIT sockets are listed too).
const maxSocketLines = 1 << 20

// listeningInodes reads a /proc/net/{tcp,tcp6,udp,udp6} table and returns
// the inodes of the sockets in state bound to port on one of addrs, or on
// the wildcard address of the table's family.
func listeningInodes(r io.Reader, state string, addrs []netip.Addr, port int) map[string]bool {
	out := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 0; sc.Scan() && n < maxSocketLines; n++ {
		f := strings.Fields(sc.Text())
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		if len(f) < 10 || f[3] != state {
			continue
		}
		hostHex, portHex, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(portHex, 16, 16)
		if err != nil || int(p) != port {
			continue
		}
		local, ok := procAddr(hostHex)
		if !ok || f[9] == "0" {
			continue
		}
		if addrMatches(local, addrs) {
			out[f[9]] = true
		}
	}
	return out
}

// procAddr reads /proc/net's address: 8 or 32 hex digits, each 32-bit word
// printed as the machine's native integer.
func procAddr(s string) (netip.Addr, bool) {
	b, err := hex.DecodeString(s)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.Addr{}, false
	}
	raw := make([]byte, len(b))
	for i := 0; i < len(b); i += 4 {
		binary.NativeEndian.PutUint32(raw[i:], binary.BigEndian.Uint32(b[i:]))
	}
	a, _ := netip.AddrFromSlice(raw)
	return a, true
}

// addrMatches reports whether a socket bound to local accepts connections
// to one of addrs: the same address, the wildcard (IPv6's also takes IPv4
// unless the socket is IPv6-only, which /proc/net does not show), or an
// IPv4 address mapped into IPv6.
func addrMatches(local netip.Addr, addrs []netip.Addr) bool {
	for _, a := range addrs {
		switch {
		case local == a, local.Unmap() == a.Unmap():
			return true
		case local.IsUnspecified() && (local.Is6() || a.Unmap().Is4()):
			return true
		}
	}
	return false
}
