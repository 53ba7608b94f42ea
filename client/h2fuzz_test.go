package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2FuzzServer is a loopback server that, on every connection, reads the
// client preface, sends an empty SETTINGS frame, writes answer as it is and
// closes: whatever bytes follow a valid start, gab's h2c client must end the
// run cleanly.
type h2FuzzServer struct{ fs *faultServer }

func startH2FuzzServer(t *testing.T, answer []byte) *h2FuzzServer {
	t.Helper()
	s := &h2FuzzServer{}
	s.fs = newFaultServer(t, func(fc *faultConn) { s.serve(fc.Conn.(*net.TCPConn), answer) })
	return s
}

func (s *h2FuzzServer) serve(c *net.TCPConn, answer []byte) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil {
		return
	}
	if err := http2.NewFramer(c, nil).WriteSettings(); err != nil {
		return
	}
	if _, err := c.Write(answer); err != nil {
		return
	}
	// FIN, then read until the client closes: closing with unread input
	// would send RST, which may discard the answer before the client reads it.
	_ = c.CloseWrite()
	_, _ = io.Copy(io.Discard, c)
}

// h2Frames builds a byte sequence of frames with a Framer.
func h2Frames(build func(fr *http2.Framer, block func(fields ...string) []byte)) []byte {
	var out, hbuf bytes.Buffer
	fr := http2.NewFramer(&out, nil)
	enc := hpack.NewEncoder(&hbuf)
	block := func(fields ...string) []byte {
		hbuf.Reset()
		for i := 0; i+1 < len(fields); i += 2 {
			_ = enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
		}
		return bytes.Clone(hbuf.Bytes())
	}
	build(fr, block)
	return out.Bytes()
}

// h2FuzzSeeds are valid and broken answers to streams 1 and 3.
func h2FuzzSeeds() [][]byte {
	ok := func(fr *http2.Framer, block func(...string) []byte, id uint32) {
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block(":status", "200", "content-length", "5"), EndHeaders: true})
		_ = fr.WriteData(id, true, []byte("hello"))
	}
	tooLarge := make([]byte, 9+h2FrameSize+1)
	size := h2FrameSize + 1
	tooLarge[0], tooLarge[1], tooLarge[2] = byte(size>>16), byte(size>>8), byte(size)
	tooLarge[3] = byte(http2.FrameData)
	tooLarge[8] = 1
	return [][]byte{
		h2Frames(func(fr *http2.Framer, block func(...string) []byte) { ok(fr, block, 1) }),
		h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
			ok(fr, block, 1)
			ok(fr, block, 3)
			_ = fr.WriteGoAway(3, http2.ErrCodeNo, nil)
		}),
		h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
			_ = fr.WriteGoAway(0, http2.ErrCodeNo, []byte("bye"))
		}),
		h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
			_ = fr.WriteRSTStream(1, http2.ErrCodeRefusedStream)
			_ = fr.WriteRSTStream(3, http2.ErrCodeInternal)
		}),
		h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
			_ = fr.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
			_ = fr.WritePing(true, [8]byte{})
			_ = fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1})
			_ = fr.WriteSettingsAck()
			_ = fr.WriteWindowUpdate(0, 1000)
			ok(fr, block, 1)
		}),
		h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
			b := block(":status", "200", "server", "fuzz/1.0", "content-length", "2")
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:2]})
			_ = fr.WriteContinuation(1, false, b[2:5])
			_ = fr.WriteContinuation(1, true, b[5:])
			_ = fr.WriteData(1, false, []byte("o"))
			_ = fr.WriteData(1, true, []byte("k"))
		}),
		h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(":status", "100"), EndHeaders: true})
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(":status", "404"), EndHeaders: true})
			_ = fr.WriteData(1, false, []byte("gone"))
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block("x-trailer", "1"), EndHeaders: true, EndStream: true})
		}),
		h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
			// A CONTINUATION for another stream, in the middle of a block: the
			// next connection's Framer must not still wait for stream 1's.
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(":status", "200")})
			_ = fr.WriteContinuation(3, true, block("a", "b"))
		}),
		h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
			_ = fr.WritePushPromise(http2.PushPromiseParam{StreamID: 1, PromiseID: 2, BlockFragment: block(":method", "GET"), EndHeaders: true})
		}),
		tooLarge,
		[]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
		[]byte("\x00\x00\x05\x01\x05\x00\x00\x00\x01\xff\xff\xff\xff\xff"), // an invalid HPACK block
		{},
	}
}

func FuzzH2Exchange(f *testing.F) {
	for _, s := range h2FuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer []byte) {
		usePath(t, "epoll")
		const n = 3
		srv := startH2FuzzServer(t, answer)
		cfg := h2TestConfig(t, "http://127.0.0.1:"+strconv.Itoa(srv.fs.port())+"/", n, 1, 2)
		cfg.Timeout = 2 * time.Second
		cfg.KeepGoing = true
		rn, err := newRunner(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		loopsBefore := h2EpollLoopsStarted.Load()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := rn.Run(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%q: the run did not end by itself", answer)
		}
		if epollExpected() && h2EpollLoopsStarted.Load() == loopsBefore {
			t.Fatalf("the h2c event loop did not run")
		}
		if res == nil {
			t.Fatalf("%q: no result (err %v)", answer, err)
		}
		if err != nil {
			var fe *FatalError
			if !errors.As(err, &fe) {
				t.Fatalf("%q: non-fatal error %v", answer, err)
			}
			// -s is the only way this run can abort: SETTINGS came first, and -r is on.
			if fe.Exit != 119 {
				t.Fatalf("%q: %#v", answer, fe)
			}
		} else if res.Complete != n {
			t.Fatalf("%q: complete %d, want %d (ending %v)", answer, res.Complete, n, res.Ending)
		}
		classes := res.Failed.Connect + res.Failed.Receive + res.Failed.Length + res.Failed.Exceptions
		if res.Complete > n || classes > res.Failed.Total || res.Failed.Total > res.Complete {
			t.Fatalf("%q: complete %d failed %+v", answer, res.Complete, res.Failed)
		}
		if res.Samples.Len() != res.Complete {
			t.Fatalf("%q: %d samples, %d complete", answer, res.Samples.Len(), res.Complete)
		}
		// Each connection carries at most the server's SETTINGS frame and answer.
		perConn := int64(9 + len(answer))
		if res.DocLength > int64(len(answer)) || res.TotalRead > perConn*srv.fs.accepted.Load() {
			t.Fatalf("%q: doclen %d read %d over %d connections", answer, res.DocLength, res.TotalRead, srv.fs.accepted.Load())
		}
	})
}

// h2FloodSeeds are flood shapes: a prefix written once, then a unit written
// again and again until gab closes the connection.
func h2FloodSeeds() [][2][]byte {
	repeat := func(n int, build func(fr *http2.Framer, block func(...string) []byte)) []byte {
		return h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
			for range n {
				build(fr, block)
			}
		})
	}
	none := func(*http2.Framer, func(...string) []byte) {}
	unknown := []byte{0, 0, 1, 0xfe, 0, 0, 0, 0, 1, 'x'} // an unknown frame type: ignored
	return [][2][]byte{
		{nil, repeat(10, func(fr *http2.Framer, _ func(...string) []byte) { _ = fr.WritePing(false, [8]byte{7}) })},
		{nil, repeat(10, func(fr *http2.Framer, _ func(...string) []byte) { _ = fr.WriteSettings() })},
		{nil, repeat(10, func(fr *http2.Framer, _ func(...string) []byte) {
			_ = fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1}, http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 0})
		})},
		{h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(":status", "200")})
		}), repeat(1, func(fr *http2.Framer, _ func(...string) []byte) {
			_ = fr.WriteContinuation(1, false, h2FieldsPayload(1024))
		})},
		{h2Frames(func(fr *http2.Framer, block func(...string) []byte) {
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(":status", "200"), EndHeaders: true})
		}), repeat(10, func(fr *http2.Framer, _ func(...string) []byte) { _ = fr.WriteData(1, false, []byte("body")) })},
		{nil, repeat(10, func(fr *http2.Framer, _ func(...string) []byte) { _ = fr.WriteWindowUpdate(0, 1) })},
		{nil, repeat(10, func(fr *http2.Framer, _ func(...string) []byte) {
			_ = fr.WritePriority(1, http2.PriorityParam{Weight: 1})
		})},
		{nil, repeat(10, func(fr *http2.Framer, _ func(...string) []byte) { _ = fr.WriteRSTStream(1, http2.ErrCodeRefusedStream) })},
		{nil, repeat(10, func(fr *http2.Framer, _ func(...string) []byte) { _ = fr.WriteGoAway(0, http2.ErrCodeNo, nil) })},
		{nil, repeat(10, func(fr *http2.Framer, block func(...string) []byte) {
			_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 101, BlockFragment: block(":status", "200"), EndHeaders: true})
		})},
		{h2Frames(none), bytes.Repeat(unknown, 10)},
		{nil, nil},
	}
}

// FuzzH2Flood: whatever frames a server repeats without end, the h2c event
// loop's run ends at -t with its report, and its heap stays bounded.
func FuzzH2Flood(f *testing.F) {
	for _, s := range h2FloodSeeds() {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, prefix, unit []byte) {
		usePath(t, "epoll")
		batch := unit
		for len(unit) > 0 && len(batch) < 16<<10 {
			batch = append(batch, unit...)
		}
		fs := newFaultServer(t, func(fc *faultConn) {
			preface := make([]byte, len(http2.ClientPreface))
			if _, err := io.ReadFull(fc.br, preface); err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, fc.br) }() // read what gab sends
			if http2.NewFramer(fc.Conn, nil).WriteSettings() != nil {
				return
			}
			if _, err := fc.Write(prefix); err != nil {
				return
			}
			for len(batch) > 0 {
				if _, err := fc.Write(batch); err != nil {
					return
				}
			}
			<-fc.srv.closed
		})
		cfg := h2TestConfig(t, "http://127.0.0.1:"+strconv.Itoa(fs.port())+"/", 100000, 1, 2)
		cfg.TimeLimit = 300 * time.Millisecond
		cfg.Timeout = 5 * time.Second
		cfg.KeepGoing = true
		peak := heapPeak()
		res, err, took := runH2Within(t, cfg, 15*time.Second)
		heap := peak()
		if err != nil {
			var fe *FatalError
			// A flood that is not HTTP/2 from the start is refused as such.
			if !errors.As(err, &fe) || fe.Exit != 1 || len(prefix) == 0 && len(unit) == 0 {
				t.Fatalf("%q, %q: %v", prefix, unit, err)
			}
			return
		}
		if res.Ending != EndTimeLimit && res.Ending != EndCompleted {
			t.Errorf("%q, %q: ending %v", prefix, unit, res.Ending)
		}
		// Ends at -t, with a few seconds for a loaded machine to get through
		// the frames already read (and still under -s).
		if took > cfg.TimeLimit+4*time.Second || heap > h2HeapLimit {
			t.Errorf("%q, %q: the run took %v (-t %v) with a heap of up to %d MiB", prefix, unit, took, cfg.TimeLimit, heap>>20)
		}
	})
}
