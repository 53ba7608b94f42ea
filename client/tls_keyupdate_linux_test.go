//go:build linux

package client

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net"
	"path"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A TLS 1.3 server that makes gab write and never reads what it writes:
// after the request it sends KeyUpdate messages that request an update,
// each of which crypto/tls answers with a KeyUpdate of its own (27 bytes),
// from inside the Read that decoded it. crypto/tls's server has no API to
// send a KeyUpdate, so the server does its handshake with crypto/tls and
// then writes its records itself, with the application traffic secret
// that crypto/tls logs (Config.KeyLogWriter): RFC 8446's record protection
// and key schedule (7.1, 7.2, 7.3, 5.2, 5.3) for the AES-GCM suites.

// tls13Records is the server's side of a TLS 1.3 record layer.
type tls13Records struct {
	w      *bufio.Writer
	hash   func() hash.Hash
	keyLen int
	secret []byte
	aead   cipher.AEAD
	iv     []byte
	seq    uint64
}

// expandLabel is RFC 8446's HKDF-Expand-Label with an empty context.
func expandLabel(h func() hash.Hash, secret []byte, label string, n int) ([]byte, error) {
	label = "tls13 " + label
	info := append([]byte{byte(n >> 8), byte(n), byte(len(label))}, label...)
	return hkdf.Expand(h, secret, string(append(info, 0)), n)
}

// newTLS13Records writes records on w for the suite, from secret (the
// server's application traffic secret) on.
func newTLS13Records(w *bufio.Writer, suite uint16, secret []byte) (*tls13Records, error) {
	r := &tls13Records{w: w}
	switch suite {
	case tls.TLS_AES_128_GCM_SHA256:
		r.hash, r.keyLen = sha256.New, 16
	case tls.TLS_AES_256_GCM_SHA384:
		r.hash, r.keyLen = sha512.New384, 32
	default:
		return nil, fmt.Errorf("cipher suite %s: the test writes AES-GCM records only", tls.CipherSuiteName(suite))
	}
	return r, r.setSecret(secret)
}

// setSecret makes secret the traffic secret: its key and IV, sequence 0.
func (r *tls13Records) setSecret(secret []byte) error {
	key, err := expandLabel(r.hash, secret, "key", r.keyLen)
	if err != nil {
		return err
	}
	if r.iv, err = expandLabel(r.hash, secret, "iv", 12); err != nil {
		return err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return err
	}
	r.aead, err = cipher.NewGCM(block)
	r.secret, r.seq = secret, 0
	return err
}

// record writes one protected record of content type typ.
func (r *tls13Records) record(typ byte, content []byte) error {
	inner := append(bytes.Clone(content), typ)
	n := len(inner) + r.aead.Overhead()
	hdr := []byte{0x17, 3, 3, byte(n >> 8), byte(n)}
	nonce := bytes.Clone(r.iv)
	for i := range 8 {
		nonce[4+i] ^= byte(r.seq >> (56 - 8*i))
	}
	r.seq++
	_, err := r.w.Write(r.aead.Seal(hdr, nonce, inner, hdr))
	return err
}

// keyUpdate sends a KeyUpdate that requests the peer's, then moves to the
// next traffic secret.
func (r *tls13Records) keyUpdate() error {
	if err := r.record(0x16, []byte{24, 0, 0, 1, 1}); err != nil {
		return err
	}
	next, err := expandLabel(r.hash, r.secret, "traffic upd", r.hash().Size())
	if err != nil {
		return err
	}
	return r.setSecret(next)
}

// serverSecret is the SERVER_TRAFFIC_SECRET_0 of a key log.
func serverSecret(log string) ([]byte, error) {
	for line := range strings.Lines(log) {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "SERVER_TRAFFIC_SECRET_0" {
			return hex.DecodeString(f[2])
		}
	}
	return nil, fmt.Errorf("no server traffic secret in the key log %q", log)
}

// keyUpdateServer answers a request with a head promising one body byte per
// 15 KeyUpdates (crypto/tls takes at most 16 post-handshake messages in a
// row), then sends them, updates in all. It never reads what the client
// writes, unless drain: then it reads and counts it (drained) from the
// request on. sentAll is set if the whole response went out, after which
// the server shuts its side and waits for the client's close; done is
// closed when the script ends. With h2 the exchange is HTTP/2's: the
// server reads the client's first flight up to its HEADERS and answers on
// stream 1, a DATA frame per body byte.
type keyUpdateServer struct {
	conf    *tls.Config
	updates int
	drain   bool
	h2      bool
	sentAll atomic.Bool
	drained atomic.Int64
	err     atomic.Pointer[error] // the script's own failure
	done    chan struct{}
}

func (k *keyUpdateServer) fail(err error) { k.err.Store(&err) }

// check fails t if the script failed.
func (k *keyUpdateServer) check(t *testing.T) {
	t.Helper()
	if p := k.err.Load(); p != nil {
		t.Fatalf("server: %v", *p)
	}
}

func (k *keyUpdateServer) script(fc *faultConn) {
	defer close(k.done)
	var keys strings.Builder
	c := k.conf.Clone()
	c.MinVersion, c.SessionTicketsDisabled, c.KeyLogWriter = tls.VersionTLS13, true, &keys
	if k.h2 {
		c.NextProtos = []string{"h2"}
	}
	tc := tls.Server(fc.Conn, c)
	if err := tc.Handshake(); err != nil {
		k.fail(err)
		return
	}
	if err := k.readRequest(fc, tc); err != nil {
		k.fail(err)
		return
	}
	secret, err := serverSecret(keys.String())
	if err != nil {
		k.fail(err)
		return
	}
	rec, err := newTLS13Records(bufio.NewWriterSize(fc.Conn, 64<<10), tc.ConnectionState().CipherSuite, secret)
	if err != nil {
		k.fail(err)
		return
	}
	drained := make(chan struct{})
	if k.drain {
		go func() {
			defer close(drained)
			n, _ := io.Copy(io.Discard, fc.Conn) // until the client's close, or the server's
			k.drained.Store(n)
		}()
	}
	if k.flood(rec) != nil {
		return // the client closed the connection
	}
	k.sentAll.Store(true)
	_ = fc.Conn.(*net.TCPConn).CloseWrite()
	if k.drain {
		<-drained
	} else {
		fc.waitClosed()
	}
}

// readRequest reads the request through tc: HTTP/1's, or HTTP/2's preface
// and frames up to the request's HEADERS.
func (k *keyUpdateServer) readRequest(fc *faultConn, tc *tls.Conn) error {
	if !k.h2 {
		if _, ok := (&faultConn{Conn: tc, srv: fc.srv, br: bufio.NewReader(tc)}).readRequest(); !ok {
			return fmt.Errorf("no request")
		}
		return nil
	}
	buf := make([]byte, 16<<10)
	if _, err := io.ReadFull(tc, buf[:24]); err != nil || string(buf[:24]) != "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" {
		return fmt.Errorf("no HTTP/2 preface: %q, %v", buf[:24], err)
	}
	for {
		if _, err := io.ReadFull(tc, buf[:9]); err != nil {
			return err
		}
		n, typ := int(buf[0])<<16|int(buf[1])<<8|int(buf[2]), buf[3]
		if n > len(buf) {
			return fmt.Errorf("a frame of %d bytes", n)
		}
		if _, err := io.ReadFull(tc, buf[:n]); err != nil || typ == 1 { // HEADERS
			return err
		}
	}
}

// flood writes the response: its head, then the body's bytes, each after
// 15 KeyUpdates.
func (k *keyUpdateServer) flood(rec *tls13Records) error {
	body := (k.updates + 14) / 15
	head := fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", body)
	if k.h2 {
		head = []byte("\x00\x00\x00\x04\x00\x00\x00\x00\x00" + // SETTINGS
			"\x00\x00\x01\x01\x04\x00\x00\x00\x01\x88") // HEADERS, END_HEADERS, stream 1: :status 200
	}
	err := rec.record(0x17, head)
	for i := 0; i < body && err == nil; i++ {
		for range 15 {
			if err = rec.keyUpdate(); err != nil {
				return err
			}
		}
		b := []byte("x")
		if k.h2 {
			b = []byte("\x00\x00\x01\x00\x00\x00\x00\x00\x01x") // DATA, stream 1
			if i == body-1 {
				b[4] = 1 // END_STREAM
			}
		}
		if err = rec.record(0x17, b); err == nil && i%64 == 63 {
			err = rec.w.Flush()
		}
	}
	if err == nil {
		err = rec.w.Flush()
	}
	return err
}

// smallWindowListener listens on 127.0.0.1 with a small receive buffer and
// a small MSS, so that the kernel holds little of what the client writes
// and the server does not read (on loopback the client's socket would
// otherwise take megabytes before it is full; so, about 170 KB of 27-byte
// writes), and a small send buffer, so that the server's writes wait for
// the client's reads rather than run ahead of them.
func smallWindowListener(t *testing.T) net.Listener {
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 4096)
			if serr == nil {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG, 536)
			}
			if serr == nil {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, 16<<10)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}}
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// The server asks for 150,000 key updates and never reads: crypto/tls's
// answers (27 bytes each, 4 MB in all) pile up in the TLS link once the
// socket is full. The link holds at most tlsOutCap of them: the connection
// ends there, its request a receive failure, long before the server has
// sent its whole response (which completes the request when the link
// keeps everything). Both event-loop engines, and --http2.
func TestTLSHostileKeyUpdateFlood(t *testing.T) {
	onLoopEngines(t, func(t *testing.T, h2 bool) {
		srv := &keyUpdateServer{conf: tlsServerConfig(t), updates: 150000, h2: h2}
		res := keyUpdateRun(t, srv)
		wantCounts(t, res, 1, Failures{Total: 1, Receive: 1})
		if srv.sentAll.Load() {
			t.Errorf("the server sent its whole response (%d key updates) before the connection ended", srv.updates)
		}
		if msg := res.FirstError["receive"]; !strings.Contains(msg, "does not read") {
			t.Errorf("first receive error %q", msg)
		}
	})
}

// A server that asks for more key updates than tlsOutCap holds answers to
// (10,500: 283,500 bytes), and reads them: the request completes, and the
// answers reach the server as they come, all but what the link may hold
// when the connection closes (on io_uring the link sends only when asked,
// so answers that waited for the next request would pass the cap).
func TestTLSKeyUpdatesAnsweredWhileReading(t *testing.T) {
	onLoopEngines(t, func(t *testing.T, h2 bool) {
		srv := &keyUpdateServer{conf: tlsServerConfig(t), updates: 10500, drain: true, h2: h2}
		res := keyUpdateRun(t, srv)
		wantCounts(t, res, 1, Failures{})
		if !srv.sentAll.Load() || srv.drained.Load() < int64(srv.updates*27-tlsOutCap) {
			t.Errorf("the server sent its whole response: %v; it read %d bytes, want at least %d",
				srv.sentAll.Load(), srv.drained.Load(), srv.updates*27-tlsOutCap)
		}
	})
}

// onLoopEngines runs fn as the subtests "epoll" and "uring" (where this
// kernel has io_uring), each on that engine of the HTTP/1 event loops, and
// "h2", on the HTTP/2 event loops (epoll).
func onLoopEngines(t *testing.T, fn func(t *testing.T, h2 bool)) {
	for _, engine := range []string{EngineEpoll, EngineUring, "h2"} {
		t.Run(engine, func(t *testing.T) {
			if engine == EngineUring && !uringExpected() {
				t.Skip("no io_uring here")
			}
			checkGoroutines(t)
			checkEngineLeaks(t)
			fn(t, engine == "h2")
		})
	}
}

// keyUpdateRun runs one request against srv, over TLS 1.3 on the event
// loops of the subtest (onLoopEngines).
func keyUpdateRun(t *testing.T, srv *keyUpdateServer) *Result {
	t.Helper()
	srv.done = make(chan struct{})
	fs := newFaultServerOn(t, smallWindowListener(t), srv.script)
	cfg := hostileConfig(t, fs.port(), 1, 1, srv.h2)
	if !srv.h2 {
		cfg.Engine = path.Base(t.Name())
	}
	h2Loops := h2EpollLoopsStarted.Load()
	res, err := h1Run(t, cfg)
	if srv.h2 && h2EpollLoopsStarted.Load() == h2Loops {
		t.Errorf("the HTTP/2 event loops never ran")
	}
	select {
	case <-srv.done:
	case <-time.After(goroutineEndWait):
		t.Fatal("the server's script did not end after the run")
	}
	srv.check(t)
	if err != nil {
		t.Fatal(err)
	}
	if !srv.h2 && res.Engine != cfg.Engine {
		t.Fatalf("engine %q ran, want %q", res.Engine, cfg.Engine)
	}
	return res
}
