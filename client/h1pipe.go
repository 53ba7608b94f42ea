package client

// HTTP/1.1 pipelining (--pipeline N), its rules written once: h1Pipe is one
// connection's queue of requests written back to back before their
// responses are read. Both HTTP/1 paths drive it (http1pipe.go on blocking
// reads, http1pipe_epoll_linux.go on the event loop): they own the socket,
// the buffer, the reads and the clock; h1Pipe owns the requests, the order in
// which responses answer them, and what a close with requests outstanding
// means for each of them.
//
// Rules:
//   - Responses answer the requests in the order they were written; the
//     front request's response is read with h1Reader, as without pipelining.
//   - A request's latency counts from its own write (its Start is when it
//     was queued on an open connection, or the connection's start for the
//     requests queued before it opened); in rate mode from its intended
//     send time, so that waiting behind earlier requests counts.
//   - A response that ends the connection (Connection: close, or a
//     response that does not keep it alive) leaves the requests behind it
//     unprocessed (RFC 9112 §9.3.2: the server must not process them): they
//     are sent again on a new connection. So are requests whose bytes were
//     not all written when the connection failed. Each at most
//     maxPipeResend times; nothing else is sent again.
//   - A close or error with requests outstanding fails the front one as
//     an unpipelined request would fail (a receive failure), and every
//     other written one as a receive failure (errNoAnswer).
//   - What a server can make gab hold: at most N requests, and no new
//     request is queued while pipeBytes request bytes are unanswered (at
//     least one is), so writes stay within what the socket buffers hold
//     and a server that writes responses while gab writes requests cannot
//     deadlock the blocking path.

import "errors"

const (
	// MaxPipeline is the largest --pipeline.
	MaxPipeline = 1024
	// pipeBytes bounds the request bytes written and not yet answered on one
	// connection (a request larger than that goes alone).
	pipeBytes = 64 << 10
	// maxPipeResend bounds how often one request is sent again.
	maxPipeResend = 3
)

var errResendLimit = errors.New("connection closed before any response byte, and the request was sent again 3 times")

// pipeReq is one request of a pipelined connection.
type pipeReq struct {
	out        outcome
	req        []byte // its bytes: cfg.Request, a prebuilt target's, or buf
	buf        []byte // --urls: its bytes assembled here (grows once)
	head, idem bool
	entry      int32
	intended   int64 // rate mode: tally.Intended and tally.Sent at its claim
	sent       int64
	wend       int   // where its bytes end in the write queue
	resends    uint8 // times sent again
}

// h1Pipe is one connection's pipelined requests: a ring of them, the first
// written ones waiting for their responses in order, then those whose bytes
// are in the write queue, then those waiting for a connection.
type h1Pipe struct {
	h *http1
	r *run
	t *tally
	q []pipeReq
	// The ring holds n requests from q[first]; the first written of them are
	// written whole, the first queued have their bytes in wq.
	first, n, written, queued int
	wq                        []byte // request bytes to write, from wpos on
	wpos                      int
	unanswered                int  // bytes of the queued requests not yet answered
	over                      bool // claim said no: no more requests
	rd                        h1Reader
	got                       bool // a byte of the front request's response was fed
	reused                    bool // a response was complete on the connection
	started                   bool // rd is reading the front request's response
}

func newH1Pipe(h *http1, r *run, t *tally) *h1Pipe {
	return &h1Pipe{h: h, r: r, t: t, q: make([]pipeReq, h.cfg.Pipeline)}
}

func (p *h1Pipe) at(i int) *pipeReq { return &p.q[(p.first+i)%len(p.q)] }

// room reports whether another request may join the connection's queue.
func (p *h1Pipe) room() bool {
	return !p.over && p.n < len(p.q) && (p.n == 0 || p.unanswered < pipeBytes)
}

// claim takes one more request into the ring; false when none is left
// (then over is set) or, with wait false in rate mode, none is due yet.
func (p *h1Pipe) claim(wait bool) bool {
	if p.r.sched != nil && !wait {
		ok, due := p.r.tryClaim(p.t)
		if !ok && due < 0 {
			p.over = true
		}
		if !ok {
			return false
		}
	} else if !p.r.claim(p.t) {
		p.over = true
		return false
	}
	q := p.at(p.n)
	q.out = outcome{}
	q.resends = 0
	q.intended, q.sent = p.t.Intended, p.t.Sent
	q.req, q.head, q.idem, q.entry = p.h.request(&q.buf, p.t)
	p.n++
	return true
}

// fill claims requests while there is room: waiting in rate mode only for
// the first of an empty ring. It returns false when the ring is empty.
func (p *h1Pipe) fill() bool {
	for p.room() && p.claim(p.n == 0) {
	}
	return p.n > 0
}

// queue appends the bytes of the requests that wait for a connection to the
// write queue, their times those of a connection started at start and ready
// at connect (both now on a kept connection).
func (p *h1Pipe) queue(start, tcpDone, connect int64) {
	if p.wpos == len(p.wq) {
		p.wq, p.wpos = p.wq[:0], 0
	}
	for ; p.queued < p.n; p.queued++ {
		q := p.at(p.queued)
		q.out.Start, q.out.TCPDone, q.out.Connect = start, tcpDone, connect
		p.wq = append(p.wq, q.req...)
		q.wend = len(p.wq)
		p.unanswered += len(q.req)
	}
}

// unqueue takes the queued requests back (a connect failed before any was written).
func (p *h1Pipe) unqueue() {
	p.written, p.queued, p.unanswered = 0, 0, 0
	p.wq, p.wpos = p.wq[:0], 0
}

// connectedAt notes the queued requests' connection established at at.
func (p *h1Pipe) connectedAt(at int64) {
	for i := 0; i < p.queued; i++ {
		o := &p.at(i).out
		o.TCPDone, o.Connect = at, at
	}
}

// pending is what remains to write.
func (p *h1Pipe) pending() []byte { return p.wq[p.wpos:] }

// wrote notes n bytes of the queue written at now.
func (p *h1Pipe) wrote(n int, now int64) {
	p.wpos += n
	p.t.TotalSent += int64(n)
	for p.written < p.queued && p.at(p.written).wend <= p.wpos {
		p.at(p.written).out.WriteEnd = now
		p.written++
	}
}

// pipeEvent is what feeding a pipelined connection's bytes found.
type pipeEvent uint8

const (
	pipeMore   pipeEvent = iota // read more (or write, or claim: the ring has room)
	pipeClosed                  // a response ended the connection: close it, then go on
	pipeFailed                  // a response was malformed: close the connection
	pipeStop                    // the run ended
)

// feed reads responses from buf[pos:have], whose last bytes were read at
// lastRead, for the written requests in order. It returns where the bytes
// not used start; in the head they must be fed again (see h1Reader).
func (p *h1Pipe) feed(buf []byte, pos, have int, lastRead int64) (int, pipeEvent) {
	for p.written > 0 {
		q := p.at(0)
		if !p.started {
			p.rd.start(q.head)
			p.started, p.got = true, false
		}
		if !p.got {
			if pos == have {
				return pos, pipeMore
			}
			p.got = true
			q.out.FirstByte = max(lastRead, q.out.WriteEnd)
		}
		used, step := p.rd.feed(buf[pos:have])
		pos += used
		switch step {
		case h1Head:
			p.r.headDone(&q.out, &p.rd.head, buf[pos-p.rd.headLen:have], p.h.verbose)
			continue
		case h1More:
			return pos, pipeMore
		case h1Fail:
			return pos, p.failFront(h1FailClass(p.rd.err), p.rd.err, lastRead)
		}
		q.out.End = max(lastRead, q.out.WriteEnd)
		p.endBody(q)
		keep := p.h.keep(&p.rd.head)
		q.out.KeptAlive = keep
		p.reused = true
		if !p.pop() {
			return pos, pipeStop
		}
		if !keep {
			return pos, pipeClosed
		}
	}
	return pos, pipeMore
}

func (p *h1Pipe) endBody(q *pipeReq) {
	p.t.BodyRead += p.rd.body
	q.out.Body = p.rd.body
}

// pop accounts for the front request, whose outcome is final, and takes it
// from the ring; false when the run ended.
func (p *h1Pipe) pop() bool {
	q := p.at(0)
	p.first = (p.first + 1) % len(p.q)
	p.n--
	p.queued = max(p.queued-1, 0)
	p.written = max(p.written-1, 0)
	p.unanswered -= len(q.req)
	p.started = false
	return p.account(q)
}

func (p *h1Pipe) account(q *pipeReq) bool {
	p.t.Intended, p.t.Sent = q.intended, q.sent
	q.out.entry = q.entry
	return p.r.finish(p.t, &q.out)
}

// failFront ends the front request with class (a malformed response, a
// read error: the connection is lost) and returns pipeFailed, or pipeStop.
func (p *h1Pipe) failFront(class failClass, err error, now int64) pipeEvent {
	q := p.at(0)
	if p.started && p.rd.inBody {
		p.endBody(q)
	}
	q.out.Class, q.out.Err = class, err
	q.out.End = max(now, q.out.WriteEnd)
	if q.out.FirstByte == 0 {
		q.out.FirstByte = q.out.End
	}
	if !p.pop() {
		return pipeStop
	}
	return pipeFailed
}

// lost accounts for the requests the connection leaves, closed at now after
// a failure (failed) or after a response that ended it: the written ones
// fail as receive failures after a failure, every other one waits to be sent
// again on a new connection. It returns false when the run ended.
func (p *h1Pipe) lost(failed bool, now int64) bool {
	if failed {
		for p.written > 0 {
			q := p.at(0)
			q.out.Class, q.out.Err = failReceiveCounted, errNoAnswer
			q.out.End = max(now, q.out.WriteEnd)
			q.out.FirstByte = q.out.End
			if !p.pop() {
				return false
			}
		}
	}
	p.written, p.queued, p.unanswered = 0, 0, 0
	p.wq, p.wpos = p.wq[:0], 0
	p.started, p.reused = false, false
	for i := 0; i < p.n; i++ {
		q := p.at(i)
		q.out = outcome{}
		q.resends++
		p.t.Retries++
	}
	for p.n > 0 && p.at(0).resends > maxPipeResend {
		q := p.at(0)
		q.out.Class, q.out.Err = failReceiveCounted, errResendLimit
		q.out.Start, q.out.End, q.out.FirstByte = now, now, now
		q.out.TCPDone, q.out.Connect, q.out.WriteEnd = now, now, now
		if !p.pop() {
			return false
		}
	}
	return true
}

// closedFront handles the connection's end at now while reading: err as
// readFailure classes it for the front request (reused: a response was
// complete on the connection before). It returns false when the run ended;
// the caller then calls lost(true, …) for the others.
func (p *h1Pipe) closedFront(err error, now int64) bool {
	if p.written == 0 {
		return true
	}
	reused := p.reused
	p.reused = false
	if p.started && p.rd.endsAtClose() && isEOF(err) {
		// The body ends with the connection: the front request is answered.
		q := p.at(0)
		q.out.End = max(now, q.out.WriteEnd)
		p.endBody(q)
		return p.pop()
	}
	class, cause, noAnswer := readFailure(err, p.got, reused, p.r.isStopped(), false)
	switch {
	case noAnswer:
		class, cause = failReceiveCounted, errNoAnswer
	case p.started && p.rd.inBody && isEOF(err):
		class, cause = failReceiveCounted, errTruncated
	}
	return p.failFront(class, cause, now) != pipeStop
}

// openFailed ends the front request, for which no connection could be
// opened, with o's outcome (failOpen's), and keeps the others for the next
// attempt. It returns false when the run ended.
func (p *h1Pipe) openFailed(o *outcome) bool {
	q := p.at(0)
	q.out = *o
	p.written, p.queued, p.unanswered = 0, 0, 0
	p.wq, p.wpos = p.wq[:0], 0
	p.first = (p.first + 1) % len(p.q)
	p.n--
	return p.account(q)
}

// leave notes the ring's sent requests as left in flight by a stopped run.
func (p *h1Pipe) leave() {
	for i := 0; i < p.queued; i++ {
		q := p.at(i)
		p.t.Intended, p.t.Sent = q.intended, q.sent
		p.r.leftInFlight(p.t, &q.out)
	}
	p.n, p.written, p.queued = 0, 0, 0
}
