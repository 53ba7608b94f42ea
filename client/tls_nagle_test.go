package client

import (
	"crypto/tls"
	"math"
	"testing"
)

// TestTLSRequestNotHeldByNagle: without keep-alive over TLS 1.3 the client
// sends its Finished and then the request. Written apart on a socket with
// Nagle's algorithm, the request waited for the server's delayed ACK (about
// 40 ms on Linux) on every connection, so no request took less than 40 ms
// from its handshake's end to its response. That wait falls wholly after
// the handshake, in ab's Processing (Total − Connect), which leaves out the
// handshake's crypto, slow under -race on a loaded machine. Held back, the
// fastest of twenty measured 36 to 41 ms (the delayed-ACK timer's tick);
// unhindered, under 1 ms with -race and two CPU hogs on two cores. 20 ms
// sits far from both.
func TestTLSRequestNotHeldByNagle(t *testing.T) {
	h1TLSPaths(t, func(t *testing.T) {
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
			if s.Connect == 0 {
				t.Fatalf("a request without a handshake: %+v", s)
			}
			fastest = min(fastest, s.Processing())
		}
		if fastest >= 20000 {
			t.Errorf("the fastest of 20 requests took %d µs after its handshake: the request waited for a delayed ACK", fastest)
		}
	})
}
