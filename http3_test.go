package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"gab/internal/h3test"
)

// startH3Server serves 100-byte documents over HTTP/3 on 127.0.0.1 until
// the test ends; it returns the https:// URL and the count of requests.
func startH3Server(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	hits := new(atomic.Int64)
	port := h3test.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Server", "h3test/1.0")
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, strings.Repeat("q", 100))
	}), nil)
	return fmt.Sprintf("https://127.0.0.1:%d/doc", port), hits
}

// --http3 with what cannot work is a usage error: one line, exit 22.
func TestHTTP3UsageErrors(t *testing.T) {
	const url = "https://127.0.0.1:18443/"
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"--http3", "http://127.0.0.1:18080/"}, "gab: --http3 needs an https:// URL (QUIC is always encrypted)\n"},
		{[]string{"--http3", "--http2", url}, "gab: --http3 excludes --http2, --http1.1 and --cgi\n"},
		{[]string{"--http3", "--http1.1", url}, "gab: --http3 excludes --http2, --http1.1 and --cgi\n"},
		{[]string{"--http3", "--cgi", "/bin/true", url}, "gab: --http3 excludes --http2, --http1.1 and --cgi\n"},
		{[]string{"--http3", "-X", "proxy:3128", url}, "gab: -X cannot be used with --http3\n"},
		{[]string{"--http3", "-b", "65536", url}, "gab: -b cannot be used with --http3 (quic-go sizes its UDP socket buffers itself)\n"},
		{[]string{"--http3", "-Z", "AES128-SHA", url}, "gab: -Z cannot be used with --http3 (QUIC uses TLS 1.3, whose cipher suites Go does not let a client choose)\n"},
		{[]string{"--http3", "-f", "TLS1.2", url}, "gab: --http3 needs TLS 1.3 (-f TLS1.2 asks for another version)\n"},
		{[]string{"--http3", "--demo"}, "gab: --http3 needs an https:// URL (QUIC is always encrypted)\n"},
	} {
		argv := append([]string{"ab"}, tc.argv...)
		_, status, done, stdout, stderr := parse(t, argv...)
		if !done || status != exitUsage || stdout != "" || stderr != tc.want {
			t.Errorf("%q: status %d (done %v) stdout %q stderr %q; want 22 and %q", argv, status, done, stdout, stderr, tc.want)
		}
	}
	for _, argv := range [][]string{
		{"ab", "--http3", "-f", "TLS1.3", url},
		{"ab", "--http3", "-f", "ALL", "--streams", "4", "-k", url},
	} {
		if _, status, done, _, stderr := parse(t, argv...); done {
			t.Errorf("%q: status %d, %s", argv, status, stderr)
		}
	}
}

// ab's report over HTTP/3: the Protocol line, TLS 1.3's lines, the
// requests in flight as Concurrency Level, the Keep-Alive line (-k is
// implied, and said on stderr when not given).
func TestHTTP3Report(t *testing.T) {
	url, hits := startH3Server(t)
	status, stdout, stderr := runGab(t, "ab", "--http3", "-n", "40", "-c", "2", "--streams", "5", url)
	if status != 0 {
		t.Fatalf("status %d\n%s\n%s", status, stdout, stderr)
	}
	for _, want := range []string{
		"Server Software:        h3test/1.0\n",
		"Protocol:               HTTP/3 (QUIC), 2 connections × 5 streams\n",
		"SSL/TLS Protocol:       TLSv1.3,",
		"Document Path:          /doc\n",
		"Document Length:        100 bytes\n",
		"Concurrency Level:      10\n",
		"Complete requests:      40\n",
		"Failed requests:        0\n",
		"Keep-Alive requests:    38\n",
		"HTML transferred:       4000 bytes\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if want := "gab: --http3 keeps its QUIC connections open for the whole run (-k implied)\n"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if hits.Load() != 40 {
		t.Errorf("server saw %d requests, want 40", hits.Load())
	}
	if _, _, stderr := runGab(t, "ab", "--http3", "-k", "-n", "4", url); strings.Contains(stderr, "-k implied") {
		t.Errorf("with -k given, stderr still says it is implied:\n%s", stderr)
	}
}
