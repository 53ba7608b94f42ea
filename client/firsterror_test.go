package client

import (
	"errors"
	"testing"
	"time"
)

// TestFirstErrorAt: each failure class's first error is the earliest of the
// workers' first errors, with when it ended; a Length failure's time is its
// response's end.
func TestFirstErrorAt(t *testing.T) {
	script := func(r *run, k int64, sent int64) outcome {
		end := (k + 1) * int64(time.Millisecond)
		o := scriptedOutcome(end-100_000, end)
		o.Body = 10
		switch k {
		case 5, 7:
			o.Class, o.Err = failException, errors.New("exception "+string(rune('0'+k)))
		case 9:
			o.Body = 11 // a Length failure
		}
		return o
	}
	res := runScript(t, Config{Requests: 12, Concurrency: 3}, script)
	if res.FirstError["exceptions"] != "exception 5" || res.FirstErrorAt["exceptions"] != 6*time.Millisecond {
		t.Errorf("exceptions: %q at %v, want exception 5 at 6ms", res.FirstError["exceptions"], res.FirstErrorAt["exceptions"])
	}
	if res.FirstErrorAt["length"] != 10*time.Millisecond {
		t.Errorf("length: %q at %v, want 10ms", res.FirstError["length"], res.FirstErrorAt["length"])
	}
}

// TestFirstErrorAtAfterRampUp: with a ramp-up (--ramp), the first error's
// time counts from the ramp-up's end, as the time taken does, so that a
// document's first_at_s stays within its time_taken_s.
func TestFirstErrorAtAfterRampUp(t *testing.T) {
	script := func(r *run, k int64, sent int64) outcome {
		end := 5*int64(time.Millisecond) + k*int64(time.Millisecond)
		o := scriptedOutcome(end-100_000, end)
		o.Body = 10
		if k == 3 {
			o.Class, o.Err = failException, errors.New("exception")
		}
		return o
	}
	res := runScript(t, Config{Requests: 8, Concurrency: 1, RampUp: 2 * time.Millisecond}, script)
	if res.FirstError["exceptions"] != "exception" || res.FirstErrorAt["exceptions"] != 6*time.Millisecond {
		t.Errorf("exceptions: %q at %v, want at 6ms (8 ms into the run, less the 2 ms ramp-up)", res.FirstError["exceptions"], res.FirstErrorAt["exceptions"])
	}
	if res.FirstErrorAt["exceptions"] > res.Elapsed {
		t.Errorf("first error at %v, after the time taken %v", res.FirstErrorAt["exceptions"], res.Elapsed)
	}
}
