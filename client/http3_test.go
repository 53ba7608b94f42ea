package client

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"gab/internal/h3test"
	"github.com/quic-go/quic-go"
)

// startH3 serves handler over HTTP/3 until the test ends and returns the
// URL to use (an h2Counter counts QUIC connections by client address, since
// gab opens each on its own UDP socket).
func startH3(t testing.TB, handler http.Handler) string {
	t.Helper()
	return fmt.Sprintf("https://127.0.0.1:%d/", h3test.Serve(t, handler, &quic.Config{MaxIncomingStreams: 1000}))
}

// h3TestConfig is a hand-built --http3 configuration for rawURL.
func h3TestConfig(t testing.TB, rawURL string, n, c, streams int) Config {
	t.Helper()
	cfg := urlConfig(t, rawURL, n, c, HTTP3)
	cfg.Streams = streams
	cfg.KeepAlive = true
	return cfg
}

// runH3 runs cfg and returns the result and the run's transport.
func runH3(t testing.TB, cfg Config) (*Result, *h3Transport, error) {
	t.Helper()
	rn, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := rn.Run(ctx)
	return res, rn.tr.(*h3Transport), err
}

func TestHTTP3AgainstQuicGoServer(t *testing.T) {
	checkEngineLeaks(t)
	h := newH2Counter(2*time.Millisecond, []byte(strings.Repeat("x", 1000)))
	url := startH3(t, h)
	const n, c, streams = 600, 4, 8
	res, tr, err := runH3(t, h3TestConfig(t, url, n, c, streams))
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != n || res.Failed.Total != 0 || res.Non2xx != 0 {
		t.Fatalf("complete %d failed %+v non2xx %d, want %d, none", res.Complete, res.Failed, res.Non2xx, n)
	}
	if got := h.requests.Load(); got != n {
		t.Errorf("server saw %d requests, want %d", got, n)
	}
	got, most := h.flight()
	if got != c || tr.opened.Load() != c { // by client address: a UDP socket per connection
		t.Errorf("%d connections at the server, %d opened by gab, want %d", got, tr.opened.Load(), c)
	}
	if most > streams || tr.mostStreams.Load() > streams {
		t.Errorf("%d requests in flight on one connection at the server, %d streams open on one at gab; --streams is %d", most, tr.mostStreams.Load(), streams)
	}
	if res.BodyRead != n*1000 || res.DocLength != 1000 {
		t.Errorf("HTML transferred %d, document length %d, want %d and 1000", res.BodyRead, res.DocLength, n*1000)
	}
	if res.TotalRead <= res.BodyRead {
		t.Errorf("Total transferred %d is not above HTML transferred %d", res.TotalRead, res.BodyRead)
	}
	if res.Protocol != "h3" || res.TLS == nil || res.TLS.Protocol != "TLSv1.3" || res.ServerSoftware != "GoTest/1.0" {
		t.Errorf("protocol %q TLS %+v server %q", res.Protocol, res.TLS, res.ServerSoftware)
	}
	if q := res.QUIC; q == nil || q.Connections != c || q.PacketsSent == 0 || q.PacketsReceived == 0 || q.BytesReceived < uint64(res.TotalRead) {
		t.Errorf("QUIC counters %+v", q)
	}
	if res.KeepAlive != n-c {
		t.Errorf("Keep-Alive requests %d, want %d (all but each connection's first)", res.KeepAlive, n-c)
	}
}
