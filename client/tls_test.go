package client

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tlsTestServer is an HTTPS server on loopback answering 100 bytes, recording the SNI it saw.
type tlsTestServer struct {
	*httptest.Server
	mu  sync.Mutex
	sni []string
}

func newTLSTestServer(t *testing.T, tweak func(*tls.Config)) *tlsTestServer {
	s := &tlsTestServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("s", 100))
	}))
	s.Server.TLS = &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		s.mu.Lock()
		s.sni = append(s.sni, h.ServerName)
		s.mu.Unlock()
		return nil, nil
	}}
	s.Server.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake failures are expected
	if tweak != nil {
		tweak(s.Server.TLS)
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func (s *tlsTestServer) port() int { return s.Listener.Addr().(*net.TCPAddr).Port }

func (s *tlsTestServer) snis() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sni...)
}

func tlsConfigFor(port, n int, ka bool, o TLSOptions) Config {
	cfg := h1Config(port, n, 1, ka)
	cfg.Target.TLS = true
	cfg.TLS = o
	return cfg
}

func TestTLSRunFillsInfo(t *testing.T) {
	h1TLSPaths(t, func(t *testing.T) {
		checkGoroutines(t)
		srv := newTLSTestServer(t, nil)
		ev := &h1Events{}
		cfg := tlsConfigFor(srv.port(), 5, false, TLSOptions{ServerName: "example.test"})
		cfg.Events, cfg.Verbosity = ev, 2
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		wantCounts(t, res, 5, Failures{})
		if res.DocLength != 100 || res.BodyRead != 500 {
			t.Errorf("doclen %d body %d", res.DocLength, res.BodyRead)
		}
		info := res.TLS
		if info == nil {
			t.Fatal("no TLS info")
		}
		wantBits := PublicKeyBits(srv.Certificate().PublicKey)
		if info.Protocol != "TLSv1.3" || !strings.HasPrefix(info.Cipher, "TLS_") || info.PeerKeyBits != wantBits || wantBits == 0 ||
			(info.CipherBits != 128 && info.CipherBits != 256) || info.TempKey != "X25519 253 bits" || info.ServerName != "example.test" {
			t.Errorf("TLS info %+v (peer key bits want %d)", *info, wantBits)
		}
		if got := srv.snis(); len(got) != 5 || got[0] != "example.test" {
			t.Errorf("server saw SNI %q", got)
		}
		if ev.tlsOK.Load() != 5 {
			t.Errorf("handshake events %d", ev.tlsOK.Load())
		}
	})
}

func TestTLSKeepAliveHandshakesOnce(t *testing.T) {
	h1TLSPaths(t, func(t *testing.T) {
		checkGoroutines(t)
		srv := newTLSTestServer(t, nil)
		res, err := h1Run(t, tlsConfigFor(srv.port(), 20, true, TLSOptions{ServerName: "127.0.0.1"}))
		if err != nil {
			t.Fatal(err)
		}
		wantCounts(t, res, 20, Failures{})
		if res.KeepAlive != 20 || len(srv.snis()) != 1 {
			t.Errorf("keepalive %d handshakes %d", res.KeepAlive, len(srv.snis()))
		}
		if got := srv.snis()[0]; got != "" || res.TLS.ServerName != "" {
			t.Errorf("an IP address must not be sent as SNI: %q %q", got, res.TLS.ServerName)
		}
	})
}

func TestTLS12WithCipher(t *testing.T) {
	h1TLSPaths(t, func(t *testing.T) {
		checkGoroutines(t)
		srv := newTLSTestServer(t, nil)
		res, err := h1Run(t, tlsConfigFor(srv.port(), 2, false,
			TLSOptions{Protocol: "TLS1.2", Ciphers: "ECDHE-RSA-AES256-GCM-SHA384", ServerName: "localhost", NoSNI: true}))
		if err != nil {
			t.Fatal(err)
		}
		info := res.TLS
		if info.Protocol != "TLSv1.2" || info.Cipher != "ECDHE-RSA-AES256-GCM-SHA384" || info.CipherBits != 256 || info.ServerName != "" {
			t.Errorf("TLS info %+v", *info)
		}
		if got := srv.snis(); got[0] != "" {
			t.Errorf("-I must send no SNI, server saw %q", got[0])
		}
	})
}

// A handshake failure (https against a plain port) is a connect failure, retried
// until ab's abort, each one reported.
func TestTLSHandshakeFailure(t *testing.T) {
	h1TLSPaths(t, func(t *testing.T) {
		checkGoroutines(t)
		srv := newFaultServer(t, func(fc *faultConn) {
			fc.write("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
		})
		ev := &h1Events{}
		cfg := tlsConfigFor(srv.port(), 2, false, TLSOptions{})
		cfg.Events = ev
		res, err := h1Run(t, cfg)
		wantHandshakeAbort(t, res, err, 1, ev, srv)
	})
}

func TestTLSVerify(t *testing.T) {
	h1TLSPaths(t, func(t *testing.T) {
		checkGoroutines(t)
		srv := newTLSTestServer(t, nil)
		cfg := tlsConfigFor(srv.port(), 1, false, TLSOptions{Verify: true, ServerName: "example.com"})
		ev := &h1Events{}
		cfg.Events = ev
		if _, err := h1Run(t, cfg); err == nil || ev.tlsFailed.Load() == 0 {
			t.Fatalf("an unknown authority must fail with --verify-tls: err %v, failures %d", err, ev.tlsFailed.Load())
		}
		// ab's default: never verify.
		cfg = tlsConfigFor(srv.port(), 1, false, TLSOptions{ServerName: "example.com"})
		if _, err := h1Run(t, cfg); err != nil {
			t.Fatal(err)
		}
	})
}

func TestBuildTLSConfig(t *testing.T) {
	conf, err := buildTLSConfig(&Config{TLS: TLSOptions{ServerName: "www.example.com:8443"}})
	if err != nil || conf.ServerName != "www.example.com:8443" || !conf.InsecureSkipVerify ||
		conf.MinVersion != tls.VersionTLS10 || conf.MaxVersion != tls.VersionTLS13 {
		t.Fatalf("defaults: %+v %v", conf, err)
	}
	for p, want := range map[string][2]uint16{
		"TLS1": {tls.VersionTLS10, tls.VersionTLS10}, "TLS1.1": {tls.VersionTLS11, tls.VersionTLS11},
		"TLS1.2": {tls.VersionTLS12, tls.VersionTLS12}, "TLS1.3": {tls.VersionTLS13, tls.VersionTLS13},
		"ALL": {tls.VersionTLS10, tls.VersionTLS13}, "": {tls.VersionTLS10, tls.VersionTLS13},
	} {
		conf, err := buildTLSConfig(&Config{TLS: TLSOptions{Protocol: p}})
		if err != nil || conf.MinVersion != want[0] || conf.MaxVersion != want[1] {
			t.Errorf("-f %q: %x-%x %v", p, conf.MinVersion, conf.MaxVersion, err)
		}
	}
	if conf.ClientSessionCache != nil {
		t.Error("ab makes a full handshake on each connection: no session cache by default")
	}
	if conf, _ := buildTLSConfig(&Config{TLS: TLSOptions{Resume: true}}); conf.ClientSessionCache == nil ||
		withALPN(conf, "h2").ClientSessionCache != conf.ClientSessionCache {
		t.Error("--tls-resume: no session cache shared by the HTTP/1 and HTTP/2 configurations")
	}
	for _, o := range []TLSOptions{{ServerName: "::1"}, {ServerName: "[::1]"}, {ServerName: "10.0.0.1"}, {ServerName: "a.example", NoSNI: true}} {
		if conf, _ := buildTLSConfig(&Config{TLS: o}); conf.ServerName != "" {
			t.Errorf("%+v: SNI %q", o, conf.ServerName)
		}
	}
}

func TestCipherList(t *testing.T) {
	_, err := buildTLSConfig(&Config{TLS: TLSOptions{Ciphers: "BOGUS"}})
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Exit != 1 || !strings.HasPrefix(fe.Message, "error setting ciphersuite list [BOGUS]\n") ||
		strings.Count(fe.Message, "\n") != 2 {
		t.Fatalf("err = %#v", err)
	}
	ids := func(list string, tls13 bool) []string {
		got, err := parseCipherList(list, tls13)
		if err != nil {
			return []string{"error"}
		}
		var names []string
		for _, id := range got {
			names = append(names, CipherSuite(id).Name)
		}
		return names
	}
	for list, want := range map[string]string{
		"ECDHE-RSA-AES128-GCM-SHA256":                 "ECDHE-RSA-AES128-GCM-SHA256",
		"BOGUS:AES256-SHA":                            "AES256-SHA",
		"ECDHE+AESGCM:!ECDSA":                         "ECDHE-RSA-AES256-GCM-SHA384 ECDHE-RSA-AES128-GCM-SHA256",
		"kRSA+AESGCM":                                 "AES256-GCM-SHA384 AES128-GCM-SHA256",
		"HIGH:!aNULL:!kRSA:!ECDSA:!SHA1:!SHA256":      "ECDHE-RSA-AES256-GCM-SHA384 ECDHE-RSA-CHACHA20-POLY1305",
		"TLS_AES_128_GCM_SHA256":                      "",
		"TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES256-SHA": "ECDHE-RSA-AES256-SHA",
		"!ALL": "error",
	} {
		if got := strings.Join(ids(list, false), " "); got != want {
			t.Errorf("%q: %q, want %q", list, got, want)
		}
	}
	if got := ids("TLS_AES_256_GCM_SHA384", true); got != nil {
		t.Errorf("TLS 1.3 list: %v", got)
	}
	if got := ids("ECDHE-RSA-AES256-SHA", true); len(got) != 1 || got[0] != "error" {
		t.Errorf("-f TLS1.3 with a TLS 1.2 name must fail: %v", got)
	}
}

func TestTempKeyAndNames(t *testing.T) {
	for id, want := range map[tls.CurveID]string{tls.X25519: "X25519 253 bits", tls.CurveP256: "ECDH prime256v1 256 bits",
		tls.CurveP384: "ECDH secp384r1 384 bits", tls.CurveP521: "ECDH secp521r1 521 bits", 0: ""} {
		if got := tempKeyName(id); got != want {
			t.Errorf("%v: %q", id, got)
		}
	}
	for v, want := range map[uint16]string{tls.VersionTLS10: "TLSv1", tls.VersionTLS11: "TLSv1.1", tls.VersionTLS12: "TLSv1.2", tls.VersionTLS13: "TLSv1.3"} {
		if got := TLSVersionName(v); got != want {
			t.Errorf("%x: %q", v, got)
		}
	}
	// Every suite Go offers for TLS 1.0–1.2 has an OpenSSL name in the table.
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if info := CipherSuite(s.ID); info.Bits == 0 || info.AlgBits < info.Bits || info.Version == "" {
			t.Errorf("%s has no OpenSSL description (%+v)", s.Name, info)
		}
	}
}

// writePEM writes blocks to a file in dir and returns its path.
func writePEM(t testing.TB, dir, name string, blocks ...*pem.Block) string {
	var b []byte
	for _, blk := range blocks {
		b = append(b, pem.EncodeToMemory(blk)...)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func selfSigned(t testing.TB) (*pem.Block, *pem.Block, *pem.Block) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gab client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	other, _ := rsa.GenerateKey(rand.Reader, 1024)
	otherDER, _ := x509.MarshalPKCS8PrivateKey(other)
	return &pem.Block{Type: "CERTIFICATE", Bytes: der}, &pem.Block{Type: "PRIVATE KEY", Bytes: keyDER},
		&pem.Block{Type: "PRIVATE KEY", Bytes: otherDER}
}

func TestClientCertificate(t *testing.T) {
	checkGoroutines(t)
	dir := t.TempDir()
	cert, key, otherKey := selfSigned(t)
	good := writePEM(t, dir, "good.pem", cert, key)
	for file, want := range map[string]string{
		filepath.Join(dir, "missing.pem"):                "unable to get certificate from '" + filepath.Join(dir, "missing.pem") + "'\n",
		writePEM(t, dir, "keyonly.pem", key):             "unable to get certificate from '" + filepath.Join(dir, "keyonly.pem") + "'\n",
		writePEM(t, dir, "certonly.pem", cert):           "unable to get private key from '" + filepath.Join(dir, "certonly.pem") + "'\n",
		writePEM(t, dir, "mismatch.pem", cert, otherKey): "private key does not match the certificate public key in " + filepath.Join(dir, "mismatch.pem") + "\n",
	} {
		_, err := buildTLSConfig(&Config{TLS: TLSOptions{CertFile: file}})
		var fe *FatalError
		if !errors.As(err, &fe) || fe.Exit != 1 || fe.Message != want {
			t.Errorf("%s: %#v", filepath.Base(file), err)
		}
	}
	// The certificate is presented to a server that demands one.
	h1TLSPaths(t, func(t *testing.T) {
		var presented atomic.Int64
		srv := newTLSTestServer(t, func(c *tls.Config) {
			c.ClientAuth = tls.RequireAnyClientCert
			c.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
				if len(raw) == 1 && bytes.Equal(raw[0], cert.Bytes) {
					presented.Add(1)
				}
				return nil
			}
		})
		res, err := h1Run(t, tlsConfigFor(srv.port(), 2, false, TLSOptions{CertFile: good}))
		if err != nil {
			t.Fatal(err)
		}
		wantCounts(t, res, 2, Failures{})
		if presented.Load() != 2 {
			t.Errorf("the server saw the -E certificate on %d of 2 connections", presented.Load())
		}
	})
}

func TestCipherSuiteInOpenSSLTerms(t *testing.T) {
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
		got := CipherSuite(tc.id)
		if got.Name != tc.name || got.Bits != tc.bits || got.AlgBits != tc.alg || got.Version != tc.version {
			t.Errorf("CipherSuite(%#04x) = %+v, want %s %d %d %s", tc.id, got, tc.name, tc.bits, tc.alg, tc.version)
		}
	}
}

// newTLSFaultServer is a faultServer behind crypto/tls (tlsServerConfig's
// certificate); tweak, when not nil, adjusts the server's configuration.
func newTLSFaultServer(tb testing.TB, tweak func(*tls.Config), script func(fc *faultConn)) *faultServer {
	tb.Helper()
	conf := tlsServerConfig(tb)
	if tweak != nil {
		tweak(conf)
	}
	return newFaultServerTLS(tb, conf, script)
}

// tlsMaxVersion is a newTLSFaultServer tweak capping the protocol at v.
func tlsMaxVersion(v uint16) func(*tls.Config) {
	return func(c *tls.Config) { c.MaxVersion = v }
}

// resumptions answers each connection's one request with respond100(false)
// and records, per connection, whether its handshake resumed a session.
type resumptions struct {
	mu      sync.Mutex
	resumed []bool
}

func (rs *resumptions) script(fc *faultConn) {
	if _, ok := fc.readRequest(); !ok {
		return
	}
	did := fc.Conn.(*tls.Conn).ConnectionState().DidResume
	rs.mu.Lock()
	rs.resumed = append(rs.resumed, did)
	rs.mu.Unlock()
	fc.write(respond100(false))
}

// count returns the connections seen and how many of them resumed.
func (rs *resumptions) count() (conns, resumed int) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, r := range rs.resumed {
		if r {
			resumed++
		}
	}
	return len(rs.resumed), resumed
}

// ab makes a full handshake on every connection; --tls-resume offers the
// session of an earlier one, on both paths and with TLS 1.3 tickets as with
// TLS 1.2 sessions. With -c 2 the first two connections may both be full.
func TestTLSResume(t *testing.T) {
	for _, v := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		for _, resume := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/resume=%v", TLSVersionName(v), resume), func(t *testing.T) {
				h1TLSPaths(t, func(t *testing.T) {
					checkGoroutines(t)
					rs := &resumptions{}
					srv := newTLSFaultServer(t, tlsMaxVersion(v), rs.script)
					cfg := tlsConfigFor(srv.port(), 20, false, TLSOptions{Resume: resume})
					cfg.Concurrency = 2
					res, err := h1Run(t, cfg)
					if err != nil {
						t.Fatal(err)
					}
					wantCounts(t, res, 20, Failures{})
					if res.TLS == nil || res.TLS.Protocol != TLSVersionName(v) {
						t.Errorf("TLS info %+v", res.TLS)
					}
					conns, resumed := rs.count()
					switch {
					case conns != 20:
						t.Errorf("%d connections, want 20", conns)
					case !resume && resumed != 0:
						t.Errorf("%d connections resumed without --tls-resume (ab never resumes)", resumed)
					case resume && resumed < 18:
						t.Errorf("only %d of 20 connections resumed with --tls-resume", resumed)
					}
				})
			})
		}
	}
}
