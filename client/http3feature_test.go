package client

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"gab/internal/h3test"
)

// gab's features over --http3: ab's exact counters, request bodies and
// header fields, --rate, --request-timeout, --warmup, -v 2, --tls-resume,
// --verify-tls.

// ab's counters are exact: Total transferred is every byte of the
// response streams (HEADERS and DATA frames, frame headers included), HTML
// transferred the DATA payload, and the request's frames are what is sent.
func TestHTTP3ExactCounters(t *testing.T) {
	resp := h3OK(strings.Repeat("b", 321))
	s := startH3Hostile(t, h3Script{stream: func(hc *h3HostileConn, str *quic.Stream, _ int64) { hc.respond(str, resp) }})
	const n = 50
	cfg := h3Cfg(t, s, n, 2, 3)
	res, _, err := runH3(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := mustH3Request(t, &cfg)
	if res.Complete != n || res.Failed.Total != 0 || res.TotalRead != int64(n*len(resp)) || res.BodyRead != n*321 || res.TotalSent != int64(n*len(req)) {
		t.Errorf("complete %d failed %+v read %d body %d sent %d; want %d, none, %d, %d, %d",
			res.Complete, res.Failed, res.TotalRead, res.BodyRead, res.TotalSent, n, n*len(resp), n*321, n*len(req))
	}
	if res.StatusCounts[200] != n || res.DocLength != 321 {
		t.Errorf("statuses %v, document length %d", res.StatusCounts, res.DocLength)
	}
}

// A POST's body and the request's header fields (-H, -C, -A, -T) arrive as
// sent, and the server's answer is read whatever its size.
func TestHTTP3RequestHeadersAndBody(t *testing.T) {
	h := newH2Counter(0, []byte(strings.Repeat("r", 70000)))
	cfg := h3TestConfig(t, startH3(t, h)+"path?q=1", 6, 1, 2)
	cfg.Spec.Method = "POST"
	cfg.Spec.Body, cfg.Spec.HasBody = []byte("a=1&b=2"), true
	cfg.Spec.ContentType = "application/x-www-form-urlencoded"
	cfg.Spec.Headers = []string{"X-Test: yes", "Connection: close"}
	cfg.Spec.Cookie, cfg.Spec.HasCookie = "k=v", true
	cfg.Spec.Auth = []string{"Authorization: Basic dTpw"}
	res, _, err := runH3(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != 6 || res.Failed.Total != 0 || res.BodyRead != 6*70000 || res.TotalSent != int64(6*(len(mustH3Request(t, &cfg)))) {
		t.Fatalf("complete %d failed %+v body %d sent %d", res.Complete, res.Failed, res.BodyRead, res.TotalSent)
	}
	h.mu.Lock()
	r, body := h.lastReq, string(h.lastBody)
	h.mu.Unlock()
	if r.Method != "POST" || r.URL.RequestURI() != "/path?q=1" || body != "a=1&b=2" || r.Header.Get("X-Test") != "yes" ||
		r.Header.Get("Cookie") != "k=v" || r.Header.Get("Authorization") != "Basic dTpw" ||
		r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || r.Header.Get("User-Agent") != abUserAgent || r.ContentLength != 7 {
		t.Errorf("server saw %s %s, body %q, header %v", r.Method, r.URL.RequestURI(), body, r.Header)
	}
}

func mustH3Request(t *testing.T, cfg *Config) []byte {
	t.Helper()
	b, err := h3Request(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// --rate paces the requests over the QUIC streams as over connections, and
// the corrected figures count from each request's intended send time: the
// requests due while the server holds every answer wait for it.
func TestHTTP3Rate(t *testing.T) {
	var first atomic.Int64 // the server's clock: the first request's arrival
	s := startH3Hostile(t, h3Script{stream: func(hc *h3HostileConn, str *quic.Stream, _ int64) {
		now := time.Now().UnixNano()
		first.CompareAndSwap(0, now)
		since := time.Duration(now - first.Load())
		if since >= 500*time.Millisecond && since < time.Second {
			select { // held until the server's second 1
			case <-time.After(time.Second - since):
			case <-hc.Context().Done():
				return
			}
		}
		hc.respond(str, h3OK("hello"))
	}})
	const rate = 100
	cfg := h3Cfg(t, s, 100000, 2, 2)
	cfg.Rate, cfg.TimeLimit = rate, 2*time.Second
	res, _, err := runH3(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rr := res.Extra.Rate
	if rr == nil || rr.Target != rate || rr.Corrected.Count != int64(res.Complete) || res.Failed.Total != 0 {
		t.Fatalf("rate result %+v for %d requests (failed %+v)", rr, res.Complete, res.Failed)
	}
	// The requests due in [0.6 s, 0.9 s) of the server's clock (15 % of
	// the run) were answered at 1 s at the earliest: 100 ms or more from
	// their intended send time.
	if p90 := rr.Corrected.Percentile(90); p90 < 100_000 {
		t.Errorf("corrected p90 %d µs, want ≥ 100 ms", p90)
	}
	if achieved := float64(res.Complete) / res.Elapsed.Seconds(); achieved > 1.05*rate {
		t.Errorf("achieved %.1f/s above the target %d/s", achieved, rate)
	}
}

// --request-timeout fails the overdue request alone (an Exception; its
// stream is cancelled) and the run goes on; nothing is sent twice.
func TestHTTP3RequestTimeout(t *testing.T) {
	s := startH3Hostile(t, h3Script{stream: func(hc *h3HostileConn, str *quic.Stream, n int64) {
		if n%2 == 0 {
			<-str.Context().Done() // held until gab cancels it
			return
		}
		hc.respond(str, h3OK("hello"))
	}})
	cfg := h3Cfg(t, s, 20, 1, 2)
	cfg.RequestTimeout = 200 * time.Millisecond
	res, err, _ := runH2Within(t, cfg, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != 20 || res.Failed.Exceptions != 10 || res.Failed.Total != 10 || s.requests.Load() != 20 {
		t.Errorf("complete %d failed %+v, server read %d; want 20 with 10 Exceptions, 20 read", res.Complete, res.Failed, s.requests.Load())
	}
	if e := res.FirstError["exceptions"]; e != "no response within --request-timeout 200ms" {
		t.Errorf("first exception %q", e)
	}
}

// --warmup's requests go over their own connections and are in no figure.
func TestHTTP3Warmup(t *testing.T) {
	checkEngineLeaks(t)
	h := newH2Counter(0, []byte("warm"))
	cfg := h3TestConfig(t, startH3(t, h), 40, 2, 2)
	cfg.WarmupRequests = 30
	res, _, err := runH3(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != 40 || res.Warmup == nil || res.Warmup.Complete != 30 || h.requests.Load() != 70 || res.Samples.Len() != 40 {
		t.Errorf("complete %d warm-up %+v, server saw %d, %d samples; want 40, 30, 70, 40", res.Complete, res.Warmup, h.requests.Load(), res.Samples.Len())
	}
	if got, _ := h.flight(); got != 4 {
		t.Errorf("%d connections, want 2 for the warm-up and 2 for the run", got)
	}
}

// -v 2 shows each response head (as HTTP/3 fields, lower-case) and status,
// and each handshake.
func TestHTTP3Verbose(t *testing.T) {
	h := newH2Counter(0, []byte("v"))
	cfg := h3TestConfig(t, startH3(t, h), 4, 2, 1)
	ev := &h1Events{}
	cfg.Events, cfg.Verbosity = ev, 2
	_, tr, err := runH3(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.heads) != 4 || len(ev.statuses) != 4 || ev.tlsOK.Load() != tr.opened.Load() {
		t.Fatalf("%d heads, %d statuses, %d handshakes; want 4, 4, %d", len(ev.heads), len(ev.statuses), ev.tlsOK.Load(), tr.opened.Load())
	}
	if head := ev.heads[0]; !strings.HasPrefix(head, "HTTP/3 200\r\n") || !strings.Contains(head, "server: GoTest/1.0 (test)\r\n") || !strings.HasSuffix(head, "\r\n\r\n") {
		t.Errorf("head %q", head)
	}
}

// --tls-resume resumes the first connection's session on the others (the
// server counts resumed handshakes); without it every handshake is full, as
// ab's are.
func TestHTTP3TLSResume(t *testing.T) {
	for _, resume := range []bool{false, true} {
		var full, resumed atomic.Int64
		var mu sync.Mutex
		conf := h3test.TLSConfig(t)
		conf.VerifyConnection = func(cs tls.ConnectionState) error {
			mu.Lock()
			defer mu.Unlock()
			if cs.DidResume {
				resumed.Add(1)
			} else {
				full.Add(1)
			}
			return nil
		}
		port := h3test.ServeTLS(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("r")) }), conf, nil)
		url := fmt.Sprintf("https://127.0.0.1:%d/", port)
		// How many of the 4 connections open depends on how fast the first
		// one serves the rest once ab's ramp lets the others start; with 200
		// requests more than one does. Every handshake after the first
		// resumes with --tls-resume, none without.
		cfg := h3TestConfig(t, url, 200, 4, 1)
		cfg.TLS.Resume = resume
		if _, _, err := runH3(t, cfg); err != nil {
			t.Fatal(err)
		}
		f, r := full.Load(), resumed.Load()
		if f+r < 2 || f+r > 4 || resume && f != 1 || !resume && r != 0 {
			t.Errorf("--tls-resume %v: %d full handshakes, %d resumed; want 2 to 4 in all, all but the first resumed with --tls-resume, none without", resume, f, r)
		}
	}
}

// --verify-tls refuses the test server's self-signed certificate: every
// handshake fails (ab's "SSL handshake failed" each time) and, as for
// failed connects, the 12th ends the run (ab: bad++ > 10).
func TestHTTP3VerifyTLS(t *testing.T) {
	cfg := h3TestConfig(t, startH3(t, newH2Counter(0, nil)), 20, 1, 1)
	cfg.TLS.Verify = true
	ev := &h1Events{}
	cfg.Events = ev
	res, _, err := runH3(t, cfg)
	if err == nil || res.Ending != EndFatal || !strings.Contains(res.fatal.Message, "Test aborted after 10 failures") {
		t.Fatalf("ending %v, err %v", res.Ending, err)
	}
	if got := ev.tlsFailed.Load(); got != 12 {
		t.Errorf("%d failed handshakes reported, want 12", got)
	}
}

// A --verify-tls failure over QUIC quotes the certificate's names, the
// server's bytes: the failed handshake is reported with them escaped, as
// over TCP (TestTLSHostileCertificateNames).
func TestHTTP3VerifyTLSNamesEscaped(t *testing.T) {
	conf := h3test.TLSConfig(t)
	conf.Certificates = []tls.Certificate{evilCertificate(t)}
	port := h3test.ServeTLS(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), conf, nil)
	cfg := h3TestConfig(t, fmt.Sprintf("https://127.0.0.1:%d/", port), 2, 1, 1)
	cfg.TLS.Verify, cfg.TLS.ServerName = true, "example.test"
	ev := &tlsErrEvents{}
	cfg.Events = ev
	res, _, err := runH3(t, cfg)
	if err == nil || res.Ending != EndFatal {
		t.Fatalf("ending %v, err %v", res.Ending, err)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	wantPrintable(t, "handshake failure", ev.texts...)
	for class, text := range res.FirstError {
		if strings.ContainsFunc(text, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Errorf("first %s error %q has a control byte", class, text)
		}
	}
}

// Parsing a response costs no allocation once the connection has seen its
// fields (they are interned): the frames of a typical response, whole or
// cut at every byte.
func TestHTTP3ResponseParsingAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	r := &run{cfg: &Config{}, events: nopEvents{}, rampUp: make(chan struct{})}
	resp := append(h3Frame(h3FrameHeaders, h3Section(":status", "200", "content-length", "5", "server", "Caddy",
		"date", "Tue, 01 Dec 2026 15:00:00 GMT", "content-type", "text/plain; charset=utf-8", "alt-svc", `h3=":443"; ma=2592000`)),
		h3Frame(h3FrameData, []byte("hello"))...)
	d := newH3Fields(r)
	var p h3Resp
	parse := func(cut int) {
		p.reset()
		if e := p.take(r, d, 1, resp[:cut]); e != nil {
			t.Fatal(e)
		}
		if e := p.take(r, d, 2, resp[cut:]); e != nil {
			t.Fatal(e)
		}
		if class, err := p.ended(false); class != classOK || p.status != 200 || p.body != 5 || p.read != int64(len(resp)) {
			t.Fatalf("cut at %d: class %v (%v), status %d, body %d, read %d", cut, class, err, p.status, p.body, p.read)
		}
	}
	for cut := range len(resp) + 1 {
		parse(cut)
	}
	if n := testing.AllocsPerRun(100, func() { parse(len(resp) / 2) }); n != 0 {
		t.Errorf("%.1f allocations per response", n)
	}
}

// The requests a connection's slots have ready at once leave together: a
// server that answers 8 requests at a time (the slots then all send their
// next at once) gets them in a packet or two, not a packet each.
func TestHTTP3BatchesRequests(t *testing.T) {
	var mu sync.Mutex
	var held []*quic.Stream
	s := startH3Hostile(t, h3Script{stream: func(hc *h3HostileConn, str *quic.Stream, n int64) {
		if n == 1 { // the first, alone: ab's ramp-up waits for its head
			hc.respond(str, h3OK("b"))
			return
		}
		mu.Lock()
		held = append(held, str)
		burst := held
		if len(burst) == 8 {
			held = nil
		}
		mu.Unlock()
		if len(burst) == 8 {
			for _, st := range burst {
				hc.respond(st, h3OK("b"))
			}
		}
	}})
	const n = 1 + 50*8
	res, _, err := runH3(t, h3Cfg(t, s, n, 1, 8))
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete != n || res.Failed.Total != 0 || res.QUIC == nil {
		t.Fatalf("complete %d failed %+v", res.Complete, res.Failed)
	}
	if sent := res.QUIC.PacketsSent; sent > n/2 {
		t.Errorf("%d packets sent for %d requests sent 8 at a time", sent, n)
	}
	t.Logf("%d packets sent for %d requests", res.QUIC.PacketsSent, n)
}
