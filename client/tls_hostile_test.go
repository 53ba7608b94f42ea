package client

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Hostile TLS servers, on both paths: a handshake a peer can stall, garble,
// cut or trickle, and a peer that floods once the handshake is done. Each run
// ends by itself within a bound, its failures counted in the right class,
// nothing left running and the heap bounded (the rule of docs/DESIGN.md,
// "Reading from a peer").

// onBothProtocols runs fn as the subtests name and "name (--http2)", each on
// both paths (hostileSubtest).
func onBothProtocols(t *testing.T, name string, fn func(t *testing.T, h2 bool)) {
	for _, h2 := range []bool{false, true} {
		sub, paths := name, h1TLSPaths
		if h2 {
			sub, paths = name+" (--http2)", h2Paths
		}
		hostileSubtest(t, sub, paths, func(t *testing.T) { fn(t, h2) })
	}
}

// hostileSubtest runs fn as the subtest name on both paths (h1TLSPaths or
// h2Paths), checking for leaked goroutines and engine resources.
func hostileSubtest(t *testing.T, name string, paths func(*testing.T, func(*testing.T)), fn func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		paths(t, func(t *testing.T) {
			checkGoroutines(t)
			checkEngineLeaks(t)
			fn(t)
		})
	})
}

// hostileConfig is a run of n requests at concurrency c against
// https://127.0.0.1:port/, over HTTP/1 or with --http2 (one stream).
func hostileConfig(t *testing.T, port, n, c int, h2 bool) Config {
	if h2 {
		return h2TestConfig(t, fmt.Sprintf("https://127.0.0.1:%d/", port), n, c, 1)
	}
	cfg := tlsConfigFor(port, n, false, TLSOptions{})
	cfg.Concurrency = c
	return cfg
}

// readHello reads what the client sent first (its ClientHello); false when
// the client closed instead.
func readHello(fc *faultConn) bool {
	buf := make([]byte, 4096)
	n, err := fc.br.Read(buf)
	return n > 0 && err == nil
}

// binaryGarbage is an answer to a ClientHello that is not TLS.
const binaryGarbage = "\x00\xff\x13\x37garbage\r\n\x80\x81\x82\x83\x84\x85\x86\x87"

// helloThen is a script that reads the ClientHello, answers answer and waits
// for the client to close.
func helloThen(answer string) func(fc *faultConn) {
	return func(fc *faultConn) {
		if readHello(fc) {
			fc.write(answer)
			fc.waitClosed()
		}
	}
}

// wantHandshakeAbort checks the end of a run of 2 requests whose every
// handshake failed: 12 connections, each failure reported, 11 counted as
// connect failures, and ab's abort after 10 failures with that exit status.
func wantHandshakeAbort(t *testing.T, res *Result, err error, exit int, ev *h1Events, srv *faultServer) {
	t.Helper()
	var fe *FatalError
	if !errors.As(err, &fe) || fe.Exit != exit || !strings.HasPrefix(fe.Message, "\nTest aborted after 10 failures\n\napr_socket_connect(): ") {
		t.Fatalf("err = %#v", err)
	}
	if ev.tlsFailed.Load() != 12 || res.Complete != 0 || res.Failed.Connect != 11 || srv.accepted.Load() != 12 {
		t.Errorf("failure events %d complete %d failed %+v conns %d; want 12 0 11 connect 12",
			ev.tlsFailed.Load(), res.Complete, res.Failed, srv.accepted.Load())
	}
}

// relayTo is a script that connects each connection to 127.0.0.1:backend,
// forwards the client's bytes as they come and the backend's through relay,
// which returns when it is done with the connection.
func relayTo(backend int, relay func(fc *faultConn, from net.Conn)) func(fc *faultConn) {
	return func(fc *faultConn) {
		up, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(backend))
		if err != nil {
			return
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = io.Copy(up, fc.br)
			_ = up.Close()
		}()
		relay(fc, up)
		_ = up.Close()
		_ = fc.Conn.Close()
		<-done
	}
}

// trickleFrom forwards from's bytes one byte per write, gap apart.
func trickleFrom(gap time.Duration) func(fc *faultConn, from net.Conn) {
	return func(fc *faultConn, from net.Conn) {
		buf := make([]byte, 16<<10)
		for {
			n, err := from.Read(buf)
			fc.trickle(string(buf[:n]), gap)
			if err != nil {
				return
			}
		}
	}
}

// cutAfter forwards the first k bytes of from, then returns (and the
// connection is closed).
func cutAfter(k int64) func(fc *faultConn, from net.Conn) {
	return func(fc *faultConn, from net.Conn) { _, _ = io.CopyN(fc.Conn, from, k) }
}

// The server accepts and never answers the ClientHello, or stops inside its
// first record: -s ends the run with ab's timeout error, -t on time; the same
// under --http2.
func TestTLSHostileSilentServer(t *testing.T) {
	scripts := map[string]func(fc *faultConn){
		"never answers":         stallForever,
		"stops inside a record": helloThen("\x16\x03\x03\x03\xe8\x02\x00"), // a handshake record of 1000 bytes, 2 sent
	}
	for name, script := range scripts {
		onBothProtocols(t, name, func(t *testing.T, h2 bool) {
			srv := newFaultServer(t, script)
			cfg := hostileConfig(t, srv.port(), 2, 1, h2)
			cfg.Timeout = 400 * time.Millisecond
			res, err := runTimed(t, cfg, 1200*time.Millisecond)
			wantFatal(t, err, 119, timeoutMessage)
			if res.Complete != 0 || res.Ending != EndFatal {
				t.Errorf("-s: complete %d ending %v", res.Complete, res.Ending)
			}

			cfg = hostileConfig(t, srv.port(), 50000, 3, h2)
			cfg.TimeLimit = 400 * time.Millisecond
			res, err = runTimed(t, cfg, 1200*time.Millisecond)
			if err != nil {
				t.Fatalf("-t: %v", err)
			}
			if res.Ending != EndTimeLimit || res.Complete != 0 || res.Elapsed < 400*time.Millisecond {
				t.Errorf("-t: ending %v complete %d failed %+v elapsed %v", res.Ending, res.Complete, res.Failed, res.Elapsed)
			}
		})
	}
}

// A handshake that fails (the answer is not TLS, a record too large, the
// server closes or resets mid-handshake) is a connect failure, reported and
// retried until ab's abort after 10 failures, as TestTLSHandshakeFailure; the
// exit status is 1, or the errno of a network error (104 for a reset). The
// same under --http2.
func TestTLSHostileHandshakeFailures(t *testing.T) {
	backend := newTLSFaultServer(t, nil, answerOnce(respond100(false)))
	scripts := map[string]func(fc *faultConn){
		"binary garbage":              helloThen(binaryGarbage),
		"oversized record":            helloThen("\x16\x03\x03\xff\xff" + strings.Repeat("\x00", 1024)),
		"alert":                       helloThen("\x15\x03\x03\x00\x02\x02\x28"), // fatal handshake_failure
		"close after the ClientHello": func(fc *faultConn) { readHello(fc) },
		"reset after the ClientHello": func(fc *faultConn) {
			if readHello(fc) {
				fc.reset()
			}
		},
		"close inside the server's first flight": relayTo(backend.port(), cutAfter(100)),
	}
	for name, script := range scripts {
		onBothProtocols(t, name, func(t *testing.T, h2 bool) {
			srv := newFaultServer(t, script)
			ev := &h1Events{}
			cfg := hostileConfig(t, srv.port(), 2, 1, h2)
			cfg.Events = ev
			res, err := runTimed(t, cfg, 3*time.Second)
			exit := 1
			if strings.HasPrefix(name, "reset") {
				exit = 104 // ECONNRESET, as ab exits with apr's status
			}
			wantHandshakeAbort(t, res, err, exit, ev, srv)
		})
	}
}

// A valid server's bytes arrive one per write (through a relay): the
// handshake and the response complete, exactly; with a gap between bytes the
// handshake takes seconds and -t ends the run on time.
func TestTLSHostileTrickledHandshake(t *testing.T) {
	r := respond100(false)
	backend := newTLSFaultServer(t, nil, answerOnce(r))
	hostileSubtest(t, "byte by byte", h1TLSPaths, func(t *testing.T) {
		srv := newFaultServer(t, relayTo(backend.port(), trickleFrom(0)))
		res, err := runTimed(t, tlsConfigFor(srv.port(), 3, false, TLSOptions{}), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		wantCounts(t, res, 3, Failures{})
		if res.DocLength != 100 || res.TotalRead != int64(3*len(r)) || res.TLS == nil {
			t.Errorf("doclen %d read %d TLS %+v", res.DocLength, res.TotalRead, res.TLS)
		}
	})
	hostileSubtest(t, "5 ms a byte", h1TLSPaths, func(t *testing.T) {
		srv := newFaultServer(t, relayTo(backend.port(), trickleFrom(5*time.Millisecond)))
		cfg := hostileConfig(t, srv.port(), 50000, 2, false)
		cfg.TimeLimit = 400 * time.Millisecond
		res, err := runTimed(t, cfg, 1200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if res.Ending != EndTimeLimit || res.Complete != 0 || res.Failed.Total != 0 {
			t.Errorf("ending %v complete %d failed %+v", res.Ending, res.Complete, res.Failed)
		}
	})
}

// After the handshake the server floods: a head that never ends is ab's header
// overflow (the 12th aborts the run); a body that never ends stops at -t; a
// stream of stray bytes instead of the close is cut at maxDrain. The heap
// stays bounded.
func TestTLSHostileFloods(t *testing.T) {
	hostileSubtest(t, "endless head", h1TLSPaths, func(t *testing.T) {
		srv := newTLSFaultServer(t, nil, floodAfterRequest("HTTP/1.1 200 OK\r\n", "X-Filler: "+strings.Repeat("f", 1000)+"\r\n"))
		peak := heapPeak()
		res, err := runTimed(t, tlsConfigFor(srv.port(), 2, false, TLSOptions{}), 5*time.Second)
		heap := peak()
		wantFatal(t, err, 1, "\nTest aborted after 10 failures\n\n\n")
		if res.Complete != 0 || res.Non2xx != 11 || srv.accepted.Load() != 12 {
			t.Errorf("complete %d non2xx %d conns %d; want 0 11 12", res.Complete, res.Non2xx, srv.accepted.Load())
		}
		if heap > h2HeapLimit {
			t.Errorf("a heap of up to %d MiB during the run", heap>>20)
		}
	})
	hostileSubtest(t, "endless body", h1TLSPaths, func(t *testing.T) {
		srv := newTLSFaultServer(t, nil, floodAfterRequest("HTTP/1.1 200 OK\r\n\r\n", "x"))
		wantEndlessBodyEndsAtTimeLimit(t, hostileConfig(t, srv.port(), 100, 2, false))
	})
	// The same body one byte per record: the most records, and decryptions,
	// per byte a server can send.
	hostileSubtest(t, "endless body in 1-byte records", h1TLSPaths, func(t *testing.T) {
		srv := newTLSFaultServer(t, nil, func(fc *faultConn) {
			if _, ok := fc.readRequest(); !ok {
				return
			}
			fc.write("HTTP/1.1 200 OK\r\n\r\n")
			for {
				if _, err := fc.Write([]byte("x")); err != nil {
					return
				}
			}
		})
		cfg := hostileConfig(t, srv.port(), 100, 2, false)
		cfg.TimeLimit = 500 * time.Millisecond
		cfg.Timeout = time.Second
		res, returned := runFlood(t, cfg)
		if res.Ending != EndTimeLimit || res.Complete != 0 {
			t.Errorf("ending %v complete %d, want the time limit and none complete", res.Ending, res.Complete)
		}
		// The read budget charges each record's Read (tlsReadCharge), so a
		// turn decrypts at most 256 records per connection: up to 50 ms
		// under -race on a loaded 2-core machine (event loops). Counted in
		// raw bytes alone, a turn was some 11,000 records, and a stop took
		// up to 1.8 s there.
		wantStoppedWithin(t, "-t", res.Start.Add(cfg.TimeLimit), returned, floodStopBound)
		if res.TotalRead < 1000 {
			t.Errorf("read %d bytes: the flood did not reach gab", res.TotalRead)
		}
	})
	hostileSubtest(t, "stray bytes instead of the close", h1TLSPaths, func(t *testing.T) {
		srv := newTLSFaultServer(t, nil, floodAfterRequest(strayAfterClose, "junk"))
		wantStrayBytesCut(t, hostileConfig(t, srv.port(), 4, 2, false))
	})
}

// evilName is a certificate name that would clear the screen and write the
// clipboard (OSC 52) if it reached a terminal as it is.
const evilName = "evil\x1b[2J\x1b]52;c;cHduZWQ=\x07.test"

// evilNameEscaped is evilName as gab reports it (printable.String).
const evilNameEscaped = `evil\x1b[2J\x1b]52;c;cHduZWQ=\x07.test`

// evilCertificate is a self-signed certificate for evilName only.
func evilCertificate(t testing.TB) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: evilName}, DNSNames: []string{evilName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// tlsErrEvents records the text of every failed handshake as Events gets it.
type tlsErrEvents struct {
	h1Events
	mu    sync.Mutex
	texts []string
}

func (e *tlsErrEvents) TLSHandshakeFailed(err error) {
	e.h1Events.TLSHandshakeFailed(err)
	e.mu.Lock()
	e.texts = append(e.texts, err.Error())
	e.mu.Unlock()
}

// wantPrintable checks that each text quotes evilName escaped, no control
// byte in it.
func wantPrintable(t *testing.T, what string, texts ...string) {
	t.Helper()
	if len(texts) == 0 {
		t.Errorf("%s: none", what)
	}
	for _, s := range texts {
		if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }) || !strings.Contains(s, evilNameEscaped) {
			t.Errorf("%s %q: want %s escaped and no control byte", what, s, evilNameEscaped)
		}
	}
}

// A --verify-tls failure quotes the certificate's names ("certificate is
// valid for NAME, not HOST"), which are the server's bytes: every report of
// it (ab's "SSL handshake failed" line, the first connect error, the abort
// message) has them escaped, on both paths, HTTP/1 and --http2.
func TestTLSHostileCertificateNames(t *testing.T) {
	cert := evilCertificate(t)
	onBothProtocols(t, "names", func(t *testing.T, h2 bool) {
		srv := newTLSFaultServer(t, func(c *tls.Config) { c.Certificates = []tls.Certificate{cert} }, func(fc *faultConn) { _, _ = fc.readRequest() })
		cfg := hostileConfig(t, srv.port(), 2, 1, h2)
		cfg.TLS.Verify, cfg.TLS.ServerName = true, "example.test"
		ev := &tlsErrEvents{}
		cfg.Events = ev
		res, err := runTimed(t, cfg, 3*time.Second)
		wantHandshakeAbort(t, res, err, 1, &ev.h1Events, srv)
		ev.mu.Lock()
		defer ev.mu.Unlock()
		wantPrintable(t, "handshake failure", ev.texts...)
		wantPrintable(t, "first connect error", res.FirstError["connect"])
		var fe *FatalError
		if errors.As(err, &fe) {
			wantPrintable(t, "abort message", fe.Message)
		}
	})
}
