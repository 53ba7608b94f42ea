package client

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseHead(t *testing.T) {
	cases := []struct {
		head string
		want respHead
		err  error
	}{
		{"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: keep-alive\r\n\r\n",
			respHead{status: 200, minor: 1, contentLength: 12, connKeepAlive: true, keepAliveText: true}, nil},
		{"HTTP/1.0 404\r\n\r\n", respHead{status: 404, contentLength: -1}, nil},
		{"HTTP/1.1 200 OK\nTransfer-Encoding: gzip, chunked\nKeep-Alive: timeout=5\n\n",
			respHead{status: 200, minor: 1, contentLength: -1, chunked: true, keepAliveText: true}, nil},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\nConnection: Close\r\n\r\n",
			respHead{status: 200, minor: 1, contentLength: -1, otherCoding: true, connClose: true}, nil},
		{"HTTP/1.1 200 OK\r\ncontent-length:  7 \r\nX-Folded: a\r\n  b\r\n\r\n",
			respHead{status: 200, minor: 1, contentLength: 7}, nil},
		{"HTTP/1.1 200 OK\r\nX-Note: KEEP-ALIVE please\r\n\r\n",
			respHead{status: 200, minor: 1, contentLength: -1, keepAliveText: true}, nil},
		{"HTTP/2 200\r\n\r\n", respHead{}, errBadStatusLine},
		{"HTTP/1.1 20 OK\r\n\r\n", respHead{}, errBadStatusLine},
		{"HTTP/1.1 099 Low\r\n\r\n", respHead{}, errBadStatusLine},
		{"HTTP/1.1 200OK\r\n\r\n", respHead{}, errBadStatusLine},
		{"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", respHead{}, errBadHeaderLine},
		{"HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n", respHead{}, errBadContentLength},
		{"HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", respHead{}, errBadContentLength},
		{"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n", respHead{}, errBadContentLength},
		{"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", respHead{}, errBadContentLength},
	}
	for _, tc := range cases {
		var h respHead
		err := parseHead([]byte(tc.head), &h)
		if err != tc.err {
			t.Errorf("%q: err %v, want %v", tc.head, err, tc.err)
			continue
		}
		if err == nil && h != tc.want {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.head, h, tc.want)
		}
	}
}

func TestHeadEnd(t *testing.T) {
	for s, want := range map[string]int{
		"HTTP/1.1 200 OK\r\n\r\nbody": 19,
		"HTTP/1.1 200 OK\n\nbody":     17,
		"HTTP/1.1 200 OK\r\nA: b\r\n": -1,
		"HTTP/1.1 200 OK\n\r\nx":      18,
		"":                            -1,
	} {
		if got := headEnd([]byte(s), 0); got != want {
			t.Errorf("headEnd(%q) = %d, want %d", s, got, want)
		}
		// Resuming a scan from any point finds the same end.
		for from := 0; from <= len(s) && want > 0; from++ {
			if from >= want {
				break
			}
			if got := headEnd([]byte(s), from); got != want {
				t.Errorf("headEnd(%q, %d) = %d, want %d", s, from, got, want)
			}
		}
	}
}

func TestFramingRules(t *testing.T) {
	h := respHead{status: 200, contentLength: 10}
	if h.framing(true) != frameNone || h.framing(false) != frameLength {
		t.Error("HEAD or Content-Length framing")
	}
	for _, st := range []int{101, 204, 304} {
		h := respHead{status: st, contentLength: 10}
		if h.framing(false) != frameNone {
			t.Errorf("status %d has a body", st)
		}
	}
	if (&respHead{status: 200, contentLength: 5, chunked: true}).framing(false) != frameChunked {
		t.Error("chunked must win over Content-Length")
	}
	if (&respHead{status: 200, contentLength: -1}).framing(false) != frameEOF {
		t.Error("no length: read to close")
	}
	if !(&respHead{status: 100}).interim() || (&respHead{status: 101}).interim() {
		t.Error("interim rules")
	}
}

func TestAbServerSoftware(t *testing.T) {
	long := strings.Repeat("x", 2000)
	for in, want := range map[string]string{
		"HTTP/1.1 200 OK\r\nServer: Apache/2.4.57 (Debian)\r\n\r\n": "Apache/2.4.57",
		"HTTP/1.1 200 OK\r\nServer:nospace\r\n\r\n":                 "ospace",
		"HTTP/1.1 200 OK\r\n\r\n<p>server: in body</p>":             "in",
		"HTTP/1.1 200 OK\r\nServer: caf\xc3\xa9\r\n\r\n":            "caf",
		"HTTP/1.1 200 OK\r\nServer: " + long + "\r\n\r\n":           long[:1023],
		"HTTP/1.1 200 OK\r\nServer:":                                "",
	} {
		if got := abServerSoftware([]byte(in)); got != want {
			t.Errorf("%.60q: %.40q, want %.40q", in, got, want)
		}
	}
}

func TestChunkedDecoder(t *testing.T) {
	cases := []struct {
		in   string
		data int64
		used int // -1: all
		done bool
		err  bool
	}{
		{"5\r\nhello\r\n0\r\n\r\nNEXT", 5, 15, true, false},
		{"5;a=b\r\nhello\r\n6 ; x\r\n world\r\n0\r\nT: v\r\n\r\n", 11, -1, true, false},
		{"A\nabcdefghij\n0\n\n", 10, -1, true, false},
		{"5\r\nhel", 3, -1, false, false},
		{"zz\r\n", 0, 0, false, true},
		{"5\r\nhelloX", 5, 0, false, true},
		{"\r\n", 0, 0, false, true},
		{"1000000000000000\r\n", 0, 0, false, true}, // 16 hex digits: too big
		{"0\r\n\r", 0, -1, false, false},
		{"0\r\nX\r\n", 0, -1, false, false},
	}
	for _, tc := range cases {
		var d chunkedDecoder
		used, data, done, err := d.feed([]byte(tc.in))
		if (err != nil) != tc.err || data != tc.data || done != tc.done {
			t.Errorf("%q: data %d done %v err %v", tc.in, data, done, err)
		}
		if !tc.err && tc.used >= 0 && used != tc.used {
			t.Errorf("%q: used %d, want %d", tc.in, used, tc.used)
		}
		if !tc.err && tc.used < 0 && used != len(tc.in) {
			t.Errorf("%q: used %d, want all", tc.in, used)
		}
	}
}

// scriptedConn serves data through Read in pieces whose sizes come from
// splits (cycled; a piece is 1 + split byte), then io.EOF. Writes are swallowed.
type scriptedConn struct {
	net.Conn
	data   []byte
	splits []byte
	i      int
}

func (c *scriptedConn) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(c.data)
	if len(c.splits) > 0 {
		n = 1 + int(c.splits[c.i%len(c.splits)])
		c.i++
	}
	n = min(n, len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}
func (c *scriptedConn) Write(p []byte) (int, error) { return len(p), nil }
func (c *scriptedConn) Close() error                { return nil }

// testRun is a run that nothing drives, for exercising a connection directly.
func testRun(cfg *Config) *run {
	if cfg.Events == nil {
		cfg.Events = nopEvents{}
	}
	return &run{cfg: cfg, events: cfg.Events, start: time.Now(),
		rampUp: make(chan struct{}), stopCh: make(chan struct{}), n: 1 << 30}
}

type parsed struct {
	class     failClass
	status    int
	body      int64
	keptAlive bool
}

// parseStream reads responses from data (split as scriptedConn does) the way
// the transport does on one connection, until the connection is not kept.
func parseStream(tb testing.TB, data, splits []byte, http11, head bool) ([]parsed, *tally) {
	cfg := &Config{Protocol: HTTP10, KeepAlive: true, Verbosity: 2}
	if http11 {
		cfg.Protocol = HTTP11
	}
	r := testRun(cfg)
	h := &http1{cfg: cfg, headRequest: head, http11: http11, askKeepAlive: true, verbose: true}
	conn := &scriptedConn{data: data, splits: splits}
	c := &h1conn{h: h, r: r, t: &tally{}, buf: make([]byte, readBufSize), raw: conn, conn: conn}
	var out []parsed
	for i := 0; ; i++ {
		if i > len(data)+1 {
			tb.Errorf("no progress after %d responses", i)
			break
		}
		c.out = outcome{}
		if c.readResponse(&c.out, false) {
			out = append(out, parsed{class: 255})
			break
		}
		o := c.out
		out = append(out, parsed{o.Class, o.Status, o.Body, o.KeptAlive})
		if !o.KeptAlive {
			break
		}
	}
	return out, c.t
}

func TestReadResponseHeadLimit(t *testing.T) {
	for _, tc := range []struct {
		headLen int
		want    failClass
	}{{maxHeadLen, classOK}, {maxHeadLen + 1, failHeaderOverflow}} {
		prefix := "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Pad: "
		pad := strings.Repeat("p", tc.headLen-len(prefix)-4)
		resp := prefix + pad + "\r\n\r\n"
		for _, splits := range [][]byte{nil, {0}, {200, 7}} {
			got, _ := parseStream(t, []byte(resp), splits, false, false)
			if got[0].class != tc.want {
				t.Errorf("head of %d bytes, splits %v: class %d, want %d", tc.headLen, splits, got[0].class, tc.want)
			}
		}
	}
}

func TestReadResponsePipelined(t *testing.T) {
	one := "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
	two := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
	three := "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end"
	data := []byte(one + two + three)
	got, tally := parseStream(t, data, nil, true, false)
	want := []parsed{{classOK, 200, 3, true}, {classOK, 200, 2, true}, {classOK, 200, 13, false}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("response %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if tally.TotalRead != int64(len(data)) || tally.BodyRead != 18 {
		t.Errorf("read %d body %d", tally.TotalRead, tally.BodyRead)
	}
}

// parseResponseSeeds are well-formed and malformed responses for the fuzzers.
var parseResponseSeeds = []string{
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhelloHTTP/1.1 204 No\r\n\r\n",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	"HTTP/1.0 200 OK\n\nno length, read to the end",
	"HTTP/1.1 101 Switching\r\nUpgrade: x\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
	"<html>0.9</html>",
	"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("p", 9000),
	"",
}

func FuzzParseResponse(f *testing.F) {
	for _, s := range parseResponseSeeds {
		f.Add([]byte(s), []byte{0, 3, 17}, false)
		f.Add([]byte(s), []byte(nil), true)
	}
	f.Fuzz(func(t *testing.T, data, splits []byte, http11 bool) {
		if len(data) > 1<<16 {
			return
		}
		type result struct {
			out   []parsed
			tally *tally
		}
		run := func(splits []byte) result {
			done := make(chan result, 1)
			go func() {
				out, tally := parseStream(t, data, splits, http11, false)
				done <- result{out, tally}
			}()
			select {
			case r := <-done:
				return r
			case <-time.After(5 * time.Second):
				t.Fatalf("parsing %q did not finish", data)
				return result{}
			}
		}
		split, whole := run(splits), run(nil)
		if split.tally.TotalRead > int64(len(data)) || split.tally.BodyRead > split.tally.TotalRead {
			t.Fatalf("counted %d read, %d body of %d bytes", split.tally.TotalRead, split.tally.BodyRead, len(data))
		}
		// How the bytes are split must not change what is parsed (only how
		// much is read before a failure is noticed).
		if len(split.out) != len(whole.out) || split.tally.BodyRead != whole.tally.BodyRead {
			t.Fatalf("split %v: %+v read %d, whole: %+v read %d", splits, split.out, split.tally.TotalRead, whole.out, whole.tally.TotalRead)
		}
		for i := range split.out {
			if split.out[i] != whole.out[i] {
				t.Fatalf("response %d: split %+v, whole %+v", i, split.out[i], whole.out[i])
			}
		}
	})
}

func FuzzChunked(f *testing.F) {
	for _, s := range []string{
		"5\r\nhello\r\n0\r\n\r\n", "a;ext\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nrest",
		"1\nx\n0\n\n", "zz", "10\r\nshort", "0\r\n\r\n",
	} {
		f.Add([]byte(s), []byte{1, 2, 5})
	}
	f.Fuzz(func(t *testing.T, data, splits []byte) {
		var whole chunkedDecoder
		wUsed, wData, wDone, wErr := whole.feed(data)
		if wData > int64(len(data)) || wUsed > len(data) || wUsed < 0 {
			t.Fatalf("used %d data %d of %d", wUsed, wData, len(data))
		}
		var d chunkedDecoder
		var used int
		var total int64
		var done bool
		var err error
		rest := data
		for i := 0; len(rest) > 0 && !done && err == nil; i++ {
			n := len(rest)
			if len(splits) > 0 {
				n = min(n, 1+int(splits[i%len(splits)]))
			}
			var u int
			var got int64
			u, got, done, err = d.feed(rest[:n])
			if u > n || u < 0 || (u < n && !done && err == nil) {
				t.Fatalf("feed used %d of %d without finishing", u, n)
			}
			used += u
			total += got
			rest = rest[u:]
		}
		if done != wDone || (err != nil) != (wErr != nil) || total != wData || (err == nil && used != wUsed) {
			t.Fatalf("split: used %d data %d done %v err %v; whole: used %d data %d done %v err %v",
				used, total, done, err, wUsed, wData, wDone, wErr)
		}
		if bytes.Count(data, []byte("\n")) == 0 && done {
			t.Fatal("done without any line end")
		}
	})
}

// hasKeepAliveNaive is ab's test spelled out: compare at every offset.
func hasKeepAliveNaive(b []byte) bool {
	for i := 0; i+len("keep-alive") <= len(b); i++ {
		if equalFoldASCII(b[i:i+len("keep-alive")], "keep-alive") {
			return true
		}
	}
	return false
}

func TestHasKeepAlive(t *testing.T) {
	for _, s := range []string{"", "keep-alive", "Keep-Alive", "KEEP-ALIVE", "xkeep-alivex", "keep-aliv", "eep-alive",
		"-keep-alive", "keep--alive", "kkeep-alive", "a-b-keep-alive", "Connection: Keep-Alive\r\n", "keep-Alive-",
		"Content-Length: 3\r\nX: keep-al\r\n", "----------", "kee-palive"} {
		if got, want := hasKeepAlive([]byte(s)), hasKeepAliveNaive([]byte(s)); got != want {
			t.Errorf("hasKeepAlive(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzHasKeepAlive(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\n"))
	f.Add([]byte("kee-p-alive--keep-ALIVE"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := hasKeepAlive(b), hasKeepAliveNaive(b); got != want {
			t.Fatalf("hasKeepAlive(%q) = %v, want %v", b, got, want)
		}
	})
}

// parseHeadOracle is the head parse spelled out the slow way: headEnd finds
// the end, then the lines are split and read one by one.
func parseHeadOracle(buf []byte) (int, respHead, error) {
	end := headEnd(buf, 0)
	if end < 0 {
		return -1, respHead{}, nil
	}
	h := respHead{contentLength: -1}
	lines := strings.Split(string(buf[:end]), "\n")
	status := strings.TrimSuffix(lines[0], "\r")
	ok := len(status) >= 12 && strings.HasPrefix(status, "HTTP/1.") && isASCIIDigit(status[7]) && status[8] == ' ' &&
		isASCIIDigit(status[9]) && isASCIIDigit(status[10]) && isASCIIDigit(status[11]) && (len(status) == 12 || status[12] == ' ')
	if !ok {
		return end, respHead{}, errBadStatusLine
	}
	h.minor = int(status[7] - '0')
	h.status, _ = strconv.Atoi(status[9:12])
	if h.status < 100 {
		return end, respHead{}, errBadStatusLine
	}
	for _, l := range lines[1:] {
		l = strings.TrimSuffix(l, "\r")
		if l == "" {
			break
		}
		if l[0] == ' ' || l[0] == '\t' {
			continue
		}
		name, value, found := strings.Cut(l, ":")
		if !found || name == "" {
			return end, respHead{}, errBadHeaderLine
		}
		value = strings.Trim(value, " \t")
		switch strings.ToLower(name) {
		case "content-length":
			if err := h.addContentLength([]byte(value)); err != nil {
				return end, respHead{}, err
			}
		case "transfer-encoding":
			h.addTransferEncoding([]byte(value))
		case "connection":
			h.addConnection([]byte(value))
		}
	}
	h.keepAliveText = hasKeepAliveNaive(buf[:end])
	return end, h, nil
}

func FuzzParseHeadIn(f *testing.F) {
	for _, s := range parseResponseSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte("HTTP/1.1 200 OK\nX\n\n"))
	f.Add([]byte("HTTP/1.0 200\r\n Folded: x\r\nConnection: keep-alive, close\r\n\r\n"))
	f.Fuzz(func(t *testing.T, buf []byte) {
		var h respHead
		end, err := parseHeadIn(buf, &h)
		wantEnd, wantH, wantErr := parseHeadOracle(buf)
		if end != wantEnd || !errors.Is(err, wantErr) && (err == nil || wantErr == nil) {
			t.Fatalf("parseHeadIn(%q) = %d, %v; oracle %d, %v", buf, end, err, wantEnd, wantErr)
		}
		if err == nil && end > 0 && h != wantH {
			t.Fatalf("parseHeadIn(%q) head %+v, oracle %+v", buf, h, wantH)
		}
		// Resuming after a prefix finds the same head.
		if end > 0 {
			for _, cut := range []int{1, end / 2, end - 1} {
				var h2 respHead
				if e, _ := findHead(buf[:cut], 0, &h2); e > 0 {
					t.Fatalf("findHead found a head of %d in a %d-byte prefix of a %d-byte head", e, cut, end)
				}
				if e, err2 := findHead(buf, cut, &h2); e != end || (err2 == nil) != (err == nil) {
					t.Fatalf("findHead(scan %d) = %d, %v; want %d, %v", cut, e, err2, end, err)
				}
			}
		}
	})
}
