package client

import (
	"sync/atomic"
	"testing"
)

// Tests run on both paths: the event loops (HTTP/1 and --http2, plain and
// TLS) and the portable path. h1Paths and h2Paths run a test body on each
// and check that the path asked for is the one that ran.

// h1Paths runs fn as the subtests "epoll" and "go", each on its path, and
// fails a subtest whose run took the other path: on "epoll" the HTTP/1 event
// loops must have started (where they exist), on "go" never. Where io_uring
// works, fn runs on the io_uring engine too (uringPath).
func h1Paths(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	bothPaths(t, &epollLoopsStarted, fn)
	uringPath(t, fn)
}

// h1TLSPaths is h1Paths for https:// runs: the epoll and portable paths,
// and the io_uring engine where it works.
func h1TLSPaths(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	h1Paths(t, fn)
}

// uringPath runs fn as the subtest "uring" on the io_uring engine of the
// HTTP/1 event loops, where this kernel has it, and fails it if the run
// took another engine.
func uringPath(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	if !uringExpected() {
		return
	}
	t.Run("uring", func(t *testing.T) {
		usePath(t, "uring")
		before := uringLoopsStarted.Load()
		fn(t)
		if uringLoopsStarted.Load() == before {
			t.Errorf("the io_uring loops never ran")
		}
	})
}

// h2Paths is h1Paths for --http2, by the HTTP/2 event loops' count.
func h2Paths(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	bothPaths(t, &h2EpollLoopsStarted, fn)
}

// bothPaths runs fn on each path; loops counts the event loops started,
// which must grow on "epoll" where the event loops exist and never on "go".
func bothPaths(t *testing.T, loops *atomic.Int64, fn func(t *testing.T)) {
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
			case path == "epoll" && epollExpected() && started == 0:
				t.Errorf("the event loops never ran: the run took the portable path")
			}
		})
	}
}

// pathTest is one behaviour test that runs on each path.
type pathTest struct {
	name string
	fn   func(*testing.T)
}
