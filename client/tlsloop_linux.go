//go:build linux

package client

import (
	"crypto/tls"
	"errors"
	"io"
	"iter"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// TLS on the event loops. Go's crypto/tls does the cryptography; the loop
// owns the socket. A loop connection's tls.Conn sits on a tlsLink, a net.Conn
// over the connection's raw non-blocking socket:
//
//   - After the handshake, tls.Conn.Read reads through the link, which reads
//     the socket directly into crypto/tls's record buffer (no copy of its
//     own) and, when the socket has nothing (or the wake-up's read budget is
//     spent), returns errWouldBlock, a temporary net.Error. crypto/tls keeps
//     such an error out of its sticky connection error (readRecordOrCCS sets
//     the error only when it is not a temporary net.Error) and keeps the
//     bytes of a partial record, so the next Read, after the next epoll
//     event, goes on where this one stopped. tls.Conn.Write writes through
//     the link: what the socket does not take is kept in the link's output
//     buffer, which the loop writes when epoll reports the socket writable,
//     so Write never fails for a full socket (a write error is sticky).
//     crypto/tls also writes on its own from inside a Read (the answer to a
//     TLS 1.3 KeyUpdate that requests one, an alert), which a server that
//     keeps asking and never reads could pile up without end: what it
//     writes so while the socket has not taken it is capped at tlsOutCap,
//     past which the connection ends (errTLSOutputFull, a receive failure).
//     The loop's own writes (the request, h2's frames) are bounded by the
//     request and h2MaxOutput. Input needs no cap of the link's: on epoll
//     the socket's bytes go straight into crypto/tls, which holds at most a
//     record (and a handshake message) of them; on io_uring the receive
//     queue is capped at uringConnBufs buffers.
//   - The handshake cannot be resumed after an error, so it runs in a
//     coroutine (iter.Pull) on the loop's goroutine: when the link has
//     nothing to read it yields to the loop, which resumes it when the socket
//     is readable again. It starts once a zero-length write has told the
//     loop that the connect is done; its output is buffered and written by
//     the loop, the last flight together with the request. The switch is a
//     coroutine switch, not a goroutine hand-off, and the handshake's CPU
//     stays on the loop's core.
//
// On the io_uring engine (http1_uring_linux.go) the link reads the
// connection's queue of received buffers instead of the socket, and never
// writes the socket itself during the connection: its output goes out by
// ring sends (flushRing), one in flight at a time, whose bytes stay in place
// until the completion; what crypto/tls writes meanwhile goes behind them.
//
// The read budget of the rule for loops that read from a peer (docs/DESIGN.md,
// "Reading from a peer") counts the raw bytes the link reads and, for each
// plaintext Read, tlsReadCharge more: decrypting a record has a cost of its
// own, and a server sending 1-byte records would otherwise have the loop
// decrypt some 11,000 records per connection before it looks at its stop
// flag again. crypto/tls bounds a record to 16 KiB plus its overhead and a
// handshake message to its own limits.

// tlsReadCharge is what one plaintext Read costs against the read budget on
// top of the raw bytes: 256 Reads at most per 256 KiB turn, where full-size
// records (16 KiB) reach 16 either way.
const tlsReadCharge = 1 << 10

// tlsRampShare is one event loop's share of tlsRampHandshakes.
func tlsRampShare(loops int) int { return max(tlsRampHandshakes/max(loops, 1), 8) }

// errWouldBlock is the link's "nothing to read now": temporary, so that
// crypto/tls does not remember it.
var errWouldBlock net.Error = wouldBlockError{}

type wouldBlockError struct{}

func (wouldBlockError) Error() string   { return "gab: no TLS input yet" }
func (wouldBlockError) Timeout() bool   { return true }
func (wouldBlockError) Temporary() bool { return true }

// errLinkStopped ends a handshake whose connection the loop closes.
var errLinkStopped = errors.New("gab: connection closed during the TLS handshake")

// tlsLink is the net.Conn under a loop connection's tls.Conn.
type tlsLink struct {
	s      *epSock // the socket, whether it may hold unread bytes, the turn's read budget
	tc     *tls.Conn
	remote net.Addr

	out  []byte // out[wpos:] is output the socket has not taken yet
	wpos int

	// reading: inside read, where what crypto/tls writes is its own, not
	// the loop's; unasked counts it since out was last empty (at most
	// tlsOutCap of it unsent: full once a write would pass that).
	reading bool
	full    bool
	unasked int

	// On the io_uring engine (ring not nil) the link reads the ring's
	// receive queue and its output goes out by ring sends: flight is what
	// the send in flight reads (out[wpos:] when it was queued), kept
	// referenced and never written until its completion; werr is a send's
	// error, returned by the next flush; closing lets close_notify be
	// written directly (one try, as on epoll).
	ring    *h1Ring
	flight  []byte
	werr    syscall.Errno
	closing bool

	// The handshake's coroutine: next resumes it, yield hands control back,
	// stop ends it; hsErr is its result once hsDone.
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	// The raw stream's record framing, so that the loop knows when
	// crypto/tls cannot hold a complete record it has not decoded (every
	// Read that reaches the socket costs crypto/tls an allocation):
	// handed counts the complete records read, consumed a lower bound of
	// those crypto/tls has decoded; recLeft is what the current record
	// still lacks, hdr the header bytes of the next one seen so far.
	handed, consumed int64
	recLeft          int
	hdr              int
	recHi            byte

	// more: crypto/tls may hold input already read (a Read returned data,
	// or the handshake just ended), so read may return data though the
	// socket has nothing.
	more bool

	started bool // start has run
	hsDone  bool
	hsErr   error
	fresh   bool // the handshake has just ended: its last flight may still be in out
}

// openTLS gives s (just dialed) a TLS link: start begins its handshake once
// the connect has succeeded. It counts as opening until opened.
func (p *epPoller) openTLS(s *epSock, conf *tls.Config) {
	l := &tlsLink{s: s, remote: p.raddrs[int(s.addrIdx)%len(p.raddrs)], out: s.obuf[:0]}
	l.tc = tls.Client(l, conf)
	s.tls, s.opening = l, true
	p.opening++
}

// opened notes that s's connect and handshake are over.
func (p *epPoller) opened(s *epSock) {
	if s.opening {
		s.opening = false
		p.opening--
	}
}

// read reads plaintext into p; (0, nil) means nothing more for now. What
// crypto/tls wrote in earlier reads and the socket did not take goes on
// first, as far as the socket takes it (an error shows on a read too).
func (l *tlsLink) read(p []byte) (int, error) {
	if l.unasked > 0 && l.pending() {
		_ = l.flush()
	}
	l.reading = true
	n, err := l.tc.Read(p)
	l.reading = false
	if l.full {
		return 0, errTLSOutputFull // crypto/tls keeps a failed KeyUpdate answer for the next write
	}
	if n > 0 {
		// A Read that returns data has decoded at least one record;
		// crypto/tls keeps the rest of a record larger than p.
		l.consumed++
		l.more = n == len(p) || l.consumed < l.handed
		l.s.budget -= tlsReadCharge
		return n, nil // an error with the data (close_notify) comes again on the next Read
	}
	l.more = false
	if err == errWouldBlock {
		l.consumed = l.handed // it decoded every complete record before asking for more
		return 0, nil
	}
	return 0, err
}

// start runs the handshake until it needs the server's answer, its
// ClientHello left in the output buffer for the loop to write.
func (l *tlsLink) start() {
	l.started = true
	l.next, l.stop = iter.Pull(func(yield func(struct{}) bool) {
		l.yield = yield
		l.hsErr = handshakeError(l.tc.Handshake())
		l.yield = nil
	})
	l.step()
}

// step resumes the handshake until it needs input again or ends.
func (l *tlsLink) step() {
	if _, more := l.next(); !more {
		l.hsDone, l.next, l.stop = true, nil, nil
		l.fresh = l.hsErr == nil
		l.more = l.fresh // records past the handshake may be buffered
	}
}

// pending reports output the socket has not taken.
func (l *tlsLink) pending() bool { return l.wpos < len(l.out) }

// flush writes the pending output; EAGAIN means wait for EPOLLOUT (on
// io_uring: for the send's completion).
func (l *tlsLink) flush() syscall.Errno {
	if l.ring != nil {
		return l.flushRing()
	}
	for l.wpos < len(l.out) {
		n, errno := rawWrite(l.s.fd, l.out[l.wpos:])
		switch errno {
		case 0:
			l.wpos += n
		case unix.EINTR:
		default:
			return errno
		}
	}
	l.out, l.wpos = l.out[:0], 0
	return 0
}

// flushRing queues a ring send of the pending output, unless one (or a
// poll) is in flight; 0 once everything has gone.
func (l *tlsLink) flushRing() syscall.Errno {
	switch {
	case l.werr != 0:
		return l.werr
	case l.flight != nil || l.ring.io[l.s.idx].sending:
		return unix.EAGAIN
	case l.wpos == len(l.out):
		l.out, l.wpos = l.out[:0], 0
		return 0
	case l.wpos > 0: // nothing in flight: what is left moves to the front
		l.out, l.wpos = l.out[:copy(l.out, l.out[l.wpos:])], 0
	}
	l.flight = l.out[l.wpos:]
	l.ring.send(l.s, l.flight)
	return unix.EAGAIN
}

// close ends the connection's TLS session: a handshake in progress is
// stopped; after one, close_notify is sent as ab's SSL_shutdown does (one
// try: the socket is closed next). It returns the output buffer for the
// next connection.
func (l *tlsLink) close() []byte {
	switch {
	case l.stop != nil:
		l.stop()
		l.hsDone, l.next, l.stop = true, nil, nil
	case l.started && l.hsErr == nil:
		l.closing = l.flight == nil && !l.pending()
		_ = l.tc.Close()
	}
	if l.flight != nil {
		return nil // a ring send may still read it
	}
	return l.out[:0]
}

// connectOutcome tells, with a zero-length write, whether fd's connect is
// done (0), still under way (EAGAIN) or failed, before a handshake costs
// any CPU.
func connectOutcome(fd int) syscall.Errno {
	for {
		if _, errno := rawWrite(fd, nil); errno != unix.EINTR {
			return errno
		}
	}
}

// Read reads the socket into p: the socket's bytes go straight into
// crypto/tls's buffer. With nothing to read it yields to the loop during the
// handshake and returns errWouldBlock after it.
func (l *tlsLink) Read(p []byte) (int, error) {
	for {
		if l.s.readable && l.s.budget > 0 && l.ring != nil {
			n, err := l.ring.read(l.s, p)
			if n > 0 {
				l.frame(p[:n])
				return n, nil
			}
			if err != nil {
				return 0, err
			}
		} else if l.s.readable && l.s.budget > 0 {
			n, errno := rawRead(l.s.fd, p)
			switch {
			case errno == 0 && n > 0:
				if n < len(p) && !l.s.hup {
					l.s.readable = false
				}
				l.s.budget -= n
				l.frame(p[:n])
				return n, nil
			case errno == 0:
				return 0, io.EOF
			case errno == unix.EAGAIN:
				l.s.readable = false
			case errno == unix.EINTR:
				continue
			default:
				return 0, os.NewSyscallError("read", errno)
			}
		}
		if l.yield == nil {
			return 0, errWouldBlock
		}
		if !l.yield(struct{}{}) {
			return 0, errLinkStopped
		}
	}
}

// Write sends p, keeping what the socket does not take (all of it during
// the handshake, whose writes the loop makes). Only a socket error fails
// it, or, inside read, passing tlsOutCap.
func (l *tlsLink) Write(p []byte) (int, error) {
	n := len(p)
	if !l.pending() {
		l.unasked = 0
	}
	if l.yield == nil && !l.pending() && (l.ring == nil || l.closing) {
		for len(p) > 0 {
			w, errno := rawWrite(l.s.fd, p)
			if errno == unix.EINTR {
				continue
			}
			if errno == unix.EAGAIN {
				break
			}
			if errno != 0 {
				return n - len(p), os.NewSyscallError("write", errno)
			}
			p = p[w:]
		}
	}
	if l.reading && len(p) > 0 {
		if min(l.unasked, len(l.out)-l.wpos)+len(p) > tlsOutCap {
			l.full = true
			return n - len(p), errTLSOutputFull
		}
		l.unasked += len(p)
	}
	l.out = append(l.out, p...)
	return n, nil
}

// Close is the tls.Conn's; the loop closes the socket itself.
func (l *tlsLink) Close() error { return nil }

func (l *tlsLink) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (l *tlsLink) RemoteAddr() net.Addr             { return l.remote }
func (l *tlsLink) SetDeadline(time.Time) error      { return nil }
func (l *tlsLink) SetReadDeadline(time.Time) error  { return nil }
func (l *tlsLink) SetWriteDeadline(time.Time) error { return nil }

// frame follows the record framing through raw bytes handed to crypto/tls.
func (l *tlsLink) frame(b []byte) {
	for len(b) > 0 {
		if l.recLeft > 0 {
			k := min(l.recLeft, len(b))
			l.recLeft -= k
			b = b[k:]
			if l.recLeft == 0 {
				l.handed++
			}
			continue
		}
		if l.hdr == 0 && len(b) >= 5 { // a whole header
			l.recLeft = int(b[3])<<8 | int(b[4])
			if l.recLeft == 0 {
				l.handed++
			}
			b = b[5:]
			continue
		}
		switch l.hdr {
		case 3:
			l.recHi = b[0]
		case 4:
			l.recLeft = int(l.recHi)<<8 | int(b[0])
			if l.recLeft == 0 {
				l.handed++
			}
		}
		l.hdr = (l.hdr + 1) % 5
		b = b[1:]
	}
}
