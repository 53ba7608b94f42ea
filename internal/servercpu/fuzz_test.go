package servercpu

import "testing"

// FuzzParseStat: /proc/PID/stat's parser never panics on any text, and
// fields after the 17th (cstime) never change what it reads.
func FuzzParseStat(f *testing.F) {
	f.Add("4242 (my (odd) srv) S 17 4242 4242 0 -1 4194560 300 0 0 0 7 3 20 5 20 0 3 0 1234 0 0\n")
	f.Add("1 (x) S")
	f.Add(")")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := parseStat(s)
		if err != nil {
			return
		}
		if more, err := parseStat(s + " 9 9"); err != nil || more != st {
			t.Fatalf("%q: %+v, with more fields %+v, %v", s, st, more, err)
		}
	})
}

// FuzzParsePIDs: accepted lists hold positive PIDs only.
func FuzzParsePIDs(f *testing.F) {
	f.Add("1,2,3")
	f.Add("x")
	f.Fuzz(func(t *testing.T, s string) {
		pids, err := ParsePIDs(s)
		if err != nil {
			return
		}
		for _, p := range pids {
			if p < 1 {
				t.Fatalf("%q: PID %d accepted", s, p)
			}
		}
	})
}
