package client

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The --pipeline tests run each case on both HTTP/1 paths (pipePaths: the
// epoll event loop and the portable path; the io_uring engine does not
// pipeline and refuses it), except rate mode, which only the portable path
// serves. Their servers answer only once several requests have arrived on a
// connection, so that a client that does not pipeline stalls them (the runs
// then end on -s, failing).

// pipePaths runs fn on the HTTP/1 paths that pipeline: the epoll event loop
// and the portable path.
func pipePaths(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	bothPaths(t, &epollLoopsStarted, fn)
}

// The io_uring engine sends one request at a time on a connection: a
// pipelined run asked of it is an error before the run, never a run that
// stalls; auto takes epoll.
func TestPipelineRefusedOnUring(t *testing.T) {
	if !uringExpected() {
		t.Skip("no io_uring engine on this system")
	}
	cfg := pipeConfig(1, 10, 1, 4)
	cfg.Engine = EngineUring
	if _, err := chooseEngine(&cfg, 1, false); err == nil || !strings.Contains(err.Error(), "--pipeline") {
		t.Errorf("--engine uring --pipeline 4: %v, want an error naming --pipeline", err)
	}
	cfg.Engine = EngineAuto
	if e, err := chooseEngine(&cfg, 1, false); err != nil || e != EngineEpoll {
		t.Errorf("--engine auto --pipeline 4: %q %v, want epoll", e, err)
	}
}

// pipeConfig is h1Config pipelining depth requests, with a short -s.
func pipeConfig(port, n, c, depth int) Config {
	cfg := h1Config(port, n, c, true)
	cfg.Pipeline = depth
	cfg.Timeout = 3 * time.Second
	return cfg
}

// respondBody is a keep-alive 200 response with a body of size bytes; close
// adds Connection: close.
func respondBody(size int, close bool) string {
	conn := "keep-alive"
	if close {
		conn = "close"
	}
	return "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(size) + "\r\nConnection: " + conn + "\r\n\r\n" + strings.Repeat("b", size)
}

// pathIndex is K of a request for /uK (-1 if none).
func pathIndex(req []byte) int {
	_, rest, ok := bytes.Cut(req, []byte(" /u"))
	if !ok {
		return -1
	}
	end := bytes.IndexByte(rest, ' ')
	k, err := strconv.Atoi(string(rest[:max(end, 0)]))
	if err != nil {
		return -1
	}
	return k
}

// Responses answer requests in the order they were written: the server reads
// four requests before it answers them, each /uK with K+1 body bytes, and each
// URL's row must hold exactly its own responses' bytes.
func TestPipelineMatchesResponsesInOrder(t *testing.T) {
	pipePaths(t, func(t *testing.T) {
		srv := newFaultServer(t, func(fc *faultConn) {
			for {
				var sizes [4]int
				for i := range sizes {
					req, ok := fc.readRequest()
					if !ok {
						return
					}
					sizes[i] = pathIndex(req) + 1
				}
				for _, size := range sizes {
					fc.write(respondBody(size, false))
				}
			}
		})
		const n = 48
		cfg := pipeConfig(srv.port(), n, 1, 4) // one connection: its requests come in fours
		cfg.URLs = urlList(t, srv.port(), 4)
		cfg.VariableLength = true
		res, err := h1Run(t, cfg)
		if err != nil || res.Complete != n || res.Failed.Total != 0 || res.KeepAlive != n || res.Retries != 0 {
			t.Fatalf("run: %v, %d complete, failed %+v, %d kept alive, %d retries", err, res.Complete, res.Failed, res.KeepAlive, res.Retries)
		}
		for k, row := range res.Targets {
			if row.Complete != n/4 || row.BodyBytes != int64(n/4*(k+1)) {
				t.Errorf("/u%d: %d complete, %d body bytes; want %d, %d", k, row.Complete, row.BodyBytes, n/4, n/4*(k+1))
			}
		}
		if got := srv.requests.Load(); got != n {
			t.Errorf("the server read %d requests, want %d (none sent again)", got, n)
		}
	})
}

// A response with Connection: close leaves the requests behind it unprocessed:
// they are sent again on a new connection, and every request is answered. The
// server reads two requests per connection and answers both, the second with
// Connection: close; the client has four written, so two go again each time.
func TestPipelineResendsBehindConnectionClose(t *testing.T) {
	pipePaths(t, func(t *testing.T) {
		var answered atomic.Int64
		srv := newFaultServer(t, func(fc *faultConn) {
			for i := range 2 {
				if _, ok := fc.readRequest(); !ok {
					return
				}
				if i == 0 {
					continue
				}
			}
			answered.Add(2) // before the client can see the answers
			fc.write(respondBody(100, false) + respondBody(100, true))
		})
		const n = 20
		res, err := h1Run(t, pipeConfig(srv.port(), n, 1, 4))
		if err != nil || res.Complete != n || res.Failed.Total != 0 {
			t.Fatalf("run: %v, %d complete, failed %+v", err, res.Complete, res.Failed)
		}
		// Nine connections had two requests behind the close; the last had none.
		if res.Retries != 18 || answered.Load() != n || srv.accepted.Load() != n/2 || res.KeepAlive != n/2 {
			t.Errorf("%d retries (want 18), %d answered, %d connections, %d kept alive", res.Retries, answered.Load(), srv.accepted.Load(), res.KeepAlive)
		}
	})
}

// A server that closes with requests outstanding (no Connection: close): the
// first outstanding one is a receive failure, so is every other written one,
// and none is sent again. The server reads three requests, answers the first
// and closes, or closes in the middle of the second response.
func TestPipelineServerClosesWithRequestsOutstanding(t *testing.T) {
	for _, c := range []struct {
		name, answer string
		firstError   []string // what the first receive error may be
	}{
		{"after a response", respondBody(100, false), []string{"connection closed before any response byte"}},
		// The request written after the first answer may meet a reset.
		{"mid-response", respondBody(100, false) + respondBody(100, false)[:50],
			[]string{"connection closed before the response was complete", "connection reset by peer"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pipePaths(t, func(t *testing.T) {
				srv := newFaultServer(t, func(fc *faultConn) {
					for range 3 {
						if _, ok := fc.readRequest(); !ok {
							return
						}
					}
					fc.write(c.answer)
				})
				const n = 12
				cfg := pipeConfig(srv.port(), n, 1, 3)
				cfg.KeepGoing = true
				res, err := h1Run(t, cfg)
				if err != nil || res.Complete != n {
					t.Fatalf("run: %v, %d complete", err, res.Complete)
				}
				conns := int(srv.accepted.Load())
				ok := n - res.Failed.Total
				if res.Retries != 0 || ok != conns || res.Failed.Receive != res.Failed.Total {
					t.Errorf("%d connections, %d answered, failed %+v, %d retries: want one answer per connection, receive failures, no retry",
						conns, ok, res.Failed, res.Retries)
				}
				got := res.FirstError["receive"]
				if !strings.Contains(got, c.firstError[0]) && (len(c.firstError) < 2 || !strings.Contains(got, c.firstError[1])) {
					t.Errorf("first receive error %q, want one of %q", got, c.firstError)
				}
			})
		})
	}
}

// In rate mode a request may wait behind earlier ones on its connection, and
// its latency from the intended send time covers the wait: the server answers
// requests in pairs, so the first of each pair (due 10 ms before the second)
// cannot be answered before the second is due. Only the portable path serves
// --rate.
func TestPipelineRateLatencyCoversTheWait(t *testing.T) {
	usePath(t, "go")
	srv := newFaultServer(t, func(fc *faultConn) {
		for {
			for range 2 {
				if _, ok := fc.readRequest(); !ok {
					return
				}
			}
			fc.write(respondBody(100, false) + respondBody(100, false))
		}
	})
	const n = 10
	cfg := pipeConfig(srv.port(), n, 1, 4)
	cfg.Rate = 100
	cfg.Extended = true
	res, err := h1Run(t, cfg)
	if err != nil || res.Complete != n || res.Failed.Total != 0 {
		t.Fatalf("run: %v, %d complete, failed %+v", err, res.Complete, res.Failed)
	}
	rate := res.Extra.Rate
	// Five requests waited at least 10 ms (from their due time to the next's).
	if rate.Corrected.Count != n || rate.Corrected.Max < 10000 || rate.Corrected.Sum < 5*10000 {
		t.Errorf("corrected latencies: %d, max %d µs, sum %d µs; want %d, max ≥ 10000, sum ≥ 50000", rate.Corrected.Count, rate.Corrected.Max, rate.Corrected.Sum, n)
	}
}

// Every written request is answered in a run against a server that answers
// at once (benchServer), with --urls.
func TestPipelineAgainstBenchServer(t *testing.T) {
	pipePaths(t, func(t *testing.T) {
		srv := newBenchServer(t, true)
		const n = 3000
		cfg := pipeConfig(srv.port(), n, 4, 16)
		cfg.URLs = urlList(t, srv.port(), 7)
		res, err := h1Run(t, cfg)
		if err != nil || res.Complete != n || res.Failed.Total != 0 || res.KeepAlive != n || res.BodyRead != 100*n {
			t.Fatalf("run: %v, %d complete, failed %+v, %d kept alive, %d body bytes", err, res.Complete, res.Failed, res.KeepAlive, res.BodyRead)
		}
	})
}

// Hostile servers on a pipelined connection: what gab holds stays bounded
// (runFlood checks the heap) and every run ends by itself or at -t.
func TestPipelineHostileServers(t *testing.T) {
	t.Run("endless body", func(t *testing.T) {
		pipePaths(t, func(t *testing.T) {
			checkGoroutines(t)
			srv := newFaultServer(t, floodAfterRequest("HTTP/1.1 200 OK\r\n\r\n", "x"))
			wantEndlessBodyEndsAtTimeLimit(t, pipeConfig(srv.port(), 100, 2, 8))
		})
	})
	// The front request fails as an Exception after maxInterim 1xx
	// responses; the others written behind it are receive failures.
	t.Run("endless interim responses", func(t *testing.T) {
		pipePaths(t, func(t *testing.T) {
			checkGoroutines(t)
			srv := newFaultServer(t, floodAfterRequest("", "HTTP/1.1 100 Continue\r\n\r\n"))
			cfg := pipeConfig(srv.port(), 8, 1, 4)
			cfg.Timeout = 5 * time.Second
			res, returned := runFlood(t, cfg)
			if res.Complete != 8 || res.Failed.Total != 8 || res.Failed.Exceptions != 2 || res.Failed.Receive != 6 || res.Retries != 0 {
				t.Errorf("%d complete, failed %+v, %d retries: want 2 exceptions and 6 receive failures of 8", res.Complete, res.Failed, res.Retries)
			}
			wantEndedBeforeTimeout(t, cfg, res, returned)
		})
	})
}

// BenchmarkPipeline is --pipeline 16 on both HTTP/1 paths, keep-alive,
// 100-byte responses, c=8, beside BenchmarkKeepAlive100B:
//
//	go test -run '^$' -bench 'BenchmarkPipeline' -benchmem ./client
//
// It must report 0 allocs/op.
func BenchmarkPipeline(b *testing.B) {
	for _, path := range []string{"epoll", "go"} {
		b.Run(path, func(b *testing.B) {
			usePath(b, path)
			benchmarkRunWith(b, true, 8, false, func(cfg *Config) { cfg.Pipeline = 16 })
		})
	}
}

// The pipelined loop allocates nothing per request in gab's code, on both
// paths, with --urls (each request's bytes assembled in its own buffer).
func TestPipelineLoopDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few thousand loopback requests")
	}
	pipePaths(t, func(t *testing.T) {
		srv := newBenchServer(t, true)
		list := urlList(t, srv.port(), 100)
		cfg := pipeConfig(srv.port(), 0, 2, 16)
		cfg.URLs = list
		wantFlatAllocations(t, h1KeptAllocations(t, cfg, 0), isCrypto)
	})
}

// A kept connection that the server closed while it was idle is not written
// on: the portable path probes a connection idle for pipeIdleProbe before
// it writes (the event loop knows from EPOLLRDHUP), and the requests go on a
// new connection, neither failed nor counted as sent again. The server
// answers each connection's request and closes at once; requests are due
// 250 ms apart. On a loaded machine the server's goroutine may close later
// than the next request is due, so the run is tried up to three times: a
// client that writes on the closed connection fails every attempt, whatever
// the timing, since the server has closed it when the request arrives.
func TestPipelineIdleCloseOpensAnotherConnection(t *testing.T) {
	usePath(t, "go")
	defer func(old int64) { pipeIdleProbe = old }(pipeIdleProbe)
	pipeIdleProbe = int64(time.Millisecond)
	const n = 3
	var last string
	for attempt := 0; attempt < 3; attempt++ {
		srv := newFaultServer(t, func(fc *faultConn) {
			if _, ok := fc.readRequest(); ok {
				fc.write(respondBody(100, false))
			}
		})
		cfg := pipeConfig(srv.port(), n, 1, 4)
		cfg.Rate = 4
		res, err := h1Run(t, cfg)
		if err == nil && res.Complete == n && res.Failed.Total == 0 && res.Retries == 0 && srv.accepted.Load() == n {
			return
		}
		if res == nil {
			t.Fatalf("run: %v", err)
		}
		last = fmt.Sprintf("run: %v, %d complete, failed %+v, %d retries, %d connections", err, res.Complete, res.Failed, res.Retries, srv.accepted.Load())
		t.Logf("attempt %d: %s", attempt+1, last)
	}
	t.Fatal(last)
}

// Requests in flight when -t stops a pipelined run are listed once each: a
// connection whose server holds a request holds the one written behind it
// too (--pipeline 2), so each of the three connections leaves two.
func TestPipelineOutstandingAtTimeLimit(t *testing.T) {
	pipePaths(t, func(t *testing.T) {
		h := &holder{every: 4}
		s := newFaultServer(t, h.script)
		const conns, depth = 3, 2
		cfg := pipeConfig(s.port(), 1_000_000, conns, depth)
		cfg.TimeLimit = 700 * time.Millisecond
		res, err := h1Run(t, cfg)
		if err != nil || res.Ending != EndTimeLimit {
			t.Fatalf("run: %v, ending %v", err, res.Ending)
		}
		if len(res.Outstanding) != conns*depth || len(h.arrivals()) != conns {
			t.Errorf("%d outstanding, %d held: want %d and %d", len(res.Outstanding), len(h.arrivals()), conns*depth, conns)
		}
		for _, o := range res.Outstanding {
			if o.Age <= 0 || o.Age > res.Elapsed || o.Corrected != o.Age {
				t.Errorf("outstanding %+v in a run of %v", o, res.Elapsed)
			}
		}
	})
}

// https:// pipelines on the portable path, also where the event loops
// would serve the run.
func TestPipelineHTTPS(t *testing.T) {
	srv := newFaultServerTLS(t, tlsServerConfig(t), func(fc *faultConn) {
		for {
			if _, ok := fc.readRequest(); !ok {
				return
			}
			fc.write(respond100(true))
		}
	})
	const n = 600
	cfg := pipeConfig(srv.port(), n, 2, 8)
	cfg.Target.TLS = true
	loops := epollLoopsStarted.Load()
	res, err := h1Run(t, cfg)
	if err != nil || res.Complete != n || res.Failed.Total != 0 || res.KeepAlive != n || res.BodyRead != 100*n {
		t.Fatalf("run: %v, %d complete, failed %+v, %d kept alive, %d body bytes", err, res.Complete, res.Failed, res.KeepAlive, res.BodyRead)
	}
	if started := epollLoopsStarted.Load() - loops; started != 0 {
		t.Errorf("%d event loops started for a pipelined https:// run", started)
	}
}

// A request is sent again at most maxPipeResend times: against a server that
// answers one request per connection with Connection: close, the requests
// written deep in a ring of six meet four closes before they reach its
// front and fail as receive failures; every request is answered or failed.
func TestPipelineResendsAreBounded(t *testing.T) {
	pipePaths(t, func(t *testing.T) {
		var answered atomic.Int64
		srv := newFaultServer(t, func(fc *faultConn) {
			if _, ok := fc.readRequest(); ok {
				answered.Add(1)
				fc.write(respondBody(100, true))
			}
		})
		const n = 12
		cfg := pipeConfig(srv.port(), n, 1, 6)
		res, err := h1Run(t, cfg)
		if err != nil || res.Complete != n {
			t.Fatalf("run: %v, %d complete", err, res.Complete)
		}
		if res.Failed.Receive == 0 || res.Failed.Total != res.Failed.Receive || int64(n-res.Failed.Total) != answered.Load() {
			t.Errorf("failed %+v, %d answered of %d: want receive failures, the rest answered", res.Failed, answered.Load(), n)
		}
		if got := res.FirstError["receive"]; !strings.Contains(got, "sent again 3 times") {
			t.Errorf("first receive error %q, want the re-send bound", got)
		}
		if res.Retries > maxPipeResend*n {
			t.Errorf("%d retries for %d requests, want at most %d each", res.Retries, n, maxPipeResend)
		}
	})
}
