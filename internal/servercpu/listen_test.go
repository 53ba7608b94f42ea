package servercpu

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
)

// procNetTCP is /proc/net/tcp and tcp6 as a little-endian machine writes
// them: 127.0.0.1:8080 listening (inode 101), 0.0.0.0:8080 listening (102),
// 127.0.0.1:8080 established (103, a connection, not a listener),
// 127.0.0.1:9090 listening (104), [::]:8080 listening (105), [::1]:8080
// listening (106), [::ffff:127.0.0.1]:8080 listening (107), 10.1.2.3:8080
// listening (108).
const procNetTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 101 1 0 100 0 0 10 0
   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 102 1 0 100 0 0 10 0
   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 103 1 0 100 0 0 10 0
   3: 0100007F:2382 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 104 1 0 100 0 0 10 0
   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 105 1 0
   1: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 106 1 0
   2: 0000000000000000FFFF00000100007F:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 107 1 0
   3: 0302010A:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 108 1 0 100 0 0 10 0
`

func TestListeningInodes(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the table above is a little-endian machine's")
	}
	v4, v6 := netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()
	for _, c := range []struct {
		addrs []netip.Addr
		port  int
		want  string
	}{
		{[]netip.Addr{v4}, 8080, "101 102 105 107"},
		{[]netip.Addr{v6}, 8080, "105 106"},
		{[]netip.Addr{v4, v6}, 8080, "101 102 105 106 107"},
		{[]netip.Addr{v4}, 9090, "104"},
		{[]netip.Addr{v4}, 1, ""},
	} {
		got := listeningInodes(strings.NewReader(procNetTCP), stateListen, c.addrs, c.port)
		var in []string
		for _, k := range strings.Fields(c.want) {
			in = append(in, k)
			if !got[k] {
				t.Errorf("%v port %d: inode %s not found (got %v)", c.addrs, c.port, k, got)
			}
		}
		if len(got) != len(in) {
			t.Errorf("%v port %d: got %v, want %v", c.addrs, c.port, got, in)
		}
	}
	// Garbage is skipped, not trusted.
	bad := "  0: 0100007F:1F90 00000000:0000 0A 0 0 0 0 0 0\n  1: XYZ:1F90 00000000:0000 0A 0 0 0 0 0 7\n  2: 0100007F:FFFFF 0:0 0A 0 0 0 0 0 8\n"
	if got := listeningInodes(strings.NewReader(bad), stateListen, []netip.Addr{v4}, 8080); len(got) != 0 {
		t.Errorf("garbage gave %v", got)
	}
}
