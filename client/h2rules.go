package client

import (
	"errors"
	"fmt"
	"strconv"
	"syscall"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"gab/internal/hpackdec"
)

// The rules of HTTP/2 responses and streams, and the limits that keep a
// server from hanging, bloating or fooling gab. Both HTTP/2 paths (the
// goroutine path of http2.go and the Linux event loops of
// http2_epoll_linux.go) decode header blocks with h2HeadDecoder and settle
// streams with the functions here, so each rule and each limit is written once.

const (
	// h2MaxHeaderBlock bounds one header block: a HEADERS frame and its
	// CONTINUATION frames, counted in payload bytes as received. A real
	// response head takes a few KiB; past 256 KiB the connection fails as a
	// protocol error (the requests on it are Exceptions) and is replaced.
	h2MaxHeaderBlock = 256 << 10
	// h2MaxHeaderList bounds the same block decoded (RFC 9113's header list
	// size: names, values and 32 bytes per field), which HPACK's indexed
	// fields can make thousands of times larger than the block: past 1 MiB the
	// connection fails the same way.
	h2MaxHeaderList = 1 << 20
	// h2MaxRetries is how often one request is sent again after the server
	// provably did not process it (RST_STREAM REFUSED_STREAM, or a GOAWAY whose
	// last stream ID is below the request's stream). One more refusal makes it
	// an Exception.
	h2MaxRetries = 3
	// h2ReadBudget is what an event loop reads from one connection per turn
	// before it serves the others, writes what is due and checks for stop.
	h2ReadBudget = 256 << 10
	// h2MaxOutput bounds an event loop connection's output not yet taken by
	// the socket (SETTINGS and PING acknowledgements, WINDOW_UPDATEs,
	// requests). At the bound the loop stops decoding the connection's input
	// until the socket takes the output; if it takes none, the connection
	// fails. (The goroutine path writes through a 32 KiB bufio.Writer, whose
	// full buffer blocks the reader the same way.)
	h2MaxOutput = 1 << 20
	// h2ResetInterim is the code of the RST_STREAM with which gab ends a
	// stream that brought more than maxInterim informational heads: the
	// server is generating excessive load (RFC 9113 §7).
	h2ResetInterim = http2.ErrCodeEnhanceYourCalm
)

var (
	errFirstFrame          = errors.New("first frame from the server is not SETTINGS")
	errRunStopped          = errors.New("the run has stopped")
	errNoStatus            = errors.New("stream ended without a response :status")
	errDuplicateStatus     = errors.New("malformed response: more than one :status")
	errBadStatus           = errors.New("malformed response: :status is not three digits from 100 to 599")
	errH2ContentLength     = errors.New("malformed response: invalid content-length")
	errH2LengthMismatch    = errors.New("malformed response: body length differs from content-length")
	errHeaderBlockTooLarge = fmt.Errorf("response header block larger than %d bytes: %w", h2MaxHeaderBlock, http2.ConnectionError(http2.ErrCodeProtocol))
	errHeaderListTooLarge  = fmt.Errorf("response header list larger than %d bytes: %w", h2MaxHeaderList, http2.ConnectionError(http2.ErrCodeProtocol))
	errUnopenedStream      = fmt.Errorf("frame on a stream gab never opened: %w", http2.ConnectionError(http2.ErrCodeProtocol))
	errGoAwayRefused       = errors.New("stream refused by GOAWAY")
	errPushPromise         = fmt.Errorf("PUSH_PROMISE although push is disabled: %w", http2.ConnectionError(http2.ErrCodeProtocol))
	errRefusedTooOften     = fmt.Errorf("request not processed by the server, sent %d times", h2MaxRetries+1)
)

// h2Resp is what a stream's response brought, in either HTTP/2 path.
type h2Resp struct {
	status    int
	final     bool // the final (non-1xx) response head has been seen
	firstByte int64
	end       int64
	body      int64
	read      int64
	length    int64  // the final head's content-length, -1 if none (set with final)
	malformed error  // why the final head is malformed, nil if it is not
	unacked   uint32 // received DATA not yet given back with WINDOW_UPDATE
	interim   int    // informational heads skipped
	class     failClass
	err       error
	retry     bool // not processed by the server: issue the request again
	resetSent bool // a RST_STREAM ended the stream: the server's, or gab's own (headBlock's errors)
}

// arrived notes n payload bytes of a HEADERS, CONTINUATION or DATA frame for
// the stream, received at now.
func (st *h2Resp) arrived(now int64, n uint32) {
	if st.firstByte == 0 {
		st.firstByte = now
	}
	st.read += int64(n)
}

// takeData notes a DATA frame for the stream; true if it ends the stream.
func (st *h2Resp) takeData(now int64, f *http2.DataFrame) bool {
	st.arrived(now, f.Length)
	st.body += int64(len(f.Data()))
	return f.StreamEnded()
}

// takeReset notes the server's RST_STREAM and returns the error the request
// fails with (an Exception); REFUSED_STREAM before any response head means
// the server did not process it (st.retry).
func (st *h2Resp) takeReset(code http2.ErrCode) error {
	st.retry = code == http2.ErrCodeRefusedStream && !st.final
	st.resetSent = true
	return fmt.Errorf("stream reset by the server: %v", code)
}

// refusedBy reports whether a GOAWAY whose last stream ID is last refuses
// stream id, which st is the response of: a stream above last was not
// processed (RFC 9113 §6.8) and its request is sent again, unless its
// final head has come, which proves the server processed it whatever its
// GOAWAY says: such a stream is left to finish.
func (st *h2Resp) refusedBy(id, last uint32) bool { return id > last && !st.final }

// endClass is the class of a stream that ended normally: OK unless the
// response is malformed (RFC 9113 §8.1.1, §8.3): no final head with exactly
// one valid :status, or a body whose length is not the content-length (which
// a response to HEAD, a 204 and a 304 may carry without a body).
func (st *h2Resp) endClass(headRequest bool) (failClass, error) {
	switch {
	case !st.final:
		return failException, errNoStatus
	case st.malformed != nil:
		return failException, st.malformed
	case st.status == 0:
		return failException, errNoStatus
	case st.length >= 0 && st.length != st.body && !headRequest && st.status != 204 && st.status != 304:
		return failException, errH2LengthMismatch
	}
	return classOK, nil
}

// finalHead notes the stream's final response head.
func (st *h2Resp) finalHead(r *run, h *h2Head) {
	st.final = true
	st.status, st.length, st.malformed = h.status, h.length, h.malformed
	if r.wantServer() {
		r.setServer("") // no server field: ab's Server Software stays empty
	}
	r.sawHeader()
	if r.cfg.Verbosity >= 2 && h.status != 0 {
		r.events.Status(h.status)
	}
}

// informational takes a head received before the final one and reports
// whether it is an informational head, skipped: a well-formed 1xx on a
// stream that goes on. It is the rule of both HTTP/2 paths and of HTTP/3:
// at most maxInterim of them on one stream, HTTP/1's bound (a server that
// sends 103 heads for ever would hold the request for ever, -s included,
// since each head is activity); one more is tooMany, and the request fails
// as an Exception with its stream reset.
func (st *h2Resp) informational(h *h2Head, endStream bool) (skip, tooMany bool) {
	if h.status < 100 || h.status >= 200 || h.malformed != nil || endStream {
		return false, false
	}
	st.interim++
	return true, st.interim > maxInterim
}

// headBlock takes a complete header block for st and reports whether st's
// stream ends with it. An informational head before the final one is
// skipped; past maxInterim of them, err (errTooManyInterim) says the stream
// fails and gab resets it (RST_STREAM ENHANCE_YOUR_CALM: h2ResetInterim).
// dump, if not nil, sees the final head before it is noted (-v 2 shows it
// before the status).
func (st *h2Resp) headBlock(r *run, h *h2Head, endStream bool, dump func()) (ends bool, err error) {
	if !st.final {
		if skip, tooMany := st.informational(h, endStream); tooMany {
			return true, errTooManyInterim
		} else if skip {
			return false, nil
		}
		if dump != nil {
			dump()
		}
		st.finalHead(r, h)
	}
	return endStream, nil
}

// h2Head is what the fields of one response head said.
type h2Head struct {
	status    int
	statuses  int   // :status fields seen
	length    int64 // content-length, -1 if none
	malformed error
}

// note takes what gab checks and ab reports from one field of a response
// head: the status, the content-length and the Server header.
func (h *h2Head) note(r *run, f hpack.HeaderField) {
	switch f.Name {
	case ":status":
		if h.statuses++; h.statuses > 1 {
			h.malformed = errDuplicateStatus
			return
		}
		if n, ok := pseudoStatus(f.Value); ok {
			h.status = n
		} else {
			h.malformed = errBadStatus
		}
	case "content-length":
		n, err := strconv.ParseInt(f.Value, 10, 64)
		if err != nil || n < 0 || (h.length >= 0 && n != h.length) {
			h.malformed = errH2ContentLength
		}
		h.length = n
	case "server":
		if r.wantServer() {
			r.setServer(abServerCut(f.Value))
		}
	}
}

// pseudoStatus reads a :status value (RFC 9113 §8.3.2, RFC 9114 §4.3.2):
// exactly three digits, a code from 100 to 599 (RFC 9110 §15). Anything
// else, "-99", "+20", "099" or "600" among them, makes the response
// malformed: it would be counted as a status that no response has.
func pseudoStatus(v string) (int, bool) {
	if len(v) != 3 || v[0] < '1' || v[0] > '5' || v[1] < '0' || v[1] > '9' || v[2] < '0' || v[2] > '9' {
		return 0, false
	}
	return int(v[0]-'0')*100 + int(v[1]-'0')*10 + int(v[2]-'0'), true
}

// abServerCut is ab's cut of the Server value: bytes up to the first one
// ≤ 0x20 or ≥ 0x80, at most 1023.
func abServerCut(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] <= 0x20 || v[i] >= 0x80 || i == 1023 {
			return v[:i]
		}
	}
	return v
}

// h2HeadDecoder decodes a connection's header blocks, whatever their stream
// (the HPACK table must see every block), bounds each block to
// h2MaxHeaderBlock and notes the response head of the stream it decodes for.
// Each connection has its own, made afresh for each new connection.
//
// The HPACK decoding is internal/hpackdec's, which reads blocks as x/net's
// decoder does but interns the strings a server repeats: against nginx,
// which sends every field of every head as a new literal, x/net's decoder
// cost 2.2 µs and 9 allocations per head, this one 0.4 µs and none.
type h2HeadDecoder struct {
	r       *run
	dec     *hpackdec.Decoder
	emit    func(hpack.HeaderField) // onField, bound once
	resp    *h2Resp                 // the stream whose head is being decoded; nil for trailers or a stream nobody waits for
	size    int                     // payload bytes of the block so far
	list    int                     // decoded size of the block's fields so far (those emitted)
	end     bool                    // END_STREAM was set on the block's HEADERS frame
	pending []byte                  // the fragments so far of a block continued in CONTINUATION frames
	head    h2Head
	verbose bool   // -v ≥ 2: the head is kept as text for the dump
	text    []byte // the head as HTTP/1-style text (-v ≥ 2)
}

// h2KeepPending is the most of a continued block's buffer a connection keeps
// for the next one; a larger buffer is let go once its block is decoded.
const h2KeepPending = 16 << 10

func newH2HeadDecoder(r *run, verbose bool) *h2HeadDecoder {
	d := &h2HeadDecoder{r: r, verbose: verbose, dec: hpackdec.New(4096)}
	d.emit = d.onField
	return d
}

// begin starts the block of a HEADERS frame; resp is its stream's response,
// nil if no request waits for it.
func (d *h2HeadDecoder) begin(resp *h2Resp, endStream bool) {
	if resp != nil && resp.final {
		resp = nil // trailers: nothing in them is reported
	}
	d.resp, d.size, d.list, d.end = resp, 0, 0, endStream
	d.head = h2Head{length: -1}
	d.text = d.text[:0]
	d.pending = d.pending[:0]
}

// fragment takes the payload of a HEADERS or CONTINUATION frame (frameLen
// bytes on the wire, padding included); complete reports that the block
// ended and was decoded. An error is a connection error. A block split over
// frames is gathered (at most h2MaxHeaderBlock bytes) and decoded whole when
// it ends.
func (d *h2HeadDecoder) fragment(frameLen uint32, frag []byte, endHeaders bool) (complete bool, err error) {
	if d.size += int(frameLen); d.size > h2MaxHeaderBlock {
		return false, errHeaderBlockTooLarge
	}
	if !endHeaders || len(d.pending) > 0 {
		d.pending = append(d.pending, frag...)
		if !endHeaders {
			return false, nil
		}
		frag = d.pending
	}
	// Without a stream to note the fields for, the decoder skips the
	// strings of literals that are not indexed instead of decoding them.
	emit := d.emit
	if d.resp == nil {
		emit = nil
	}
	err = d.dec.Decode(frag, emit)
	if cap(d.pending) > h2KeepPending {
		d.pending = nil
	}
	if err != nil {
		return false, http2.ConnectionError(http2.ErrCodeCompression)
	}
	if d.list > h2MaxHeaderList {
		return false, errHeaderListTooLarge
	}
	return true, nil
}

// done ends a complete block: it reports whether the stream it was decoded
// for ends with it, and with err (a stream error, see headBlock) that the
// stream fails and is to be reset.
func (d *h2HeadDecoder) done() (ends bool, err error) {
	st := d.resp
	d.resp = nil
	if st == nil {
		return false, nil
	}
	var dump func()
	if d.verbose {
		dump = d.dump
	}
	return st.headBlock(d.r, &d.head, d.end, dump)
}

// dump shows the response head as ab's -v 2 shows one.
func (d *h2HeadDecoder) dump() {
	d.text = append(d.text, "\r\n"...)
	d.r.events.HeaderReceived(d.text)
}

func (d *h2HeadDecoder) onField(f hpack.HeaderField) {
	if d.list += len(f.Name) + len(f.Value) + 32; d.resp == nil || d.list > h2MaxHeaderList {
		return // fragment fails the connection once this frame is decoded
	}
	if d.verbose {
		d.text = headLine(d.text, "HTTP/2 ", f)
	}
	d.head.note(d.r, f)
}

// headLine appends field f of a response head to text as -v 2 shows it:
// :status as a status line after version, other pseudo-fields not at all,
// the rest as "name: value" lines.
func headLine(text []byte, version string, f hpack.HeaderField) []byte {
	switch {
	case f.Name == ":status":
		return append(append(append(text, version...), f.Value...), "\r\n"...)
	case len(f.Name) > 0 && f.Name[0] != ':':
		return append(append(append(append(text, f.Name...), ": "...), f.Value...), "\r\n"...)
	}
	return text
}

// h2Settings takes what gab uses from a server's SETTINGS frame: the most
// concurrent streams and the initial stream send window (each left alone when
// the frame does not carry it).
func h2Settings(f *http2.SettingsFrame, maxStreams *int, window *int64) error {
	return f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingMaxConcurrentStreams:
			*maxStreams = int(s.Val)
		case http2.SettingInitialWindowSize:
			if s.Val > h2MaxStreamID {
				return http2.ConnectionError(http2.ErrCodeFlowControl)
			}
			*window = int64(s.Val)
		}
		return nil
	})
}

// h2Unopened reports a stream the server may not send HEADERS, DATA or
// RST_STREAM on (RFC 9113 §5.1): an even one (gab disables push) or one gab
// has not opened (next is the next ID gab will use). That is a connection
// error: the connection is replaced.
func h2Unopened(id, next uint32) bool { return id%2 == 0 || id >= next }

// h2Resend settles a request the server provably did not process, after it
// was sent again *retries times: true means send it again (*retries counts
// it); false means o is settled (abandoned if the run is stopping, an
// Exception past h2MaxRetries).
func h2Resend(r *run, o *outcome, retries *int, now int64) bool {
	switch {
	case r.isStopped():
		o.Class = failAbandoned
		return false
	case *retries >= h2MaxRetries:
		o.Class, o.Err, o.End, o.FirstByte = failException, errRefusedTooOften, now, now
		return false
	}
	*retries++
	return true
}

// h2LostClass is the class of a stream whose connection ended with err
// before the stream did. Such a request is never sent again: the server may
// have processed it. One that got nothing back on a working connection (a
// connection that sent its SETTINGS) is counted whatever -r says.
func h2LostClass(stopping bool, st *h2Resp, sawSettings bool, err error) failClass {
	switch {
	case stopping:
		return failAbandoned
	case isH2ProtocolError(err):
		return failException // the server broke the protocol; gab ended the connection
	case (st.firstByte != 0 || !sawSettings) && errnoOf(err) == syscall.ECONNRESET:
		return failReceive
	}
	return failReceiveCounted
}

// h2GoAwayCode is the error code of the GOAWAY that gab sends before it
// closes a connection whose server broke the protocol (RFC 9113 §5.4.1), so
// that the server's logs say why; false for other endings.
func h2GoAwayCode(err error) (http2.ErrCode, bool) {
	var ce http2.ConnectionError
	if errors.As(err, &ce) {
		return http2.ErrCode(ce), true
	}
	return 0, false
}

// isH2ProtocolError reports an error that means the peer is not speaking
// HTTP/2 correctly.
func isH2ProtocolError(err error) bool {
	var ce http2.ConnectionError
	return errors.Is(err, errFirstFrame) || errors.Is(err, http2.ErrFrameTooLarge) || errors.As(err, &ce)
}
