package client

import (
	"fmt"
	"testing"
)

// Both HTTP/1 paths side by side against the in-process loopback server:
//
//	go test -run '^$' -bench 'BenchmarkPaths' -benchmem ./client
//
// The keep-alive loop must report 0 allocs/op on either path. (The in-process
// server shares the CPU, so ns/op compares the paths only roughly; the client's
// own CPU per request is measured against nginx with bench/bench.py.)

func benchmarkPaths(b *testing.B, keepAlive bool) {
	for _, path := range []string{"epoll", "go"} {
		for _, c := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("%s/c%d", path, c), func(b *testing.B) {
				usePath(b, path)
				before := epollLoopsStarted.Load()
				benchmarkRun(b, keepAlive, c)
				if ran := epollLoopsStarted.Load() > before; ran != (path == "epoll" && epollExpected()) {
					b.Fatalf("path %s: epoll loops started: %v", path, ran)
				}
			})
		}
	}
}

// BenchmarkPathsKeepAlive100B: -k, 100-byte responses.
func BenchmarkPathsKeepAlive100B(b *testing.B) { benchmarkPaths(b, true) }

// BenchmarkPathsNoKeepAlive100B: ab's default, a connection per request.
func BenchmarkPathsNoKeepAlive100B(b *testing.B) { benchmarkPaths(b, false) }
