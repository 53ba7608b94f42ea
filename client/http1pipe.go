package client

import (
	"time"
)

// The portable path of --pipeline: one goroutine per connection (h1conn's
// connection, buffer and reads) driving h1pipe.go's rules. It writes every
// queued request in one Write, then reads until a response frees room in
// the ring. In rate mode a request is claimed only when due: while
// responses are awaited, the read waits at most until the next request's
// due time (a read deadline), and a request due while the connection's
// earlier ones are unanswered waits behind them in their order.

// pipeIdleProbe: a kept connection idle for longer is probed for the
// server's close before requests are written on it (the event loop knows
// from EPOLLRDHUP). Requests written on a connection the server had closed
// would be receive failures, since a pipelined request that meets a close
// is never sent again unless provably unprocessed.
var pipeIdleProbe = int64(time.Second) // a variable for tests

// closedWhileIdle reads for at most a millisecond, and reports whether the
// server closed the connection (bytes that came instead stay in the buffer).
func (c *h1conn) closedWhileIdle() bool {
	if c.have == len(c.buf) {
		return false
	}
	_ = c.raw.SetReadDeadline(time.Now().Add(time.Millisecond))
	n, err := c.read(c.buf[c.have:])
	_ = c.raw.SetReadDeadline(time.Time{})
	c.have += n
	return n == 0 && err != nil && !isTimeout(err)
}

// workPipe is work's loop with --pipeline.
func (h *http1) workPipe(r *run, t *tally) {
	c := &h1conn{h: h, r: r, t: t, buf: make([]byte, readBufSize)}
	p := newH1Pipe(h, r, t)
	defer func() {
		if r.isStopped() {
			p.leave()
		}
		c.close()
	}()
	for {
		if !p.fill() {
			return // no request left
		}
		if c.conn == nil {
			o := &p.at(0).out
			*o = outcome{Start: r.clock()}
			if !c.open(o) {
				if !p.openFailed(o) {
					return
				}
				continue
			}
			p.queue(o.Start, o.TCPDone, o.Connect)
		} else {
			if p.queued == 0 && r.clock()-c.lastRead > pipeIdleProbe && c.closedWhileIdle() {
				c.close()
				continue // the server closed the idle connection: open another
			}
			now := r.clock()
			p.queue(now, now, now)
		}
		if !c.pipeWrite(p) || !c.pipeRead(p) {
			return
		}
	}
}

// pipeWrite writes the queue; false when the run ended.
func (c *h1conn) pipeWrite(p *h1Pipe) bool {
	w := p.pending()
	if len(w) == 0 {
		return true
	}
	n, err := c.conn.Write(w)
	now := c.r.clock()
	p.wrote(n, now)
	if err != nil {
		if c.r.isStopped() {
			return false
		}
		// Read what the server answered to the requests written whole;
		// the others were not all sent: closed sends them again.
		return c.pipeRead(p)
	}
	touchAt(c.t, now)
	return true
}

// pipeRead reads until a response leaves room in the ring for another
// request (or, in rate mode, until the next request is due), and handles
// a close. It returns false when the run ended.
func (c *h1conn) pipeRead(p *h1Pipe) bool {
	before := p.n
	for p.written > 0 {
		pos, ev := p.feed(c.buf, c.pos, c.have, c.lastRead)
		c.pos = pos
		switch ev {
		case pipeStop:
			return false
		case pipeClosed, pipeFailed:
			c.close()
			return p.lost(ev == pipeFailed, c.r.clock())
		}
		if p.written == 0 || p.n < before && p.room() && len(p.pending()) == 0 {
			break // room: claim and write more before reading on
		}
		c.buf, c.have = p.rd.room(c.buf, c.pos, c.have)
		c.pos = 0
		switch c.pipeFill(p) {
		case fillStop:
			return false
		case fillDue:
			return true
		case fillClosed:
			return p.lost(true, c.r.clock()) // closed has run
		}
	}
	if len(p.pending()) > 0 {
		// A write failed: the connection is lost; what was not written goes again.
		c.close()
		return p.lost(false, c.r.clock())
	}
	return true
}

// fillResult is what one read of a pipelined connection brought.
type fillResult uint8

const (
	fillBytes  fillResult = iota // bytes (or nothing yet): feed on
	fillDue                      // rate mode: the next request is due
	fillClosed                   // the connection ended and its front request is accounted for
	fillStop                     // the run ended
)

// pipeFill reads once into the buffer. A read that fails ends the connection
// (h1Pipe.closed decides what each request outstanding becomes).
func (c *h1conn) pipeFill(p *h1Pipe) fillResult {
	r := c.r
	deadline := r.sched != nil && p.room()
	if deadline {
		_ = c.raw.SetReadDeadline(r.start.Add(time.Duration(r.sched.due(r.sched.next.Load()))))
	}
	n, err := c.read(c.buf[c.have:])
	if deadline {
		_ = c.raw.SetReadDeadline(time.Time{})
	}
	if n > 0 {
		c.have += n
		if c.h.verbose && p.rd.inHead() {
			r.events.HeaderReceived(c.buf[:min(c.have, maxHeadLen)])
		}
		return fillBytes
	}
	switch {
	case err == nil:
		return fillBytes
	case deadline && isTimeout(err) && !r.isStopped():
		return fillDue
	case r.isStopped():
		return fillStop
	}
	now := r.clock()
	c.close()
	if !p.closedFront(err, now) {
		return fillStop
	}
	return fillClosed
}
