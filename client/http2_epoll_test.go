package client

import (
	"strconv"
	"testing"
	"time"
)

// The --http2 transport has two paths for h2c: the Linux event loops
// (http2_epoll_linux.go, the default there) and the goroutine path
// (http2.go: Config.Portable, TLS, request bodies, --request-timeout, and
// every other system). These tests run the HTTP/2 behaviour tests on both.

func TestHTTP2BothPaths(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the HTTP/2 suite twice")
	}
	tests := []pathTest{
		{"AgainstGoServer", TestHTTP2AgainstGoServer},
		{"KeepAliveCountsReusedConnections", TestHTTP2KeepAliveCountsReusedConnections},
		{"HeaderFields", TestHTTP2HeaderFields},
		{"RefusesServerWithoutH2", TestHTTP2RefusesServerWithoutH2},
		{"RefusedConnectionIsFatalWithoutR", TestHTTP2RefusedConnectionIsFatalWithoutR},
		{"GoAwayReplacesConnection", TestHTTP2GoAwayReplacesConnection},
		{"ClosedConnectionIsReplaced", TestHTTP2ClosedConnectionIsReplaced},
		{"ResetStreamsAreExceptions", TestHTTP2ResetStreamsAreExceptions},
		{"RespectsServerMaxConcurrentStreams", TestHTTP2RespectsServerMaxConcurrentStreams},
		{"StalledStreamEndsWithIdleTimeout", TestHTTP2StalledStreamEndsWithIdleTimeout},
		{"TimeLimitStopsStalledRun", TestHTTP2TimeLimitStopsStalledRun},
		{"NoServerField", TestHTTP2NoServerField},
		{"AgainstNginx", TestHTTP2AgainstNginx},
		{"RefusedWithKeepGoing", testHTTP2RefusedWithKeepGoing},
	}
	h2Paths(t, func(t *testing.T) {
		for _, tc := range tests {
			t.Run(tc.name, tc.fn)
		}
	})
}

// testHTTP2RefusedWithKeepGoing: with -r every refused connection attempt is
// one failed request, and the run goes on to n.
func testHTTP2RefusedWithKeepGoing(t *testing.T) {
	cfg := h2TestConfig(t, "http://127.0.0.1:"+strconv.Itoa(closedPort(t))+"/", 7, 2, 3)
	cfg.KeepGoing = true
	res, err := runH2(t, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Complete != 7 || res.Failed.Connect != 7 || res.Failed.Total != 7 {
		t.Errorf("Complete %d Failed %+v, want 7 requests, all connect failures", res.Complete, res.Failed)
	}
}

// TestHTTP2PathSelection: h2c without what the event loop leaves out takes
// it; everything else takes the goroutine path.
func TestHTTP2PathSelection(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(*Config)
		fast   bool
	}{
		{"h2c", func(*Config) {}, true},
		{"h2 (TLS)", func(c *Config) { c.Target.TLS = true }, true},
		{"request body", func(c *Config) { c.Spec.HasBody, c.Spec.Body = true, []byte("x") }, false},
		{"--request-timeout", func(c *Config) { c.RequestTimeout = time.Second }, false},
		{"--rate", func(c *Config) { c.Rate = 100 }, false},
		{"-v 2", func(c *Config) { c.Verbosity = 2 }, false},
		{"-v 1", func(c *Config) { c.Verbosity = 1 }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := h2TestConfig(t, "http://127.0.0.1:8080/", 10, 3, 2)
			tc.change(&cfg)
			tr, err := newHTTP2(&cfg)
			if err != nil {
				t.Fatalf("newHTTP2: %v", err)
			}
			h := tr.(*h2Transport)
			if err := h.prepare(t.Context(), &run{cfg: &cfg}); err != nil {
				t.Fatalf("prepare: %v", err)
			}
			if fast := h.loops > 0; fast != (tc.fast && epollExpected()) {
				t.Errorf("event loops %d, want fast path %v", h.loops, tc.fast && epollExpected())
			}
			if h.loops > 0 && h.slots() != h.loops {
				t.Errorf("slots %d with %d loops", h.slots(), h.loops)
			}
		})
	}
}
