package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"gab/internal/h3test"
	"gab/internal/testtool"
)

// caddyH3 is a real Caddy (Debian's) serving "hello" over HTTP/1.1, HTTP/2
// and HTTP/3 on localhost:port with a self-signed certificate, logging every
// request as JSON.
type caddyH3 struct {
	port int
	log  string
	cmd  *exec.Cmd
}

// startCaddyH3 starts Caddy in the foreground (stopped by PID at cleanup)
// and waits until it answers QUIC handshakes.
func startCaddyH3(t testing.TB) *caddyH3 {
	t.Helper()
	bin := testtool.Need(t, "caddy", "caddy")
	dir := t.TempDir()
	c := &caddyH3{port: freeUDPPort(t), log: filepath.Join(dir, "access.log")}
	// A certificate of the test's own: Caddy 2.6's internal CA, made at
	// start-up, can race with its storage cleaning and retry a minute later.
	cert, key := h3test.WriteCert(t, dir)
	conf := fmt.Sprintf(`{
	admin off
	auto_https disable_redirects
	skip_install_trust
	servers {
		protocols h1 h2 h3
	}
}
localhost:%d {
	tls %s %s
	log {
		output file %s
		format json
	}
	respond "hello" 200
}
`, c.port, cert, key, c.log)
	confPath := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "caddy.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	c.cmd = exec.Command(bin, "run", "--config", confPath, "--adapter", "caddyfile")
	c.cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	c.cmd.Stdout, c.cmd.Stderr = out, out
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stop)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		qc, err := quic.DialAddr(ctx, fmt.Sprintf("localhost:%d", c.port),
			&tls.Config{InsecureSkipVerify: true, ServerName: "localhost", NextProtos: []string{"h3"}}, nil)
		cancel()
		if err == nil {
			_ = qc.CloseWithError(0, "")
			return c
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "caddy.out"))
			t.Fatalf("caddy does not answer HTTP/3 on port %d: %v\n%s", c.port, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freeUDPPort is a port free for UDP and TCP on loopback now.
func freeUDPPort(t testing.TB) int {
	t.Helper()
	for range 20 {
		u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		port := u.LocalAddr().(*net.UDPAddr).Port
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		u.Close()
		if err == nil {
			l.Close()
			return port
		}
	}
	t.Fatal("no port free for both UDP and TCP")
	return 0
}

// stop ends Caddy by its PID (SIGTERM: a graceful stop that flushes the
// log) and waits.
func (c *caddyH3) stop() {
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM) // if it already exited, Wait reports it
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill() // did not stop in time
		<-done
	}
	c.cmd = nil
}

// requests reads the access log: the requests by protocol and status, and
// the client ports of the HTTP/3 ones (one per QUIC connection: gab opens
// each on its own UDP socket).
func (c *caddyH3) requests(t *testing.T) (counts map[string]int, ports map[string]int) {
	t.Helper()
	f, err := os.Open(c.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts, ports = map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var e struct {
			Request struct {
				Proto      string `json:"proto"`
				RemotePort string `json:"remote_port"`
			} `json:"request"`
			Status int `json:"status"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("access log line %q: %v", sc.Text(), err)
		}
		counts[fmt.Sprintf("%s %d", e.Request.Proto, e.Status)]++
		if e.Request.Proto == "HTTP/3.0" {
			ports[e.Request.RemotePort]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return counts, ports
}

// gab --http3 -n 10000 -c 4 --streams 8 https://localhost:PORT/ against
// Caddy: exactly n requests, all 200, in Caddy's access log, over exactly 4
// QUIC connections (4 client ports at Caddy, 4 opened by gab), never more
// than 8 requests in flight on one connection.
func TestHTTP3AgainstCaddy(t *testing.T) {
	checkEngineLeaks(t)
	c := startCaddyH3(t)
	n := 10000
	if raceEnabled {
		n = 2000
	}
	const conns, streams = 4, 8
	cfg := h3TestConfig(t, fmt.Sprintf("https://localhost:%d/", c.port), n, conns, streams)
	cfg.TLS.ServerName = "localhost" // Caddy picks its certificate by SNI
	res, tr, err := runH3(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != n || res.Failed.Total != 0 || res.Non2xx != 0 || res.BodyRead != int64(5*n) {
		t.Fatalf("complete %d failed %+v (%v) non-2xx %d body %d", res.Complete, res.Failed, res.FirstError, res.Non2xx, res.BodyRead)
	}
	if res.TLS == nil || res.TLS.ServerName != "localhost" || res.ServerSoftware != "Caddy" {
		t.Errorf("TLS %+v, server %q", res.TLS, res.ServerSoftware)
	}
	if tr.opened.Load() != conns || tr.mostStreams.Load() > streams {
		t.Errorf("gab opened %d connections, at most %d streams at once on one; want %d and at most %d", tr.opened.Load(), tr.mostStreams.Load(), conns, streams)
	}
	c.stop() // flushes the access log
	counts, ports := c.requests(t)
	if want := map[string]int{"HTTP/3.0 200": n}; fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("Caddy logged %v, want %v", counts, want)
	}
	if len(ports) != conns {
		t.Errorf("Caddy saw %d client ports (%v), want %d connections", len(ports), ports, conns)
	}
	var spread []string
	for p, k := range ports {
		spread = append(spread, fmt.Sprintf("%s:%d", p, k))
	}
	t.Logf("requests per connection: %s; most streams at once on one: %d", strings.Join(spread, " "), tr.mostStreams.Load())
}

// BenchmarkHTTP3Caddy is gab's --http3 engine against Caddy at -c 10
// --streams 10, b.N requests in one run (ns/op: wall time per request, CPU
// beside Caddy's). For where gab's CPU goes:
//
//	go test -run '^$' -bench HTTP3Caddy -benchtime 200000x -cpuprofile h3.prof ./client
//	go tool pprof -top client.test h3.prof
func BenchmarkHTTP3Caddy(b *testing.B) {
	c := startCaddyH3(b)
	cfg := h3TestConfig(b, fmt.Sprintf("https://localhost:%d/", c.port), max(b.N, 100), 10, 10)
	cfg.TLS.ServerName = "localhost"
	b.ResetTimer()
	res, _, err := runH3(b, cfg)
	if err != nil || res.Failed.Total != 0 {
		b.Fatalf("%v, failed %+v", err, res.Failed)
	}
}
