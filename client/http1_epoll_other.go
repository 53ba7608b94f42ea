//go:build !linux

package client

// Other systems use the portable goroutine-per-connection path of http1.go.

func epollLoops(*Config, *dialer) int { return 0 }

// workEpoll is never called when epollLoops returns 0.
func (h *http1) workEpoll(r *run, slot int, t *Tally) {
	panic("gab: the epoll path exists only on Linux")
}
