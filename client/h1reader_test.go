package client

import (
	"strings"
	"testing"
)

// h1Fed is what one response fed to h1Reader came to.
type h1Fed struct {
	step    h1Step // h1Done, h1Fail, or h1More when the bytes ran out
	err     error
	status  int
	headEnd int // offset just past the final head in the data (0 if none)
	end     int // offset just past the response (h1Done)
	body    int64
}

// feedSplit drives r over data the way both transports do: bytes arrive in
// pieces of the sizes in splits (cycled; 0 means one byte), the head's unused
// bytes are kept and fed again with the next piece, body bytes are dropped.
func feedSplit(tb testing.TB, data, splits []byte, headRequest bool) h1Fed {
	var r h1Reader
	r.start(headRequest)
	var out h1Fed
	pending := 0 // data[pending:arrived] has arrived and not been used
	arrived := 0
	for k := 0; ; k++ {
		used, step := r.feed(data[pending:arrived])
		if used < 0 || used > arrived-pending {
			tb.Fatalf("used %d of %d bytes", used, arrived-pending)
		}
		pending += used
		switch step {
		case h1Head:
			out.status, out.headEnd = r.head.status, pending
			if r.headLen <= 0 || r.headLen > maxHeadLen {
				tb.Fatalf("head length %d", r.headLen)
			}
			continue
		case h1Done, h1Fail:
			out.step, out.err, out.end, out.body = step, r.err, pending, r.body
			return out
		}
		if !r.inHead() && pending != arrived {
			tb.Fatalf("body bytes left unused: %d", arrived-pending)
		}
		if arrived == len(data) {
			out.step, out.body = h1More, r.body
			return out
		}
		size := len(data)
		if len(splits) > 0 {
			size = max(int(splits[k%len(splits)]), 1)
		}
		arrived = min(arrived+size, len(data))
	}
}

// FuzzH1Reader checks the byte-fed reader on its own: however the bytes are
// split it comes to the same result, never uses bytes it was not given, keeps
// body counts within the data, and agrees with headEnd/parseHead (the
// whole-buffer parse) on where the final head ends and what its status is.
func FuzzH1Reader(f *testing.F) {
	for _, s := range parseResponseSeeds {
		f.Add([]byte(s), []byte{0, 3, 17}, false)
	}
	f.Add([]byte(strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", maxInterim+1)+"HTTP/1.1 200 OK\r\n\r\n"), []byte{5}, false)
	f.Add([]byte(strings.Repeat("HTTP/1.1 103 Early Hints\r\n\r\n", maxInterim)+"HTTP/1.1 204 OK\r\n\r\n"), []byte{1, 9}, false)
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1"), []byte{2}, true)
	f.Fuzz(func(t *testing.T, data, splits []byte, headRequest bool) {
		if len(data) > 1<<16 {
			return
		}
		whole := feedSplit(t, data, nil, headRequest)
		split := feedSplit(t, data, splits, headRequest)
		if whole.step != split.step || whole.err != split.err || whole.status != split.status ||
			whole.headEnd != split.headEnd || whole.body != split.body ||
			(whole.step == h1Done && whole.end != split.end) {
			t.Fatalf("%q split %v: %+v, whole %+v", data, splits, split, whole)
		}
		if whole.body > int64(len(data)) {
			t.Fatalf("body %d of %d bytes", whole.body, len(data))
		}
		if whole.headEnd == 0 {
			return
		}
		// The final head, found by the whole-buffer functions.
		start, interim := 0, 0
		for {
			end := headEnd(data[start:], 0)
			var h respHead
			if end < 0 || parseHead(data[start:start+end], &h) != nil {
				t.Fatalf("%q: reader found a head at %d that headEnd/parseHead do not", data, whole.headEnd)
			}
			if !h.interim() {
				if start+end != whole.headEnd || h.status != whole.status {
					t.Fatalf("%q: head ends at %d status %d; reader: %d %d", data, start+end, h.status, whole.headEnd, whole.status)
				}
				break
			}
			start += end
			if interim++; interim > maxInterim {
				t.Fatalf("%q: reader took more than %d interim responses", data, maxInterim)
			}
		}
	})
}

func TestH1ReaderInterimBound(t *testing.T) {
	for _, k := range []int{maxInterim, maxInterim + 1} {
		data := []byte(strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", k) + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		for _, splits := range [][]byte{nil, {1}, {7, 30}} {
			got := feedSplit(t, data, splits, false)
			if k <= maxInterim && (got.step != h1Done || got.status != 200 || got.body != 2 || got.end != len(data)) {
				t.Errorf("%d interim, splits %v: %+v, want the 200 with its 2 bytes", k, splits, got)
			}
			if k > maxInterim && (got.step != h1Fail || got.err != errTooManyInterim || h1FailClass(got.err) != failException) {
				t.Errorf("%d interim, splits %v: %+v, want the interim bound (an Exception)", k, splits, got)
			}
		}
	}
}
