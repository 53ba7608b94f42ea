package client

import (
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchServer is a minimal loopback HTTP/1 server that allocates nothing per
// request, so that allocation figures measure the client alone.
type benchServer struct {
	fs   *faultServer
	resp []byte
	ka   bool
}

func newBenchServer(tb testing.TB, keepAlive bool) *benchServer {
	return newBenchServerTLS(tb, keepAlive, nil)
}

// newBenchServerTLS serves over TLS when conf is not nil.
func newBenchServerTLS(tb testing.TB, keepAlive bool, conf *tls.Config) *benchServer {
	conn := "Connection: close"
	if keepAlive {
		conn = "Connection: keep-alive"
	}
	s := &benchServer{ka: keepAlive,
		resp: []byte("HTTP/1.1 200 OK\r\nServer: bench\r\nContent-Length: 100\r\n" + conn + "\r\n\r\n" + strings.Repeat("b", 100))}
	s.fs = newFaultServerTLS(tb, conf, func(fc *faultConn) {
		if tc, ok := fc.Conn.(*tls.Conn); ok {
			s.serveTLS(tc)
			return
		}
		s.serve(fc.Conn)
	})
	return s
}

// serveTLS answers the first request through crypto/tls, and each later one
// on sight of its record on the socket below, undecrypted (the client writes
// a request head as one application-data record): crypto/tls allocates on
// every read from the network, and the server must not add its allocations
// to the client's.
func (s *benchServer) serveTLS(tc *tls.Conn) {
	buf := make([]byte, 1<<14+2048) // a TLS record's largest ciphertext
	if n, err := tc.Read(buf); n == 0 || err != nil {
		return
	}
	if _, err := tc.Write(s.resp); err != nil || !s.ka {
		return
	}
	raw := tc.NetConn()
	for {
		if _, err := io.ReadFull(raw, buf[:5]); err != nil {
			return
		}
		typ, size := buf[0], int(buf[3])<<8|int(buf[4])
		if size > len(buf) {
			return
		}
		if _, err := io.ReadFull(raw, buf[:size]); err != nil {
			return
		}
		if typ != 23 { // not application data: the client's close_notify
			continue
		}
		if _, err := tc.Write(s.resp); err != nil {
			return
		}
	}
}

// serve answers every request head ("\r\n\r\n") with the canned response.
func (s *benchServer) serve(c net.Conn) {
	buf := make([]byte, 16<<10)
	matched := 0 // bytes of "\r\n\r\n" matched so far
	const end = "\r\n\r\n"
	for {
		n, err := c.Read(buf)
		heads := 0
		for _, b := range buf[:n] {
			switch {
			case b == end[matched]:
				matched++
			case b == '\r':
				matched = 1
			default:
				matched = 0
			}
			if matched == len(end) {
				heads++
				matched = 0
			}
		}
		for ; heads > 0; heads-- {
			if _, werr := c.Write(s.resp); werr != nil {
				return
			}
			if !s.ka {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (s *benchServer) port() int { return s.fs.port() }

func benchmarkRun(b *testing.B, keepAlive bool, c int) {
	benchmarkRunTLS(b, keepAlive, c, false)
}

func benchmarkRunTLS(b *testing.B, keepAlive bool, c int, useTLS bool) {
	benchmarkRunWith(b, keepAlive, c, useTLS, func(*Config) {})
}

// benchmarkRunWith is benchmarkRunTLS with a last change to the configuration.
func benchmarkRunWith(b *testing.B, keepAlive bool, c int, useTLS bool, tweak func(*Config)) {
	var conf *tls.Config
	if useTLS {
		conf = tlsServerConfig(b)
	}
	srv := newBenchServerTLS(b, keepAlive, conf)
	n := b.N
	if n < c {
		n = c
	}
	cfg := h1Config(srv.port(), n, c, keepAlive)
	cfg.Target.TLS = useTLS
	tweak(&cfg)
	b.ReportAllocs()
	b.ResetTimer()
	res, err := h1Run(b, cfg)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if res.Complete != n || res.Failed.Total != 0 || res.BodyRead != int64(100*n) {
		b.Fatalf("complete %d failed %+v body %d", res.Complete, res.Failed, res.BodyRead)
	}
}

// BenchmarkKeepAlive100B is the engine's fast path: -k, 100-byte responses.
// It must report 0 allocs/op.
func BenchmarkKeepAlive100B(b *testing.B) {
	for _, c := range []int{1, 8} {
		b.Run(fmt.Sprintf("c%d", c), func(b *testing.B) { benchmarkRun(b, true, c) })
	}
}

// BenchmarkKeepAlive100BTimeLimited is the fast path of a run that a time
// limit may end (-t), whose sample store grows in 1 MiB blocks as the
// requests come: it must report 0 allocs/op too (a block per 65,536
// requests).
func BenchmarkKeepAlive100BTimeLimited(b *testing.B) {
	benchmarkRunWith(b, true, 1, false, func(cfg *Config) { cfg.TimeLimit = time.Hour })
}

// tlsServerConfig serves a throwaway self-signed ECDSA P-256 certificate,
// made once per test binary.
func tlsServerConfig(tb testing.TB) *tls.Config {
	serverPairOnce.Do(func() {
		cert, key, _ := selfSigned(tb)
		serverPair, serverPairErr = tls.X509KeyPair(pem.EncodeToMemory(cert), pem.EncodeToMemory(key))
	})
	if serverPairErr != nil {
		tb.Fatal(serverPairErr)
	}
	return &tls.Config{Certificates: []tls.Certificate{serverPair}}
}

var (
	serverPairOnce sync.Once
	serverPair     tls.Certificate
	serverPairErr  error
)

// BenchmarkNoKeepAlive is ab's default: a connection per request.
func BenchmarkNoKeepAlive(b *testing.B) {
	for _, c := range []int{1, 8} {
		b.Run(fmt.Sprintf("c%d", c), func(b *testing.B) { benchmarkRun(b, false, c) })
	}
}

// The keep-alive request loop allocates nothing per request: doubling the
// number of requests does not add allocations beyond a small constant.
func TestKeepAliveLoopDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few thousand loopback requests")
	}
	keepAliveLoopAllocations(t, newBenchServer(t, true), false, 0)
}

// keepAliveLoopAllocations fails t if 4000 more keep-alive requests against
// srv cost more than perRequest allocations each, give or take a small
// constant, or if gab's own code allocates more at all (gabAllocations). The
// first check is left out for TLS under -race, where crypto/tls's pooled
// record buffers are dropped on purpose.
func keepAliveLoopAllocations(t *testing.T, srv *benchServer, useTLS bool, perRequest int64) {
	mallocs := func(n int) (uint64, map[string]int64) {
		cfg := h1Config(srv.port(), n, 2, true)
		cfg.Target.TLS = useTLS
		var before, after runtime.MemStats
		var res *Result
		var err error
		runtime.GC()
		runtime.ReadMemStats(&before)
		own := gabAllocations(func() { res, err = h1Run(t, cfg) })
		runtime.ReadMemStats(&after)
		if err != nil || res.Complete != n || res.KeepAlive != n {
			t.Fatalf("run of %d: %v, %+v", n, err, res)
		}
		return after.Mallocs - before.Mallocs, own
	}
	mallocs(100) // warm up
	small, smallOwn := mallocs(2000)
	large, largeOwn := mallocs(6000)
	if extra := int64(large) - int64(small); extra > 4000*perRequest+400 && !(useTLS && raceEnabled) {
		t.Errorf("4000 more requests cost %d more allocations (%d vs %d), want at most %d per request: the loop allocates",
			extra, large, small, perRequest)
	}
	if more, grew := allocGrowth(smallOwn, largeOwn, isCrypto); more > 40 {
		t.Errorf("4000 more requests cost %d more allocations in gab's code: the loop allocates (more by allocating function: %v)", more, grew)
	}
}

// allocGrowth returns how many more allocations after has than before, over
// the allocating functions that skip does not leave out, and those functions'
// growth.
func allocGrowth(before, after map[string]int64, skip func(fn string) bool) (int64, map[string]int64) {
	var more int64
	grew := map[string]int64{}
	for fn, n := range after {
		if d := n - before[fn]; d > 0 && !skip(fn) {
			more += d
			grew[fn] = d
		}
	}
	return more, grew
}

// wantFlatAllocations runs run (gab's allocations, by function, over a run
// of n requests) for 100 requests to warm up, then 2000 and 6000, and fails
// when the 4000 more requests cost more than 40 more allocations in the
// functions skip does not leave out: the request loop allocates.
func wantFlatAllocations(t *testing.T, run func(n int) map[string]int64, skip func(fn string) bool) (small, large map[string]int64) {
	t.Helper()
	run(100)
	small, large = run(2000), run(6000)
	if more, grew := allocGrowth(small, large, skip); more > 40 {
		t.Errorf("4000 more requests cost %d more allocations in gab's code (by function: %v)", more, grew)
	}
	return small, large
}

// h1KeptAllocations is wantFlatAllocations' run of cfg on the HTTP/1 path:
// every request complete on a kept connection, with bodyEach body bytes each
// (0: unchecked).
func h1KeptAllocations(t *testing.T, cfg Config, bodyEach int64) func(n int) map[string]int64 {
	return func(n int) map[string]int64 {
		cfg := cfg
		cfg.Requests = n
		var res *Result
		var err error
		own := gabAllocations(func() { res, err = h1Run(t, cfg) })
		if err != nil || res.Complete != n || res.KeepAlive != n || (bodyEach > 0 && res.BodyRead != bodyEach*int64(n)) {
			t.Fatalf("run of %d: %v, %+v", n, err, res)
		}
		return own
	}
}

// isCrypto reports an allocating function of crypto/tls and the crypto
// packages below it.
func isCrypto(fn string) bool {
	return strings.HasPrefix(fn, "crypto/") || strings.HasPrefix(fn, "vendor/golang.org/x/crypto/")
}

// gabAllocations runs fn with every allocation profiled and returns, by
// allocating function (the first frame outside the runtime), the allocations
// made on behalf of the package's non-test code: those whose stack holds one
// of its frames. Test servers (only test frames) are left out.
func gabAllocations(fn func()) map[string]int64 {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	before := memProfile()
	fn()
	after := memProfile()
	own := map[string]int64{}
	for key, r := range after {
		n := r.AllocObjects - before[key].AllocObjects
		if n <= 0 {
			continue
		}
		leaf, ours := "", false
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			if leaf == "" && !strings.HasPrefix(f.Function, "runtime.") && !strings.HasPrefix(f.Function, "internal/") {
				leaf = f.Function
			}
			if strings.HasPrefix(f.Function, "gab/client.") && !strings.HasSuffix(f.File, "_test.go") {
				ours = true
			}
			if !more {
				break
			}
		}
		if ours {
			own[leaf] += n
		}
	}
	return own
}

// memProfile is the heap profile's records by stack, once the last
// allocations are in it (it lags up to two collections).
func memProfile() map[[32]uintptr]runtime.MemProfileRecord {
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	n, _ := runtime.MemProfile(nil, true)
	var p []runtime.MemProfileRecord
	for {
		p = make([]runtime.MemProfileRecord, n+64)
		var ok bool
		if n, ok = runtime.MemProfile(p, true); ok {
			break
		}
	}
	m := make(map[[32]uintptr]runtime.MemProfileRecord, n)
	for _, r := range p[:n] {
		m[r.Stack0] = r
	}
	return m
}
