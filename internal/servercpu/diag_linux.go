package servercpu

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The kernel's socket table through NETLINK_SOCK_DIAG (what ss(8) reads),
// asked for the sockets of one state only. /proc/net/tcp lists every socket,
// TIME_WAIT included, as text: on a machine that had just run benchmarks
// (4,600 lines) reading it cost gab about 25 ms of CPU per run, more than a
// thousand requests' worth; the kernel walks only its listening table here.

const (
	nlmsgHdrLen    = 16 // struct nlmsghdr
	diagReqLen     = 56 // struct inet_diag_req_v2
	diagMsgLen     = 72 // struct inet_diag_msg
	tcpListen      = 10 // TCP_LISTEN
	tcpClose       = 7  // TCP_CLOSE: an unconnected UDP socket
	maxDiagReplies = 1 << 12
)

// diagInodes adds to out the inodes of the sockets of proto (IPPROTO_TCP in
// TCP_LISTEN, or IPPROTO_UDP unconnected) bound to port on one of addrs or
// on the wildcard address, both families; false when the kernel does not
// answer (no sock_diag for proto), and the caller reads /proc/net instead.
func diagInodes(proto uint8, addrs []netip.Addr, port int, out map[string]bool) bool {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	tv := unix.Timeval{Sec: 2} // the kernel answers at once; never hang on it
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	state := uint32(tcpListen)
	if proto == unix.IPPROTO_UDP {
		state = tcpClose
	}
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		req := make([]byte, nlmsgHdrLen+diagReqLen)
		binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
		binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
		binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
		req[16], req[17] = family, proto
		binary.NativeEndian.PutUint32(req[20:], 1<<state)
		if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return false
		}
		if !diagReplies(fd, addrs, port, out) {
			return false
		}
	}
	return true
}

// diagReplies reads one dump's replies until NLMSG_DONE; false on an error
// reply or a failed read.
func diagReplies(fd int, addrs []netip.Addr, port int, out map[string]bool) bool {
	buf := make([]byte, 32<<10)
	for range maxDiagReplies {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return false
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return false
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return true
			case unix.NLMSG_ERROR:
				return false
			}
			if inode, ok := diagMatch(m.Data, addrs, port); ok {
				out[inode] = true
			}
		}
	}
	return false
}

// diagMatch reads one inet_diag_msg: its socket's inode when it is bound to
// port on one of addrs (or the wildcard).
func diagMatch(d []byte, addrs []netip.Addr, port int) (string, bool) {
	if len(d) < diagMsgLen {
		return "", false
	}
	family := d[0]
	sport := binary.BigEndian.Uint16(d[4:])
	inode := binary.NativeEndian.Uint32(d[68:])
	if int(sport) != port || inode == 0 {
		return "", false
	}
	var local netip.Addr
	switch family {
	case unix.AF_INET:
		local = netip.AddrFrom4([4]byte(d[8:12]))
	case unix.AF_INET6:
		local = netip.AddrFrom16([16]byte(d[8:24]))
	default:
		return "", false
	}
	if !addrMatches(local, addrs) {
		return "", false
	}
	return strconv.FormatUint(uint64(inode), 10), true
}
