package client

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Servers that never stop sending: the HTTP/1 loops must keep to the rule of
// docs/DESIGN.md ("Reading from a peer") on both paths: bounded work per
// wake-up, the stop flag seen at each turn, nothing a server can grow.

// floodAfterRequest answers each connection's first request with head (if
// any), then writes block over and over until the connection fails.
func floodAfterRequest(head, block string) func(fc *faultConn) {
	buf := []byte(strings.Repeat(block, max(1, (64<<10)/len(block))))
	return func(fc *faultConn) {
		if _, ok := fc.readRequest(); !ok {
			return
		}
		fc.write(head)
		for {
			if _, err := fc.Write(buf); err != nil {
				return
			}
		}
	}
}

// runFlood runs cfg against a flooding server and returns its result and
// the instant Run returned; the heap in use must stay under h2HeapLimit
// meanwhile, while the flood brings hundreds of MiB. (The heap, not the
// bytes allocated: those grow with how many records a machine moves in the
// run's -t, since the test's TLS server allocates for each record it
// writes, more under -race, whose sync.Pool drops buffers.)
func runFlood(t *testing.T, cfg Config) (*Result, time.Time) {
	t.Helper()
	peak := heapPeak()
	res, err := h1Run(t, cfg)
	returned := time.Now()
	heap := peak()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if heap > h2HeapLimit {
		t.Errorf("a heap of up to %d MiB during the run, which read %d bytes", heap>>20, res.TotalRead)
	}
	return res, returned
}

// floodStopBound bounds the time from a flooded run's stop (the -t
// deadline, an interrupt) to Run's return: each loop sees the stop after
// at most one turn's read budget, a few ms, and some hundreds of ms under
// -race on a loaded 2-core machine, where a second or two without a CPU
// can come on top. A loop that missed the stop while the bytes keep coming
// would never return: the flood also keeps -s from ending it.
const floodStopBound = 5 * time.Second

// wantStoppedWithin checks that Run, asked at stop to end, returned within
// bound of it. Counting from the stop rather than from Run's call leaves
// out the setup and the run's own length, which load stretches.
func wantStoppedWithin(t *testing.T, what string, stop, returned time.Time, bound time.Duration) {
	t.Helper()
	if lag := returned.Sub(stop); lag > bound {
		t.Errorf("the run returned %v after %s, want within %v: the flood kept it from stopping", lag, what, bound)
	}
}

// An endless stream of 100 Continue on a kept-alive connection: each request
// fails as an Exception after maxInterim interim responses, and the run ends
// by itself, quickly.
func TestH1EndlessInterimBounded(t *testing.T) {
	h1Paths(t, func(t *testing.T) {
		checkGoroutines(t)
		srv := newFaultServer(t, floodAfterRequest("", "HTTP/1.1 100 Continue\r\n\r\n"))
		cfg := h1Config(srv.port(), 4, 2, true)
		cfg.Timeout = 5 * time.Second
		res, returned := runFlood(t, cfg)
		wantCounts(t, res, 4, Failures{Total: 4, Exceptions: 4})
		if msg := res.FirstError["exceptions"]; !strings.Contains(msg, "interim (1xx)") {
			t.Errorf("first exception %q, want the interim bound", msg)
		}
		wantEndedBeforeTimeout(t, cfg, res, returned)
	})
}

// A body that never ends (no length, no close): -t ends the run on time with
// its report, the server's flood notwithstanding.
func TestH1EndlessBodyEndsAtTimeLimit(t *testing.T) {
	h1Paths(t, func(t *testing.T) {
		checkGoroutines(t)
		srv := newFaultServer(t, floodAfterRequest("HTTP/1.1 200 OK\r\n\r\n", "x"))
		wantEndlessBodyEndsAtTimeLimit(t, h1Config(srv.port(), 100, 2, false))
	})
}

// wantEndlessBodyEndsAtTimeLimit runs cfg, against a server whose body never
// ends, with -t 500 ms and -s 1 s: the run ends at -t, returning soon after
// it, the flood having reached gab.
func wantEndlessBodyEndsAtTimeLimit(t *testing.T, cfg Config) {
	t.Helper()
	cfg.TimeLimit = 500 * time.Millisecond
	cfg.Timeout = 1 * time.Second
	res, returned := runFlood(t, cfg)
	if res.Ending != EndTimeLimit {
		t.Errorf("ending %v, want the time limit", res.Ending)
	}
	wantStoppedWithin(t, "-t", res.Start.Add(cfg.TimeLimit), returned, floodStopBound)
	if res.TotalRead < 1<<20 {
		t.Errorf("read %d bytes: the flood did not reach gab", res.TotalRead)
	}
}

// The same flood, ended by an interrupt (the context, as SIGINT): the run
// returns at once.
func TestH1EndlessBodyInterrupted(t *testing.T) {
	h1Paths(t, func(t *testing.T) {
		checkGoroutines(t)
		srv := newFaultServer(t, floodAfterRequest("HTTP/1.1 200 OK\r\n\r\n", "x"))
		cfg := h1Config(srv.port(), 10, 2, true)
		rn, err := newRunner(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		interrupted := make(chan time.Time, 1)
		time.AfterFunc(300*time.Millisecond, func() { interrupted <- time.Now(); cancel() })
		res, _ := rn.Run(ctx)
		returned := time.Now()
		if res == nil || res.Ending != EndInterrupted {
			t.Fatalf("result %+v, want an interrupted run", res)
		}
		wantStoppedWithin(t, "the interrupt", <-interrupted, returned, floodStopBound)
	})
}

// A complete response with Connection: close, then a stream of stray bytes
// instead of the close: the request is complete; gab stops waiting for the
// close after maxDrain bytes and the run goes on.
func TestH1StrayBytesInsteadOfClose(t *testing.T) {
	h1Paths(t, func(t *testing.T) {
		checkGoroutines(t)
		srv := newFaultServer(t, floodAfterRequest(strayAfterClose, "junk"))
		wantStrayBytesCut(t, h1Config(srv.port(), 4, 2, false))
	})
}

// strayAfterClose is a complete response that announces the close, for
// floodAfterRequest to follow with stray bytes.
const strayAfterClose = "HTTP/1.0 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"

// wantStrayBytesCut runs cfg (-n 4), against a server that sends stray bytes
// instead of the close it announced, with -s 5 s: every request completes,
// at most maxDrain stray bytes are read per response, and the run ends
// before -s could have ended any wait.
func wantStrayBytesCut(t *testing.T, cfg Config) {
	t.Helper()
	cfg.Timeout = 5 * time.Second
	res, returned := runFlood(t, cfg)
	wantCounts(t, res, 4, Failures{})
	if res.BodyRead != 8 || res.TotalRead > 4*(maxDrain+bigReadBufSize+100) {
		t.Errorf("body %d, read %d: want 4 × 2 body bytes and at most maxDrain stray bytes per response", res.BodyRead, res.TotalRead)
	}
	wantEndedBeforeTimeout(t, cfg, res, returned)
}

// wantEndedBeforeTimeout checks that a flooded run that ends by itself (a
// bound on what gab reads cut every request short) returned, counted from
// its first connect, in less than -s: had any request needed -s to end, the
// run would have lasted at least that. Its requests take a few ms, some
// hundreds under -race on a loaded machine; without the bound the flood
// keeps every request going and the run never ends.
func wantEndedBeforeTimeout(t *testing.T, cfg Config, res *Result, returned time.Time) {
	t.Helper()
	if took := returned.Sub(res.Start); took >= cfg.Timeout {
		t.Errorf("the run took %v from its first connect, want under -s (%v)", took, cfg.Timeout)
	}
}
