package hoststat

import "testing"

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
	if s.Allowed != 5 || len(s.Missing) != 0 {
		t.Fatalf("allowed %d missing %v", s.Allowed, s.Missing)
	}
}
