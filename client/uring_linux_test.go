package client

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"gab/internal/testtool"
	"golang.org/x/sys/unix"
)

func uringAvailable() error { return uringProbe() }

// engineRun runs cfg on engine and checks that the engine named in the
// result is the one that ran.
func engineRun(t *testing.T, cfg Config, engine string) *Result {
	t.Helper()
	cfg.Engine = engine
	before := uringLoopsStarted.Load()
	res, err := h1Run(t, cfg)
	if err != nil {
		t.Fatalf("engine %s: %v", engine, err)
	}
	if ran := uringLoopsStarted.Load() > before; ran != (engine == EngineUring) || res.Engine != engine {
		t.Fatalf("engine %s: io_uring loops ran %v, result names %q", engine, ran, res.Engine)
	}
	return res
}

// sameCounts fails t unless a and b counted the same requests and bytes.
func sameCounts(t *testing.T, what string, a, b *Result) {
	t.Helper()
	if a.Complete != b.Complete || a.Counters != b.Counters || a.DocLength != b.DocLength ||
		len(a.StatusCounts) != len(b.StatusCounts) {
		t.Errorf("%s: epoll complete %d %+v doc %d statuses %v; io_uring complete %d %+v doc %d statuses %v", what,
			a.Complete, a.Counters, a.DocLength, a.StatusCounts, b.Complete, b.Counters, b.DocLength, b.StatusCounts)
	}
	for code, n := range a.StatusCounts {
		if b.StatusCounts[code] != n {
			t.Errorf("%s: status %d: epoll %d, io_uring %d", what, code, n, b.StatusCounts[code])
		}
	}
}

// The io_uring engine counts what the epoll engine counts against the same
// in-process server: keep-alive and not, several loops, many connections.
func TestUringSameCountsAsEpoll(t *testing.T) {
	if !uringExpected() {
		t.Skip("no io_uring here")
	}
	for _, ka := range []bool{true, false} {
		srv := newBenchServer(t, ka)
		cfg := h1Config(srv.port(), 2000, 37, ka)
		cfg.Workers = 3
		a, b := engineRun(t, cfg, EngineEpoll), engineRun(t, cfg, EngineUring)
		sameCounts(t, map[bool]string{true: "keep-alive", false: "a connection per request"}[ka], a, b)
		if b.Complete != 2000 || b.Failed.Total != 0 || b.BodyRead != 200000 {
			t.Errorf("keep-alive %v: complete %d failed %+v body %d", ka, b.Complete, b.Failed, b.BodyRead)
		}
	}
}

// Against nginx: documents of 100 B, 40 KiB (several provided buffers per
// response) and 1 MiB (the per-connection cap), a 404, keep-alive and not.
// Then nginx closing each connection after its 7th response: how many
// responses were kept alive depends on how the requests fell on the
// connections, so there only the requests and the body bytes must agree.
func TestUringSameCountsAsEpollNginx(t *testing.T) {
	if !uringExpected() {
		t.Skip("no io_uring here")
	}
	files := map[string][]byte{"s.txt": []byte(strings.Repeat("s", 100)),
		"m.txt": []byte(strings.Repeat("m", 40<<10)), "l.txt": []byte(strings.Repeat("l", 1<<20))}
	ng := testtool.StartNginx(t, files, 2, `    access_log off;
    server {
        listen 127.0.0.1:%[2]d;
        root %[1]s/www;
    }
    server {
        listen 127.0.0.1:%[3]d;
        keepalive_requests 7;
        root %[1]s/www;
    }`)
	port := ng.Ports[0]
	for _, tc := range []struct {
		path string
		n, c int
		ka   bool
	}{
		{"/s.txt", 700, 10, true}, {"/s.txt", 200, 10, false}, {"/m.txt", 300, 5, true},
		{"/l.txt", 20, 2, true}, {"/missing", 100, 4, true},
	} {
		cfg := h1Config(port, tc.n, tc.c, tc.ka)
		cfg.Target.Path, cfg.Spec.Target = tc.path, tc.path
		cfg.Request = h1Request("GET", tc.path, port, tc.ka)
		cfg.HeadLen = len(cfg.Request)
		a, b := engineRun(t, cfg, EngineEpoll), engineRun(t, cfg, EngineUring)
		sameCounts(t, tc.path, a, b)
		if b.Complete != tc.n || b.Failed.Total != 0 {
			t.Errorf("%s: complete %d failed %+v (%v)", tc.path, b.Complete, b.Failed, b.FirstError)
		}
	}
	cfg := h1Config(ng.Ports[1], 700, 10, true)
	cfg.Target.Path, cfg.Spec.Target = "/s.txt", "/s.txt"
	cfg.Request = h1Request("GET", "/s.txt", ng.Ports[1], true)
	cfg.HeadLen = len(cfg.Request)
	a, b := engineRun(t, cfg, EngineEpoll), engineRun(t, cfg, EngineUring)
	for _, r := range []*Result{a, b} {
		if r.Complete != 700 || r.Failed.Total != 0 || r.BodyRead != 70000 || r.TotalSent != a.TotalSent || r.KeepAlive > 600+9 {
			t.Errorf("closing every 7th: %s complete %d %+v", r.Engine, r.Complete, r.Counters)
		}
	}
}

// The hostile-server tests of the HTTP/1 event loops run on io_uring too
// (those whose options take the portable path are left out).
func TestFaultsUringEngine(t *testing.T) {
	if !uringExpected() {
		t.Skip("no io_uring here")
	}
	for name, fn := range eventLoopFaults() {
		t.Run(name, func(t *testing.T) {
			usePath(t, "uring")
			before := uringLoopsStarted.Load()
			fn(t)
			if !t.Skipped() && uringLoopsStarted.Load() == before {
				t.Errorf("the io_uring loops never ran")
			}
		})
	}
}

// failUringSetup makes io_uring_setup fail with errno, as a seccomp filter
// (EPERM), kernel.io_uring_disabled (EPERM) or an old kernel (ENOSYS, or
// EINVAL for flags it does not know) does,
// and lets auto pick io_uring where it works, until the test ends.
func failUringSetup(t *testing.T, errno syscall.Errno) {
	setup, probe, auto := uringSetup, uringProbe, uringAuto
	uringSetup = func(uint32, *uringParams) (int, syscall.Errno) { return -1, errno }
	uringProbe = sync.OnceValue(probeUring)
	uringAuto = true
	t.Cleanup(func() { uringSetup, uringProbe, uringAuto = setup, probe, auto })
}

// Where io_uring_setup fails, auto runs on epoll with the same results, and
// --engine uring is an error before the first request.
func TestUringProbeFallsBackToEpoll(t *testing.T) {
	if !uringExpected() {
		t.Skip("no io_uring here")
	}
	srv := newBenchServer(t, true)
	cfg := h1Config(srv.port(), 300, 4, true)
	auto := engineRun(t, cfg, EngineUring) // what auto takes where io_uring works
	for _, errno := range []syscall.Errno{unix.EPERM, unix.ENOSYS, unix.EINVAL} {
		failUringSetup(t, errno)
		want := error(errno)
		if errno == unix.EINVAL { // a kernel before 6.1: no deferred task work
			want = errUringOld
		}
		if err := uringProbe(); err != want {
			t.Fatalf("probe with setup failing %v: %v", errno, err)
		}
		cfg.Engine = EngineAuto
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Engine != EngineEpoll {
			t.Errorf("setup failing with %v: auto took %q, want epoll", errno, res.Engine)
		}
		sameCounts(t, "fallback", res, auto)
		cfg.Engine = EngineUring
		rn, err := newRunner(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		srvBefore := srv.fs.accepted.Load()
		_, err = rn.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), "io_uring is not available") {
			t.Errorf("--engine uring with setup failing %v: %v", errno, err)
		}
		if srv.fs.accepted.Load() != srvBefore {
			t.Errorf("--engine uring with setup failing: the run opened connections")
		}
	}
}

// Over TLS the io_uring engine counts what the epoll engine counts against
// the same in-process server: keep-alive and not, several loops, with
// session resumption on a connection per request (every handshake after
// the first ones resumes, on both engines).
func TestUringSameCountsAsEpollTLS(t *testing.T) {
	if !uringExpected() {
		t.Skip("no io_uring here")
	}
	for _, ka := range []bool{true, false} {
		conf := tlsServerConfig(t)
		var full, resumed atomic.Int64
		conf.VerifyConnection = func(cs tls.ConnectionState) error {
			if cs.DidResume {
				resumed.Add(1)
			} else {
				full.Add(1)
			}
			return nil
		}
		srv := newBenchServerTLS(t, ka, conf)
		cfg := h1Config(srv.port(), 600, 13, ka)
		cfg.Target.TLS, cfg.TLS.Resume = true, !ka
		cfg.Workers = 3
		what := map[bool]string{true: "keep-alive", false: "a connection per request"}[ka]
		var handshakes [2][2]int64
		var res [2]*Result
		for i, engine := range []string{EngineEpoll, EngineUring} {
			full.Store(0)
			resumed.Store(0)
			res[i] = engineRun(t, cfg, engine)
			handshakes[i] = [2]int64{full.Load(), resumed.Load()}
		}
		sameCounts(t, what, res[0], res[1])
		if b := res[1]; b.Complete != 600 || b.Failed.Total != 0 || b.BodyRead != 60000 || b.TotalSent != res[0].TotalSent {
			t.Errorf("%s: complete %d failed %+v body %d sent %d (epoll %d)", what, b.Complete, b.Failed, b.BodyRead, b.TotalSent, res[0].TotalSent)
		}
		// How many connections open before the first ticket arrives is
		// the scheduler's choice: at most one per connection slot.
		for i, h := range handshakes {
			if h[0]+h[1] != map[bool]int64{true: 13, false: 600}[ka] || ka && h[1] != 0 || !ka && h[0] > 13 {
				t.Errorf("%s: %s: handshakes (full, resumed) %v", what, res[i].Engine, h)
			}
		}
	}
}

// Against nginx over TLS: documents of 100 B, 40 KiB and 1 MiB, keep-alive
// and not (resuming sessions), the same counts and bytes on both engines.
func TestUringSameCountsAsEpollNginxTLS(t *testing.T) {
	if !uringExpected() {
		t.Skip("no io_uring here")
	}
	certs := t.TempDir()
	writeSelfSigned(t, filepath.Join(certs, "cert.pem"), filepath.Join(certs, "key.pem"))
	files := map[string][]byte{"s.txt": []byte(strings.Repeat("s", 100)),
		"m.txt": []byte(strings.Repeat("m", 40<<10)), "l.txt": []byte(strings.Repeat("l", 1<<20))}
	ng := testtool.StartNginx(t, files, 1, `    access_log off;
    server {
        listen 127.0.0.1:%[2]d ssl;
        ssl_certificate `+strings.ReplaceAll(certs, "%", "%%")+`/cert.pem;
        ssl_certificate_key `+strings.ReplaceAll(certs, "%", "%%")+`/key.pem;
        root %[1]s/www;
    }`)
	port := ng.Ports[0]
	for _, tc := range []struct {
		path string
		n, c int
		ka   bool
	}{
		{"/s.txt", 500, 10, true}, {"/s.txt", 100, 4, false}, {"/m.txt", 200, 5, true}, {"/l.txt", 10, 2, true},
	} {
		cfg := h1Config(port, tc.n, tc.c, tc.ka)
		cfg.Target.TLS, cfg.TLS.Resume = true, !tc.ka
		cfg.Target.Path, cfg.Spec.Target = tc.path, tc.path
		cfg.Request = h1Request("GET", tc.path, port, tc.ka)
		cfg.HeadLen = len(cfg.Request)
		a, b := engineRun(t, cfg, EngineEpoll), engineRun(t, cfg, EngineUring)
		sameCounts(t, tc.path, a, b)
		if b.Complete != tc.n || b.Failed.Total != 0 || b.BodyRead != a.BodyRead || b.TotalSent != a.TotalSent {
			t.Errorf("%s: complete %d failed %+v body %d/%d sent %d/%d (%v)", tc.path, b.Complete, b.Failed,
				b.BodyRead, a.BodyRead, b.TotalSent, a.TotalSent, b.FirstError)
		}
	}
}

// Over TLS on io_uring a kept-alive connection's output buffer is reused
// from one request to the next: 4000 more requests allocate no more bytes
// than crypto/tls's own reads do (about 50 B each), where a buffer that
// only grew cost some 250 B a request more, without bound.
func TestUringTLSOutputBufferReused(t *testing.T) {
	if !uringExpected() {
		t.Skip("no io_uring here")
	}
	if raceEnabled {
		t.Skip("the race detector allocates per request in crypto/tls's path (as keepAliveLoopAllocations leaves out)")
	}
	srv := newBenchServerTLS(t, true, tlsServerConfig(t))
	bytesFor := func(n int) uint64 {
		cfg := h1Config(srv.port(), n, 2, true)
		cfg.Target.TLS = true
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res := engineRun(t, cfg, EngineUring)
		runtime.ReadMemStats(&after)
		if res.Complete != n || res.KeepAlive != n {
			t.Fatalf("run of %d: %+v", n, res)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	bytesFor(100) // warm up
	small, large := bytesFor(2000), bytesFor(6000)
	if per := (int64(large) - int64(small)) / 4000; per > 150 {
		t.Errorf("4000 more requests allocated %d more bytes (%d vs %d): %d B a request, want at most 150", int64(large)-int64(small), large, small, per)
	}
}
