package client

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
)

// The goroutine path's HTTP/2 connection: set-up, the stream table shared by
// the reader and the slots (under smu), and the write side, where frames from
// several streams share one flush (writers counts those in or waiting for the
// write section; the last one out flushes).

// h2Conn is one HTTP/2 connection.
type h2Conn struct {
	h      *h2Transport
	r      *run
	nc     net.Conn // what the slots register (the TLS connection for h2)
	raw    net.Conn // the TCP connection, closed to end the connection without waiting
	bw     *bufio.Writer
	br     *bufio.Reader
	fr     *http2.Framer
	owner  *tally // touched on connection-level activity (-s)
	closed atomic.Bool

	// Writing. writers counts goroutines in or waiting for a write section: the
	// last one out flushes, so that frames from several streams share a syscall.
	wmu     sync.Mutex
	writers atomic.Int32

	// Stream state, shared by the reader and the slots: under smu. Methods
	// named ...Locked are called with smu held.
	smu        sync.Mutex
	cond       sync.Cond
	nextID     uint32 // the next stream ID to open
	streams    map[uint32]*h2Stream
	active     int
	maxStreams int
	peerWindow int64 // the peer's SETTINGS_INITIAL_WINDOW_SIZE
	sendWindow int64 // connection-level send window
	goaway     bool  // GOAWAY received or stream IDs exhausted: no new streams
	lastID     uint32
	dead       bool

	h2ReaderState
}

// h2ReaderState is the part of a connection that only its reader goroutine
// touches (set up by open before the reader starts).
type h2ReaderState struct {
	heads       *h2HeadDecoder
	sawSettings bool
	connUnacked uint32
	cur         *h2Stream   // stream whose header block is being decoded (nil: unknown)
	toReset     uint32      // a stream its header block failed, to reset (resetFailed); 0 if none
	fast        []*h2Stream // streams that ended well, for finishFast
	batching    bool        // the reader holds a place among the writers for requests it wrote
}

// open dials, handshakes (h2 over TLS with ALPN, or h2c with prior knowledge),
// sends the connection preface and starts the connection's reader.
func (h *h2Transport) open(r *run, t *tally, o *outcome) (*h2Conn, error) {
	ctx := stopContext{r}
	raw, err := h.d.connect(ctx)
	if err != nil {
		return nil, err
	}
	nc := raw
	o.TCPDone = r.clock()
	h.d.markWorked(r, o.TCPDone)
	if h.tlsConfig != nil {
		if !t.setConn(r, raw) { // so that a stopping run interrupts the handshake
			_ = raw.Close() // the run stopped
			return nil, context.Canceled
		}
		tc, err := handshakeTLS(r, raw, h.tlsConfig)
		if err != nil {
			_ = raw.Close() // the handshake failed; nothing to keep
			if strings.Contains(err.Error(), "no application protocol") {
				r.stop(EndFatal, errNotH2("ALPN: "+err.Error()))
			}
			return nil, err
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			_ = raw.Close() // wrong protocol; the run ends
			if p == "" {
				p = "none"
			}
			r.stop(EndFatal, errNotH2("ALPN offered h2, the server chose "+p))
			return nil, errors.New("server does not speak HTTP/2")
		}
		nc = tc
	}
	c := &h2Conn{
		h:          h,
		r:          r,
		nc:         nc,
		raw:        raw,
		owner:      t,
		nextID:     1,
		streams:    make(map[uint32]*h2Stream, h.cfg.Streams),
		maxStreams: int(^uint(0) >> 1),
		peerWindow: 65535,
		sendWindow: 65535,
	}
	c.cond.L = &c.smu
	c.bw = bufio.NewWriterSize(nc, 32<<10)
	c.br = bufio.NewReaderSize(nc, 32<<10)
	c.fr = http2.NewFramer(c.bw, c.br)
	c.fr.SetReuseFrames()
	c.fr.SetMaxReadFrameSize(h2FrameSize)
	c.heads = newH2HeadDecoder(r, r.cfg.Verbosity >= 2) // -v ≥ 2 dumps response heads

	c.lockWrite()
	_, err = c.bw.WriteString(http2.ClientPreface)
	if err == nil {
		err = c.fr.WriteSettings(
			http2.Setting{ID: http2.SettingEnablePush, Val: 0},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window},
		)
	}
	if err == nil {
		err = c.fr.WriteWindowUpdate(0, h2Window-65535)
	}
	if ferr := c.unlockWrite(); err == nil {
		err = ferr
	}
	if err != nil {
		_ = nc.Close() // the preface could not be sent
		return nil, err
	}
	o.Connect = r.clock()
	r.conns.Add(1) // c.close takes it back
	h.connsMu.Lock()
	h.conns[c] = struct{}{}
	h.connsMu.Unlock()
	h.readers.Add(1)
	go c.readLoop()
	return c, nil
}

// closeAll closes every connection still open: the run is over.
func (h *h2Transport) closeAll() {
	h.connsMu.Lock()
	defer h.connsMu.Unlock()
	for c := range h.conns {
		c.close()
	}
}

func (c *h2Conn) close() {
	if c.closed.CompareAndSwap(false, true) {
		c.r.conns.Add(-1)
		_ = c.raw.Close() // the reader sees the error and exits
	}
}

// usable reports whether new streams may be opened on c.
func (c *h2Conn) usable() bool {
	c.smu.Lock()
	ok := !c.dead && !c.goaway
	c.smu.Unlock()
	return ok
}

// lockWrite and unlockWrite bracket every use of the Framer's write side.
func (c *h2Conn) lockWrite() {
	c.writers.Add(1)
	c.wmu.Lock()
}

func (c *h2Conn) unlockWrite() error {
	var err error
	if c.writers.Add(-1) == 0 {
		err = c.bw.Flush()
	}
	c.wmu.Unlock()
	return err
}

// h2SendResult is how send went.
type h2SendResult int

const (
	h2Sent       h2SendResult = iota // the request is written (or its stream already ended)
	h2SendRetry                      // the connection is going away: nothing was written
	h2SendFailed                     // the write failed (st.err)
)

// send opens a stream for st and writes the request (HEADERS, CONTINUATION
// and DATA frames as needed).
func (c *h2Conn) send(st *h2Stream) h2SendResult {
	c.smu.Lock()
	if !c.dead && !c.goaway && c.active >= c.maxStreams {
		c.smu.Unlock()
		st.settle() // others' requests must go out while we wait
		c.smu.Lock()
		for !c.dead && !c.goaway && c.active >= c.maxStreams {
			c.cond.Wait()
		}
	}
	if c.dead || c.goaway {
		c.smu.Unlock()
		return h2SendRetry
	}
	c.active++
	st.reset()
	st.conn = c
	st.sendWindow = c.peerWindow
	c.smu.Unlock()

	if st.owes == c {
		st.owes = nil // the reader counted us among the writers already
		c.wmu.Lock()
	} else {
		st.settle()
		c.lockWrite()
	}
	c.smu.Lock()
	if c.dead || c.goaway { // it ended while we waited for the write section
		c.releaseLocked()
		c.smu.Unlock()
		_ = c.unlockWrite() // nothing of ours was written
		return h2SendRetry
	}
	c.openStreamLocked(st)
	c.smu.Unlock()
	err := c.writeHeaders(st.id, st.block, len(st.reqBody) == 0)
	if err == nil && len(st.reqBody) > 0 {
		err = c.writeBody(st)
	}
	if ferr := c.unlockWrite(); err == nil {
		err = ferr
	}
	if err == nil {
		return h2Sent
	}
	c.close()
	if c.take(st) {
		st.err = err
		return h2SendFailed
	}
	return h2Sent // the reader has already completed the stream
}

func (c *h2Conn) writeHeaders(id uint32, block []byte, endStream bool) error {
	first := block
	if len(first) > h2FrameSize {
		first = first[:h2FrameSize]
	}
	block = block[len(first):]
	err := c.fr.WriteHeaders(http2.HeadersFrameParam{
		StreamID:      id,
		BlockFragment: first,
		EndStream:     endStream,
		EndHeaders:    len(block) == 0,
	})
	for err == nil && len(block) > 0 {
		frag := block
		if len(frag) > h2FrameSize {
			frag = frag[:h2FrameSize]
		}
		block = block[len(frag):]
		err = c.fr.WriteContinuation(id, len(block) == 0, frag)
	}
	return err
}

// writeBody sends the body in DATA frames within the flow-control windows;
// called inside a write section, which it leaves while waiting for window.
func (c *h2Conn) writeBody(st *h2Stream) error {
	body := st.reqBody
	for len(body) > 0 {
		c.smu.Lock()
		if c.dead || c.streams[st.id] != st {
			// The stream ended (reset, connection lost, or answered before the
			// body was all sent): the reader reports it. A server that answered
			// early without resetting still waits for the rest; cancel it.
			cancel := !c.dead && !st.resetSent
			c.smu.Unlock()
			if cancel {
				return c.fr.WriteRSTStream(st.id, http2.ErrCodeCancel)
			}
			return nil
		}
		if c.sendWindow <= 0 || st.sendWindow <= 0 {
			c.smu.Unlock()
			if err := c.unlockWrite(); err != nil {
				c.lockWrite()
				return err
			}
			c.smu.Lock()
			for !c.dead && (c.sendWindow <= 0 || st.sendWindow <= 0) && c.streams[st.id] == st {
				c.cond.Wait()
			}
			c.smu.Unlock()
			c.lockWrite()
			continue
		}
		n := min(int64(len(body)), h2FrameSize, c.sendWindow, st.sendWindow)
		c.sendWindow -= n
		st.sendWindow -= n
		c.smu.Unlock()
		if err := c.fr.WriteData(st.id, int(n) == len(body), body[:n]); err != nil {
			return err
		}
		body = body[n:]
	}
	return nil
}

// take removes st from c if it is still open there, so that the caller reports
// it; false means the reader has completed it (a value is on st.done).
func (c *h2Conn) take(st *h2Stream) bool {
	c.smu.Lock()
	defer c.smu.Unlock()
	if c.streams[st.id] != st {
		return false
	}
	c.forgetLocked(st)
	return true
}

// forgetLocked removes st from the open streams; smu held.
func (c *h2Conn) forgetLocked(st *h2Stream) {
	delete(c.streams, st.id)
	c.releaseLocked()
}

// releaseLocked gives back a stream's place; smu held.
func (c *h2Conn) releaseLocked() {
	c.active--
	c.cond.Broadcast()
	if c.goaway && c.active == 0 {
		c.close() // drained: nothing more will come on it
	}
}

// completeLocked ends st with its result and wakes its slot; smu held.
func (c *h2Conn) completeLocked(st *h2Stream, class failClass, err error) {
	st.end = c.r.clock()
	st.class, st.err = class, err
	st.next = h2Completed
	c.forgetLocked(st)
	c.writers.Add(1)
	st.owes = c
	st.done <- struct{}{}
}

// endedLocked is called when st's response is complete; smu held. A successful
// response of a slot that allows it is left to finishFast, which runs once smu
// is released.
func (c *h2Conn) endedLocked(st *h2Stream) {
	class, err := st.endClass(st.head)
	if class != classOK || !st.fastOK {
		c.completeLocked(st, class, err)
		return
	}
	st.end = c.r.clock()
	st.class, st.err = classOK, nil
	c.forgetLocked(st)
	c.fast = append(c.fast, st)
}

// cancel gives up on an overdue stream (--request-timeout): RST_STREAM(CANCEL).
// False means the response completed meanwhile.
func (c *h2Conn) cancel(st *h2Stream) bool {
	if !c.take(st) {
		return false
	}
	c.lockWrite()
	err := c.fr.WriteRSTStream(st.id, http2.ErrCodeCancel)
	if ferr := c.unlockWrite(); err == nil {
		err = ferr
	}
	if err != nil {
		c.close()
	}
	return true
}

// openStreamLocked gives st the connection's next stream ID; past the last ID the
// connection takes no new streams, as if it had received a GOAWAY. The caller
// holds c.smu.
func (c *h2Conn) openStreamLocked(st *h2Stream) {
	st.id = c.nextID
	c.nextID += 2
	c.streams[st.id] = st
	if c.nextID > h2MaxStreamID {
		c.goaway = true
		c.lastID = h2MaxStreamID
	}
}

// stopContext is cancelled when the run stops, so that dials and handshakes end.
type stopContext struct{ r *run }

func (stopContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (s stopContext) Done() <-chan struct{}     { return s.r.stopCh }
func (stopContext) Value(any) any               { return nil }

func (s stopContext) Err() error {
	select {
	case <-s.r.stopCh:
		return context.Canceled
	default:
		return nil
	}
}
