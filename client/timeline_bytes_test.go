package client

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"
)

// timelineBytes sums the timeline's bytes read and written, failing the test
// when the run has no timeline.
func timelineBytes(t *testing.T, res *Result) (read, sent int64) {
	t.Helper()
	if res.Timeline == nil {
		t.Fatal("no timeline with Config.Interval set")
	}
	for _, iv := range res.Timeline.Intervals {
		read += iv.Bytes
		sent += iv.Sent
	}
	return read, sent
}

// wantTimelineBytes checks that a run that recorded every request it sent
// has intervals whose bytes add up to its totals: read to "Total
// transferred", written to "Total body sent" (Result.TotalSent), which holds
// the bodies of its n requests at least (and some bytes in any case).
func wantTimelineBytes(t *testing.T, res *Result, n int, body []byte) {
	t.Helper()
	read, sent := timelineBytes(t, res)
	if sent != res.TotalSent || read != res.TotalRead {
		t.Errorf("the intervals wrote %d bytes and read %d; the run's totals %d and %d", sent, read, res.TotalSent, res.TotalRead)
	}
	if res.TotalSent == 0 || res.TotalSent < int64(n*len(body)) {
		t.Errorf("the run wrote %d bytes, less than its %d bodies of %d (or none)", res.TotalSent, n, len(body))
	}
}

// TestTimelineSentBytes: the timeline counts the request bytes written as
// it counts those read, on every transport (HTTP/1's event loops, io_uring
// and portable path, HTTP/2's two paths, HTTP/3; CGI in its own test): a
// run that recorded every request (POSTs, GETs on HTTP/2's event loops) has
// intervals whose bytes written add up to the run's "Total body sent", and
// on HTTP/1 to the bytes the loopback server read.
func TestTimelineSentBytes(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 300)
	const n = 40
	h1Paths(t, func(t *testing.T) {
		var got atomic.Int64 // bytes the server read, counted before it answers
		resp := respond100(true)
		srv := newFaultServer(t, func(fc *faultConn) {
			for {
				req, ok := fc.readRequest()
				if !ok {
					return
				}
				got.Add(int64(len(req)))
				fc.write(resp)
			}
		})
		cfg := h1Config(srv.port(), n, 2, true)
		cfg.Spec = RequestSpec{Method: "POST", Target: "/x", Host: "127.0.0.1", KeepAlive: true, HasBody: true, Body: body, ContentType: DefaultContentType}
		cfg.Request, cfg.HeadLen = BuildRequest(cfg.Spec)
		cfg.Interval = MinInterval
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		wantCounts(t, res, n, Failures{})
		wantTimelineBytes(t, res, n, body)
		if _, sent := timelineBytes(t, res); sent != got.Load() || sent != int64(n*len(cfg.Request)) {
			t.Errorf("the intervals wrote %d bytes; the server read %d, %d requests of %d", sent, got.Load(), n, len(cfg.Request))
		}
	})
	post := func(cfg *Config) {
		cfg.Spec.Method, cfg.Spec.HasBody, cfg.Spec.Body, cfg.Interval = "POST", true, body, MinInterval
	}
	h2 := func(t *testing.T, body []byte) {
		ts := startGoH2(t, newH2Counter(0, []byte("posted\n")), true)
		cfg := h2TestConfig(t, ts.URL+"/post", n, 2, 4)
		cfg.Interval = MinInterval
		if body != nil {
			post(&cfg)
		}
		res, err := runH2(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		wantCounts(t, res, n, Failures{})
		wantTimelineBytes(t, res, n, body)
	}
	// HTTP/2's event loops send no bodies (a run with one takes the
	// goroutines): header blocks alone there.
	h2Paths(t, func(t *testing.T) { h2(t, nil) })
	t.Run("http2 POST", func(t *testing.T) {
		usePath(t, "go")
		h2(t, body)
	})
	t.Run("http3", func(t *testing.T) {
		cfg := h3TestConfig(t, startH3(t, newH2Counter(0, []byte("posted\n"))), n, 2, 4)
		post(&cfg)
		res, _, err := runH3(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		wantCounts(t, res, n, Failures{})
		wantTimelineBytes(t, res, n, body)
	})
}

// A request of the ramp-up that ends after one of the measured run (a
// worker with several in flight) takes its worker's bytes to the ramp-up;
// the next recording counts what was read and written since, never a
// negative count.
func TestTimelineBytesAfterRampRequest(t *testing.T) {
	tl, tally, o := bareTimeline()
	tally.TotalRead, tally.TotalSent = 500, 300
	tl.observe(tally, o)
	tally.TotalRead, tally.TotalSent = 900, 700
	tally.leaveToRamp()
	tally.TotalRead, tally.TotalSent = 150, 60
	tl.observe(tally, o)
	res := tl.result(time.Minute)
	if iv := res.Intervals[0]; iv.Bytes != 650 || iv.Sent != 360 {
		t.Errorf("the interval read %d bytes and wrote %d; want 500+150 and 300+60", iv.Bytes, iv.Sent)
	}
}
