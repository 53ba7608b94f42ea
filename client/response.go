package client

import (
	"bytes"
	"errors"
)

// This file parses HTTP/1 response heads in place (no copies, no allocations)
// and decodes body framing: Content-Length, chunked, or read-until-close.

// maxHeadLen is ab's response-head buffer: a head, terminator included, must fit
// in 8191 bytes, otherwise the request fails with a header overflow.
const maxHeadLen = 8191

// Errors of malformed responses (recorded as Exceptions).
var (
	errNotHTTP          = errors.New("response does not start with an HTTP/1 status line")
	errBadStatusLine    = errors.New("malformed HTTP status line")
	errBadHeaderLine    = errors.New("malformed HTTP header line")
	errBadContentLength = errors.New("invalid or conflicting Content-Length")
	errBadChunk         = errors.New("malformed chunked encoding")
	errHeadOverflow     = errors.New("response head over 8191 bytes")
	errTruncated        = errors.New("connection closed before the response was complete")
	errNoAnswer         = errors.New("connection closed before any response byte")
	errRequestTimeout   = errors.New("request timed out (--request-timeout)")
)

// framing is how the end of a response body is found.
type framing uint8

const (
	frameNone    framing = iota // no body: HEAD, 1xx, 204, 304
	frameLength                 // Content-Length
	frameChunked                // Transfer-Encoding: chunked
	frameEOF                    // the body ends when the server closes
)

// respHead is what the engine needs from a response head.
type respHead struct {
	status        int
	minor         int   // HTTP/1.<minor>
	contentLength int64 // -1 when absent
	chunked       bool  // the final transfer coding is chunked
	otherCoding   bool  // Transfer-Encoding present but not ending in chunked
	connClose     bool  // Connection: close
	connKeepAlive bool  // Connection: keep-alive
	// keepAliveText is ab's rule: the text "keep-alive" anywhere in the head, any case.
	keepAliveText bool
}

// framing says how the body of this response is delimited. headRequest is true
// for HEAD requests, whose responses never carry a body.
func (h *respHead) framing(headRequest bool) framing {
	switch {
	case headRequest, h.status < 200, h.status == 204, h.status == 304:
		return frameNone
	case h.chunked:
		return frameChunked
	case h.otherCoding:
		return frameEOF
	case h.contentLength >= 0:
		return frameLength
	}
	return frameEOF
}

// interim reports a 1xx response that precedes the real one (101 ends the
// exchange instead: the connection switches protocols).
func (h *respHead) interim() bool { return h.status >= 100 && h.status < 200 && h.status != 101 }

// httpPrefixOK reports whether buf can still be the start of "HTTP/": it lets a
// bare HTTP/0.9-style body fail at once instead of after 8 KiB.
func httpPrefixOK(buf []byte) bool {
	const p = "HTTP/"
	n := len(buf)
	if n > len(p) {
		n = len(p)
	}
	return string(buf[:n]) == p[:n]
}

// headEnd returns the index just past the blank line that ends a head in buf,
// or -1. Lines may end in CRLF or a bare LF. Bytes before from are known not to
// complete a terminator, so scanning resumes near there.
func headEnd(buf []byte, from int) int {
	i := from - 3
	if i < 0 {
		i = 0
	}
	for i < len(buf) {
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 {
			return -1
		}
		p := i + j + 1 // start of the next line
		if p < len(buf) && buf[p] == '\n' {
			return p + 1
		}
		if p+1 < len(buf) && buf[p] == '\r' && buf[p+1] == '\n' {
			return p + 2
		}
		i = p
	}
	return -1
}

// parseHead parses a complete head (as delimited by headEnd) into h.
func parseHead(head []byte, h *respHead) error {
	_, err := parseHeadIn(head, h)
	return err
}

// parseHeadIn parses the head at the start of buf into h in one pass and
// returns its length (as headEnd would), or -1 and no error while buf holds
// no complete head. A malformed head is reported only once it is complete.
func parseHeadIn(buf []byte, h *respHead) (int, error) {
	*h = respHead{contentLength: -1}
	nl := bytes.IndexByte(buf, '\n')
	if nl < 0 {
		return -1, nil
	}
	line := trimCR(buf[:nl])
	pos := nl + 1
	// "HTTP/1.x NNN" then a space and the reason, or nothing.
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || !isASCIIDigit(line[7]) || line[8] != ' ' ||
		!isASCIIDigit(line[9]) || !isASCIIDigit(line[10]) || !isASCIIDigit(line[11]) || (len(line) > 12 && line[12] != ' ') {
		return completeOnly(buf, pos, errBadStatusLine)
	}
	h.minor = int(line[7] - '0')
	h.status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	if h.status < 100 {
		return completeOnly(buf, pos, errBadStatusLine)
	}
	for {
		nl := bytes.IndexByte(buf[pos:], '\n')
		if nl < 0 {
			return -1, nil
		}
		line, next := trimCR(buf[pos:pos+nl]), pos+nl+1
		if len(line) == 0 {
			// The whole head at once: "keep-alive" cannot span a line break.
			h.keepAliveText = hasKeepAlive(buf[:next])
			return next, nil
		}
		pos = next
		if line[0] == ' ' || line[0] == '\t' {
			continue // obsolete line folding: a continuation we do not need
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return completeOnly(buf, pos, errBadHeaderLine)
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		switch len(name) {
		case len("content-length"):
			if equalFoldASCII(name, "content-length") {
				if err := h.addContentLength(value); err != nil {
					return completeOnly(buf, pos, err)
				}
			}
		case len("transfer-encoding"):
			if equalFoldASCII(name, "transfer-encoding") {
				h.addTransferEncoding(value)
			}
		case len("connection"):
			if equalFoldASCII(name, "connection") {
				h.addConnection(value)
			}
		}
	}
}

// findHead parses the head at the start of buf once it is complete; end is
// -1 while it is not. Bytes before scan are known not to complete it (a
// previous call saw them), so only a head completed since is parsed: one pass
// over a head that arrives whole, headEnd's resumed scan for one that trickles in.
func findHead(buf []byte, scan int, h *respHead) (end int, err error) {
	if scan > 0 && headEnd(buf, scan) < 0 {
		return -1, nil
	}
	return parseHeadIn(buf, h)
}

// completeOnly returns err with the head's end if the head that has a line
// starting at pos is complete, and (-1, nil) while it is not.
func completeOnly(buf []byte, pos int, err error) (int, error) {
	if end := headEnd(buf, pos); end > 0 {
		return end, err
	}
	return -1, nil
}

// trimCR drops one trailing CR.
func trimCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}

// addContentLength accepts "N" or a list of equal values ("N, N"); any other
// form, or a value differing from an earlier Content-Length, is an error.
func (h *respHead) addContentLength(v []byte) error {
	for len(v) > 0 {
		var item []byte
		item, v = nextListItem(v)
		if len(item) == 0 || len(item) > 18 {
			return errBadContentLength
		}
		var n int64
		for _, c := range item {
			if !isASCIIDigit(c) {
				return errBadContentLength
			}
			n = n*10 + int64(c-'0')
		}
		if h.contentLength >= 0 && h.contentLength != n {
			return errBadContentLength
		}
		h.contentLength = n
	}
	if h.contentLength < 0 {
		return errBadContentLength // an empty value
	}
	return nil
}

// nextListItem splits the first element off a comma-separated header value,
// without its surrounding whitespace (no copy).
func nextListItem(v []byte) (item, rest []byte) {
	if i := bytes.IndexByte(v, ','); i >= 0 {
		return trimOWS(v[:i]), v[i+1:]
	}
	return trimOWS(v), nil
}

// addTransferEncoding notes whether the final coding is chunked; a later header
// line continues the list of an earlier one.
func (h *respHead) addTransferEncoding(v []byte) {
	for len(v) > 0 {
		var item []byte
		item, v = nextListItem(v)
		if len(item) == 0 {
			continue
		}
		if i := bytes.IndexByte(item, ';'); i >= 0 {
			item = trimOWS(item[:i])
		}
		h.chunked = equalFoldASCII(item, "chunked")
		h.otherCoding = !h.chunked
	}
}

func (h *respHead) addConnection(v []byte) {
	for len(v) > 0 {
		var item []byte
		item, v = nextListItem(v)
		switch {
		case equalFoldASCII(item, "close"):
			h.connClose = true
		case equalFoldASCII(item, "keep-alive"):
			h.connKeepAlive = true
		}
	}
}

// hasKeepAlive looks for "keep-alive" in any case (ab's test). It jumps from
// one '-' to the next (a vectorised search; heads have few hyphens) instead
// of comparing at every byte.
func hasKeepAlive(b []byte) bool {
	const word, hyphen = "keep-alive", 4 // hyphen: the '-' in word
	for i := hyphen; i+len(word)-hyphen <= len(b); i++ {
		j := bytes.IndexByte(b[i:], '-')
		if j < 0 {
			return false
		}
		i += j
		if i+len(word)-hyphen > len(b) {
			return false
		}
		if equalFoldASCII(b[i-hyphen:i-hyphen+len(word)], word) {
			return true
		}
	}
	return false
}

// abServerSoftware is ab's cut of the Server header: find "Server:" in any case
// anywhere in the buffer (it may hit X-Server: or body text), skip 8 bytes, copy
// printable ASCII bytes (0x21–0x7f) up to 1023 of them.
func abServerSoftware(buf []byte) string {
	const word = "server:"
	at := -1
	for i := 0; i+len(word) <= len(buf); i++ {
		if buf[i]|0x20 == 's' && equalFoldASCII(buf[i:i+len(word)], word) {
			at = i
			break
		}
	}
	if at < 0 || at+8 > len(buf) {
		return ""
	}
	return serverToken(buf[at+8:])
}

// serverToken is ab's copy of the Server value: the printable ASCII bytes
// (0x21–0x7f) it starts with, up to 1023 of them. A value never carries a
// control byte into the report.
func serverToken(v []byte) string {
	end := 0
	for end < len(v) && end < 1023 && v[end] > 0x20 && v[end] < 0x80 {
		end++
	}
	return string(v[:end])
}

// equalFoldASCII compares ASCII b with lower-case s, ignoring case in b.
func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func isASCIIDigit(c byte) bool { return '0' <= c && c <= '9' }

// chunkedDecoder decodes a chunked body incrementally, counting data bytes
// without copying them. Lines may end in CRLF or a bare LF.
type chunkedDecoder struct {
	state  chunkState
	size   uint64 // bytes left in the current chunk (csData) or the size being read
	digits int    // hex digits read in the current size line
	extLen int    // bytes of chunk extension or trailer line seen
}

type chunkState uint8

const (
	csSize        chunkState = iota // reading hex digits
	csExt                           // after the size: extensions up to LF
	csSizeLF                        // CR seen after the size, LF expected
	csData                          // chunk data
	csDataCR                        // CRLF after the data
	csDataLF                        // LF after the data's CR
	csTrailer                       // start of a trailer line (or the final blank line)
	csTrailerLF                     // CR of the final blank line seen
	csTrailerLine                   // inside a trailer line
	csDone
)

// maxChunkLine bounds extensions and trailer lines, so garbage fails instead of
// being skipped forever.
const maxChunkLine = 8192

func (d *chunkedDecoder) reset() { *d = chunkedDecoder{} }

// feed consumes bytes from p. It returns how many it used, how many of them were
// chunk data, and whether the body (trailers included) is complete; when done,
// p[used:] belongs to whatever follows the response.
func (d *chunkedDecoder) feed(p []byte) (used int, data int64, done bool, err error) {
	i := 0
	for i < len(p) {
		if d.state == csData {
			n := uint64(len(p) - i)
			if n > d.size {
				n = d.size
			}
			d.size -= n
			data += int64(n)
			i += int(n)
			if d.size == 0 {
				d.state = csDataCR
			}
			continue
		}
		c := p[i]
		i++
		switch d.state {
		case csSize:
			v, ok := hexDigitValue(c)
			switch {
			case ok:
				if d.digits == 15 {
					return i, data, false, errBadChunk
				}
				d.size = d.size<<4 | uint64(v)
				d.digits++
			case d.digits == 0:
				return i, data, false, errBadChunk
			case c == '\r':
				d.state = csSizeLF
			case c == '\n':
				d.endSizeLine()
			case c == ';' || c == ' ' || c == '\t':
				d.state, d.extLen = csExt, 0
			default:
				return i, data, false, errBadChunk
			}
		case csExt:
			if c == '\n' {
				d.endSizeLine()
			} else if d.extLen++; d.extLen > maxChunkLine {
				return i, data, false, errBadChunk
			}
		case csSizeLF:
			if c != '\n' {
				return i, data, false, errBadChunk
			}
			d.endSizeLine()
		case csDataCR:
			switch c {
			case '\r':
				d.state = csDataLF
			case '\n':
				d.state, d.size, d.digits = csSize, 0, 0
			default:
				return i, data, false, errBadChunk
			}
		case csDataLF:
			if c != '\n' {
				return i, data, false, errBadChunk
			}
			d.state, d.size, d.digits = csSize, 0, 0
		case csTrailer:
			switch c {
			case '\r':
				d.state = csTrailerLF
			case '\n':
				d.state = csDone
				return i, data, true, nil
			default:
				d.state, d.extLen = csTrailerLine, 1
			}
		case csTrailerLF:
			if c != '\n' {
				return i, data, false, errBadChunk
			}
			d.state = csDone
			return i, data, true, nil
		case csTrailerLine:
			if c == '\n' {
				d.state = csTrailer
			} else if d.extLen++; d.extLen > maxChunkLine {
				return i, data, false, errBadChunk
			}
		case csDone:
			return i - 1, data, true, nil
		}
	}
	return i, data, d.state == csDone, nil
}

func (d *chunkedDecoder) endSizeLine() {
	if d.size == 0 {
		d.state = csTrailer
	} else {
		d.state = csData
	}
}

func hexDigitValue(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
