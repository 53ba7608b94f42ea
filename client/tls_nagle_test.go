package client

import (
	"crypto/tls"
	"math"
	"testing"
)

// TestTLSRequestNotHeldByNagle: without keep-alive over TLS 1.3 the client
// sends its Finished and then the request. Written apart on a socket with
// Nagle's algorithm, the request waited for the server's delayed ACK (about
// 40 ms on Linux) on every connection, so no request took less than 40 ms.
// Unhindered, the fastest of twenty takes a few ms even on a loaded machine
// (the wall time of all twenty is not a fair measure there).
func TestTLSRequestNotHeldByNagle(t *testing.T) {
	h1Paths(t, func(t *testing.T) {
		srv := newTLSTestServer(t, func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 })
		cfg := tlsConfigFor(srv.port(), 20, false, TLSOptions{})
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Complete != 20 || res.Failed.Total != 0 {
			t.Fatalf("complete %d failed %+v", res.Complete, res.Failed)
		}
		fastest := uint32(math.MaxUint32)
		for _, s := range res.Samples.Exact() {
			fastest = min(fastest, s.Total)
		}
		if fastest >= 30000 {
			t.Errorf("the fastest of 20 requests took %d µs: the request waited for a delayed ACK", fastest)
		}
	})
}
