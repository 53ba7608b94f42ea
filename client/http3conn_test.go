package client

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"gab/internal/h3test"
)

// QUIC connections that end or never start: a stateless reset, an idle
// timeout, a server that never answers, a failed version negotiation. A
// UDP proxy on 127.0.0.1 between gab and quic-go's server forwards, drops or
// redirects the packets.

// udpProxy forwards datagrams between gab and a server, through one
// upstream socket per client address.
type udpProxy struct {
	ln     *net.UDPConn
	target atomic.Pointer[net.UDPAddr]
	drop   atomic.Bool
	mu     sync.Mutex
	ups    map[string]*net.UDPConn
	wg     sync.WaitGroup
}

func startUDPProxy(tb testing.TB, target *net.UDPAddr) *udpProxy {
	tb.Helper()
	ln, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	p := &udpProxy{ln: ln, ups: map[string]*net.UDPConn{}}
	p.target.Store(target)
	p.wg.Add(1)
	go p.run()
	tb.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for _, up := range p.ups {
			_ = up.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *udpProxy) url() string {
	return fmt.Sprintf("https://127.0.0.1:%d/", p.ln.LocalAddr().(*net.UDPAddr).Port)
}

func (p *udpProxy) run() {
	defer p.wg.Done()
	buf := make([]byte, 2048)
	for {
		n, from, err := p.ln.ReadFromUDP(buf)
		if err != nil {
			return
		}
		if p.drop.Load() {
			continue
		}
		up := p.upstream(from)
		if up == nil {
			return
		}
		_, _ = up.WriteToUDP(buf[:n], p.target.Load())
	}
}

// upstream is the socket that carries from's datagrams to the server (and
// the server's back), nil once the proxy is closed.
func (p *udpProxy) upstream(from *net.UDPAddr) *net.UDPConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if up, ok := p.ups[from.String()]; ok {
		return up
	}
	up, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil
	}
	p.ups[from.String()] = up
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		buf := make([]byte, 2048)
		for {
			n, err := up.Read(buf)
			if err != nil {
				return
			}
			if !p.drop.Load() {
				_, _ = p.ln.WriteToUDP(buf[:n], from)
			}
		}
	}()
	return up
}

// serveH3On serves handler over HTTP/3 on tr until the test ends.
func serveH3On(tb testing.TB, tr *quic.Transport, handler http.Handler, conf *quic.Config) {
	h3test.ServeOn(tb, tr, handler, h3test.TLSConfig(tb), conf)
}

// A server that loses its connections' state (it restarted: another
// server with the same stateless reset key now gets the packets) answers
// with a stateless reset: the requests in flight are Receive failures,
// counted whatever -r says, and a new connection carries the rest.
func TestHTTP3StatelessReset(t *testing.T) {
	checkEngineLeaks(t)
	var key quic.StatelessResetKey
	copy(key[:], "a stateless reset key for tests")
	first, second := h3test.Transport(t, &key), h3test.Transport(t, &key)
	var proxy *udpProxy
	var served atomic.Int64
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if served.Add(1) == 10 {
			proxy.target.Store(second.Conn.LocalAddr().(*net.UDPAddr)) // the "restart"
		}
		_, _ = w.Write([]byte("hello"))
	})
	proxy = startUDPProxy(t, first.Conn.LocalAddr().(*net.UDPAddr)) // before the handlers can run
	serveH3On(t, first, handler, nil)
	serveH3On(t, second, handler, nil)
	const n = 40
	res, err, _ := runH2Within(t, h3TestConfig(t, proxy.url(), n, 1, 2), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != n || res.Failed.Receive == 0 || res.Failed.Total != res.Failed.Receive {
		t.Errorf("Complete %d Failed %+v, want %d with Receive failures only", res.Complete, res.Failed, n)
	}
	if e := res.FirstError["receive"]; e != "QUIC stateless reset from the server" {
		t.Errorf("first receive error %q", e)
	}
}

// A path that goes silent: past the idle timeout (the server's, 400 ms,
// is the connection's) the requests in flight are Receive failures; the
// new connection's handshake waits for the path to come back, and the run
// goes on.
func TestHTTP3IdleTimeout(t *testing.T) {
	tr := h3test.Transport(t, nil)
	var proxy *udpProxy
	var served atomic.Int64
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if served.Add(1) == 10 {
			proxy.drop.Store(true)
			time.AfterFunc(1500*time.Millisecond, func() { proxy.drop.Store(false) })
		}
		_, _ = w.Write([]byte("hello"))
	})
	proxy = startUDPProxy(t, tr.Conn.LocalAddr().(*net.UDPAddr)) // before the handler can run
	serveH3On(t, tr, handler, &quic.Config{MaxIdleTimeout: 400 * time.Millisecond})
	const n = 30
	res, err, _ := runH2Within(t, h3TestConfig(t, proxy.url(), n, 1, 1), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v %v retries %d elapsed %v", res.Failed, res.FirstError, res.Retries, res.Elapsed)
	if res.Complete != n || res.Failed.Receive != 1 || res.Failed.Total != 1 {
		t.Errorf("Complete %d Failed %+v (%v), want %d with the one request in flight a Receive failure", res.Complete, res.Failed, res.FirstError, n)
	}
	if e := res.FirstError["receive"]; e != "QUIC idle timeout: nothing received from the server" {
		t.Errorf("first receive error %q", e)
	}
}

// A server that never answers (every datagram dropped): the handshake
// cannot complete and nothing arrives, so -s ends the run as ab's does for
// a host that never answers (exit 119), on time.
func TestHTTP3SilentServer(t *testing.T) {
	cfg := h3TestConfig(t, udpServer(t, func([]byte) []byte { return nil }), 10, 2, 2)
	cfg.Timeout = 700 * time.Millisecond
	res, err, took := runH2Within(t, cfg, 20*time.Second)
	if err == nil || res.Ending != EndFatal || res.fatal.Exit != 119 || res.Complete != 0 {
		t.Fatalf("ending %v (%v), %d complete; want -s's timeout", res.Ending, err, res.Complete)
	}
	if took > 10*time.Second {
		t.Errorf("the run took %v", took)
	}
}

// A server that speaks no QUIC version gab offers answers each Initial
// with a Version Negotiation packet: every connect fails (Connect, issued
// again) and the 12th ends the run, as ab's connect failures do.
func TestHTTP3VersionNegotiationFails(t *testing.T) {
	cfg := h3TestConfig(t, udpServer(t, versionNegotiation), 10, 1, 1)
	res, err, _ := runH2Within(t, cfg, 30*time.Second)
	if err == nil || res.Ending != EndFatal || !strings.Contains(res.fatal.Message, "Test aborted after 10 failures") {
		t.Fatalf("ending %v (%v), want the abort after 10 failed connects", res.Ending, err)
	}
	if e := res.FirstError["connect"]; !strings.HasPrefix(e, "QUIC version negotiation failed") {
		t.Errorf("first connect error %q", e)
	}
}

// udpServer answers each datagram sent to it on 127.0.0.1 with answer's
// reply to it (nothing where that is nil) until the test ends, and returns
// its https:// URL.
func udpServer(tb testing.TB, answer func(p []byte) []byte) string {
	tb.Helper()
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	var done sync.WaitGroup
	done.Add(1)
	tb.Cleanup(func() {
		_ = udp.Close()
		done.Wait()
	})
	go func() {
		defer done.Done()
		buf := make([]byte, 2048)
		for {
			n, from, err := udp.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if reply := answer(buf[:n]); reply != nil {
				_, _ = udp.WriteToUDP(reply, from)
			}
		}
	}()
	return fmt.Sprintf("https://127.0.0.1:%d/", udp.LocalAddr().(*net.UDPAddr).Port)
}

// versionNegotiation is the Version Negotiation packet (RFC 9000 §17.2.1)
// that answers a client's long-header packet p, offering only a version
// nobody speaks; nil if p is not a long-header packet.
func versionNegotiation(p []byte) []byte {
	if len(p) < 7 || p[0]&0x80 == 0 {
		return nil
	}
	dlen := int(p[5])
	if len(p) < 6+dlen+1 {
		return nil
	}
	dcid := p[6 : 6+dlen]
	slen := int(p[6+dlen])
	if len(p) < 7+dlen+slen {
		return nil
	}
	scid := p[7+dlen : 7+dlen+slen]
	b := []byte{0xc0, 0, 0, 0, 0, byte(len(scid))}
	b = append(b, scid...)
	b = append(b, byte(len(dcid)))
	b = append(b, dcid...)
	return binary.BigEndian.AppendUint32(b, 0x5a6a7a8a)
}

// earlyDataRaceNote is why the 0-RTT tests do not run under the race
// detector: quic-go (v0.65.0) opens a stream of an early connection reading
// the peer's transport parameters while its handshake goroutine writes them,
// a race of its own that the detector reports. scripts/test.sh runs these
// tests again without it.
const earlyDataRaceNote = "quic-go's 0-RTT path races on the peer's transport parameters; scripts/test.sh runs this test without -race"

// --early-data: the connections that resume a session send their first
// requests as 0-RTT data, which a server that allows it accepts.
func TestHTTP3EarlyData(t *testing.T) {
	if raceEnabled {
		t.Skip(earlyDataRaceNote)
	}
	checkEngineLeaks(t)
	var hits atomic.Int64
	port := h3test.ServeTLS(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("early"))
	}), h3test.TLSConfig(t), &quic.Config{Allow0RTT: true})
	cfg := h3TestConfig(t, fmt.Sprintf("https://127.0.0.1:%d/", port), 40, 4, 1)
	cfg.TLS.Resume, cfg.TLS.EarlyData = true, true
	res, err, _ := runH2Within(t, cfg, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != 40 || res.Failed.Total != 0 || hits.Load() != 40 || res.QUIC == nil || res.QUIC.EarlyData == 0 {
		t.Errorf("complete %d failed %+v, server saw %d, QUIC %+v; want 40 with 0-RTT connections", res.Complete, res.Failed, hits.Load(), res.QUIC)
	}
	if res.TLS == nil || res.TLS.Protocol != "TLSv1.3" {
		t.Errorf("TLS %+v", res.TLS)
	}
}

// A server that rejects 0-RTT data (it restarted without 0-RTT, with the
// same session ticket and stateless reset keys): the requests sent in it
// were not processed and go again on connections that make a full
// handshake first. (The first connection's request in flight at the
// restart is a Receive failure: the new server resets the connection.)
func TestHTTP3EarlyDataRejected(t *testing.T) {
	if raceEnabled {
		t.Skip(earlyDataRaceNote)
	}
	checkEngineLeaks(t)
	conf := h3test.TLSConfig(t)
	conf.SetSessionTicketKeys([][32]byte{{1, 2, 3}})
	var key quic.StatelessResetKey
	copy(key[:], "the servers' stateless reset key")
	first, second := h3test.Transport(t, &key), h3test.Transport(t, &key)
	var proxy *udpProxy
	var hits atomic.Int64
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) == 1 {
			proxy.target.Store(second.Conn.LocalAddr().(*net.UDPAddr)) // the "restart", without 0-RTT
		}
		_, _ = w.Write([]byte("late"))
	})
	proxy = startUDPProxy(t, first.Conn.LocalAddr().(*net.UDPAddr)) // before the handlers can run
	h3test.ServeOn(t, first, handler, conf, &quic.Config{Allow0RTT: true})
	h3test.ServeOn(t, second, handler, conf.Clone(), nil)
	cfg := h3TestConfig(t, proxy.url(), 30, 3, 1)
	cfg.TLS.Resume, cfg.TLS.EarlyData = true, true
	res, err, _ := runH2Within(t, cfg, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != 30 || res.Failed.Total != res.Failed.Receive || res.Failed.Receive > 1 || res.Retries == 0 || res.QUIC == nil || res.QUIC.EarlyData != 0 {
		t.Errorf("complete %d failed %+v (%v) retries %d QUIC %+v; want 30, the rejected ones sent again", res.Complete, res.Failed, res.FirstError, res.Retries, res.QUIC)
	}
}

// A server whose TLS does not offer h3 in ALPN ends the run before any
// request, with a message that says so (exit 1).
func TestHTTP3RefusesServerWithoutH3(t *testing.T) {
	tr := h3test.Transport(t, nil)
	conf := h3test.TLSConfig(t)
	conf.NextProtos = []string{"hq-interop"}
	ln, err := tr.Listen(conf, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	res, err, _ := runH2Within(t, h3TestConfig(t, fmt.Sprintf("https://127.0.0.1:%d/", tr.Conn.LocalAddr().(*net.UDPAddr).Port), 5, 1, 1), 30*time.Second)
	if err == nil || res.Ending != EndFatal || res.fatal.Message != "gab: server does not speak HTTP/3 (ALPN: no h3)\n" || res.Complete != 0 {
		t.Fatalf("ending %v, err %v, complete %d", res.Ending, err, res.Complete)
	}
}
