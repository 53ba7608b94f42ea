//go:build linux

package client

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// quietPoller is an event loop's poller with nothing registered, so that
// every raw wait times out after rawWaitMs.
func quietPoller(t *testing.T) *epPoller {
	t.Helper()
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(epfd) })
	return &epPoller{r: testRun(&Config{}), t: &tally{}, epfd: epfd, events: make([]unix.EpollEvent, 1)}
}

// waiting is true from just before timedOutWait's wait to its end, so that a
// goroutine started by its before runs its work in the wait's yield, not in a
// preemption before the wait.
var waiting atomic.Bool

// timedOutWait waits until a raw wait times out (a signal may interrupt one)
// after calling before; it reports whether the wait switched the loop to
// Syscall waits.
func timedOutWait(t *testing.T, p *epPoller, before func()) bool {
	t.Helper()
	for range 20 {
		p.syscallUntil = 0
		before()
		waiting.Store(true)
		n, errno := p.wait()
		waiting.Store(false)
		if n != 0 || errno != 0 {
			continue // EINTR: the runtime's preemption signal
		}
		return p.syscallUntil > 0
	}
	t.Fatal("no raw wait timed out in 20 tries")
	return false
}

// A raw wait that times out while nothing else needs the P (a slow peer, a
// server starved by other processes) keeps the raw waits: through Syscall,
// sysmon would take the P at every wait and wake every 20 µs. One that times
// out while other goroutines wait for the P (an in-process server) lets
// them run and waits through Syscall for a while.
func TestEpollWaitTimeoutSwitchesOnlyForOthers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := quietPoller(t)
	kept := 0
	for range 5 { // a yield the machine's load stretches past othersRan may switch: one clean one suffices
		if !timedOutWait(t, p, func() {}) {
			kept++
		}
	}
	if kept == 0 {
		t.Errorf("5 quiet timeouts each switched to Syscall waits")
	}
	busy := func() { // a goroutine that needs the P for 2 ms once the loop yields
		go func() {
			for !waiting.Load() { // preempted before the wait: let it begin
				runtime.Gosched()
			}
			for end := time.Now().Add(2 * time.Millisecond); time.Now().Before(end); {
			}
		}()
	}
	switched := false
	for range 5 { // a loaded machine may preempt the loop before its wait: one clean one suffices
		if timedOutWait(t, p, busy) {
			switched = true
			break
		}
	}
	if !switched {
		t.Errorf("5 timeouts whose yields ran another goroutine for 2 ms each kept raw waits")
	}
}
