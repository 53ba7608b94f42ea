package client

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/quicvarint"
	"golang.org/x/net/http2/hpack"

	"gab/internal/hpackdec"
)

// The rules of HTTP/3 (RFC 9114) responses and of the server's
// unidirectional streams, and the limits that keep a server from hanging,
// bloating or fooling gab. quic-go carries the QUIC connection (packets,
// loss recovery, flow control, TLS 1.3); gab reads and writes the HTTP/3
// frames on its streams itself: a request is one pre-encoded HEADERS frame,
// a response is parsed as it arrives into a fixed buffer (h3Resp), header
// sections are QPACK-decoded without a dynamic table (h3Fields), and the
// control and QPACK streams are checked by h3Uni.

const (
	// h3MaxHeadersFrame bounds one HEADERS frame's payload (a QPACK field
	// section as sent). Past it the request fails (an Exception) and its
	// stream is cancelled with H3_EXCESSIVE_LOAD; the connection goes on.
	h3MaxHeadersFrame = 256 << 10
	// h3MaxFieldSection is SETTINGS_MAX_FIELD_SECTION_SIZE as gab
	// advertises it: a section's fields decoded (names, values and 32 bytes
	// each, RFC 9114 §4.2.2). A larger one fails the request the same way.
	h3MaxFieldSection = 1 << 20
	// h3MaxControlFrame bounds a frame gab must hold whole on the control
	// stream (SETTINGS, GOAWAY); past it the connection fails with
	// H3_EXCESSIVE_LOAD. Unknown frames are skipped, not held.
	h3MaxControlFrame = 16 << 10
	// h3MaxUniStreams is how many unidirectional streams the server may have
	// open at once (QUIC's MAX_STREAMS): its control stream, its QPACK
	// encoder and decoder streams, and a few reserved ones.
	h3MaxUniStreams = 16
)

// HTTP/3 frame and stream types gab meets (RFC 9114 §7.2, §6.2; RFC 9204 §4.2).
const (
	h3FrameData        = 0x0
	h3FrameHeaders     = 0x1
	h3FrameCancelPush  = 0x3
	h3FrameSettings    = 0x4
	h3FramePushPromise = 0x5
	h3FrameGoAway      = 0x7
	h3FrameMaxPushID   = 0xd

	h3StreamControl      = 0x0
	h3StreamPush         = 0x1
	h3StreamQPACKEncoder = 0x2
	h3StreamQPACKDecoder = 0x3

	h3SettingMaxFieldSection = 0x6
	// QPACK's encoder stream error code (RFC 9204 §6).
	qpackEncoderStreamError = 0x201
)

// h3Error is a protocol error gab found in what the server sent: the
// request fails as an Exception, and gab cancels the stream (conn false) or
// closes the whole connection (conn true) with code.
type h3Error struct {
	code http3.ErrCode
	conn bool
	msg  string
}

func (e *h3Error) Error() string {
	scope := "stream"
	if e.conn {
		scope = "connection"
	}
	return fmt.Sprintf("HTTP/3 %s error %v: %s", scope, e.code, e.msg)
}

func h3ConnError(code http3.ErrCode, msg string) *h3Error {
	return &h3Error{code: code, conn: true, msg: msg}
}

var (
	errH3DataFirst        = h3ConnError(http3.ErrCodeFrameUnexpected, "DATA frame before the response head")
	errH3FrameOnRequest   = h3ConnError(http3.ErrCodeFrameUnexpected, "control frame on a request stream")
	errH3PushPromise      = h3ConnError(http3.ErrCodeIDError, "PUSH_PROMISE although gab allows no push")
	errH3Truncated        = h3ConnError(http3.ErrCodeFrameError, "stream ended inside a frame")
	errH3QPACK            = h3ConnError(http3.ErrCodeQPACKDecompressionFailed, "field section does not decode without a dynamic table")
	errH3HeadersTooLarge  = &h3Error{code: http3.ErrCodeExcessiveLoad, msg: fmt.Sprintf("HEADERS frame larger than %d bytes", h3MaxHeadersFrame)}
	errH3SectionTooLarge  = &h3Error{code: http3.ErrCodeExcessiveLoad, msg: fmt.Sprintf("field section larger than %d bytes decoded", h3MaxFieldSection)}
	errH3TooManyInterim   = &h3Error{code: http3.ErrCodeExcessiveLoad, msg: fmt.Sprintf("more than %d informational responses", maxInterim)}
	errH3AfterTrailers    = &h3Error{code: http3.ErrCodeMessageError, msg: "frame after the trailers"}
	errH3Status101        = errors.New("malformed response: status 101 over HTTP/3")
	errH3GoAwayAfterHead  = errors.New("response cut short: the server's GOAWAY refused a request it had begun to answer")
	errH3NoSettings       = h3ConnError(http3.ErrCodeMissingSettings, "control stream does not start with SETTINGS")
	errH3ControlClosed    = h3ConnError(http3.ErrCodeClosedCriticalStream, "the server closed its control stream")
	errH3SecondSettings   = h3ConnError(http3.ErrCodeFrameUnexpected, "second SETTINGS frame")
	errH3ControlFrame     = h3ConnError(http3.ErrCodeFrameUnexpected, "frame not allowed on the control stream")
	errH3ControlTooLarge  = h3ConnError(http3.ErrCodeExcessiveLoad, fmt.Sprintf("control frame larger than %d bytes", h3MaxControlFrame))
	errH3GoAwayID         = h3ConnError(http3.ErrCodeIDError, "GOAWAY with an invalid or increased stream ID")
	errH3BadSettings      = h3ConnError(http3.ErrCodeSettingsError, "malformed or forbidden setting")
	errH3DuplicateStream  = h3ConnError(http3.ErrCodeStreamCreationError, "second control or QPACK stream")
	errH3PushStream       = h3ConnError(http3.ErrCodeIDError, "push stream although gab allows no push")
	errH3CancelPush       = h3ConnError(http3.ErrCodeIDError, "CANCEL_PUSH although gab allows no push")
	errH3QPACKInstruction = h3ConnError(qpackEncoderStreamError, "QPACK encoder instruction although gab allows no dynamic table")
)

// h3Resp is one response on a request stream, parsed as it arrives.
type h3Resp struct {
	h2Resp            // status, final head, informational heads, body and bytes counted as for HTTP/2
	trailers bool     // the trailer section has been read
	hdr      [16]byte // a frame header split over reads, gathered
	hdrLen   int
	ftype    uint64
	left     uint64 // payload bytes of the current frame still to come
	inFrame  bool   // reading the current frame's payload
	block    []byte // a HEADERS payload split over reads, gathered
}

// h3KeepBlock is the most of a gathered HEADERS buffer a slot keeps for the
// next response.
const h3KeepBlock = 16 << 10

// reset makes p ready for the next response on another stream.
func (p *h3Resp) reset() {
	block := p.block[:0]
	if cap(block) > h3KeepBlock {
		block = nil
	}
	*p = h3Resp{block: block}
}

// take parses b, the next bytes of the response's stream, received at now.
// A non-nil error ends the request.
func (p *h3Resp) take(r *run, d *h3Fields, now int64, b []byte) *h3Error {
	p.arrived(now, uint32(len(b)))
	for len(b) > 0 {
		if !p.inFrame {
			n, ok := p.frameHeader(b)
			b = b[n:]
			if !ok {
				return nil // the header continues in the next read
			}
			if err := p.begin(); err != nil {
				return err
			}
			if p.left == 0 {
				if err := p.payloadDone(r, d, nil); err != nil {
					return err
				}
			}
			continue
		}
		n := min(uint64(len(b)), p.left)
		chunk := b[:n]
		b = b[n:]
		p.left -= n
		switch p.ftype {
		case h3FrameData:
			p.body += int64(n)
		case h3FrameHeaders:
			if p.left == 0 && len(p.block) == 0 {
				if err := p.payloadDone(r, d, chunk); err != nil { // the whole frame in one read
					return err
				}
				continue
			}
			p.block = append(p.block, chunk...)
		}
		if p.left == 0 {
			if err := p.payloadDone(r, d, p.block); err != nil {
				return err
			}
		}
	}
	return nil
}

// frameHeader reads a frame header (type and length, two varints) from the
// start of b, gathering it in p.hdr when it is split over reads: it returns
// the bytes of b it used and whether the header is complete (p.ftype and
// p.left are then set).
func (p *h3Resp) frameHeader(b []byte) (int, bool) {
	if p.hdrLen == 0 {
		if t, n1, err := quicvarint.Parse(b); err == nil {
			if l, n2, err := quicvarint.Parse(b[n1:]); err == nil {
				p.ftype, p.left = t, l
				return n1 + n2, true
			}
		}
	}
	used := 0
	for used < len(b) {
		p.hdr[p.hdrLen] = b[used]
		p.hdrLen++
		used++
		if p.hdrLen == h3HeaderNeed(p.hdr[:p.hdrLen]) {
			t, n1, _ := quicvarint.Parse(p.hdr[:p.hdrLen])
			l, _, _ := quicvarint.Parse(p.hdr[n1:p.hdrLen])
			p.ftype, p.left, p.hdrLen = t, l, 0
			return used, true
		}
	}
	return used, false
}

// h3HeaderNeed is the length of the frame header that begins with h (at
// least one byte): each varint's length is in its first byte's top bits.
func h3HeaderNeed(h []byte) int {
	l1 := 1 << (h[0] >> 6)
	if len(h) <= l1 {
		return l1 + 1
	}
	return l1 + 1<<(h[l1]>>6)
}

// begin checks the frame whose header was just read (RFC 9114 §4.1, §7.2).
func (p *h3Resp) begin() *h3Error {
	p.inFrame = true
	switch p.ftype {
	case h3FrameData:
		switch {
		case !p.final:
			return errH3DataFirst
		case p.trailers:
			return errH3AfterTrailers
		}
	case h3FrameHeaders:
		switch {
		case p.trailers:
			return errH3AfterTrailers
		case p.left > h3MaxHeadersFrame:
			return errH3HeadersTooLarge
		}
	case h3FrameCancelPush, h3FrameSettings, h3FrameGoAway, h3FrameMaxPushID, 0x2, 0x6, 0x8, 0x9:
		return errH3FrameOnRequest // 0x2, 0x6, 0x8, 0x9: HTTP/2's frame types, reserved
	case h3FramePushPromise:
		return errH3PushPromise
	}
	return nil // unknown types (extensions, grease) are skipped
}

// payloadDone ends the current frame; block is a complete HEADERS payload.
func (p *h3Resp) payloadDone(r *run, d *h3Fields, block []byte) *h3Error {
	p.inFrame = false
	if p.ftype != h3FrameHeaders {
		return nil
	}
	p.block = p.block[:0]
	if p.final {
		p.trailers = true // nothing in trailers is reported
		return d.check(block)
	}
	h, err := d.decode(block)
	if err != nil {
		return err
	}
	if h.status == 101 && h.malformed == nil {
		h.malformed = errH3Status101
	}
	// The end of the stream is not known here: a 1xx head is informational
	// whatever follows (RFC 9114 §4.1).
	if skip, tooMany := p.informational(h, false); tooMany {
		return errH3TooManyInterim
	} else if skip {
		return nil
	}
	if d.verbose {
		d.dump()
	}
	p.finalHead(r, h)
	return nil
}

// ended checks a stream that the server finished (FIN) and settles the
// request's class: a stream may not end inside a frame (a connection
// error); the response must be complete and well-formed (endClass).
func (p *h3Resp) ended(headRequest bool) (failClass, error) {
	if p.inFrame || p.hdrLen > 0 {
		return failException, errH3Truncated
	}
	return p.endClass(headRequest)
}

// h3Fields decodes a connection's QPACK field sections. gab advertises no
// dynamic table (SETTINGS_QPACK_MAX_TABLE_CAPACITY 0, the default), so a
// section may refer only to the static table and literals; anything else is
// QPACK_DECOMPRESSION_FAILED. Decoded strings are interned per slot by
// internal/hpackdec's Strings, so a server that repeats its fields costs no
// allocation. Each slot has its own h3Fields.
type h3Fields struct {
	r       *run
	head    h2Head
	list    int // size of the section so far (values gab does not decode counted as encoded)
	verbose bool
	text    []byte
	strs    hpackdec.Strings // decoded strings, interned
}

func newH3Fields(r *run) *h3Fields {
	return &h3Fields{r: r, verbose: r.cfg.Verbosity >= 2}
}

// h3Static is QPACK's static table (RFC 9204 Appendix A), read once from
// quic-go's qpack decoder.
var h3Static = func() []hpack.HeaderField {
	var t []hpack.HeaderField
	for i := 0; ; i++ {
		b := []byte{0, 0, 0xc0 | byte(min(i, 63))}
		if i >= 63 {
			b = append(b, byte(i-63))
		}
		f, err := qpack.NewDecoder().Decode(b)()
		if err != nil {
			return t
		}
		t = append(t, hpack.HeaderField{Name: f.Name, Value: f.Value})
	}
}()

// decode decodes a response head's field section.
func (d *h3Fields) decode(block []byte) (*h2Head, *h3Error) {
	d.head = h2Head{length: -1}
	d.text = d.text[:0]
	return &d.head, d.walk(block, true)
}

// check decodes a section whose fields nothing reports (trailers), for
// its errors only.
func (d *h3Fields) check(block []byte) *h3Error { return d.walk(block, false) }

// walk decodes block's field lines (RFC 9204 §4.5), noting each field when
// note is set.
func (d *h3Fields) walk(block []byte, note bool) *h3Error {
	// The prefix: Required Insert Count must be 0 (no dynamic table); the
	// Base is then meaningless.
	ric, p, err := qpackInt(block, 8)
	if err != nil || ric != 0 {
		return errH3QPACK
	}
	if _, p, err = qpackInt(p, 7); err != nil {
		return errH3QPACK
	}
	d.list = 0
	for len(p) > 0 {
		var f hpack.HeaderField
		var raw int // the value's encoded length when it is not decoded
		b := p[0]
		switch {
		case b&0xc0 == 0xc0: // 11xxxxxx: indexed field line, static table
			var i uint64
			if i, p, err = qpackInt(p, 6); err != nil || i >= uint64(len(h3Static)) {
				return errH3QPACK
			}
			f = h3Static[i]
		case b&0xd0 == 0x50: // 01N1xxxx: literal with a static name reference
			var i uint64
			if i, p, err = qpackInt(p, 4); err != nil || i >= uint64(len(h3Static)) {
				return errH3QPACK
			}
			f.Name = h3Static[i].Name
			if f.Value, raw, p, err = d.str(p, 7, note && d.wants(f.Name)); err != nil {
				return errH3QPACK
			}
		case b&0xe0 == 0x20: // 001Nxxxx: literal with a literal name
			if f.Name, _, p, err = d.str(p, 3, note); err != nil {
				return errH3QPACK
			}
			if f.Value, raw, p, err = d.str(p, 7, note && d.wants(f.Name)); err != nil {
				return errH3QPACK
			}
		default: // references to the dynamic table, which gab allows none
			return errH3QPACK
		}
		if d.list += len(f.Name) + max(len(f.Value), raw) + 32; d.list > h3MaxFieldSection {
			return errH3SectionTooLarge
		}
		if note {
			d.field(f)
		}
	}
	return nil
}

// wants reports whether a field's value is decoded: what gab reports (the
// status, the content-length, the first response's server) or, with -v 2,
// every field. The
// others' values are skipped undecoded (their Huffman coding unchecked, as
// x/net's HPACK decoder leaves the strings it does not emit).
func (d *h3Fields) wants(name string) bool {
	return d.verbose || name == ":status" || name == "content-length" || name == "server" && d.r.wantServer()
}

// field notes one field of a response head.
func (d *h3Fields) field(f hpack.HeaderField) {
	if d.verbose {
		d.text = headLine(d.text, "HTTP/3 ", f)
	}
	d.head.note(d.r, f)
}

// dump shows the final response head as -v 2 shows one.
func (d *h3Fields) dump() {
	d.text = append(d.text, "\r\n"...)
	d.r.events.HeaderReceived(d.text)
}

// str reads a string literal whose length has an n-bit prefix, the Huffman
// flag in the bit above it. Without decode, only its bounds are checked
// (the string is "", and its encoded length is returned).
func (d *h3Fields) str(p []byte, n uint8, decode bool) (string, int, []byte, error) {
	if len(p) == 0 {
		return "", 0, nil, errH3QPACK
	}
	huff := p[0]&(1<<n) != 0
	l, p, err := qpackInt(p, n)
	if err != nil || uint64(len(p)) < l {
		return "", 0, nil, errH3QPACK
	}
	raw, rest := p[:l], p[l:]
	if !decode {
		return "", len(raw), rest, nil
	}
	s, err := d.strs.Decode(raw, huff)
	if err != nil {
		return "", 0, nil, err
	}
	return s, 0, rest, nil
}

// qpackInt reads an integer with an n-bit prefix (RFC 9204 §4.1.1, RFC
// 7541 §5.1); more than 62 bits is an error.
func qpackInt(p []byte, n uint8) (uint64, []byte, error) {
	if len(p) == 0 {
		return 0, nil, errH3QPACK
	}
	max := uint64(1)<<n - 1
	i := uint64(p[0]) & max
	p = p[1:]
	if i < max {
		return i, p, nil
	}
	for m := uint(0); len(p) > 0 && m < 63; m += 7 {
		b := p[0]
		p = p[1:]
		i += uint64(b&0x7f) << m
		if b&0x80 == 0 {
			return i, p, nil
		}
	}
	return 0, nil, errH3QPACK
}

// h3Request is the request gab sends on every request stream: a HEADERS
// frame (the fields of h2Fields, QPACK-encoded with the static table and
// literals only) and the body in one DATA frame.
func h3Request(cfg *Config) ([]byte, error) {
	var section bytes.Buffer
	enc := qpack.NewEncoder(&section)
	for _, f := range h2Fields(cfg) {
		if err := enc.WriteField(qpack.HeaderField{Name: f.Name, Value: f.Value}); err != nil {
			return nil, err
		}
	}
	b := quicvarint.Append(nil, h3FrameHeaders)
	b = quicvarint.Append(b, uint64(section.Len()))
	b = append(b, section.Bytes()...)
	if cfg.Spec.HasBody && len(cfg.Spec.Body) > 0 {
		b = quicvarint.Append(b, h3FrameData)
		b = quicvarint.Append(b, uint64(len(cfg.Spec.Body)))
		b = append(b, cfg.Spec.Body...)
	}
	return b, nil
}

// h3ControlPreface is what gab writes on its control stream, which stays
// open for the connection's life: the stream type and a SETTINGS frame with
// SETTINGS_MAX_FIELD_SECTION_SIZE (no dynamic table, no push, no datagrams:
// the defaults).
var h3ControlPreface = func() []byte {
	var s []byte
	s = quicvarint.Append(s, h3SettingMaxFieldSection)
	s = quicvarint.Append(s, h3MaxFieldSection)
	b := quicvarint.Append(nil, h3StreamControl)
	b = quicvarint.Append(b, h3FrameSettings)
	b = quicvarint.Append(b, uint64(len(s)))
	return append(b, s...)
}()

// h3Settings checks a server's SETTINGS payload (RFC 9114 §7.2.4): every
// identifier at most once, none of HTTP/2's (0x2–0x5), and QPACK's and
// datagrams' values in range. gab uses none of the values.
func h3Settings(payload []byte) *h3Error {
	seen := map[uint64]bool{}
	for len(payload) > 0 {
		id, n, err := quicvarint.Parse(payload)
		if err != nil {
			return errH3BadSettings
		}
		v, m, err := quicvarint.Parse(payload[n:])
		if err != nil {
			return errH3BadSettings
		}
		payload = payload[n+m:]
		if seen[id] || id >= 0x2 && id <= 0x5 || id == 0x33 && v > 1 || id == 0x8 && v > 1 {
			return errH3BadSettings
		}
		if len(seen) < 64 {
			seen[id] = true
		}
	}
	return nil
}

// h3GoAway reads a GOAWAY payload: a client-initiated bidirectional stream
// ID (a multiple of 4), never above an earlier GOAWAY's (last, -1 if none).
func h3GoAway(payload []byte, last int64) (int64, *h3Error) {
	id, n, err := quicvarint.Parse(payload)
	if err != nil || n != len(payload) || id%4 != 0 || last >= 0 && int64(id) > last {
		return 0, errH3GoAwayID
	}
	return int64(id), nil
}

// h3StreamErrorText is how a stream reset by the server is reported.
func h3StreamErrorText(code quic.StreamErrorCode) string {
	return "stream reset by the server: " + http3.ErrCode(code).String()
}

// h3CodeName names an application error code as RFC 9114 and RFC 9204 do.
func h3CodeName(code uint64) string {
	if code == qpackEncoderStreamError {
		return "QPACK_ENCODER_STREAM_ERROR"
	}
	if code == 0x202 {
		return "QPACK_DECODER_STREAM_ERROR"
	}
	s := http3.ErrCode(code).String()
	if len(s) > 0 && s[0] == 'u' { // "unknown error code: …"
		return "0x" + strconv.FormatUint(code, 16)
	}
	return s
}
