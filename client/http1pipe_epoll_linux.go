//go:build linux

package client

import (
	"os"

	"golang.org/x/sys/unix"
)

// The event loop's --pipeline (plain http:// only; https:// pipelines on the
// portable path): each connection drives h1pipe.go's rules. A turn writes
// every queued request in one write, then feeds every response the socket
// holds, then claims and writes as many requests as the answered ones freed
// room for, so that a full ring costs one write and one read per batch
// rather than per request. The read budget per wake-up and the again list
// are the loop's (http1_epoll_linux.go).

// epPipelining reports whether the loops pipeline this run's requests.
func epPipelining(cfg *Config) bool { return cfg.Pipeline > 1 }

// pumpPipe moves c's pipelined requests forward until it must wait for an
// event, or has spent its read budget (then it is queued in the again list).
func (lp *epLoop) pumpPipe(c *epConn) {
	c.budget = readBudget
	for !lp.stopped {
		switch c.state {
		case epIdle:
			return
		case epNext:
			lp.pipeNext(c)
		default: // epConnecting, epWriting
			if !lp.pipeIO(c) {
				lp.requeue(c)
				return
			}
		}
	}
}

// pipeNext claims the requests there is room for, and queues them on the
// connection, or opens one; with no request left the connection goes idle.
func (lp *epLoop) pipeNext(c *epConn) {
	p := c.pipe
	if !p.fill() {
		lp.closeConn(c)
		c.state = epIdle
		lp.active--
		return
	}
	if c.fd >= 0 && p.queued == 0 && c.hup {
		// The server closed the idle connection: nothing was sent on it
		// since, so the requests go on a new one, not sent again.
		lp.closeConn(c)
	}
	if c.fd >= 0 {
		now := lp.tick()
		p.queue(now, now, now)
		c.state = epWriting
		return
	}
	lp.pipeDial(c)
}

// pipeDial opens a connection for the ring's requests.
func (lp *epLoop) pipeDial(c *epConn) {
	p := c.pipe
	start := lp.tick()
	if err := lp.dial(&c.epSock, false); err != nil {
		lp.pipeOpenFailed(c, err)
		return
	}
	c.wantOut, c.pos, c.have = false, 0, 0
	p.queue(start, start, start)
	c.state = epConnecting
}

// pipeOpenFailed ends the front request, for which no connection opened.
func (lp *epLoop) pipeOpenFailed(c *epConn, err error) {
	o := &c.out
	*o = outcome{Start: c.pipe.at(0).out.Start}
	if o.Start == 0 {
		o.Start = lp.now
	}
	lp.r.failOpen(o, lp.tick(), err)
	if !c.pipe.openFailed(o) {
		lp.stopped = true
	}
	c.state = epNext
}

// pipeIO writes what is queued and reads the responses. It returns false to
// wait for an event (or for the next turn, the budget spent).
func (lp *epLoop) pipeIO(c *epConn) bool {
	p := c.pipe
	if len(p.pending()) > 0 && !c.writeDead {
		if !lp.pipeWrite(c) {
			return c.state != epConnecting && p.written > 0 && lp.pipeRead(c)
		}
		if c.state != epWriting {
			return true // the connect failed: the state says what next
		}
	}
	if p.written == 0 {
		if len(p.pending()) > 0 && c.writeDead {
			lp.pipeLost(c, false) // nothing left to read: send the rest again
		} else {
			c.state = epNext
		}
		return true
	}
	return lp.pipeRead(c)
}

// pipeWrite writes the queue. It returns false when the socket takes no
// more for now (EPOLLOUT is awaited); a failed write marks the connection
// write-dead (what was written whole is still read) or, while connecting,
// fails the connect.
func (lp *epLoop) pipeWrite(c *epConn) bool {
	p := c.pipe
	for len(p.pending()) > 0 {
		var before int64
		if c.state == epConnecting {
			before = lp.tick()
		}
		n, errno := rawWrite(c.fd, p.pending())
		switch errno {
		case 0:
			if c.state == epConnecting {
				lp.pipeConnected(c, before)
			}
			p.wrote(n, lp.tick())
			continue
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			if !c.wantOut {
				c.wantOut = true
				if err := lp.watch(c.fd, c.idx, c.gen, true, true); err != nil {
					c.writeDead = true
					return true
				}
			}
			return false
		}
		if c.state == epConnecting && errno != unix.EPIPE && errno != unix.ECONNRESET {
			lp.closeConn(c)
			if lp.fallback(c.addrIdx) {
				c.pipe.unqueue()
				lp.pipeDial(c)
				return true
			}
			c.pipe.unqueue()
			lp.pipeOpenFailed(c, os.NewSyscallError("connect", errno))
			return true
		}
		if c.state == epConnecting {
			lp.pipeConnected(c, lp.tick())
		}
		c.writeDead = true
		return true
	}
	touchAt(lp.t, lp.now)
	return true
}

func (lp *epLoop) pipeConnected(c *epConn, at int64) {
	c.pipe.connectedAt(at)
	c.state = epWriting
	lp.d.markWorked(lp.r, at)
}

// pipeRead feeds the responses of the written requests as they arrive. It
// returns false to wait for input, or when the budget is spent.
func (lp *epLoop) pipeRead(c *epConn) bool {
	p := c.pipe
	before := p.n
	for p.written > 0 {
		pos, ev := p.feed(c.buf, c.pos, c.have, c.lastRead)
		c.pos = pos
		switch ev {
		case pipeStop:
			lp.stopped = true
			return true
		case pipeClosed, pipeFailed:
			lp.pipeLost(c, ev == pipeFailed)
			return true
		}
		if p.n < before && p.room() && len(p.pending()) == 0 && !c.writeDead {
			c.state = epNext // write more before reading on
			return true
		}
		c.buf, c.have = p.rd.room(c.buf, c.pos, c.have)
		c.pos = 0
		if !c.canRead() {
			return false
		}
		n, err := lp.read(c, c.buf[c.have:])
		if n > 0 {
			c.have += n
			if lp.h.verbose && p.rd.inHead() {
				lp.r.events.HeaderReceived(c.buf[:min(c.have, maxHeadLen)])
			}
			continue
		}
		if err != nil {
			now := lp.tick()
			lp.closeConn(c)
			if !p.closedFront(err, now) {
				lp.stopped = true
				return true
			}
			lp.pipeLost(c, true)
			return true
		}
	}
	return true // pipeIO decides what next
}

// pipeLost closes c's connection and hands its requests to h1Pipe.lost.
func (lp *epLoop) pipeLost(c *epConn, failed bool) {
	lp.closeConn(c)
	c.writeDead = false
	if !c.pipe.lost(failed, lp.tick()) {
		lp.stopped = true
	}
	c.state = epNext
}
