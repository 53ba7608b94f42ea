package hoststat

import "testing"

func TestParseCPUMax(t *testing.T) {
	for s, want := range map[string]float64{"max 100000\n": 0, "150000 100000\n": 1.5, "50000 100000": 0.5, "": 0, "x y": 0, "-1 100000": 0} {
		if got := parseCPUMax(s); got != want {
			t.Errorf("parseCPUMax(%q) = %v, want %v", s, got, want)
		}
	}
}
