package servercpu

import (
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"testing"
)

// TestListeningFindsEveryHolder: a socket that two child processes inherit
// (as nginx's workers inherit its master's) is found in both, and gab's own
// process, which holds it too, is left out; another port finds nothing.
func TestListeningFindsEveryHolder(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pids []int
	for range 2 {
		cmd := exec.Command("sleep", "30")
		cmd.ExtraFiles = []*os.File{f}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		pids = append(pids, cmd.Process.Pid)
	}
	slices.Sort(pids)
	port := ln.Addr().(*net.TCPAddr).Port
	v4 := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	if got := Listening(v4, port, false); !slices.Equal(got, pids) {
		t.Fatalf("Listening = %v, want the two children %v (not this process, %d)", got, pids, os.Getpid())
	}
	if got := Listening(v4, port, true); len(got) != 0 {
		t.Fatalf("a TCP listener found as UDP: %v", got)
	}
	// Held by this process alone: nothing (gab's own server is no other process).
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	if got := Listening(v4, ln2.Addr().(*net.TCPAddr).Port, false); len(got) != 0 {
		t.Fatalf("this process's own listener found: %v", got)
	}
}
