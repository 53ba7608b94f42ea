package client

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// One test per server fault (stalls, resets, trickles, lost keep-alive
// requests, slow accepts) not already covered with exact counts in
// http1_test.go. Each asserts Complete, the failure classes, the ending and an
// upper bound on wall time (about 3× the expected time, plus runTimed's
// slack): a hang test, whose wrong outcome is a wait for the default -s
// (10 s) or for ever.

// runTimed runs cfg and fails the test if it took longer than limit plus 3 s.
func runTimed(t *testing.T, cfg Config, limit time.Duration) (*Result, error) {
	t.Helper()
	began := time.Now()
	res, err := h1Run(t, cfg)
	limit += 3 * time.Second // slack for a loaded machine, where -race and other processes can hold gab for seconds
	if d := time.Since(began); d > limit {
		t.Errorf("run took %v, want at most %v", d, limit)
	}
	return res, err
}

// wantFatal checks that err is ab's fatal error with that exit status and stderr text.
func wantFatal(t *testing.T, err error, exit int, message string) {
	t.Helper()
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Exit != exit || fe.Message != message {
		t.Fatalf("err = %#v, want exit %d %q", err, exit, message)
	}
}

const timeoutMessage = "apr_pollset_poll: The timeout specified has expired (70007)\n"

// The server sends a complete head promising a body, then closes: a Receive
// failure whatever -r says, and the run goes on.
func TestFaultCloseAfterHead(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	head := "HTTP/1.1 200 OK\r\nServer: fault\r\nContent-Length: 100\r\n\r\n"
	for _, keepGoing := range []bool{false, true} {
		srv := newFaultServer(t, answerOnce(head))
		cfg := h1Config(srv.port(), 4, 2, false)
		cfg.KeepGoing = keepGoing
		res, err := runTimed(t, cfg, 5*time.Second)
		if err != nil {
			t.Fatalf("-r %v: %v", keepGoing, err)
		}
		wantCounts(t, res, 4, Failures{Total: 4, Receive: 4})
		if res.TotalRead != int64(4*len(head)) || res.DocLength != 0 {
			t.Errorf("-r %v: read %d doclen %d", keepGoing, res.TotalRead, res.DocLength)
		}
	}
}

// A head without a length on a connection the server closes: the body is empty
// and the response complete (HTTP/1.0 framing), as in ab.
func TestFaultCloseAfterHeadWithoutLength(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	srv := newFaultServer(t, answerOnce("HTTP/1.0 200 OK\r\nServer: fault\r\n\r\n"))
	res, err := runTimed(t, h1Config(srv.port(), 3, 1, false), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 3, Failures{})
	if res.DocLength != 0 || res.StatusCounts[200] != 3 {
		t.Errorf("doclen %d statuses %v", res.DocLength, res.StatusCounts)
	}
}

// Content-Length promised, less sent, then a stall: -s ends the run as ab ends
// it (exit 119, the completed requests kept) within about -s.
func TestFaultShortBodyStallIdleTimeout(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	srv := newFaultServer(t, answerThenStall(2, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten.."))
	cfg := h1Config(srv.port(), 5, 1, false)
	cfg.Timeout = 400 * time.Millisecond
	res, err := runTimed(t, cfg, 1200*time.Millisecond)
	wantFatal(t, err, 119, timeoutMessage)
	wantCounts(t, res, 2, Failures{})
	if res.Ending != EndFatal {
		t.Errorf("ending %v", res.Ending)
	}
}

// The same with --request-timeout: each stalled request is counted as an
// exception when its time is up and the run goes on to n.
func TestFaultShortBodyStallRequestTimeout(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	srv := newFaultServer(t, answerThenStall(2, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten.."))
	cfg := h1Config(srv.port(), 5, 1, false)
	cfg.RequestTimeout = 150 * time.Millisecond
	res, err := runTimed(t, cfg, 3*450*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 5, Failures{Total: 3, Exceptions: 3})
	if res.FirstError["exceptions"] == "" {
		t.Errorf("no first exception recorded: %v", res.FirstError)
	}
}

// A stall in the middle of the status line: -s → exit 119; --request-timeout → exceptions.
func TestFaultStallInStatusLine(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	srv := newFaultServer(t, answerThenStall(1, "HTTP/1.1 2"))

	cfg := h1Config(srv.port(), 3, 1, false)
	cfg.Timeout = 300 * time.Millisecond
	res, err := runTimed(t, cfg, 900*time.Millisecond)
	wantFatal(t, err, 119, timeoutMessage)
	wantCounts(t, res, 1, Failures{})

	cfg = h1Config(srv.port(), 3, 1, false)
	cfg.RequestTimeout = 100 * time.Millisecond
	res, err = runTimed(t, cfg, 3*200*time.Millisecond+time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 3, Failures{Total: 3, Exceptions: 3}) // connection 0 was the first run's
}

// Binary garbage instead of HTTP, then a close: an exception per request.
func TestFaultGarbageBytes(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	garbage := "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\x00\xff\r\n\x80garbage\n\n"
	srv := newFaultServer(t, answerOnce(garbage))
	res, err := runTimed(t, h1Config(srv.port(), 4, 2, false), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 4, Failures{Total: 4, Exceptions: 4})
	if res.TotalRead != int64(4*len(garbage)) {
		t.Errorf("TotalRead %d, want %d", res.TotalRead, 4*len(garbage))
	}
}

// A head of over 100 KiB, written in 1 KiB pieces on a connection the server
// keeps open: ab's header overflow at 8191 bytes, without waiting for the rest;
// the 12th overflow aborts the run with exit 1.
func TestFaultHugeHead(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	srv := newFaultServer(t, func(fc *faultConn) {
		if _, ok := fc.readRequest(); !ok {
			return
		}
		fc.inChunks(hugeHead, 1024)
		fc.waitClosed()
	})
	res, err := runTimed(t, h1Config(srv.port(), 2, 1, false), 5*time.Second)
	wantFatal(t, err, 1, "\nTest aborted after 10 failures\n\n\n")
	if res.Complete != 0 || res.Non2xx != 11 || srv.accepted.Load() != 12 {
		t.Errorf("complete %d non2xx %d conns %d; want 0 11 12", res.Complete, res.Non2xx, srv.accepted.Load())
	}
}

// A Content-Length body trickling one byte every 40 ms keeps -s's watchdog
// quiet (it measures silence, not response time): every request completes.
func TestFaultTrickledBody(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	body := strings.Repeat("t", 25)
	srv := newFaultServer(t, func(fc *faultConn) {
		if _, ok := fc.readRequest(); !ok {
			return
		}
		fc.write("HTTP/1.1 200 OK\r\nContent-Length: 25\r\n\r\n")
		fc.trickle(body, 40*time.Millisecond)
	})
	cfg := h1Config(srv.port(), 2, 1, false)
	cfg.Timeout = 600 * time.Millisecond // shorter than a response (1 s), far longer than a gap
	res, err := runTimed(t, cfg, 3*2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 2, Failures{})
	if res.DocLength != 25 || res.BodyRead != 50 {
		t.Errorf("doclen %d body %d", res.DocLength, res.BodyRead)
	}
	for i, s := range res.Samples.Exact() {
		if s.Total < 900_000 {
			t.Errorf("request %d took %d µs; the body alone takes 1 s", i, s.Total)
		}
	}
}

// A chunked body with extensions and trailers cut into 7-byte writes, over
// keep-alive: decoded exactly, the connections reused.
func TestFaultChunkedManyReads(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	srv := newFaultServer(t, func(fc *faultConn) {
		for {
			if _, ok := fc.readRequest(); !ok {
				return
			}
			fc.inChunks(chunkedResponse, 7)
		}
	})
	res, err := runTimed(t, h1Config(srv.port(), 12, 3, true), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 12, Failures{})
	if res.DocLength != 100 || res.BodyRead != 1200 || res.KeepAlive != 12 || srv.accepted.Load() > 3 {
		t.Errorf("doclen %d body %d keepalive %d conns %d", res.DocLength, res.BodyRead, res.KeepAlive, srv.accepted.Load())
	}
}

// A keep-alive server that closes every connection after k responses (reading
// the next request and dropping it): no request is lost or counted twice — the
// server read exactly Complete + Retries requests.
func TestFaultKeepAliveCloseAfterK(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	const n, c, k = 30, 3, 4
	srv := newFaultServer(t, keepAliveCloseAfter(k))
	res, err := runTimed(t, h1Config(srv.port(), n, c, true), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, n, Failures{})
	if res.KeepAlive != n || res.Retries == 0 {
		t.Errorf("keepalive %d retries %d", res.KeepAlive, res.Retries)
	}
	// Workers still in flight when the n-th response arrives may have had one
	// more request read by the server; each is an abandoned request, never counted.
	got := srv.requests.Load()
	if want := int64(res.Complete + res.Retries); got < want || got > want+c-1 {
		t.Errorf("server read %d requests; gab completed %d with %d retries", got, res.Complete, res.Retries)
	}
}

// With one worker there is nothing in flight at the end: the server's count is exact.
func TestFaultKeepAliveCloseAfterKExact(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	const n, k = 20, 3
	srv := newFaultServer(t, keepAliveCloseAfter(k))
	res, err := runTimed(t, h1Config(srv.port(), n, 1, true), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, n, Failures{})
	// Connections serve k requests each; the (k+1)-th is read, dropped, retried.
	if res.Retries != (n-1)/k || srv.requests.Load() != int64(n+res.Retries) || srv.accepted.Load() != int64(res.Retries+1) {
		t.Errorf("retries %d, server read %d requests on %d connections", res.Retries, srv.requests.Load(), srv.accepted.Load())
	}
}

// A keep-alive server that closes idle connections, met by a paced run (--rate
// leaves the connection idle between requests): every request completes once.
func TestFaultKeepAliveIdleClose(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	srv := newFaultServer(t, keepAliveIdleClose(30*time.Millisecond))
	cfg := h1Config(srv.port(), 6, 1, true)
	cfg.Rate = 10 // 100 ms between requests
	res, err := runTimed(t, cfg, 3*600*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 6, Failures{})
	// The server answered every request it read, and gab counted each answer once.
	if srv.requests.Load() != int64(res.Complete) || res.KeepAlive != 6 {
		t.Errorf("server answered %d requests, gab completed %d (retries %d, keepalive %d)",
			srv.requests.Load(), res.Complete, res.Retries, res.KeepAlive)
	}
	if srv.accepted.Load() != int64(1+res.Retries) {
		t.Errorf("%d connections for %d retries", srv.accepted.Load(), res.Retries)
	}
}

// bigPost is a POST whose 16 MiB body cannot fit in the socket buffers.
func bigPost(port int) Config {
	cfg := h1Config(port, 2, 1, false)
	body := make([]byte, 16<<20)
	head := "POST /x HTTP/1.0\r\nContent-length: 16777216\r\nContent-type: text/plain\r\nHost: 127.0.0.1\r\n\r\n"
	cfg.Request = append([]byte(head), body...)
	cfg.HeadLen = len(head)
	cfg.Spec = RequestSpec{Method: "POST", HasBody: true}
	return cfg
}

// A server that accepts and never reads: the write of a large POST blocks; -s
// ends the run with exit 119 within about -s.
func TestFaultNeverReadsIdleTimeout(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	srv := newFaultServer(t, neverReads)
	cfg := bigPost(srv.port())
	cfg.Timeout = 400 * time.Millisecond
	res, err := runTimed(t, cfg, 1200*time.Millisecond)
	wantFatal(t, err, 119, timeoutMessage)
	wantCounts(t, res, 0, Failures{})
	if res.TotalSent >= int64(len(cfg.Request)) {
		t.Errorf("sent %d bytes of a request the server never read", res.TotalSent)
	}
}

// The same with --request-timeout: each blocked request is counted as an
// exception at its deadline and the run completes.
func TestFaultNeverReadsRequestTimeout(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	srv := newFaultServer(t, neverReads)
	cfg := bigPost(srv.port())
	cfg.RequestTimeout = 200 * time.Millisecond
	res, err := runTimed(t, cfg, 3*400*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 2, Failures{Total: 2, Exceptions: 2})
	if res.WriteErrors != 0 {
		t.Errorf("write errors %d: an overdue request is an exception", res.WriteErrors)
	}
}

// A listener whose backlog is full and never accepts: the first connect lands
// in the accept queue, the others stall in SYN retries; -s ends the run.
func TestFaultSlowAcceptIdleTimeout(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	port := fullBacklogListener(t)
	cfg := h1Config(port, 6, 3, false)
	cfg.Timeout = 400 * time.Millisecond
	res, err := runTimed(t, cfg, 1200*time.Millisecond)
	wantFatal(t, err, 119, timeoutMessage)
	wantCounts(t, res, 0, Failures{})
}

// The same with --request-timeout: every request fails as an exception at its
// deadline (whether it was stuck in connect or waiting for an answer).
func TestFaultSlowAcceptRequestTimeout(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	port := fullBacklogListener(t)
	cfg := h1Config(port, 4, 2, false)
	cfg.RequestTimeout = 150 * time.Millisecond
	res, err := runTimed(t, cfg, 3*2*150*time.Millisecond+time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, 4, Failures{Total: 4, Exceptions: 4})
}

// A run against a server that never answers ends within -t + -s: here -t 1 -s 2.
func TestFaultRunEndsWithinTimeLimitPlusTimeout(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	srv := newFaultServer(t, stallForever)
	cfg := h1Config(srv.port(), 50000, 4, false)
	cfg.TimeLimit = time.Second
	cfg.Timeout = 2 * time.Second
	res, err := runTimed(t, cfg, 3*time.Second+500*time.Millisecond)
	if err != nil {
		wantFatal(t, err, 119, timeoutMessage)
	}
	if res.Complete != 0 || res.Failed.Total != 0 {
		t.Errorf("complete %d failed %+v", res.Complete, res.Failed)
	}
	if res.Ending != EndTimeLimit {
		t.Errorf("ending %v: the time limit comes first", res.Ending)
	}
}

// eventLoopFaults are the fault tests whose runs take the event loops by
// default: TestFaultsPortablePath runs them again on the portable path and
// TestFaultsUringEngine on the io_uring engine.
func eventLoopFaults() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"CloseAfterHead":                    TestFaultCloseAfterHead,
		"CloseAfterHeadWithoutLength":       TestFaultCloseAfterHeadWithoutLength,
		"ShortBodyStallIdleTimeout":         TestFaultShortBodyStallIdleTimeout,
		"GarbageBytes":                      TestFaultGarbageBytes,
		"HugeHead":                          TestFaultHugeHead,
		"TrickledBody":                      TestFaultTrickledBody,
		"ChunkedManyReads":                  TestFaultChunkedManyReads,
		"KeepAliveCloseAfterK":              TestFaultKeepAliveCloseAfterK,
		"KeepAliveCloseAfterKExact":         TestFaultKeepAliveCloseAfterKExact,
		"NeverReadsIdleTimeout":             TestFaultNeverReadsIdleTimeout,
		"SlowAcceptIdleTimeout":             TestFaultSlowAcceptIdleTimeout,
		"RunEndsWithinTimeLimitPlusTimeout": TestFaultRunEndsWithinTimeLimitPlusTimeout,
	}
}

// TestFaultsPortablePath runs the fault tests that take the Linux epoll path by
// default again on the portable goroutine-per-connection path (Config.Portable).
// The tests with --request-timeout, --rate or an injected Dial always run on it.
func TestFaultsPortablePath(t *testing.T) {
	cases := eventLoopFaults()
	cases["StallInStatusLine"] = TestFaultStallInStatusLine // its -s half; the --request-timeout half is portable anyway
	for name, fn := range cases {
		t.Run(name, func(t *testing.T) {
			usePath(t, "go")
			fn(t)
		})
	}
}

// FuzzHTTP1Exchange answers every request with arbitrary bytes and closes: the
// run must end by itself, with every request accounted for once (completed, or
// counted failed), whatever the bytes are, on both HTTP/1 paths (the event
// loop and the goroutine path drive the same h1Reader).
func FuzzHTTP1Exchange(f *testing.F) {
	for _, s := range []string{
		respond100(false),
		chunkedResponse,
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nabcde\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.0 200 OK\nContent-Length: 2\n\nok",
		"<html>0.9</html>",
		"\x00\xff garbage",
		strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", maxInterim+1) + respond100(false),
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte(respond100(true)), true)
	f.Add([]byte(strings.Repeat("HTTP/1.1 102 Processing\r\n\r\n", maxInterim)+respond100(true)), true)
	f.Fuzz(func(t *testing.T, answer []byte, keepAlive bool) {
		for _, path := range []string{"go", "epoll", "uring"} {
			if path == "uring" && !uringExpected() {
				continue
			}
			usePath(t, path)
			fuzzHTTP1Exchange(t, answer, keepAlive)
		}
	})
}

func fuzzHTTP1Exchange(t *testing.T, answer []byte, keepAlive bool) {
	srv := newFaultServer(t, func(fc *faultConn) {
		for {
			if _, ok := fc.readRequest(); !ok {
				return
			}
			_, _ = fc.Write(answer)
			if !keepAlive {
				return
			}
		}
	})
	cfg := h1Config(srv.port(), 3, 1, keepAlive)
	cfg.KeepGoing = true
	cfg.Timeout = 300 * time.Millisecond // a keep-alive answer without a length waits for a close that never comes
	res, err := h1Run(t, cfg)
	if err != nil {
		var fe *FatalError
		if !errors.As(err, &fe) {
			t.Fatalf("%q: non-fatal error %v", answer, err)
		}
		// Header overflows (12 in a row) and -s are the only ways this run can abort.
		if fe.Exit != 1 && fe.Exit != 119 {
			t.Fatalf("%q: %#v", answer, fe)
		}
		return
	}
	classes := res.Failed.Connect + res.Failed.Receive + res.Failed.Length + res.Failed.Exceptions
	if res.Complete != 3 || classes > res.Failed.Total || res.Failed.Total > 3+11 {
		t.Fatalf("%q: complete %d failed %+v", answer, res.Complete, res.Failed)
	}
	if res.DocLength > int64(len(answer)) || res.TotalRead > int64(len(answer))*int64(srv.requests.Load()) {
		t.Fatalf("%q: doclen %d read %d over %d requests", answer, res.DocLength, res.TotalRead, srv.requests.Load())
	}
	if res.Samples.Len() != 3 {
		t.Fatalf("%q: %d samples", answer, res.Samples.Len())
	}
}

// Ephemeral ports run out in a long non-keep-alive run (connect gives
// EADDRNOTAVAIL): reported as ab reports it, after its 10 failures, at once.
func TestFaultEphemeralPortsExhausted(t *testing.T) {
	checkGoroutines(t)
	checkEngineLeaks(t)
	srv := newFaultServer(t, answerOnce(respond100(false)))
	var dials atomic.Int64
	var d net.Dialer
	cfg := h1Config(srv.port(), 100, 1, false)
	cfg.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		if dials.Add(1) <= 5 {
			return d.DialContext(ctx, network, address)
		}
		return nil, &net.OpError{Op: "dial", Net: network, Err: &osSyscallError{syscall.EADDRNOTAVAIL}}
	}
	res, err := runTimed(t, cfg, 3*time.Second)
	wantFatal(t, err, 99, "\nTest aborted after 10 failures\n\napr_socket_connect(): Cannot assign requested address (99)\n")
	if res.Complete != 5 || dials.Load() != 5+12 {
		t.Errorf("complete %d after %d dials; want 5 and 17", res.Complete, dials.Load())
	}
}
