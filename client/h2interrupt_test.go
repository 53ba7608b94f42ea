package client

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// interruptH2 runs cfg and cancels its context once ready says so, as SIGINT
// does; it checks that Run returns promptly after the cancel, on the h2c
// event loop when this system has one.
func interruptH2(t *testing.T, cfg Config, ready func(rn *Runner) bool) *Result {
	t.Helper()
	usePath(t, "epoll")
	loopsBefore := h2EpollLoopsStarted.Load()
	rn, err := newRunner(t, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled := make(chan time.Time, 1)
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		limit := time.After(20 * time.Second)
		for !ready(rn) {
			select {
			case <-watchDone:
				return
			case <-limit:
				t.Errorf("the run never got to the point of interruption (%d complete)", rn.completed())
				cancelled <- time.Now()
				cancel()
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		time.Sleep(50 * time.Millisecond) // let the stalled requests sit on their streams
		cancelled <- time.Now()
		cancel()
	}()
	res, err := rn.Run(ctx)
	returned := time.Now()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	select {
	case at := <-cancelled:
		// Promptly: well under -s (cfg.Timeout), which the stalled
		// requests would wait for were the cancel not seen.
		if d := returned.Sub(at); d > cfg.Timeout/3 {
			t.Errorf("Run returned %v after the cancel, want it well under -s (%v)", d, cfg.Timeout)
		}
	default:
		t.Fatalf("Run returned before the cancel: ending %v, complete %d", res.Ending, res.Complete)
	}
	if epollExpected() && h2EpollLoopsStarted.Load() == loopsBefore {
		t.Errorf("the h2c event loop did not run")
	}
	if res.Ending != EndInterrupted {
		t.Errorf("ending %v, want EndInterrupted", res.Ending)
	}
	if res.Samples.Len() != res.Complete {
		t.Errorf("%d samples for %d complete requests", res.Samples.Len(), res.Complete)
	}
	return res
}

// Requests in flight when the run is interrupted are not counted: the
// partial result holds exactly those the server answered.
func TestHTTP2EpollInterruptWithStalledStreams(t *testing.T) {
	for _, answered := range []int64{0, 5} { // 0: interrupted during the ramp-up's first request
		t.Run("answered="+strconv.FormatInt(answered, 10), func(t *testing.T) {
			checkGoroutines(t)
			checkEngineLeaks(t)
			s := startRawH2(t, &rawH2Server{act: func(k int64, _ int) h2Action {
				if k > answered {
					return h2Stall
				}
				return h2Answer
			}})
			cfg := h2TestConfig(t, s.url(), 100, 2, 3)
			// The interrupt waits for a stalled request at the server and
			// for the answered ones at gab: the server can read the stalled
			// request before gab has read the answers it wrote just before,
			// and a loaded machine can hold those reads past any fixed wait.
			res := interruptH2(t, cfg, func(rn *Runner) bool {
				return s.requests.Load() > answered && rn.completed() >= int(answered)
			})
			if res.Complete != int(answered) || res.Failed.Total != 0 {
				t.Errorf("complete %d failed %+v, want %d and none", res.Complete, res.Failed, answered)
			}
			if got := s.answered.Load(); got != answered {
				t.Errorf("server answered %d, want %d", got, answered)
			}
		})
	}
}

// Against Go's h2c server answering every request slowly, an interrupt ends
// the run part way with consistent counts.
func TestHTTP2EpollInterruptSlowServer(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	h := newH2Counter(20*time.Millisecond, []byte("slow"))
	ts := startGoH2(t, h, false)
	const n = 10_000
	cfg := h2TestConfig(t, ts.URL+"/", n, 3, 4)
	res := interruptH2(t, cfg, func(rn *Runner) bool { return rn.completed() >= 30 })
	if res.Complete < 30 || res.Complete >= n || res.Failed.Total != 0 {
		t.Errorf("complete %d failed %+v, want 30 to %d and none failed", res.Complete, res.Failed, n-1)
	}
	if served := h.requests.Load(); int64(res.Complete) > served {
		t.Errorf("%d complete, the server saw %d requests", res.Complete, served)
	}
	if res.StatusCounts[200] != res.Complete || res.DocLength != 4 {
		t.Errorf("statuses %v doclen %d for %d complete", res.StatusCounts, res.DocLength, res.Complete)
	}
}
