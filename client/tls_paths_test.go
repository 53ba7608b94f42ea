package client

import "testing"

// The TLS suites run on both HTTP/1 paths: the event loops, which drive TLS
// connections themselves (tlsloop_linux.go), and the portable path. tlsPaths
// runs a test body on each and checks that the path asked for is the one that
// ran.

// tlsOnEventLoops reports whether HTTP/1 runs over TLS take the event loops
// when the epoll path is asked for (and exists in this build).
func tlsOnEventLoops() bool { return epollExpected() }

// tlsPaths runs fn as the subtests "epoll" and "go", each on its path, and
// fails a subtest whose run took the other path: on "epoll" the event loops
// must have started (where TLS runs on them), on "go" never.
func tlsPaths(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	for _, path := range []string{"epoll", "go"} {
		t.Run(path, func(t *testing.T) {
			usePath(t, path)
			before := epollLoopsStarted.Load()
			fn(t)
			started := epollLoopsStarted.Load() - before
			switch {
			case path == "go" && started != 0:
				t.Errorf("the portable path started %d epoll loops", started)
			case path == "epoll" && tlsOnEventLoops() && started == 0:
				t.Errorf("the epoll path never ran: the TLS run took the portable path")
			}
		})
	}
}
