package client

import (
	"sync/atomic"
	"testing"
)

// The TLS suites run on both paths: the event loops, which drive TLS
// connections themselves (tlsloop_linux.go), and the portable path. tlsPaths
// (HTTP/1) and h2TLSPaths (--http2) run a test body on each and check that
// the path asked for is the one that ran.

// tlsOnEventLoops reports whether HTTP/1 runs over TLS take the event loops
// when the epoll path is asked for (and exists in this build).
func tlsOnEventLoops() bool { return epollExpected() }

// h2TLSOnEventLoops reports whether h2 over TLS takes the h2 event loops when
// the epoll path is asked for (and exists in this build).
func h2TLSOnEventLoops() bool { return epollExpected() }

// tlsPaths runs fn as the subtests "epoll" and "go", each on its path, and
// fails a subtest whose run took the other path: on "epoll" the HTTP/1 event
// loops must have started (where TLS runs on them), on "go" never.
func tlsPaths(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	checkedPaths(t, &epollLoopsStarted, tlsOnEventLoops(), fn)
}

// h2TLSPaths is tlsPaths for --http2 over TLS, by the h2 event loops' count.
func h2TLSPaths(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	checkedPaths(t, &h2EpollLoopsStarted, h2TLSOnEventLoops(), fn)
}

// checkedPaths runs fn on each path; loops counts the event loops started,
// which must grow on "epoll" if onLoops and never on "go".
func checkedPaths(t *testing.T, loops *atomic.Int64, onLoops bool, fn func(t *testing.T)) {
	t.Helper()
	for _, path := range []string{"epoll", "go"} {
		t.Run(path, func(t *testing.T) {
			usePath(t, path)
			before := loops.Load()
			fn(t)
			started := loops.Load() - before
			switch {
			case path == "go" && started != 0:
				t.Errorf("the portable path started %d event loops", started)
			case path == "epoll" && onLoops && started == 0:
				t.Errorf("the event loops never ran: the TLS run took the portable path")
			case path == "epoll" && !onLoops && started != 0:
				t.Errorf("%d event loops started for a run they do not serve", started)
			}
		})
	}
}
