package servercpu

import (
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxFDs bounds the descriptors read of one process.
const maxFDs = 1 << 16

func listening(addrs []netip.Addr, port int, udp bool) []int {
	tables, state, proto := []string{"/proc/net/tcp", "/proc/net/tcp6"}, stateListen, uint8(unix.IPPROTO_TCP)
	if udp {
		tables, state, proto = []string{"/proc/net/udp", "/proc/net/udp6"}, stateUDP, unix.IPPROTO_UDP
	}
	inodes := map[string]bool{}
	if diagInodes(proto, addrs, port, inodes) {
		tables = nil // the kernel answered: no need to read its text tables
	} else {
		clear(inodes)
	}
	for _, name := range tables {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		for k := range listeningInodes(f, state, addrs, port) {
			inodes[k] = true
		}
		f.Close()
	}
	if len(inodes) == 0 {
		return nil
	}
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	self := os.Getpid()
	var pids []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		if holds(pid, inodes) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// holds reports whether one of pid's descriptors is a socket of inodes.
func holds(pid int, inodes map[string]bool) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	fds, _ := d.Readdirnames(maxFDs)
	d.Close()
	for _, fd := range fds {
		link, err := os.Readlink(dir + fd)
		if err != nil {
			continue
		}
		if in, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(in, "]")] {
			return true
		}
	}
	return false
}
