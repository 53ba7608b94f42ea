package client

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// warmupServer answers its first `first` requests with a 503 and a 7-byte
// body, the rest with respond100: any warm-up request that leaked into the
// figures would show as a Non-2xx response, a status count or a length.
func warmupServer(t *testing.T, first int64) (*faultServer, *atomic.Int64) {
	var seen atomic.Int64
	srv := newFaultServer(t, func(fc *faultConn) {
		for {
			if _, ok := fc.readRequest(); !ok {
				return
			}
			if seen.Add(1) <= first {
				fc.write("HTTP/1.1 503 Busy\r\nContent-Length: 7\r\nConnection: close\r\n\r\nwarming")
				return
			}
			fc.write(respond100(false))
			return
		}
	})
	return srv, &seen
}

func TestWarmupRequestsLeftOut(t *testing.T) {
	h1Paths(t, func(t *testing.T) {
		checkGoroutines(t)
		srv, seen := warmupServer(t, 30)
		cfg := h1Config(srv.port(), 50, 4, false)
		cfg.WarmupRequests = 30
		cfg.Extended = true
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		wantCounts(t, res, 50, Failures{})
		if got := seen.Load(); got != 80 {
			t.Errorf("server saw %d requests, want 30 warm-up + 50", got)
		}
		if w := res.Warmup; w == nil || w.Complete != 30 || w.Failed != 0 {
			t.Errorf("warm-up %+v, want 30 complete", w)
		}
		if res.Non2xx != 0 || res.StatusCounts[503] != 0 || res.StatusCounts[200] != 50 || res.DocLength != 100 || res.BodyRead != 5000 {
			t.Errorf("warm-up responses leaked into the figures: non-2xx %d, statuses %v, doc length %d, body bytes %d",
				res.Non2xx, res.StatusCounts, res.DocLength, res.BodyRead)
		}
		if res.Samples.Len() != 50 || res.Extra.Phases[PhaseTotal].Count != 50 {
			t.Errorf("%d samples, %d in the phase table; want 50", res.Samples.Len(), res.Extra.Phases[PhaseTotal].Count)
		}
	})
}

func TestWarmupTime(t *testing.T) {
	checkGoroutines(t)
	srv := newFaultServer(t, answerOnce(respond100(false)))
	cfg := h1Config(srv.port(), 20, 2, false)
	// Long enough for a loaded machine to complete a request in it: the
	// start of a run has been seen to take half a second there.
	cfg.WarmupTime = time.Second
	res, err := h1Run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 20, Failures{})
	w := res.Warmup
	if w == nil || w.Complete == 0 || w.Elapsed < cfg.WarmupTime {
		t.Fatalf("warm-up %+v, want requests for %v", w, cfg.WarmupTime)
	}
	// Requests in flight when the warm-up's time is up are abandoned, not counted.
	if got := srv.requests.Load(); got < int64(20+w.Complete) || got > int64(20+w.Complete+2) {
		t.Errorf("server saw %d requests, want 20 + %d warm-up (+ up to 2 abandoned)", got, w.Complete)
	}
	if res.Samples.Len() != 20 {
		t.Errorf("samples %d, want 20", res.Samples.Len())
	}
}

// A fatal error in the warm-up ends the run with it, before any measurement.
func TestWarmupFatal(t *testing.T) {
	checkGoroutines(t)
	cfg := h1Config(closedPort(t), 5, 1, false)
	cfg.WarmupRequests = 3
	res, err := h1Run(t, cfg)
	if err == nil || res.Ending != EndFatal || res.Complete != 0 || res.Warmup == nil {
		t.Fatalf("refused warm-up: err %v, result %+v", err, res)
	}
}

// An interrupted warm-up ends the run, interrupted, with nothing measured.
// The server interrupts it on its second request: at -c 1 without
// keep-alive that request is sent only once the first is complete, so the
// warm-up has exactly one complete request then, whatever the scheduling;
// the second is held until the run ends.
func TestWarmupInterrupted(t *testing.T) {
	checkGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newFaultServer(t, func(fc *faultConn) {
		if _, ok := fc.readRequest(); !ok {
			return
		}
		if fc.srv.requests.Load() == 1 {
			fc.write(respond100(false))
			return
		}
		cancel()
		fc.readRequest() // held until the client (or the test's end) closes
	})
	cfg := h1Config(srv.port(), 5, 1, false)
	cfg.WarmupTime = time.Minute
	rn, err := newRunner(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rn.Run(ctx)
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatal("the warm-up's second request never came")
	}
	if err != nil || res.Ending != EndInterrupted || res.Complete != 0 || res.Warmup == nil || res.Warmup.Complete != 1 {
		t.Fatalf("interrupted warm-up: err %v, result %+v warm-up %+v", err, res, res.Warmup)
	}
	if got := srv.accepted.Load(); got != 2 {
		t.Errorf("the server accepted %d connections, want the warm-up's 2 and no measured one", got)
	}
}
