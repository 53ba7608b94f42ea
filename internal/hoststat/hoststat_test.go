package hoststat

import (
	"net"
	"runtime"
	"testing"
	"time"
)

// TestReadSeesWhatHappened: two readings around a burst of work and of
// loopback connects see the host's CPU, this process's CPUs and the connects.
func TestReadSeesWhatHappened(t *testing.T) {
	if runtime.GOOS != "linux" {
		s := Read()
		if len(s.Missing) == 0 {
			t.Fatal("outside Linux every file must be missing")
		}
		return
	}
	before := Read()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	for range 20 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	after := Read()
	d := after.Sub(before)
	if len(d.Missing) != 0 {
		t.Fatalf("missing %v", d.Missing)
	}
	if d.Cores < 1 || d.Allowed < 1 || d.Allowed > d.Cores {
		t.Fatalf("cores %d, allowed %d", d.Cores, d.Allowed)
	}
	if d.TCP.ActiveOpens < 20 {
		t.Fatalf("active opens %d, want at least the 20 connects", d.TCP.ActiveOpens)
	}
	if d.CPU.Busy() <= 0 || d.CPU.Total() < d.CPU.Busy() {
		t.Fatalf("cpu %+v", d.CPU)
	}
	if after.Load[0] < 0 || after.Somaxconn <= 0 {
		t.Fatalf("load %v somaxconn %d", after.Load, after.Somaxconn)
	}
}
