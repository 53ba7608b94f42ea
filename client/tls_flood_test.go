package client

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// Servers that flood h2 over TLS and never read what gab sends: DATA,
// SETTINGS, PING, WINDOW_UPDATE or CONTINUATION frames without end. On both
// paths the run ends at -t, or at once when interrupted (the context, as
// SIGINT), with its report, and the heap stays bounded. On the event loop a
// read buffer the stopped loop no longer decoded once filled up, and the loop
// spun on reads of an empty slice, which crypto/tls answers (0, nil), never
// looking at its stop flag again.

// tlsFlood is a flood: frame writes what comes first and returns the frames
// to write over and over (nil: the connection failed).
type tlsFlood struct {
	name  string
	frame func(hc *h2HostileConn) []byte
}

// tlsFloods are the floods, each on stream 1 (gab's first request) where
// it needs a stream.
var tlsFloods = []tlsFlood{
	{"data", func(hc *h2HostileConn) []byte {
		if hc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hc.block(":status", "200"), EndHeaders: true}) != nil {
			return nil
		}
		return floodFrames(4, func(fr *http2.Framer) error { return fr.WriteData(1, false, make([]byte, 16<<10)) })
	}},
	{"settings", func(*h2HostileConn) []byte {
		return floodFrames(100, func(fr *http2.Framer) error { return fr.WriteSettings() })
	}},
	{"ping", func(*h2HostileConn) []byte {
		return floodFrames(100, func(fr *http2.Framer) error { return fr.WritePing(false, [8]byte{1}) })
	}},
	{"window-update", func(*h2HostileConn) []byte {
		return floodFrames(100, func(fr *http2.Framer) error { return fr.WriteWindowUpdate(0, 1) })
	}},
	{"continuation", func(hc *h2HostileConn) []byte {
		if hc.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hc.block(":status", "200")}) != nil {
			return nil
		}
		payload := h2FieldsPayload(16 << 10)
		return floodFrames(1, func(fr *http2.Framer) error { return fr.WriteContinuation(1, false, payload) })
	}},
}

// startTLSFlood starts an h2 server over TLS that runs fl on every
// connection without ever reading past the preface; sent counts the bytes
// it has written.
func startTLSFlood(t *testing.T, fl tlsFlood, sent *atomic.Int64) string {
	conf := tlsServerConfig(t)
	conf.NextProtos = []string{"h2"}
	s := startH2HostileTLS(t, conf, false, func(hc *h2HostileConn) {
		if buf := fl.frame(hc); buf != nil {
			floodCounted(hc, buf, sent)
		}
	})
	return "https://127.0.0.1:" + strconv.Itoa(s.fs.port()) + "/"
}

// floodCounted writes buf to w until a write fails, counting in sent what
// w took.
func floodCounted(w io.Writer, buf []byte, sent *atomic.Int64) {
	for {
		n, err := w.Write(buf)
		sent.Add(int64(n))
		if err != nil {
			return
		}
	}
}

// runUntilStopped runs cfg, ended by its -t or, with interrupt, by a cancel
// of its context: interrupt cancels it and returns when. The run must
// return within floodStopBound of its stop (counted from the stop, not from
// the call, so that load does not count), and within 30 s at all: a run
// that never returns fails the test rather than hanging it.
func runUntilStopped(t *testing.T, cfg Config, interrupt func(cancel func()) time.Time) *Result {
	t.Helper()
	rn, err := newRunner(t, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type ended struct {
		res *Result
		err error
		at  time.Time
	}
	done := make(chan ended, 1)
	go func() {
		res, err := rn.Run(ctx)
		done <- ended{res, err, time.Now()}
	}()
	var stopped time.Time
	if interrupt != nil {
		stopped = interrupt(cancel)
	}
	select {
	case e := <-done:
		if e.err != nil {
			t.Fatalf("Run: %v, want a report", e.err)
		}
		if stopped.IsZero() { // -t: the run's own deadline
			stopped = e.res.Start.Add(cfg.TimeLimit)
		}
		wantStoppedWithin(t, "the stop", stopped, e.at, floodStopBound)
		return e.res
	case <-time.After(30 * time.Second):
		t.Fatalf("the run did not end within 30 s: a flood kept it going")
		return nil
	}
}

// TestTLSH2FloodNeverRead floods h2 over TLS with each frame type, the
// server never reading: -t ends the run on time, and so does an interrupt,
// on both paths.
func TestTLSH2FloodNeverRead(t *testing.T) {
	for _, fl := range tlsFloods {
		hostileSubtest(t, fl.name+"/time-limit", h2Paths, func(t *testing.T) {
			var sent atomic.Int64
			cfg := h2TestConfig(t, startTLSFlood(t, fl, &sent), 100000, 1, 1)
			cfg.TimeLimit = 700 * time.Millisecond
			cfg.Timeout = 2 * time.Second
			peak := heapPeak()
			res := runUntilStopped(t, cfg, nil)
			if heap := peak(); heap > h2HeapLimit {
				t.Errorf("heap of up to %d MiB", heap>>20)
			}
			if res.Ending != EndTimeLimit {
				t.Errorf("ending %v, want the time limit", res.Ending)
			}
			if sent.Load() < 1<<20 {
				t.Errorf("the server wrote %d bytes: the flood did not reach gab", sent.Load())
			}
		})
		hostileSubtest(t, fl.name+"/interrupt", h2Paths, func(t *testing.T) {
			var sent atomic.Int64
			cfg := h2TestConfig(t, startTLSFlood(t, fl, &sent), 100000, 1, 1)
			cfg.Timeout = 10 * time.Second
			res := runUntilStopped(t, cfg, interruptWhenFlooded(t, &sent))
			if res.Ending != EndInterrupted {
				t.Errorf("ending %v, want an interrupted run", res.Ending)
			}
		})
	}
}

// HTTP/1 over TLS, a body that never ends, interrupted: the run returns at
// once on both paths (a read there always has room: the response reader
// takes every body byte it is given).
func TestTLSH1FloodInterrupted(t *testing.T) {
	hostileSubtest(t, "endless body", h1TLSPaths, func(t *testing.T) {
		var sent atomic.Int64
		body := []byte(strings.Repeat("x", 64<<10))
		srv := newTLSFaultServer(t, nil, func(fc *faultConn) {
			if _, ok := fc.readRequest(); ok {
				fc.write("HTTP/1.1 200 OK\r\n\r\n")
				floodCounted(fc, body, &sent)
			}
		})
		cfg := hostileConfig(t, srv.port(), 10, 2, false)
		cfg.Timeout = 10 * time.Second
		res := runUntilStopped(t, cfg, interruptWhenFlooded(t, &sent))
		if res.Ending != EndInterrupted {
			t.Errorf("ending %v, want an interrupted run", res.Ending)
		}
	})
}

// interruptWhenFlooded is runUntilStopped's interrupt: it cancels the run
// once the server has written 4 MiB (gab has read most of it: sockets hold a
// few MiB at most), and returns when.
func interruptWhenFlooded(t *testing.T, sent *atomic.Int64) func(cancel func()) time.Time {
	return func(cancel func()) time.Time {
		for deadline := time.Now().Add(20 * time.Second); sent.Load() < 4<<20; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("the server wrote only %d bytes in 20 s", sent.Load())
				break
			}
		}
		at := time.Now()
		cancel()
		return at
	}
}
