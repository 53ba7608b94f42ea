package client

import (
	"testing"
	"time"
)

// TestRampUpLeftOutOfTheRun: the requests that start during a ramp-up
// (gab sweep --ramp) are left out of the run's counts, and so are their
// bytes and the readings of whatever is measured around the run (its CPU):
// 5 measured requests carry 5 responses' bytes, not the ramp-up's hundreds,
// and OnMeasure is called once, at the ramp-up's end.
func TestRampUpLeftOutOfTheRun(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, answerOnce(respond100(false)))
	cfg := h1Config(srv.port(), 5, 2, false)
	cfg.RampUp = 500 * time.Millisecond // slot 0 sends from the start, slot 1 from 250 ms
	rn, err := newRunner(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	var at time.Time
	rn.OnMeasure(func() { calls, at = calls+1, time.Now() })
	res, err := rn.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 5, Failures{})
	rr := res.Ramp
	if rr == nil || rr.Requests == 0 || rr.Elapsed != cfg.RampUp {
		t.Fatalf("ramp-up %+v, want its requests in %v", rr, cfg.RampUp)
	}
	if got := srv.requests.Load(); got != 5+rr.Requests {
		t.Errorf("server saw %d requests, want 5 + %d of the ramp-up", got, rr.Requests)
	}
	resp := int64(len(respond100(false)))
	if res.BodyRead != 500 || res.TotalRead != 5*resp || res.TotalSent != 5*int64(len(cfg.Request)) {
		t.Errorf("5 requests carried %d body bytes, %d read, %d sent; want 500, %d, %d (the ramp-up's %d requests left out)",
			res.BodyRead, res.TotalRead, res.TotalSent, 5*resp, 5*len(cfg.Request), rr.Requests)
	}
	if rr.BodyRead != 100*rr.Requests || rr.TotalRead != resp*rr.Requests || rr.TotalSent != int64(len(cfg.Request))*rr.Requests {
		t.Errorf("ramp-up: %d requests, %d body bytes, %d read, %d sent", rr.Requests, rr.BodyRead, rr.TotalRead, rr.TotalSent)
	}
	if calls != 1 || at.Sub(res.Start) < cfg.RampUp {
		t.Errorf("OnMeasure called %d times, %v after the start; want once, at the ramp-up's end (%v)", calls, at.Sub(res.Start), cfg.RampUp)
	}
}

// TestOnMeasureAfterWarmup: without a ramp-up, the measured part begins
// when the warm-up has ended, before the measured run's first request.
func TestOnMeasureAfterWarmup(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, answerOnce(respond100(false)))
	cfg := h1Config(srv.port(), 5, 1, false)
	cfg.WarmupRequests = 20
	rn, err := newRunner(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	var seen int64
	rn.OnMeasure(func() { calls, seen = calls+1, srv.requests.Load() })
	res, err := rn.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || seen != 20 || res.Warmup == nil || res.Warmup.Complete != 20 {
		t.Errorf("OnMeasure called %d times, when the server had seen %d requests; want once, after the warm-up's 20", calls, seen)
	}
}
