package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// h3ServerTLS is a TLS configuration for an HTTP/3 test server on
// loopback: a fresh self-signed certificate for localhost and 127.0.0.1,
// ALPN h3.
func h3ServerTLS(tb testing.TB) *tls.Config {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		NextProtos:   []string{"h3"},
	}
}

// startH3 serves handler (an h2Counter counts QUIC connections by client
// address, since gab opens each on its own UDP socket) over HTTP/3 on 127.0.0.1 (UDP) until the test ends;
// it returns the URL to use.
func startH3(t testing.TB, handler http.Handler) string {
	t.Helper()
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http3.Server{Handler: handler, TLSConfig: h3ServerTLS(t), QUICConfig: &quic.Config{MaxIncomingStreams: 1000}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(udp) // returns when closed
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		_ = udp.Close()
		<-done
	})
	return fmt.Sprintf("https://127.0.0.1:%d/", udp.LocalAddr().(*net.UDPAddr).Port)
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
	if got := len(h.inFlight); got != c || tr.opened.Load() != c { // by client address: a UDP socket per connection
		t.Errorf("%d connections at the server, %d opened by gab, want %d", got, tr.opened.Load(), c)
	}
	if h.maxFlight > streams {
		t.Errorf("%d requests in flight on one connection, --streams is %d", h.maxFlight, streams)
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
	if res.KeepAlive != n-c {
		t.Errorf("Keep-Alive requests %d, want %d (all but each connection's first)", res.KeepAlive, n-c)
	}
}
