package client

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestTLSRampBoundsHandshakes: while a run's connections first open, at most
// tlsRampHandshakes TLS handshakes are under way at once, for HTTP/1 and
// --http2, on both paths (a burst of thousands overflows a server's accept
// queue, and the run would end after ab's 10 connect failures). The server
// holds every handshake and every response for a while, so that without the
// bound all c handshakes would be under way together, and the first
// connections cannot serve the whole run while the others wait.
func TestTLSRampBoundsHandshakes(t *testing.T) {
	defer func(n int) { tlsRampHandshakes = n }(tlsRampHandshakes)
	tlsRampHandshakes = 8
	// One event loop, as on a 2-core machine: each loop's share is at least
	// 8 (tlsRampShare), so with more loops the run may hold 8 per loop.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(min(runtime.GOMAXPROCS(0), 2)))
	const c = 48
	for _, proto := range []string{"http1", "h2"} {
		t.Run(proto, func(t *testing.T) {
			paths := h1TLSPaths
			if proto == "h2" {
				paths = h2Paths
			}
			paths(t, func(t *testing.T) {
				var now, most, total atomic.Int64
				srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					time.Sleep(100 * time.Millisecond)
					_, _ = io.WriteString(w, "ok")
				}))
				srv.EnableHTTP2 = proto == "h2"
				srv.Listener = rampListener{srv.Listener, &now}
				srv.TLS = &tls.Config{
					GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
						total.Add(1)
						hello.Conn.(*rampConn).held.Store(true)
						n := now.Add(1)
						for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
						}
						time.Sleep(50 * time.Millisecond)
						return nil, nil
					},
				}
				srv.Config.ErrorLog = log.New(io.Discard, "", 0)
				srv.StartTLS()
				t.Cleanup(srv.Close)
				var cfg Config
				if proto == "h2" {
					cfg = h2TestConfig(t, srv.URL+"/", c, c, 1)
				} else {
					cfg = tlsConfigFor(srv.Listener.Addr().(*net.TCPAddr).Port, c, true, TLSOptions{})
					cfg.Concurrency = c
				}
				res, err := h1Run(t, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if res.Complete != c || res.Failed.Total != 0 {
					t.Errorf("complete %d failed %+v, want %d and none", res.Complete, res.Failed, c)
				}
				// The server counts a handshake from its ClientHello to its
				// first answer (rampConn), inside the client's span from
				// taking its place to reading that answer: never more than
				// tlsRampHandshakes at once, however late the goroutines run.
				// Without the bound all c would be held together (46 of 48
				// were seen), so the exact bound fails loudly.
				if m, n := most.Load(), total.Load(); m > int64(tlsRampHandshakes) || m < int64(tlsRampHandshakes)/2 || n < 3*int64(tlsRampHandshakes) {
					t.Errorf("%d handshakes, at most %d at once; want at most %d at once, over several waves", n, m, tlsRampHandshakes)
				}
			})
		})
	}
}

// rampListener hands out rampConns that end their handshake's count in now.
type rampListener struct {
	net.Listener
	now *atomic.Int64
}

func (l rampListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &rampConn{Conn: c, now: l.now}, nil
}

// rampConn is a server connection whose handshake counts as under way from
// GetConfigForClient (which sets held) to the server's first write after
// it, the ServerHello flight: the count drops before those bytes leave, so
// before the client can end its handshake.
type rampConn struct {
	net.Conn
	now  *atomic.Int64
	held atomic.Bool
}

func (c *rampConn) Write(p []byte) (int, error) {
	if c.held.CompareAndSwap(true, false) {
		c.now.Add(-1)
	}
	return c.Conn.Write(p)
}
