//go:build !linux

package client

import "sync/atomic"

// Other systems use the portable goroutine-per-connection path of http1.go.

// epollLoopsStarted stays 0: there is no fast path here.
var epollLoopsStarted atomic.Int64

func epollLoops(*Config, *dialer) int { return 0 }

// workEpoll is never called when epollLoops returns 0.
func (h *http1) workEpoll(r *run, slot int, t *tally) {
	panic("gab: the epoll path exists only on Linux")
}
