package client

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// h2 over TLS (ALPN) on both paths, TLS 1.3 and TLS 1.2: the counts of the
// h2c suite, one handshake per connection, session resumption. (-v 2 takes
// the goroutine path.)

func TestTLSHTTP2Runs(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 100)
	for _, proto := range []string{"TLS1.3", "TLS1.2"} {
		for _, tc := range []struct{ n, c, streams int }{{200, 2, 5}, {60, 3, 1}} {
			t.Run(fmt.Sprintf("%s/c%d/streams%d", proto, tc.c, tc.streams), func(t *testing.T) {
				h2Paths(t, func(t *testing.T) {
					checkGoroutines(t)
					h := newH2Counter(time.Millisecond, body)
					ts := startGoH2(t, h, true)
					cfg := h2TestConfig(t, ts.URL+"/doc", tc.n, tc.c, tc.streams)
					cfg.TLS.Protocol = proto
					res, err := runH2(t, cfg)
					if err != nil {
						t.Fatalf("Run: %v", err)
					}
					wantCounts(t, res, tc.n, Failures{})
					if h.requests.Load() != int64(tc.n) || h.notHTTP2.Load() != 0 || h.connections.Load() != int64(tc.c) {
						t.Errorf("server saw %d requests (%d not h2) on %d connections, want %d on %d",
							h.requests.Load(), h.notHTTP2.Load(), h.connections.Load(), tc.n, tc.c)
					}
					if res.Protocol != "h2" || res.DocLength != 100 || res.BodyRead != int64(100*tc.n) || res.TotalRead <= res.BodyRead {
						t.Errorf("protocol %q doclen %d body %d total %d", res.Protocol, res.DocLength, res.BodyRead, res.TotalRead)
					}
					if res.TLS == nil || res.TLS.Protocol != "TLSv"+strings.TrimPrefix(proto, "TLS") {
						t.Errorf("TLS info %+v, want %s", res.TLS, proto)
					}
				})
			})
		}
	}
}

// --tls-resume under --http2: connections opened to replace the ones a server
// closes resume the first one's session.
func TestTLSHTTP2Resume(t *testing.T) {
	for _, resume := range []bool{false, true} {
		t.Run(fmt.Sprint("resume=", resume), func(t *testing.T) {
			h2Paths(t, func(t *testing.T) {
				checkGoroutines(t)
				var resumed, conns atomic.Int64
				h := newH2Counter(0, []byte("x"))
				ts := httptest.NewUnstartedServer(h)
				ts.EnableHTTP2 = true
				ts.Config.ErrorLog = log.New(io.Discard, "", 0)
				ts.TLS = &tls.Config{VerifyConnection: func(cs tls.ConnectionState) error {
					conns.Add(1)
					if cs.DidResume {
						resumed.Add(1)
					}
					return nil
				}}
				ts.Config.SetKeepAlivesEnabled(false) // GOAWAY after each response: a new connection per request
				ts.StartTLS()
				defer ts.Close()
				cfg := h2TestConfig(t, ts.URL+"/", 6, 1, 1)
				cfg.TLS.Resume = resume
				res, err := runH2(t, cfg)
				if err != nil {
					t.Fatal(err)
				}
				wantCounts(t, res, 6, Failures{})
				switch n, r := conns.Load(), resumed.Load(); {
				case n < 2:
					t.Fatalf("%d connections: the server did not close them", n)
				case !resume && r != 0:
					t.Errorf("%d of %d connections resumed without --tls-resume", r, n)
				case resume && r != n-1:
					t.Errorf("%d of %d connections resumed with --tls-resume, want all but the first", r, n)
				}
			})
		})
	}
}

// h2 over TLS allocates nothing per request in gab's code, on both paths,
// with one stream per connection or ten. Checked under -race too.
func TestTLSHTTP2LoopDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few thousand loopback requests")
	}
	checkH2Allocations(t, func(t *testing.T) string {
		return startGoH2(t, newH2Counter(0, []byte("0123456789")), true).URL + "/"
	}, nil)
}

// checkH2Allocations runs 200 and then 1000 requests on the server start
// gives, with one stream per connection and ten, on both paths, and holds
// the 800 more to no more allocations in gab's code and one per response in
// x/net (its Framer makes a HeadersFrame per head); crypto/tls's reads are
// not counted. ok, if set, checks each run's result as well.
func checkH2Allocations(t *testing.T, start func(t *testing.T) string, ok func(*Result) bool) {
	t.Helper()
	for _, streams := range []int{1, 10} {
		t.Run(fmt.Sprint("streams", streams), func(t *testing.T) {
			h2Paths(t, func(t *testing.T) {
				url := start(t)
				allocs := func(n int) map[string]int64 {
					cfg := h2TestConfig(t, url, n, 2, streams)
					return gabAllocations(func() {
						if res, err := runH2(t, cfg); err != nil || res.Complete != n || (ok != nil && !ok(res)) {
							t.Fatalf("run of %d: %v, %+v", n, err, res)
						}
					})
				}
				allocs(100) // warm up
				small, large := allocs(200), allocs(1000)
				isXNet := func(fn string) bool { return strings.HasPrefix(fn, "golang.org/x/net/") }
				isLibrary := func(fn string) bool { return isCrypto(fn) || isXNet(fn) }
				if more, grew := allocGrowth(small, large, isLibrary); more > 40 {
					t.Errorf("800 more requests cost %d more allocations in gab's code (more by allocating function: %v)", more, grew)
				}
				if more, grew := allocGrowth(small, large, func(fn string) bool { return !isXNet(fn) }); more > 800+40 {
					t.Errorf("800 more requests cost %d more allocations in x/net, want one per response (by function: %v)", more, grew)
				}
			})
		})
	}
}
