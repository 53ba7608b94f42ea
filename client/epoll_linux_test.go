package client

import (
	"net"
	"runtime"
	"testing"
	"time"
)

// TestEpollSpinsOnlyWithACoreToSpare: a loop polls before sleeping only when
// GOMAXPROCS leaves a P beyond the loops' and the server is not in-process.
func TestEpollSpinsOnlyWithACoreToSpare(t *testing.T) {
	d := &dialer{addrs: []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, port: 1}
	for _, tc := range []struct {
		procs, loops int
		noSpin, want bool
	}{
		{1, 1, false, false}, // pinned to one core (taskset, --cpus 1)
		{2, 1, false, true},
		{2, 1, true, false}, // --demo: the server shares gab's cores
		{4, 3, false, true},
		{3, 3, false, false}, // every P runs a loop
	} {
		prev := runtime.GOMAXPROCS(tc.procs)
		cfg := Config{NoSpin: tc.noSpin}
		r := &run{cfg: &cfg, start: time.Now()}
		var p epPoller
		err := p.init(r, &tally{}, d, 4, tc.loops)
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatalf("init: %v", err)
		}
		p.close()
		if got := p.spinNs > 0; got != tc.want {
			t.Errorf("GOMAXPROCS %d, %d loops, NoSpin %v: spins %v, want %v", tc.procs, tc.loops, tc.noSpin, got, tc.want)
		}
	}
}
