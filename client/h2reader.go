package client

import (
	"errors"
	"net"
	"time"

	"golang.org/x/net/http2"
)

// The goroutine path's connection reader: one goroutine per connection reads
// and dispatches frames (the rules are h2rules.go's), records the streams that
// ended well and sends their slots' next requests (the fast path), and ends the
// connection's streams when it goes away.

// readLoop reads and dispatches frames until the connection ends.
func (c *h2Conn) readLoop() {
	defer c.h.readers.Done()
	var err error
	for {
		var f http2.Frame
		f, err = c.fr.ReadFrame()
		if err != nil {
			break
		}
		if err = c.handle(f); err != nil {
			break
		}
		if c.r.isStopped() {
			err = errRunStopped
			break
		}
		if len(c.fast) > 0 {
			c.finishFast()
		}
		c.flushIfIdle()
	}
	if len(c.fast) > 0 {
		c.finishFast() // a frame ended streams and then failed
	}
	if c.batching {
		c.batching = false
		c.writers.Add(-1)
	}
	if code, ok := h2GoAwayCode(err); ok && c.sawSettings {
		// A server that does not read cannot hold the reader here.
		_ = c.raw.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		c.lockWrite()
		_ = c.fr.WriteGoAway(0, code, nil)
		_ = c.unlockWrite() // the connection is closed next, whatever this says
	}
	c.shutdown(err)
}

func (c *h2Conn) handle(f http2.Frame) error {
	if !c.sawSettings {
		if _, ok := f.(*http2.SettingsFrame); !ok {
			return errFirstFrame
		}
	}
	switch f := f.(type) {
	case *http2.DataFrame:
		return c.onData(f)
	case *http2.HeadersFrame:
		c.smu.Lock()
		err := c.headersLocked(f)
		c.smu.Unlock()
		return c.resetFailed(err)
	case *http2.ContinuationFrame:
		c.owner.touch(c.r) // the server is not silent, whatever the block is for
		c.smu.Lock()
		if st := c.cur; st != nil && c.streams[f.StreamID] == st {
			st.read += int64(f.Length) // firstByte was set by the HEADERS frame
		}
		err := c.headerFragmentLocked(f.Length, f.HeaderBlockFragment(), f.HeadersEnded())
		c.smu.Unlock()
		return c.resetFailed(err)
	case *http2.RSTStreamFrame:
		c.smu.Lock()
		if st := c.streams[f.StreamID]; st == nil && h2Unopened(f.StreamID, c.nextID) {
			c.smu.Unlock()
			return errUnopenedStream
		} else if st != nil {
			c.completeLocked(st, failException, st.takeReset(f.ErrCode))
		}
		c.smu.Unlock()
	case *http2.SettingsFrame:
		return c.onSettings(f)
	case *http2.WindowUpdateFrame:
		c.smu.Lock()
		if f.StreamID == 0 {
			c.sendWindow += int64(f.Increment)
		} else if st := c.streams[f.StreamID]; st != nil {
			st.sendWindow += int64(f.Increment)
		}
		c.cond.Broadcast()
		c.smu.Unlock()
	case *http2.PingFrame:
		c.owner.touch(c.r)
		if !f.IsAck() {
			c.lockReply()
			defer c.wmu.Unlock()
			return c.fr.WritePing(true, f.Data)
		}
	case *http2.GoAwayFrame:
		c.owner.touch(c.r)
		c.smu.Lock()
		c.goaway = true
		c.lastID = f.LastStreamID
		for id, st := range c.streams {
			if st.refusedBy(id, f.LastStreamID) {
				st.retry = true
				c.completeLocked(st, failException, errGoAwayRefused)
			}
		}
		if c.active == 0 {
			c.close()
		}
		c.cond.Broadcast()
		c.smu.Unlock()
	case *http2.PushPromiseFrame:
		return errPushPromise
	}
	return nil
}

// headersLocked begins the header block of a HEADERS frame; smu held.
func (c *h2Conn) headersLocked(f *http2.HeadersFrame) error {
	st := c.streams[f.StreamID]
	var resp *h2Resp
	if st != nil {
		now := c.r.clock()
		st.tally.activity.Store(now)
		st.arrived(now, f.Length)
		resp = &st.h2Resp
	} else if h2Unopened(f.StreamID, c.nextID) {
		return errUnopenedStream
	} else {
		c.owner.touch(c.r)
	}
	c.cur = st
	c.heads.begin(resp, f.StreamEnded())
	return c.headerFragmentLocked(f.Length, f.HeaderBlockFragment(), f.HeadersEnded())
}

// headerFragmentLocked feeds one fragment of a header block to the
// connection's decoder; smu held. A stream the block fails (headBlock) is
// completed here and left in c.toReset for resetFailed, which writes its
// RST_STREAM once smu is released (the write section is taken before smu).
func (c *h2Conn) headerFragmentLocked(frameLen uint32, frag []byte, endHeaders bool) error {
	if complete, err := c.heads.fragment(frameLen, frag, endHeaders); !complete {
		return err
	}
	st := c.cur
	c.cur = nil
	switch ends, err := c.heads.done(); {
	case err != nil:
		st.resetSent = true // writeBody sends no RST_STREAM of its own
		c.toReset = st.id
		c.completeLocked(st, failException, err)
	case ends:
		c.endedLocked(st)
	}
	return nil
}

// resetFailed resets the stream a header block failed (c.toReset), if any,
// with h2ResetInterim; err is the frame's error, returned as it is.
func (c *h2Conn) resetFailed(err error) error {
	if c.toReset == 0 || err != nil {
		return err
	}
	id := c.toReset
	c.toReset = 0
	c.lockReply()
	defer c.wmu.Unlock()
	return c.fr.WriteRSTStream(id, h2ResetInterim)
}

// lockReply enters the write section for a frame of the reader's own (an
// acknowledgement, a WINDOW_UPDATE): the reader keeps a place among the
// writers, so its frames go out with the batch (flushIfIdle), one write for a
// burst of PINGs or SETTINGS. A full buffer is written at once, which blocks
// the reader while the server does not read: gab's output stays bounded.
// The caller unlocks wmu.
func (c *h2Conn) lockReply() {
	if !c.batching {
		c.batching = true
		c.writers.Add(1)
	}
	c.wmu.Lock()
}

func (c *h2Conn) onData(f *http2.DataFrame) error {
	n := f.Length
	c.smu.Lock()
	if st := c.streams[f.StreamID]; st == nil && h2Unopened(f.StreamID, c.nextID) {
		c.smu.Unlock()
		return errUnopenedStream
	} else if st == nil {
		c.owner.touch(c.r)
	} else {
		now := c.r.clock()
		st.tally.activity.Store(now)
		if st.takeData(now, f) {
			c.endedLocked(st)
			n += st.unacked // nothing to give back to a closed stream
			st.unacked = 0
		} else {
			st.unacked += n
		}
	}
	var streamRefill uint32
	var id uint32
	if st := c.streams[f.StreamID]; st != nil && st.unacked >= h2WindowRefill {
		streamRefill, id, st.unacked = st.unacked, st.id, 0
	}
	c.smu.Unlock()
	c.connUnacked += f.Length
	if c.connUnacked < h2WindowRefill && streamRefill == 0 {
		return nil
	}
	c.lockWrite()
	var err error
	if c.connUnacked >= h2WindowRefill {
		err = c.fr.WriteWindowUpdate(0, c.connUnacked)
		c.connUnacked = 0
	}
	if err == nil && streamRefill > 0 {
		err = c.fr.WriteWindowUpdate(id, streamRefill)
	}
	if ferr := c.unlockWrite(); err == nil {
		err = ferr
	}
	return err
}

func (c *h2Conn) onSettings(f *http2.SettingsFrame) error {
	c.owner.touch(c.r)
	if f.IsAck() {
		return nil
	}
	c.sawSettings = true
	c.smu.Lock()
	before := c.peerWindow
	err := h2Settings(f, &c.maxStreams, &c.peerWindow)
	if delta := c.peerWindow - before; delta != 0 {
		for _, st := range c.streams {
			st.sendWindow += delta
		}
	}
	c.cond.Broadcast()
	c.smu.Unlock()
	if err != nil {
		return err
	}
	c.lockReply()
	defer c.wmu.Unlock()
	return c.fr.WriteSettingsAck()
}

// shutdown ends the connection after its reader stopped: every open stream is
// completed (re-issued if it was not answered at all, abandoned if the run is
// stopping, a receive failure otherwise).
func (c *h2Conn) shutdown(err error) {
	c.close()
	r := c.r
	stopping := r.isStopped()
	if !c.sawSettings && !stopping && !errors.Is(err, net.ErrClosed) && isH2ProtocolError(err) {
		r.stop(EndFatal, errNotH2("no HTTP/2 SETTINGS from the server: "+err.Error()))
		stopping = true
	}
	c.smu.Lock()
	c.dead = true
	for _, st := range c.streams {
		st.retry = false // the server may have processed it
		c.completeLocked(st, h2LostClass(stopping || r.isStopped(), &st.h2Resp, c.sawSettings, err), err)
	}
	c.cond.Broadcast()
	c.smu.Unlock()
	c.h.connsMu.Lock()
	delete(c.h.conns, c)
	c.h.connsMu.Unlock()
}

// finishFast is the reader's fast path: it records the finished requests of
// c.fast and sends each slot's next request itself, so that the slot's
// goroutine is not woken for every request. Requests it writes are flushed
// when the reader is about to wait for the socket (flushIfIdle).
func (c *h2Conn) finishFast() {
	r, h := c.r, c.h
	for i, st := range c.fast {
		c.fast[i] = nil
		t, o := st.tally, &st.o
		t.TotalRead += st.read
		t.BodyRead += st.body
		h.account(t, &st.h2Resp, o, st.opened, len(st.block)+len(st.reqBody))
		next := h2Stop
		if r.finish(t, o) {
			next = h2Continue
			if r.claim(t) {
				next = h2Claimed
				if c.sendNext(st) {
					continue
				}
			}
		}
		st.next = next
		st.done <- struct{}{}
	}
	c.fast = c.fast[:0]
}

// sendNext starts st's next request on c without waiting: false if c cannot
// take a stream now (the slot then issues the request itself).
func (c *h2Conn) sendNext(st *h2Stream) bool {
	now := c.r.clock()
	if !c.batching {
		c.batching = true
		c.writers.Add(1)
	}
	c.wmu.Lock()
	c.smu.Lock()
	if c.dead || c.goaway || c.active >= c.maxStreams {
		c.smu.Unlock()
		c.wmu.Unlock()
		return false
	}
	c.active++
	st.reset()
	st.o = outcome{Start: now, TCPDone: now, Connect: now}
	st.opened, st.retries = false, 0
	st.block, st.reqBody, st.head, st.o.entry = c.h.request(&st.blockBuf, st.tally)
	c.openStreamLocked(st)
	c.smu.Unlock()
	err := c.writeHeaders(st.id, st.block, true)
	c.wmu.Unlock()
	st.tally.activity.Store(now)
	st.o.WriteEnd = c.r.clock()
	if err != nil {
		c.close() // the reader sees it fail and completes the stream
	}
	return true
}

// flushIfIdle flushes the requests the reader wrote once no complete frame is
// left in the read buffer, i.e. before the reader waits for the socket.
func (c *h2Conn) flushIfIdle() {
	if !c.batching {
		return
	}
	if n := c.br.Buffered(); n >= 9 {
		if hdr, err := c.br.Peek(9); err == nil && n >= 9+(int(hdr[0])<<16|int(hdr[1])<<8|int(hdr[2])) {
			return // another frame is ready: more requests may join the batch
		}
	}
	c.batching = false
	if c.writers.Add(-1) == 0 {
		c.wmu.Lock()
		if c.writers.Load() == 0 {
			_ = c.bw.Flush() // an error means the connection failed; the next read reports it
		}
		c.wmu.Unlock()
	}
}
