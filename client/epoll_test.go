package client

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The HTTP/1 transport has two paths: the Linux epoll loops
// (http1_epoll_linux.go, the default there) and the portable goroutine per
// connection (Config.Portable, and every other system). These tests run the
// HTTP/1 behaviour tests on both and test what only the epoll path has.

// epollExpected reports whether the fast path exists in this build.
func epollExpected() bool { return runtime.GOOS == "linux" }

// TestHTTP1BothPaths runs the HTTP/1 behaviour tests on each path and checks
// that the path asked for is the one that ran.
func TestHTTP1BothPaths(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the HTTP/1 suite twice")
	}
	tests := []pathTest{
		{"PlainCountsBytes", TestHTTP1PlainCountsBytes},
		{"KeepAliveReusesConnections", TestHTTP1KeepAliveReusesConnections},
		{"KeepAliveNeedsServerSignal", TestHTTP1KeepAliveNeedsServerSignal},
		{"KeepAliveAgainstNetHTTP", TestHTTP1KeepAliveAgainstNetHTTP},
		{"HTTP11Persistence", TestHTTP1HTTP11Persistence},
		{"ChunkedDecoded", TestHTTP1ChunkedDecoded},
		{"ChunkedByteByByte", TestHTTP1ChunkedByteByByte},
		{"KeepAliveWithoutLengthEndsAtClose", TestHTTP1KeepAliveWithoutLengthEndsAtClose},
		{"SkipsInterimResponses", TestHTTP1SkipsInterimResponses},
		{"RetriesIdempotentOnClosedKeepAlive", TestHTTP1RetriesIdempotentOnClosedKeepAlive},
		{"PostNotRetried", TestHTTP1PostNotRetried},
		{"FreshConnectionClosedWithoutAnswer", TestHTTP1FreshConnectionClosedWithoutAnswer},
		{"ResetIsFatalWithoutR", TestHTTP1ResetIsFatalWithoutR},
		{"Refused", TestHTTP1Refused},
		{"MalformedResponses", TestHTTP1MalformedResponses},
		{"HeaderOverflowAborts", TestHTTP1HeaderOverflowAborts},
		{"BodilessResponses", TestHTTP1BodilessResponses},
		{"ServerSoftwareQuirks", TestHTTP1ServerSoftwareQuirks},
		{"VerboseEvents", TestHTTP1VerboseEvents},
		{"RampUp", TestHTTP1RampUp},
		{"IdleTimeoutIsFatal", TestHTTP1IdleTimeoutIsFatal},
		{"TimeLimitEnds", TestHTTP1TimeLimitEnds},
		{"CancelGivesPartialResult", TestHTTP1CancelGivesPartialResult},
		{"WriteFailure", TestHTTP1WriteFailure},
		{"StatusCounts", TestHTTP1StatusCounts},
		{"SampleTimes", TestHTTP1SampleTimes},
		{"ServerClosesFirst", TestHTTP1ServerClosesFirst},
		{"LargeBodies", TestHTTP1LargeBodies},
		{"LoopDoesNotAllocate", TestKeepAliveLoopDoesNotAllocate},
	}
	h1Paths(t, func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.name, tc.fn)
		}
	})
}

// TestEpollPathSelection: plain HTTP takes the fast path; what it does not
// implement falls back to the portable one.
func TestEpollPathSelection(t *testing.T) {
	t.Parallel()
	base := h1Config(8080, 10, 3, true)
	cases := []struct {
		name   string
		change func(*Config)
		fast   bool
	}{
		{"plain", func(*Config) {}, true},
		{"proxy address", func(c *Config) { c.ProxyHost, c.ProxyPort = "127.0.0.1", 3128 }, true},
		{"TLS", func(c *Config) { c.Target.TLS = true }, true},
		{"injected dial", func(c *Config) {
			c.Dial = func(context.Context, string, string) (net.Conn, error) { return nil, io.EOF }
		}, false},
		{"-b", func(c *Config) { c.SocketBuffer = 4096 }, false},
		{"-B", func(c *Config) { c.LocalAddr = "127.0.0.1" }, false},
		{"--rate", func(c *Config) { c.Rate = 10 }, false},
		{"--request-timeout", func(c *Config) { c.RequestTimeout = time.Second }, false},
	}
	for _, tc := range cases {
		cfg := base
		tc.change(&cfg)
		d, err := resolve(context.Background(), &cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		loops := epollLoops(&cfg, d)
		want := 0
		if tc.fast && epollExpected() {
			want = min(max(runtime.GOMAXPROCS(0)-1, 1), cfg.Concurrency)
		}
		if loops != want {
			t.Errorf("%s: %d loops, want %d", tc.name, loops, want)
		}
	}
	cfg := base
	cfg.Portable = true
	d, err := resolve(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if loops := epollLoops(&cfg, d); loops != 0 {
		t.Errorf("Config.Portable: %d loops, want the portable path", loops)
	}
}

// pollFDs counts this process's epoll and eventfd descriptors.
func pollFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range entries {
		link, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err == nil && (strings.Contains(link, "eventpoll") || strings.Contains(link, "eventfd")) {
			n++
		}
	}
	return n
}

// Several loops share many connections; every request is accounted for once,
// with and without keep-alive, and the loops leave no descriptor behind.
func TestEpollManyConnectionsSeveralLoops(t *testing.T) {
	if !epollExpected() {
		t.Skip("the epoll path is Linux only")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, ka := range []bool{true, false} {
		checkGoroutines(t)
		srv := newBenchServer(t, ka)
		n, c := 3000, 37
		if !ka {
			n = 600
		}
		cfg := h1Config(srv.port(), n, c, ka)
		fds := pollFDs(t)
		rn, err := newRunner(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := rn.Run(ctx)
		cancel()
		if err != nil {
			t.Fatalf("keep-alive %v: %v", ka, err)
		}
		if loops := rn.tr.(*http1).loops; loops != 3 { // one P stays free
			t.Errorf("keep-alive %v: %d loops, want 3", ka, loops)
		}
		wantKA := 0
		if ka {
			wantKA = n
		}
		if res.Complete != n || res.Failed.Total != 0 || res.KeepAlive != wantKA || res.BodyRead != int64(100*n) ||
			res.TotalSent != int64(n*len(cfg.Request)) || res.StatusCounts[200] != n {
			t.Errorf("keep-alive %v: complete %d failed %+v keep-alive %d body %d sent %d statuses %v",
				ka, res.Complete, res.Failed, res.KeepAlive, res.BodyRead, res.TotalSent, res.StatusCounts)
		}
		if after := pollFDs(t); after != fds {
			t.Errorf("keep-alive %v: %d epoll/eventfd descriptors before the run, %d after", ka, fds, after)
		}
	}
}

// slowBodyServer reads each request's body in small pieces with pauses, so
// that a large request fills the client's socket buffer (short writes, EAGAIN).
func slowBodyServer(t *testing.T, resp string) *faultServer {
	return newFaultServer(t, func(fc *faultConn) {
		for {
			clen := 0
			for {
				line, err := fc.br.ReadSlice('\n')
				if err != nil {
					return
				}
				if bytes.Equal(line, []byte("\r\n")) {
					break
				}
				if k, v, ok := bytes.Cut(line, []byte(":")); ok && equalFoldASCII(bytes.TrimSpace(k), "content-length") {
					clen, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
				}
			}
			piece := make([]byte, 64<<10)
			for clen > 0 {
				k, err := fc.br.Read(piece[:min(len(piece), clen)])
				if err != nil {
					return
				}
				clen -= k
				time.Sleep(200 * time.Microsecond)
			}
			fc.srv.requests.Add(1)
			fc.write(resp)
		}
	})
}

// A request larger than the socket buffers is written in several goes.
func TestEpollLargeRequestBody(t *testing.T) {
	h1Paths(t, func(t *testing.T) {
		checkGoroutines(t)
		srv := slowBodyServer(t, "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok")
		body := bytes.Repeat([]byte("p"), 4<<20)
		head := "POST /x HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: 127.0.0.1\r\nContent-length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
		cfg := h1Config(srv.port(), 4, 2, true)
		cfg.Request = append([]byte(head), body...)
		cfg.HeadLen = len(head)
		cfg.Spec.Method = "POST"
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Complete != 4 || res.Failed.Total != 0 || res.TotalSent != int64(4*len(cfg.Request)) ||
			res.BodyRead != 8 || srv.requests.Load() != 4 {
			t.Errorf("complete %d failed %+v sent %d (want %d) body %d server saw %d",
				res.Complete, res.Failed, res.TotalSent, 4*len(cfg.Request), res.BodyRead, srv.requests.Load())
		}
	})
}

// addrResolver answers every name with fixed addresses.
type addrResolver []net.IPAddr

func (a addrResolver) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) { return a, nil }

// As ab for localhost: while no connection has worked, a refused (or
// impossible) first address moves the run on to the next one.
func TestEpollAddressFallback(t *testing.T) {
	h1Paths(t, func(t *testing.T) {
		checkGoroutines(t)
		srv := newBenchServer(t, true)
		cfg := h1Config(srv.port(), 50, 3, true)
		cfg.Target.Host = "gab.invalid"
		cfg.Resolver = addrResolver{{IP: net.IPv6loopback}, {IP: net.IPv4(127, 0, 0, 1)}}
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Complete != 50 || res.Failed.Total != 0 || res.KeepAlive != 50 {
			t.Errorf("complete %d failed %+v keep-alive %d", res.Complete, res.Failed, res.KeepAlive)
		}
	})
}

// A refused connection with -r is a recorded Connect failure on both paths,
// and the error text names the system call.
func TestEpollRefusedKeepGoing(t *testing.T) {
	h1Paths(t, func(t *testing.T) {
		cfg := h1Config(closedPort(t), 5, 2, false)
		cfg.KeepGoing = true
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Complete != 5 || res.Failed.Connect != 5 || res.Failed.Total != 5 {
			t.Errorf("complete %d failed %+v", res.Complete, res.Failed)
		}
		if msg := res.FirstError["connect"]; !strings.Contains(msg, "connect: connection refused") {
			t.Errorf("first connect error %q", msg)
		}
	})
}
