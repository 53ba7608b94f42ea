package client

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
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
	const c = 48
	for _, proto := range []string{"http1", "h2"} {
		t.Run(proto, func(t *testing.T) {
			paths := h1Paths
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
				srv.TLS = &tls.Config{
					GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
						total.Add(1)
						n := now.Add(1)
						for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
						}
						time.Sleep(50 * time.Millisecond)
						return nil, nil
					},
					VerifyConnection: func(tls.ConnectionState) error {
						now.Add(-1)
						return nil
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
				// The server's count ends a little after the client's (its
				// VerifyConnection runs after it sent its Finished): allow one more.
				if m, n := most.Load(), total.Load(); m > int64(tlsRampHandshakes)+1 || m < int64(tlsRampHandshakes)/2 || n < 3*int64(tlsRampHandshakes) {
					t.Errorf("%d handshakes, at most %d at once; want at most %d at once, over several waves", n, m, tlsRampHandshakes)
				}
			})
		})
	}
}
