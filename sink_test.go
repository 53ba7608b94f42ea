package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gab/client"
)

func newTestSink(verbosity, every int) (s *sink, out, errb *bytes.Buffer) {
	out, errb = new(bytes.Buffer), new(bytes.Buffer)
	s = newSink(&syncWriter{w: out}, &syncWriter{w: errb}, verbosity, every)
	s.now = func() time.Time { return time.Unix(1795996874, 0) }
	return s, out, errb
}

func TestSinkCompletedInOrder(t *testing.T) {
	s, _, errb := newTestSink(0, 100)
	// Workers can report 300 before 100 and 200; each line comes once, in order.
	s.Completed(300)
	s.Completed(100)
	s.Completed(200)
	s.Completed(400)
	want := "Completed 100 requests\nCompleted 200 requests\nCompleted 300 requests\nCompleted 400 requests\n"
	if errb.String() != want {
		t.Errorf("progress lines %q, want %q", errb.String(), want)
	}
}

func TestSinkCompletedConcurrent(t *testing.T) {
	s, _, errb := newTestSink(0, 10)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 10 * (w + 1); i <= 1000; i += 80 {
				s.Completed(i)
			}
		}(w)
	}
	wg.Wait()
	var want strings.Builder
	for i := 10; i <= 1000; i += 10 {
		want.WriteString("Completed " + strconv.Itoa(i) + " requests\n")
	}
	if errb.String() != want.String() {
		t.Errorf("concurrent progress lines:\n%s", errb.String())
	}
}

func TestSinkNoProgress(t *testing.T) {
	s, out, errb := newTestSink(1, 0)
	s.Completed(100)
	s.HeaderReceived([]byte("HTTP/1.0 200 OK\r\n"))
	s.Status(500)
	if out.Len()+errb.Len() != 0 {
		t.Errorf("printed %q / %q with progress off and -v 1", out.String(), errb.String())
	}
}

func TestSinkVerboseLines(t *testing.T) {
	s, out, _ := newTestSink(2, 0)
	s.HeaderReceived([]byte("HTTP/1.1 200 OK\r\nX: a\x00hidden"))
	s.Status(404)
	s.Status(200) // -v 3 only
	s.SendFailed()
	s.SendTimedOut()
	want := "LOG: header received:\nHTTP/1.1 200 OK\r\nX: a\n" +
		"WARNING: Response code not 2xx (404)\n" +
		"Send request failed!\nSend request timed out!\n"
	if out.String() != want {
		t.Errorf("-v 2 stdout %q, want %q", out.String(), want)
	}
	s, out, _ = newTestSink(3, 0)
	s.Status(204)
	if out.String() != "LOG: Response code = 204\n" {
		t.Errorf("-v 3 stdout %q", out.String())
	}
}

func TestSinkErrors(t *testing.T) {
	s, out, errb := newTestSink(1, 0)
	s.ReceiveError(&client.FatalError{Message: "apr_socket_recv: Connection refused (111)\n", Exit: 111})
	s.TLSHandshakeFailed(&tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"})
	s.Notice("-k has no effect\nwith --cgi")
	want := "apr_socket_recv: Connection refused (111)\n" +
		"SSL handshake failed (1).\ntls: first record does not look like a TLS handshake\n" +
		"gab: -k has no effect with --cgi\n"
	if errb.String() != want || out.Len() != 0 {
		t.Errorf("stderr %q (stdout %q), want %q", errb.String(), out.String(), want)
	}
}

// testCert is a self-signed localhost certificate in the shape of the one the
// golden files were made with (RSA 2048, CN=localhost, 3 extensions, same dates).
func testCert(t *testing.T) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile("testdata/cli/localhost-cert.pem")
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

func TestCipherDescription(t *testing.T) {
	tests := []struct {
		id      uint16
		name    string
		bits    int
		alg     int
		version string
	}{
		{tls.TLS_AES_128_GCM_SHA256, "TLS_AES_128_GCM_SHA256", 128, 128, "TLSv1.3"},
		{tls.TLS_CHACHA20_POLY1305_SHA256, "TLS_CHACHA20_POLY1305_SHA256", 256, 256, "TLSv1.3"},
		{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, "ECDHE-RSA-AES256-GCM-SHA384", 256, 256, "TLSv1.2"},
		{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, "ECDHE-ECDSA-CHACHA20-POLY1305", 256, 256, "TLSv1.2"},
		{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256, "ECDHE-RSA-AES128-SHA256", 128, 128, "TLSv1.2"},
		{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, "ECDHE-RSA-AES128-SHA", 128, 128, "SSLv3"},
		{tls.TLS_RSA_WITH_AES_256_GCM_SHA384, "AES256-GCM-SHA384", 256, 256, "TLSv1.2"},
		{tls.TLS_RSA_WITH_AES_128_CBC_SHA, "AES128-SHA", 128, 128, "SSLv3"},
		{tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA, "DES-CBC3-SHA", 112, 168, "SSLv3"},
		{tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA, "ECDHE-RSA-DES-CBC3-SHA", 112, 168, "SSLv3"},
		{tls.TLS_RSA_WITH_RC4_128_SHA, "RC4-SHA", 128, 128, "SSLv3"},
		{tls.TLS_ECDHE_ECDSA_WITH_RC4_128_SHA, "ECDHE-ECDSA-RC4-SHA", 128, 128, "SSLv3"},
	}
	for _, tc := range tests {
		name, bits, alg, version := cipherDescription(tc.id)
		if name != tc.name || bits != tc.bits || alg != tc.alg || version != tc.version {
			t.Errorf("cipherDescription(%#04x) = %s %d %d %s, want %s %d %d %s", tc.id, name, bits, alg, version, tc.name, tc.bits, tc.alg, tc.version)
		}
	}
}

// A server's head can carry terminal commands (clear screen, an OSC 52
// clipboard write); -v 2 and -v 4 show them escaped, keeping tab, CR and LF.
func TestSinkHeaderEscapesControlBytes(t *testing.T) {
	for _, v := range []int{2, 4} {
		s, out, _ := newTestSink(v, 0)
		s.HeaderReceived([]byte("HTTP/1.1 200 OK\r\nServer: \x1b[2J\x1b]52;c;aGk=\x07x\x7f\tcafé\xc2\x9b\xff\r\n\r\n"))
		want := "LOG: header received:\nHTTP/1.1 200 OK\r\nServer: \\x1b[2J\\x1b]52;c;aGk=\\x07x\\x7f\tcafé\\xc2\\x9b\\xff\r\n\r\n\n"
		if out.String() != want {
			t.Errorf("-v %d stdout %q, want %q", v, out.String(), want)
		}
	}
	s, out, _ := newTestSink(3, 0)
	s.Status(200)
	if out.String() != "LOG: Response code = 200\n" {
		t.Errorf("-v 3 status line %q", out.String())
	}
}
