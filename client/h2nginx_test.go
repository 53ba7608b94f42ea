package client

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gab/internal/testtool"
)

// h2Nginx is a real nginx started by a test with an h2c listener and an
// https + http2 listener, logging $server_protocol for every request.
type h2Nginx struct {
	*testtool.Nginx
	h2cPort, hPort int
}

// writeSelfSigned writes a fresh CN=localhost certificate and key.
func writeSelfSigned(t *testing.T, certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startH2Nginx starts nginx in the foreground as a single process (stopped by
// PID at cleanup). keepaliveRequests caps the requests per connection (nginx
// then sends GOAWAY), 0 for nginx's default.
func startH2Nginx(t *testing.T, keepaliveRequests int) *h2Nginx {
	t.Helper()
	certs := t.TempDir()
	writeSelfSigned(t, filepath.Join(certs, "cert.pem"), filepath.Join(certs, "key.pem"))
	ka := ""
	if keepaliveRequests > 0 {
		ka = "keepalive_requests " + strconv.Itoa(keepaliveRequests) + ";"
	}
	ng := testtool.StartNginx(t, map[string][]byte{"f100.txt": []byte(strings.Repeat("a", 100))}, 2, `    log_format proto '$server_port $server_protocol $status $body_bytes_sent';
    access_log %[1]s/logs/access.log proto;
    sendfile off;
    `+ka+`
    server {
        listen 127.0.0.1:%[2]d http2;
        listen 127.0.0.1:%[3]d ssl http2;
        ssl_certificate `+strings.ReplaceAll(certs, "%", "%%")+`/cert.pem;
        ssl_certificate_key `+strings.ReplaceAll(certs, "%", "%%")+`/key.pem;
        server_name localhost;
        root %[1]s/www;
    }`)
	return &h2Nginx{Nginx: ng, h2cPort: ng.Ports[0], hPort: ng.Ports[1]}
}

// accessLog counts the logged requests on port by "protocol status".
func (n *h2Nginx) accessLog(t *testing.T, port int) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(n.Dir, "logs", "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	prefix := strconv.Itoa(port) + " "
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			fields := strings.Fields(line)
			if len(fields) >= 2 {
				counts[fields[0]+" "+fields[1]]++
			}
		}
	}
	return counts
}

func TestHTTP2AgainstNginx(t *testing.T) {
	for _, tc := range []struct {
		name          string
		tls           bool
		n, c, streams int
		keepalive     int
		wantProto     string
	}{
		{name: "h2c", n: 2000, c: 10, streams: 10, wantProto: "h2c"},
		{name: "h2", tls: true, n: 2000, c: 10, streams: 10, wantProto: "h2"},
		// nginx sends GOAWAY after 50 requests on a connection: replaced, nothing lost.
		{name: "h2c GOAWAY every 50", n: 1000, c: 4, streams: 8, keepalive: 50, wantProto: "h2c"},
		{name: "h2 GOAWAY every 50", tls: true, n: 1000, c: 4, streams: 8, keepalive: 50, wantProto: "h2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ng := startH2Nginx(t, tc.keepalive)
			port, scheme := ng.h2cPort, "http"
			if tc.tls {
				port, scheme = ng.hPort, "https"
			}
			cfg := h2TestConfig(t, scheme+"://127.0.0.1:"+strconv.Itoa(port)+"/f100.txt", tc.n, tc.c, tc.streams)
			res, err := runH2(t, cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			ng.Stop() // the access log is complete
			log := ng.accessLog(t, port)
			if got := log["HTTP/2.0 200"]; got != tc.n || len(log) != 1 {
				t.Errorf("nginx logged %v, want %d × \"HTTP/2.0 200\" and nothing else", log, tc.n)
			}
			if res.Complete != tc.n || res.Failed.Total != 0 || res.Non2xx != 0 || res.WriteErrors != 0 {
				t.Errorf("Complete %d Failed %+v Non2xx %d WriteErrors %d, want %d/0/0/0", res.Complete, res.Failed, res.Non2xx, res.WriteErrors, tc.n)
			}
			if res.ServerSoftware != "nginx/1.22.1" && !strings.HasPrefix(res.ServerSoftware, "nginx") {
				t.Errorf("ServerSoftware %q, want nginx's", res.ServerSoftware)
			}
			if res.DocLength != 100 || res.BodyRead != int64(100*tc.n) {
				t.Errorf("DocLength %d BodyRead %d, want 100 and %d", res.DocLength, res.BodyRead, 100*tc.n)
			}
			if res.Protocol != tc.wantProto {
				t.Errorf("Protocol %q, want %q", res.Protocol, tc.wantProto)
			}
		})
	}
}
