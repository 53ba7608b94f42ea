//go:build !linux

package client

import "sync/atomic"

// Other systems use http2.go's goroutine path only.

// h2EpollLoopsStarted stays 0: there is no fast path here.
var h2EpollLoopsStarted atomic.Int64

func h2EpollLoops(*h2Transport) int { return 0 }

// workEpoll is never called when h2EpollLoops returns 0.
func (h *h2Transport) workEpoll(r *run, slot int, t *tally) {
	panic("gab: the HTTP/2 event loop exists only on Linux")
}
