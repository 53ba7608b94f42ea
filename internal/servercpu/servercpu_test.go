package servercpu

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParsePIDs(t *testing.T) {
	got, err := ParsePIDs("1, 23,456")
	if err != nil || len(got) != 3 || got[1] != 23 {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "1,x", "0", "-4", "1,,2"} {
		if _, err := ParsePIDs(bad); err == nil || !strings.Contains(err.Error(), "is not a process ID") {
			t.Errorf("ParsePIDs(%q) = %v", bad, err)
		}
	}
}

func TestParseStat(t *testing.T) {
	// A command name with spaces and parentheses; utime 7, stime 3, cutime 20, cstime 5.
	line := "4242 (my (odd) srv) S 17 4242 4242 0 -1 4194560 300 0 0 0 7 3 20 5 20 0 3 0 1234 0 0\n"
	st, err := parseStat(line)
	if err != nil || st.ppid != 17 || st.ticks != 35 {
		t.Errorf("parseStat = %+v, %v", st, err)
	}
	if _, err := parseStat("4242 (x) S 1 2"); err == nil {
		t.Error("a short line parsed")
	}
}

func TestNoSuchProcess(t *testing.T) {
	_, err := New([]int{os.Getpid(), 1 << 30})
	if runtime.GOOS != "linux" {
		if err != ErrUnsupported {
			t.Errorf("New = %v, want ErrUnsupported", err)
		}
		return
	}
	if err == nil || err.Error() != "--server-pid: no process with PID 1073741824" {
		t.Errorf("New = %v", err)
	}
}

// TestBurnChild is not a test: run as a child (GAB_BURN_MS set) it spends
// that much CPU in a grandchild and in itself, then waits for stdin to close.
func TestBurnChild(t *testing.T) {
	ms := os.Getenv("GAB_BURN_MS")
	if ms == "" {
		t.Skip("helper process for TestChildrenCount")
	}
	d, _ := time.ParseDuration(ms + "ms")
	if os.Getenv("GAB_BURN_GRANDCHILD") == "" {
		c := exec.Command(os.Args[0], "-test.run=^TestBurnChild$")
		c.Env = append(os.Environ(), "GAB_BURN_GRANDCHILD=1")
		if err := c.Run(); err != nil { // waited for: its CPU moves to our cutime
			os.Exit(3)
		}
	}
	burn(d)
	if os.Getenv("GAB_BURN_GRANDCHILD") == "" {
		os.Stdout.WriteString("done\n")
		buf := make([]byte, 1)
		os.Stdin.Read(buf)
	}
	os.Exit(0)
}

// burn spends this process's CPU until it has used d in all, its start-up
// included: a test binary's start-up under -race takes tens of ms, which the
// parent's reading counts too.
func burn(d time.Duration) {
	for cpuNow() < d {
		for i := 0; i < 100000; i++ {
		}
	}
}

// TestChildrenCount: a process that spends 150 ms of CPU itself and has a
// child that spends 150 ms and is waited for, measured from its parent (this
// test) between before and after: about 300 ms.
func TestChildrenCount(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	me, err := New([]int{os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	before, err := me.Read()
	if err != nil {
		t.Fatal(err)
	}
	selfBefore := cpuNow()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBurnChild$")
	cmd.Env = append(os.Environ(), "GAB_BURN_MS=150")
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	// The child is alive: its own time and its waited-for child's count.
	live, err := me.Read()
	if err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	cmd.Wait()
	after, err := me.Read()
	if err != nil {
		t.Fatal(err)
	}
	self := cpuNow() - selfBefore // this process's own share (starting the child)
	for name, got := range map[string]time.Duration{"live": live - before, "after wait": after - before} {
		if got < 300*time.Millisecond-2*Resolution || got > 300*time.Millisecond+self+6*Resolution {
			t.Errorf("%s: %v of CPU measured, want 300 ms (+ %v of this process)", name, got, self)
		}
	}
}
