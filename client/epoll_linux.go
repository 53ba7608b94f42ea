//go:build linux

package client

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event-loop plumbing shared by the Linux fast paths (HTTP/1 in
// http1_epoll_linux.go, h2c in http2_epoll_linux.go): an epoll instance with a
// waker, raw non-blocking sockets to the resolved addresses, and the wait
// that keeps the loop's P.

// epWaker is registered with tally.setConn: a stopping run "closes" it, which
// makes the loop's epoll_wait return.
type epWaker struct {
	mu sync.Mutex
	fd int // eventfd; -1 once the loop has shut down
}

func (w *epWaker) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		one := [8]byte{1, 1, 1, 1, 1, 1, 1, 1} // any non-zero counter, whatever the byte order
		_, _ = unix.Write(w.fd, one[:])        // a full counter still wakes the loop
	}
	return nil
}

func (w *epWaker) shut() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		_ = unix.Close(w.fd)
		w.fd = -1
	}
}

// wakeID marks the waker's epoll events (connection indexes are smaller).
const wakeID = -1

// epPoller is one event loop's epoll instance, clock and addresses.
type epPoller struct {
	r       *run
	t       *tally
	d       *dialer
	epfd    int
	wake    *epWaker
	events  []unix.EpollEvent
	ctlEv   unix.EpollEvent // epoll_ctl's argument, kept here so it does not escape per call
	addrs   []unix.Sockaddr
	domains []int
	raddrs  []net.Addr // the addresses as net.Addrs (a TLS session cache keys on them)
	now     int64      // the latest clock reading

	syscallUntil int64 // wait through Syscall until then (see wait)
	lastYield    int64
	spinNs       int64 // poll without sleeping this long after the last events (0: never)
	lastEvents   int64 // clock of the last wait that returned events
	more         bool  // the loop has input left from its last turn: the next wait must not sleep
	noWatch      bool  // sockets are not registered with epoll (the io_uring engine)
	opening      int   // TLS connections whose connect or handshake is under way
	// nodelay sets TCP_NODELAY on new sockets (TLS: crypto/tls writes a
	// message of several records as several writes, which Nagle would
	// hold back for the server's delayed ACK).
	nodelay bool
}

// init creates the epoll instance and its waker; maxEvents bounds one wait's
// events; loops is the number of event loops of the run.
func (p *epPoller) init(r *run, t *tally, d *dialer, maxEvents, loops int) error {
	p.r, p.t, p.d = r, t, d
	if runtime.GOMAXPROCS(0) > loops && !r.cfg.NoSpin {
		// A P (core) beyond the loops': spinning briefly before sleeping
		// costs nobody a core and spares the server the wake-up (an IPI)
		// that a sleeping client costs it for each response.
		p.spinNs = spinFor
	}
	p.events = make([]unix.EpollEvent, min(maxEvents, 256))
	for _, a := range d.addrs {
		p.raddrs = append(p.raddrs, &net.TCPAddr{IP: a.IP, Port: d.port, Zone: a.Zone})
		if ip4 := a.IP.To4(); ip4 != nil {
			sa := &unix.SockaddrInet4{Port: d.port}
			copy(sa.Addr[:], ip4)
			p.addrs, p.domains = append(p.addrs, sa), append(p.domains, unix.AF_INET)
		} else {
			sa := &unix.SockaddrInet6{Port: d.port}
			copy(sa.Addr[:], a.IP)
			p.addrs, p.domains = append(p.addrs, sa), append(p.domains, unix.AF_INET6)
		}
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		_ = unix.Close(epfd)
		return err
	}
	p.epfd, p.wake = epfd, &epWaker{fd: efd}
	p.ctlEv = unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakeID}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &p.ctlEv); err != nil {
		p.wake.shut()
		_ = unix.Close(epfd)
		return err
	}
	p.lastYield = p.tick()
	return nil
}

// close shuts the waker and the epoll instance (sockets are the caller's).
func (p *epPoller) close() {
	p.wake.shut()
	_ = unix.Close(p.epfd)
}

// tick reads the clock; the loop's time never goes back.
func (p *epPoller) tick() int64 {
	if now := p.r.clock(); now > p.now {
		p.now = now
	}
	return p.now
}

// wait waits for events (at most rawWaitMs while it keeps the P; not at all
// while it spins) and reads the clock once for all of them.
func (p *epPoller) wait() (int, syscall.Errno) {
	var n int
	var errno syscall.Errno
	raw := p.now >= p.syscallUntil || p.more
	spinning := raw && (p.more || p.now-p.lastEvents < p.spinNs)
	switch {
	case spinning:
		n, errno = epollWaitRaw(p.epfd, p.events, 0)
	case raw:
		n, errno = epollWaitRaw(p.epfd, p.events, rawWaitMs)
	default:
		n, errno = epollWait(p.epfd, p.events, -1)
	}
	p.tick()
	if n > 0 {
		p.lastEvents = p.now
	}
	// Nothing for a whole rawWaitMs: a slow peer, or one that needs this P
	// (a server in the same process, which only the scheduler's own poller
	// wakes).
	timedOut := raw && !spinning && n == 0 && errno == 0
	if raw && (errno != 0 || timedOut || p.now-p.lastYield >= int64(yieldEvery)*1e6) {
		// Let timers and other goroutines run.
		before := p.now
		runtime.Gosched()
		p.lastYield = p.tick()
		if timedOut && p.lastYield-before >= othersRan {
			// Others ran on this P: they need it, so wait through Syscall
			// for a while. A slow peer alone (a server starved by other
			// processes) keeps the raw waits: through Syscall each wait
			// of more than ~20 µs lets sysmon take the P away and wake
			// every 20 µs after, which on one pinned core doubled the
			// client's CPU per request (h2c, 100k requests: 1.28 s of
			// task-clock against 0.70 s, 15.7k nanosleeps against 1.3k).
			p.syscallUntil = p.now + rawPause
		}
	}
	if n > 0 {
		touchAt(p.t, p.now)
	}
	return n, errno
}

// ready waits for events; false if the wait failed (the run is then stopped).
// The slice is empty after an interrupted wait.
func (p *epPoller) ready() ([]unix.EpollEvent, bool) {
	n, errno := p.wait()
	switch errno {
	case 0:
		return p.events[:n], true
	case unix.EINTR:
		return nil, true
	}
	p.r.stop(EndFatal, sysError("apr_pollset_poll", errno))
	return nil, false
}

// epSock is a loop connection's socket, as both loops keep it.
type epSock struct {
	idx      int32 // index in the loop, carried in the epoll event
	gen      int32 // bumped per socket, so a stale event is recognised
	fd       int   // -1 when closed
	addrIdx  int32 // dialer address index this socket connects to
	readable bool  // the socket may hold unread bytes
	hup      bool  // the peer closed or the socket erred: read until EOF or error
	budget   int   // bytes this turn may still read (the loop sets it per turn)

	// TLS (tlsloop_linux.go): the connection's session, nil on plain
	// connections and between connections; opening while its connect or
	// handshake is under way (counted in epPoller.opening); obuf keeps the
	// link's output buffer from one connection to the next.
	tls     *tlsLink
	opening bool
	obuf    []byte
}

// canRead reports whether s may read now: the turn's budget is not spent,
// and bytes may be waiting in the socket or in crypto/tls.
func (s *epSock) canRead() bool { return s.budget > 0 && s.waiting() }

// waiting reports bytes that may be waiting: in the socket, or decoded
// records kept by crypto/tls.
func (s *epSock) waiting() bool { return s.readable || s.tls != nil && s.tls.more }

// spent reports that s stopped reading for its budget with bytes that may
// be waiting: edge-triggered epoll will not report them again, so the loop
// must come back to s by itself.
func (s *epSock) spent() bool { return s.budget <= 0 && s.waiting() }

// recv reads what s holds into p, the raw bytes counted against the turn's
// budget; (0, nil) means nothing more for now. Over TLS it reads plaintext
// through the link.
func (s *epSock) recv(p []byte) (int, error) {
	if s.tls != nil {
		return s.tls.read(p)
	}
	n, errno := rawRead(s.fd, p)
	switch {
	case errno == 0 && n > 0:
		if n < len(p) && !s.hup {
			s.readable = false // a short read drained the socket
		}
		s.budget -= n
		return n, nil
	case errno == 0:
		return 0, io.EOF
	case errno == unix.EAGAIN:
		s.readable = false
		return 0, nil
	case errno == unix.EINTR:
		return 0, nil
	}
	return 0, os.NewSyscallError("read", errno)
}

// take notes what ev says of s's socket; false for a stale event (the
// socket it was for is closed or replaced).
func (s *epSock) take(ev *unix.EpollEvent) bool {
	if s.gen != ev.Pad || s.fd < 0 {
		return false
	}
	s.readable = s.readable || ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0
	s.hup = s.hup || ev.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0
	return true
}

// dial gives s a new socket: a non-blocking connect to the dialer's current
// address (moving on to the next as the dialer's fallback allows), registered
// edge-triggered for input, and for output too if out. The first write (or
// EPOLLOUT) tells how the connect went.
func (p *epPoller) dial(s *epSock, out bool) error {
	for {
		idx := p.d.current.Load()
		fd, err := p.connectSocket(int(idx) % len(p.addrs))
		if err != nil {
			var se *os.SyscallError
			if errors.As(err, &se) && se.Syscall == "connect" && p.fallback(idx) {
				continue
			}
			return err
		}
		s.gen++
		if err := p.watch(fd, s.idx, s.gen, out, false); err != nil {
			_ = unix.Close(fd)
			return err
		}
		s.fd, s.addrIdx, s.readable, s.hup = fd, idx, false, false
		p.t.connOpened()
		return nil
	}
}

// fallback moves on from address idx after a failed connect, if the dialer allows.
func (p *epPoller) fallback(idx int32) bool { return p.d.fallback(idx, p.r.isStopped()) }

// closeSock closes s's socket (which also leaves the epoll set).
func (p *epPoller) closeSock(s *epSock) {
	p.opened(s)
	if s.tls != nil {
		s.obuf = s.tls.close()
		s.tls = nil
	}
	if s.fd >= 0 {
		_ = unix.Close(s.fd)
		s.fd = -1
		p.t.connClosed()
	}
	s.readable, s.hup = false, false
}

// connectSocket opens a non-blocking socket to address k and starts
// connecting. Its error is an *os.SyscallError naming "socket" or "connect".
func (p *epPoller) connectSocket(k int) (int, error) {
	fd, err := unix.Socket(p.domains[k], unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	if p.nodelay {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
			_ = unix.Close(fd)
			return -1, os.NewSyscallError("setsockopt", err)
		}
	}
	if err := unix.Connect(fd, p.addrs[k]); err != nil && err != unix.EINPROGRESS {
		_ = unix.Close(fd)
		return -1, os.NewSyscallError("connect", err)
	}
	return fd, nil
}

// watch registers fd (edge-triggered) as connection idx of generation gen,
// for input, and for output too if out; mod changes an existing registration.
func (p *epPoller) watch(fd int, idx, gen int32, out, mod bool) error {
	if p.noWatch {
		return nil
	}
	ev := uint32(epollInput)
	if out {
		ev |= unix.EPOLLOUT
	}
	op := unix.EPOLL_CTL_ADD
	if mod {
		op = unix.EPOLL_CTL_MOD
	}
	p.ctlEv = unix.EpollEvent{Events: ev, Fd: idx, Pad: gen}
	return unix.EpollCtl(p.epfd, op, fd, &p.ctlEv)
}

// epollInput is what a socket is registered for: EPOLLOUT is added only when
// a write meets a full buffer or a pending connect.
const epollInput = unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET

// yieldEvery bounds, in ms, how long a busy loop keeps its P from the scheduler.
const yieldEvery = 1

// spinFor is how long (ns) a loop with a core to spare polls after its last
// events before it sleeps: on loopback a response takes 10–20 µs.
const spinFor = 50e3

// rawWaitMs bounds, in ms, a raw epoll wait (an idle loop keeps its P that
// long). Not 1 ms: with a wait that short the guest kernel here (haltpoll
// cpuidle) charged the waiting client about 3 µs more CPU per request (a C
// epoll client measured 1.90 s per 200k requests at 1 ms, 1.66 s at 2 ms,
// 1.24 s at 5 ms and with no timeout).
const rawWaitMs = 10

// rawPause is how long (ns) a loop whose raw wait timed out, and whose
// yield after it let other goroutines run, waits through Syscall before it
// tries raw waits again.
const rawPause = 100e6

// othersRan is how long (ns) a yield must take for the loop to conclude that
// other goroutines ran on its P (a yield with nothing else to run returns
// in microseconds; with an in-process server behind it, in hundreds).
const othersRan = 100e3

// epollWaitRaw is epoll_wait without the scheduler's system-call bookkeeping.
// Through Syscall, a wait of more than ~20 µs lets sysmon take the P away
// and, without an idle P (GOMAXPROCS 1), start a spinning thread for it: two
// futex calls and context switches per wake-up, on the same core (unpinned on
// 2 cores, Syscall waits gave 77–79k req/s, raw waits 83k). This call keeps
// the P, so the loop waits at most rawWaitMs ms and then yields to whatever
// else is runnable (the run's timers and watchdog, signal handling). A signal
// (GC preemption) interrupts the wait with EINTR and the loop yields at once.
func epollWaitRaw(epfd int, events []unix.EpollEvent, msec int) (int, syscall.Errno) {
	r1, _, errno := syscall.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(unsafe.SliceData(events))), uintptr(len(events)), uintptr(msec), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r1), 0
}

// epollWait is epoll_wait as a blocking system call (the P is free meanwhile).
func epollWait(epfd int, events []unix.EpollEvent, msec int) (int, syscall.Errno) {
	n, err := unix.EpollWait(epfd, events, msec)
	if err != nil {
		if errno, ok := err.(syscall.Errno); ok {
			return 0, errno
		}
		return 0, unix.EINVAL
	}
	return n, 0
}

// rawRead and rawWrite are read(2) and write(2) on non-blocking sockets: they
// never block, so they skip the scheduler's system-call bookkeeping.
func rawRead(fd int, p []byte) (int, syscall.Errno) {
	r1, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(r1), 0
}

func rawWrite(fd int, p []byte) (int, syscall.Errno) {
	r1, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(r1), 0
}
