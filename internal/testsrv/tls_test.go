package testsrv

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"strings"
	"testing"
)

func TestNginxTLSServesWithRSA2048Certificate(t *testing.T) {
	s, err := NewNginxTLS()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := tls.Dial("tcp", s.Addr(), &tls.Config{InsecureSkipVerify: true, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET /f100.txt HTTP/1.0\r\nHost: localhost\r\n\r\n"))
	resp, _ := io.ReadAll(c)
	if len(resp) != 333 || !strings.HasSuffix(string(resp), strings.Repeat("a", 100)) {
		t.Fatalf("response %d bytes: %q", len(resp), resp)
	}
	cert := c.ConnectionState().PeerCertificates[0]
	if cert.Subject.CommonName != "localhost" || cert.PublicKey.(interface{ Size() int }).Size() != 256 {
		t.Fatalf("certificate %v", cert.Subject)
	}
	if n := len(cert.Extensions); n != 3 {
		t.Fatalf("%d extensions, want 3", n)
	}
	path, err := WriteCertificateAndKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.LoadX509KeyPair(path, path); err != nil {
		t.Fatalf("-E file does not load: %v", err)
	}
	_, pemBytes, _ := Certificate()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatal("PEM does not parse")
	}
}

func TestNginxTotalsMatchGoldens(t *testing.T) {
	s, err := NewNginx()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Per-response byte counts behind the goldens' "Total transferred" lines.
	cases := []struct {
		req  string
		want int
	}{
		{"GET /f100.txt HTTP/1.0\r\n\r\n", 333},                          // plain-100b: 33300 / 100
		{"GET /f10k.txt HTTP/1.0\r\n\r\n", 10477},                        // plain-10k-n1000: 10477000 / 1000
		{"GET /f1m.txt HTTP/1.0\r\n\r\n", 1048817},                       // plain-1m: 209763400 / 200
		{"HEAD /f100.txt HTTP/1.0\r\n\r\n", 233},                         // head: 11650 / 50
		{"GET /notfound HTTP/1.0\r\n\r\n", 303},                          // non2xx-404: 15150 / 50
		{"POST /post HTTP/1.0\r\nContent-length: 7\r\n\r\na=1&b=2", 149}, // post-form: 7450 / 50
	}
	for _, tc := range cases {
		if got := len(readAll(t, s.Addr(), tc.req, 2e9)); got != tc.want {
			t.Errorf("%q: %d bytes, want %d", tc.req, got, tc.want)
		}
	}
}
