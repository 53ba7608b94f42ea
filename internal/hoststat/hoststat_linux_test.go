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
