package report

import (
	"strings"
	"testing"
	"time"
)

func TestClientBound(t *testing.T) {
	for _, c := range []struct {
		name  string
		load  ClientLoad
		bound bool
		why   string
	}{
		{"idle", ClientLoad{CPU: time.Second, Wall: 10 * time.Second, Cores: 2}, false, ""},
		{"cpu at the cores", ClientLoad{CPU: 19 * time.Second, Wall: 10 * time.Second, Cores: 2}, true, "95 % of the 2 core(s)"},
		{"cpu at one core", ClientLoad{CPU: 950 * time.Millisecond, Wall: time.Second, Cores: 1}, true, "of the 1 core(s)"},
		{"late, connections free", ClientLoad{Sent: 1000, LateShare: 0.2, Busy: 0.3}, true, "fell behind"},
		{"late, connections busy", ClientLoad{Sent: 1000, LateShare: 0.2, Busy: 0.95}, false, ""},
		{"unsent at the end", ClientLoad{Sent: 900, Behind: 100, Busy: 0.1}, true, "fell behind"},
		{"lag grew", ClientLoad{Sent: 1000, LagP95: 50 * time.Millisecond, Busy: 0.1}, true, "send lag grew"},
		{"lag grew, busy", ClientLoad{Sent: 1000, LagP95: 50 * time.Millisecond, Busy: 0.9}, false, ""},
		{"waited for a CPU", ClientLoad{SchedP99: 20 * time.Millisecond}, true, "waited 20ms (p99) for a CPU"},
		{"waited a little", ClientLoad{SchedP99: 2 * time.Millisecond}, false, ""},
		{"waited, generous bound", ClientLoad{SchedP99: 20 * time.Millisecond, SchedBound: 100 * time.Millisecond}, false, ""},
		{"on time", ClientLoad{Sent: 1000, LateShare: 0.01, Busy: 0.1}, false, ""},
		{"connections slow", ClientLoad{ConnsAsked: 100, ConnsOpened: 40}, true, "40 of 100 connections"},
		{"server inside gab", ClientLoad{CPU: 100 * time.Millisecond, Wall: time.Second, Cores: 1, InProcessServer: true}, true, "the server runs inside gab (--demo) on the same 1 core(s)"},
		{"unknown", ClientLoad{}, false, ""},
	} {
		v := ClientBound(c.load)
		if v.Bound != c.bound || !strings.Contains(v.String(), c.why) {
			t.Errorf("%s: %v, want bound %v with %q", c.name, v, c.bound, c.why)
		}
	}
}

func TestParseCPUMax(t *testing.T) {
	for s, want := range map[string]float64{"max 100000\n": 0, "150000 100000\n": 1.5, "50000 100000": 0.5, "": 0, "x y": 0, "-1 100000": 0} {
		if got := parseCPUMax(s); got != want {
			t.Errorf("parseCPUMax(%q) = %v, want %v", s, got, want)
		}
	}
	if c := Cores(); c <= 0 {
		t.Errorf("Cores() = %v", c)
	}
}

func TestSchedReading(t *testing.T) {
	before := ReadSched()
	done := make(chan bool)
	for range 100 {
		go func() { done <- true }()
	}
	for range 100 {
		<-done
	}
	after := ReadSched()
	if p := after.P99Since(before); p < 0 || p > time.Minute {
		t.Errorf("p99 %v", p)
	}
	if p := after.P99Since(SchedReading{}); p != 0 {
		t.Errorf("against no reading: %v", p)
	}
}
