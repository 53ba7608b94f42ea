package longopt

import (
	"strings"
	"testing"
	"time"
)

// Duration takes a Go duration or plain seconds, and refuses a negative,
// an overlong or a malformed one.
func TestDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"1.5s": 1500 * time.Millisecond, "200ms": 200 * time.Millisecond, "2": 2 * time.Second, "0.5": 500 * time.Millisecond, "0": 0} {
		var d Duration
		if err := d.Set(in); err != nil || time.Duration(d) != want {
			t.Errorf("%q: %v, %v; want %v", in, time.Duration(d), err, want)
		}
	}
	for in, why := range map[string]string{"-1s": "negative", "-2": "negative", "soon": "not a duration", "NaN": "not a duration", "1e300": "too long"} {
		var d Duration
		if err := d.Set(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want an error saying %q", in, err, why)
		}
	}
}

// Ranges are ascending positive edges, at most 10; Apdex's F defaults to
// 4T and must be above T; Warmup is a count or a duration with its unit.
func TestRangesApdexWarmup(t *testing.T) {
	var r Ranges
	if err := r.Set("800ms, 1.2s"); err != nil || r.String() != "800ms,1.2s" {
		t.Errorf("ranges: %v %v", r, err)
	}
	for _, bad := range []string{"1s,500ms", "0", strings.Repeat("1s,", 10) + "1s", "1s,1s"} {
		var r Ranges
		if r.Set(bad) == nil {
			t.Errorf("ranges %q accepted", bad)
		}
	}
	var a Apdex
	if err := a.Set("100ms"); err != nil || a.T != 100*time.Millisecond || a.F != 400*time.Millisecond {
		t.Errorf("apdex: %+v %v", a, err)
	}
	if err := a.Set("100ms,50ms"); err == nil {
		t.Error("apdex F below T accepted")
	}
	var w Warmup
	if err := w.Set("500"); err != nil || w.Requests != 500 || w.Time != 0 {
		t.Errorf("warmup 500: %+v %v", w, err)
	}
	if err := w.Set("10s"); err != nil || w.Requests != 0 || w.Time != 10*time.Second {
		t.Errorf("warmup 10s: %+v %v", w, err)
	}
	for _, bad := range []string{"0", "-5", "5x", "-1s"} {
		var w Warmup
		if w.Set(bad) == nil {
			t.Errorf("warmup %q accepted", bad)
		}
	}
}

// ParseRate reads a constant rate, a ramp and steps; rates outside
// RateRange and --step without a list are refused.
func TestParseRate(t *testing.T) {
	r, phases, err := ParseRate("1000", 0, false)
	if err != nil || r != 1000 || phases != nil {
		t.Errorf("constant: %v %v %v", r, phases, err)
	}
	r, phases, err = ParseRate("100:5000/60s", 0, false)
	if err != nil || r != 5000 || len(phases) != 1 || phases[0].From != 100 || phases[0].To != 5000 || phases[0].For != time.Minute {
		t.Errorf("ramp: %v %+v %v", r, phases, err)
	}
	r, phases, err = ParseRate("10,20,5", 0, false)
	if err != nil || r != 20 || len(phases) != 3 || phases[1].From != 20 || phases[1].For != 10*time.Second {
		t.Errorf("steps: %v %+v %v", r, phases, err)
	}
	for _, c := range []struct {
		s       string
		step    bool
		wantErr string
	}{
		{"2e9", false, RateRange},
		{"1:2e9/1s", false, RateRange},
		{"1:2/1s", true, "--step is for a --rate list"},
		{"100", true, "--step needs a --rate list"},
		{"fast", false, "positive number"},
	} {
		if _, _, err := ParseRate(c.s, time.Second, c.step); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%q step %v: %v, want %q", c.s, c.step, err, c.wantErr)
		}
	}
}
