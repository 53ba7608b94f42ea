package selfsigned

import (
	"crypto/x509"
	"testing"
)

// The certificate parses and names every loopback name a local server is
// reached by.
func TestCertNamesLoopback(t *testing.T) {
	c, err := Cert()
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if err := leaf.VerifyHostname(host); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
}
