package client

import (
	"crypto/tls"
	"testing"
	"time"
)

// TestTLSRequestNotHeldByNagle: without keep-alive over TLS 1.3 the client
// sends its Finished and then the request. Written apart on a socket with
// Nagle's algorithm, the request waited for the server's delayed ACK (about
// 40 ms on Linux) on every connection. Twenty requests one after another
// take a few ms each; held back, they would take at least 800 ms.
func TestTLSRequestNotHeldByNagle(t *testing.T) {
	h1Paths(t, func(t *testing.T) {
		srv := newTLSTestServer(t, func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 })
		cfg := tlsConfigFor(srv.port(), 20, false, TLSOptions{})
		start := time.Now()
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		if res.Complete != 20 || res.Failed.Total != 0 {
			t.Fatalf("complete %d failed %+v", res.Complete, res.Failed)
		}
		if took > 600*time.Millisecond {
			t.Errorf("20 requests took %v: the request waited for a delayed ACK", took)
		}
		t.Logf("20 requests in %v", took)
	})
}
