// Package h3test serves HTTP/3 on loopback for gab's tests: quic-go's
// server with a fresh self-signed certificate, stopped when the test ends.
package h3test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"gab/internal/selfsigned"
)

// TLSConfig is a server configuration with a fresh self-signed certificate
// for localhost, 127.0.0.1 and ::1, offering h3 in ALPN.
func TLSConfig(tb testing.TB) *tls.Config {
	tb.Helper()
	return &tls.Config{
		Certificates: []tls.Certificate{certificate(tb)},
		NextProtos:   []string{"h3"},
	}
}

// WriteCert writes a fresh self-signed certificate for localhost,
// 127.0.0.1 and ::1 and its key as PEM files in dir, for a real server.
func WriteCert(tb testing.TB, dir string) (certFile, keyFile string) {
	tb.Helper()
	cert := certificate(tb)
	der := cert.Certificate[0]
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		tb.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		tb.Fatal(err)
	}
	return certFile, keyFile
}

// certificate is a fresh self-signed certificate (selfsigned.Cert).
func certificate(tb testing.TB) tls.Certificate {
	tb.Helper()
	c, err := selfsigned.Cert()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// Serve serves handler over HTTP/3 on 127.0.0.1 (UDP) until the test ends
// and returns the port. conf may be nil (quic-go's defaults).
func Serve(tb testing.TB, handler http.Handler, conf *quic.Config) int {
	tb.Helper()
	return ServeTLS(tb, handler, TLSConfig(tb), conf)
}

// ServeTLS is Serve with the server's TLS configuration.
func ServeTLS(tb testing.TB, handler http.Handler, tlsConf *tls.Config, conf *quic.Config) int {
	tb.Helper()
	tr := Transport(tb, nil)
	ServeOn(tb, tr, handler, tlsConf, conf)
	return tr.Conn.LocalAddr().(*net.UDPAddr).Port
}

// Transport is a QUIC transport on a UDP socket of 127.0.0.1, closed when
// the test ends, with the given stateless reset key (nil: none).
func Transport(tb testing.TB, key *quic.StatelessResetKey) *quic.Transport {
	tb.Helper()
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	tr := &quic.Transport{Conn: udp, StatelessResetKey: key}
	tb.Cleanup(func() {
		_ = tr.Close()
		_ = udp.Close()
	})
	return tr
}

// ServeOn serves handler over HTTP/3 on tr until the test ends.
func ServeOn(tb testing.TB, tr *quic.Transport, handler http.Handler, tlsConf *tls.Config, conf *quic.Config) {
	tb.Helper()
	ln, err := tr.ListenEarly(http3.ConfigureTLSConfig(tlsConf), conf)
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http3.Server{Handler: handler}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.ServeListener(ln) // returns when closed
	}()
	tb.Cleanup(func() {
		_ = srv.Close()
		_ = ln.Close()
		<-done
	})
}
