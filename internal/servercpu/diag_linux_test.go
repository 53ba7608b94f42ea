package servercpu

import (
	"maps"
	"net"
	"net/netip"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// procInodes is what /proc/net's tables say of port, for comparison.
func procInodes(t *testing.T, tables []string, state string, addrs []netip.Addr, port int) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, name := range tables {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		maps.Copy(out, listeningInodes(f, state, addrs, port))
		f.Close()
	}
	return out
}

// TestDiagInodesAgreesWithProc: the kernel's sock_diag answer names the same
// listening TCP socket as /proc/net/tcp (and a connected socket on the same
// port is not counted); for UDP, where the kernel may lack udp_diag, an
// answer must agree too.
func TestDiagInodesAgreesWithProc(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String()) // an established pair beside the listener
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	v4 := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	want := procInodes(t, []string{"/proc/net/tcp", "/proc/net/tcp6"}, stateListen, v4, port)
	got := map[string]bool{}
	if !diagInodes(unix.IPPROTO_TCP, v4, port, got) {
		t.Fatal("the kernel did not answer a TCP sock_diag dump")
	}
	if len(want) != 1 || !maps.Equal(got, want) {
		t.Fatalf("sock_diag found %v, /proc/net/tcp %v (want the one listener)", got, want)
	}

	u, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	uport := u.LocalAddr().(*net.UDPAddr).Port
	want = procInodes(t, []string{"/proc/net/udp", "/proc/net/udp6"}, stateUDP, v4, uport)
	got = map[string]bool{}
	if diagInodes(unix.IPPROTO_UDP, v4, uport, got) && !maps.Equal(got, want) {
		t.Fatalf("UDP: sock_diag found %v, /proc/net/udp %v", got, want)
	}
}
