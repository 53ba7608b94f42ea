package abprint

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"
)

// testCert is a self-signed localhost certificate in the shape of the one the
// golden files were made with (RSA 2048, CN=localhost, 3 extensions, same dates).
func testCert(t *testing.T) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile("../../testdata/cli/localhost-cert.pem")
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatal("testdata/cli/localhost-cert.pem: no PEM block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestSinkTLSHandshake(t *testing.T) {
	cert := testCert(t)
	cs := &tls.ConnectionState{Version: tls.VersionTLS13, CipherSuite: tls.TLS_AES_256_GCM_SHA384, PeerCertificates: []*x509.Certificate{cert}}
	s, out, errb := newTestSink(2, 0)
	s.TLSHandshake(cs)
	wantOut := "Peer certificate\nCertificate version: 3\n" +
		"Valid from: Nov 29 23:57:33 2026 GMT\nValid to  : Dec 29 23:57:33 2026 GMT\n" +
		"Public key is 2048 bits\nThe issuer name is /CN=localhost\nThe subject name is /CN=localhost\nExtension Count: 3\n"
	if out.String() != wantOut {
		t.Errorf("certificate dump:\n%s\nwant:\n%s", out.String(), wantOut)
	}
	wantErr := "\nTransport Protocol      :TLSv1.3\nCipher Suite Protocol   :TLSv1.3\n" +
		"Cipher Suite Name       :TLS_AES_256_GCM_SHA384\nCipher Suite Cipher Bits:256 (256)\n" +
		"SSL-Session:\n    Protocol  : TLSv1.3\n    Cipher    : TLS_AES_256_GCM_SHA384\n" +
		"    Session-ID: \n    Session-ID-ctx: \n    Resumption PSK: \n    PSK identity: None\n" +
		"    PSK identity hint: None\n    SRP username: None\n    Start Time: 1795996874\n" +
		"    Timeout   : 7200 (sec)\n    Verify return code: 18 (self-signed certificate)\n" +
		"    Extended master secret: no\n    Max Early Data: 0\n"
	if errb.String() != wantErr {
		t.Errorf("connection summary:\n%q\nwant:\n%q", errb.String(), wantErr)
	}
	s, out, errb = newTestSink(1, 0)
	s.TLSHandshake(cs)
	if out.Len()+errb.Len() != 0 {
		t.Errorf("-v 1 printed TLS details")
	}
}

// A certificate's names are the server's bytes: -v 2 writes every byte a
// terminal could take for a command (here a screen clear and an OSC 52
// clipboard write) as \xNN, the rest as it is.
func TestSinkTLSHandshakeEscapesNames(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	name := pkix.Name{CommonName: "evil\x1b[2J", Organization: []string{"\x1b]52;c;cHduZWQ=\x07 Ünïcode"}}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: name, Issuer: name,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	s, out, _ := newTestSink(2, 0)
	s.TLSHandshake(&tls.ConnectionState{Version: tls.VersionTLS13, CipherSuite: tls.TLS_AES_128_GCM_SHA256, PeerCertificates: []*x509.Certificate{cert}})
	want := `/O=\x1b]52;c;cHduZWQ=\x07 Ünïcode/CN=evil\x1b[2J`
	for _, line := range []string{"The issuer name is " + want + "\n", "The subject name is " + want + "\n"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("certificate dump:\n%q\nwant the line %q", out.String(), line)
		}
	}
	if i := strings.IndexFunc(out.String(), func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }); i >= 0 {
		t.Errorf("a control byte reached the dump at %d: %q", i, out.String())
	}
}
