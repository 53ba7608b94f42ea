package client

import "errors"

// h1Reader is HTTP/1's response reading, written once: a state machine fed
// with the bytes of one response as they arrive, that says how many it used
// and what happened. Both HTTP/1 paths drive it, the event loop
// (http1_epoll_linux.go) and the goroutine per connection (http1.go); they
// own the buffer, the reads, the clock and the accounting, it owns the
// protocol: where the head ends, 1xx responses, the body's framing, and the
// limits on what a server can make gab do (one head ≤ maxHeadLen bytes, at most
// maxInterim 1xx responses before the final one).
type h1Reader struct {
	head        respHead
	fr          framing
	inBody      bool
	headRequest bool  // HEAD: the response has no body
	scan        int   // bytes of the pending head known not to complete it
	headLen     int   // length of the final head (valid from h1Head on)
	interim     int   // 1xx responses skipped for this request
	remaining   int64 // Content-Length bytes still to come
	body        int64 // body bytes so far (decoded data for chunked)
	chunks      chunkedDecoder
	err         error // why the response failed (h1Fail)
}

// h1Step is what a feed found.
type h1Step uint8

const (
	// h1More: read more. In the head every byte not used must be fed again,
	// with the new ones after it; in the body every byte was used.
	h1More h1Step = iota
	// h1Head: the final head is complete (head, headLen; it ends where used
	// ends). Feed again for the body.
	h1Head
	// h1Done: the response is complete; bytes past used belong to the next one.
	h1Done
	// h1Fail: the response is malformed or too big: err, classed by h1FailClass.
	h1Fail
)

// maxInterim bounds the 1xx responses skipped before a request's final
// response: more is a server that will never answer (an endless stream of
// "100 Continue"), and the request fails as an Exception. Go's net/http
// allows 5; more are allowed here for servers that send 102 Processing
// while they work.
const maxInterim = 32

var errTooManyInterim = errors.New("more than 32 interim (1xx) responses to one request")

// start readies r for the next response.
func (r *h1Reader) start(headRequest bool) {
	*r = h1Reader{headRequest: headRequest}
}

// inHead reports whether the head is still being read.
func (r *h1Reader) inHead() bool { return !r.inBody }

// endsAtClose reports whether the server's close ends the body (no length, not chunked).
func (r *h1Reader) endsAtClose() bool { return r.inBody && r.fr == frameEOF }

// wantsBigBuffer reports a body that is large, or of unknown length.
func (r *h1Reader) wantsBigBuffer() bool {
	return r.inBody && (r.fr == frameEOF || (r.fr == frameLength && r.remaining > bigBody))
}

// room readies buf for the next read after h1More, the unused bytes being
// buf[pos:have]: the pending head moves to the buffer's start; body bytes,
// all used, are dropped, and a large body gets a bigReadBufSize buffer. It
// returns the buffer to read into from have on.
func (r *h1Reader) room(buf []byte, pos, have int) ([]byte, int) {
	if !r.inBody {
		if pos == 0 {
			return buf, have
		}
		return buf, copy(buf, buf[pos:have])
	}
	if r.wantsBigBuffer() && len(buf) < bigReadBufSize {
		buf = make([]byte, bigReadBufSize)
	}
	return buf, 0
}

// feed takes the bytes that have arrived and not been used yet. In the head,
// p starts with the pending head's first byte.
func (r *h1Reader) feed(p []byte) (used int, step h1Step) {
	if !r.inBody {
		return r.feedHead(p)
	}
	switch r.fr {
	case frameLength:
		take := min(int64(len(p)), r.remaining)
		r.body += take
		r.remaining -= take
		if r.remaining == 0 {
			return int(take), h1Done
		}
		return int(take), h1More
	case frameChunked:
		used, data, done, err := r.chunks.feed(p)
		r.body += data
		switch {
		case err != nil:
			return used, r.fail(err)
		case done:
			return used, h1Done
		}
		return used, h1More
	case frameEOF:
		r.body += int64(len(p))
		return len(p), h1More
	}
	return 0, h1Done // no body
}

// feedHead finds the head at p's start, skipping 1xx responses.
func (r *h1Reader) feedHead(p []byte) (used int, step h1Step) {
	for len(p) > 0 {
		if !httpPrefixOK(p) {
			return used, r.fail(errNotHTTP)
		}
		lim := min(len(p), maxHeadLen)
		end, err := findHead(p[:lim], r.scan, &r.head)
		if end < 0 {
			if len(p) >= maxHeadLen {
				return used, r.fail(errHeadOverflow)
			}
			r.scan = lim
			return used, h1More
		}
		if err != nil {
			return used, r.fail(err)
		}
		used += end
		p = p[end:]
		r.scan = 0
		if r.head.interim() {
			// Skipped; its bytes stay counted in Total transferred.
			if r.interim++; r.interim > maxInterim {
				return used, r.fail(errTooManyInterim)
			}
			continue
		}
		r.headLen = end
		r.inBody = true
		r.fr = r.head.framing(r.headRequest)
		switch r.fr {
		case frameLength:
			r.remaining = r.head.contentLength
		case frameChunked:
			r.chunks.reset()
		}
		return used, h1Head
	}
	return used, h1More
}

func (r *h1Reader) fail(err error) h1Step {
	r.err = err
	return h1Fail
}

// h1FailClass is the failure class of a response that failed with err.
func h1FailClass(err error) failClass {
	switch err {
	case errHeadOverflow:
		return failHeaderOverflow
	case errTruncated:
		return failReceiveCounted
	}
	return failException
}
