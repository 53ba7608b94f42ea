package client

import (
	"fmt"
	"testing"
)

// The HTTP/1 paths (the event loops on epoll and on io_uring, and the
// portable path) side by side against the in-process loopback server:
//
//	go test -run '^$' -bench 'BenchmarkPaths' -benchmem ./client
//
// The keep-alive loop must report 0 allocs/op on every path. (The in-process
// server shares the CPU, so ns/op compares the paths only roughly; the client's
// own CPU per request is measured against nginx with bench/bench.py.)

func benchmarkPaths(b *testing.B, keepAlive, useTLS bool) {
	for _, path := range []string{"epoll", "uring", "go"} {
		if path == "uring" && !uringExpected() {
			continue
		}
		for _, c := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/c%d", path, c), func(b *testing.B) {
				usePath(b, path)
				before, uringBefore := epollLoopsStarted.Load(), uringLoopsStarted.Load()
				benchmarkRunTLS(b, keepAlive, c, useTLS)
				if ran := epollLoopsStarted.Load() > before; ran != (path != "go" && epollExpected()) {
					b.Fatalf("path %s: event loops started: %v", path, ran)
				}
				if ran := uringLoopsStarted.Load() > uringBefore; ran != (path == "uring") {
					b.Fatalf("path %s: io_uring loops started: %v", path, ran)
				}
			})
		}
	}
}

// BenchmarkPathsKeepAlive100B: -k, 100-byte responses.
func BenchmarkPathsKeepAlive100B(b *testing.B) { benchmarkPaths(b, true, false) }

// BenchmarkPathsNoKeepAlive100B: ab's default, a connection per request.
func BenchmarkPathsNoKeepAlive100B(b *testing.B) { benchmarkPaths(b, false, false) }

// BenchmarkTLSKeepAlive100B: -k over TLS 1.3 (a server certificate on ECDSA
// P-256), one handshake per connection, then 100-byte responses:
//
//	go test -run '^$' -bench 'BenchmarkTLSKeepAlive100B' -benchmem ./client
//
// The server allocates nothing per request, so allocs/op is the client's:
// crypto/tls's one allocation per response read (cryptoTLSReadAllocs) and
// nothing of gab's own, on either path; the c handshakes amortise to 0 over a
// large b.N (-benchtime 20000x).
func BenchmarkTLSKeepAlive100B(b *testing.B) { benchmarkPaths(b, true, true) }
