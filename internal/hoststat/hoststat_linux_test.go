package hoststat

import (
	"os"
	"testing"
	"time"
)

func TestReadPairs(t *testing.T) {
	var s Snapshot
	var a, b uint64
	in := "Tcp: X A B\nTcp: -1 7 9\nUdp: A\nUdp: 3\n"
	if !s.readPairs([]byte(in), "Tcp:", map[string]*uint64{"A": &a, "B": &b}) || a != 7 || b != 9 {
		t.Fatalf("a %d b %d", a, b)
	}
	if s.readPairs([]byte(in), "Tcp:", map[string]*uint64{"C": &a}) {
		t.Fatal("a missing name must fail")
	}
}

func TestReadStatusAllowed(t *testing.T) {
	var s Snapshot
	s.readStatus([]byte("Name:\tx\nCpus_allowed_list:\t0-3,6\n"))
	if s.Allowed != 5 || len(s.Missing) != 0 || FormatCPUList(s.AllowedCPUs) != "0-3,6" {
		t.Fatalf("allowed %d %v missing %v", s.Allowed, s.AllowedCPUs, s.Missing)
	}
	if l := Affinity(os.Getpid()); len(l) == 0 {
		t.Fatalf("this process's affinity unread")
	}
}

// TestReadStatPerCore: each cpuN line's times by CPU number, and their
// difference over two readings.
func TestReadStatPerCore(t *testing.T) {
	var a, b Snapshot
	a.readStat([]byte("cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 5 0 5 40 0 0 0 0 0 0\ncpu3 5 0 5 40 0 0 0 0 0 0\nintr 1\n"))
	b.readStat([]byte("cpu  30 0 10 160 0 0 0 0 0 0\ncpu0 25 0 5 40 0 0 0 0 0 0\ncpu3 5 0 5 120 0 0 0 0 0 0\nintr 1\n"))
	if a.Cores != 2 || len(a.PerCore) != 2 || len(a.Missing) != 0 {
		t.Fatalf("cores %d per core %v missing %v", a.Cores, a.PerCore, a.Missing)
	}
	b.Time = a.Time.Add(time.Second)
	d := b.Sub(&a)
	if d.PerCore[0].Busy() != 200*time.Millisecond || d.PerCore[0].Idle != 0 || d.PerCore[3].Idle != 800*time.Millisecond || d.PerCore[3].Busy() != 0 {
		t.Fatalf("per core %+v", d.PerCore)
	}
}

func TestParseLoad(t *testing.T) {
	if l, ok := parseLoad([]byte("0.50 1.25 2.00 1/234 5678\n")); !ok || l != [3]float64{0.5, 1.25, 2} {
		t.Fatalf("%v %v", l, ok)
	}
	for _, in := range []string{"", "0.5 1", "0.5 x 2"} {
		if _, ok := parseLoad([]byte(in)); ok {
			t.Fatalf("%q must fail", in)
		}
	}
	if l := LoadAverage(); len(l) != 3 {
		t.Fatalf("LoadAverage %v", l)
	}
}
