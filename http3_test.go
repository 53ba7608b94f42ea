package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quic-go/quic-go"

	"gab/internal/h3test"
	"gab/report"
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
		{[]string{"--early-data", "--tls-resume", url}, "gab: --early-data needs --http3 (0-RTT is QUIC's)\n"},
		{[]string{"--http3", "--early-data", url}, "gab: --early-data needs --tls-resume (0-RTT data goes on connections that resume a session)\n"},
		{[]string{"--http3", "--tls-resume", "--early-data", "-m", "POST", url}, "gab: --early-data sends only GET and HEAD requests (a server may replay 0-RTT data)\n"},
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
		{"ab", "--http3", "--tls-resume", "--early-data", "-i", url},
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

// gab's outputs over HTTP/3: the JSON document (valid, with the protocol
// and the layout), --extended's phases (the QUIC handshake, no TCP connect)
// and quic-go's counters, --percentiles, --fail-if, --hlog and --html.
func TestHTTP3Outputs(t *testing.T) {
	url, _ := startH3Server(t)
	dir := t.TempDir()
	jsonFile, hlog, html := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.hlog"), filepath.Join(dir, "run.html")
	status, stdout, stderr := runGab(t, "ab", "--http3", "-k", "-n", "60", "-c", "3", "--streams", "2", "--extended",
		"--percentiles", "50,99.9", "--fail-if", "failed=0", "--fail-if", "rps>1000000000", "--json", jsonFile, "--hlog", hlog, "--html", html, url)
	if status != 3 {
		t.Fatalf("status %d, want 3 (the second --fail-if fails)\n%s\n%s", status, stdout, stderr)
	}
	for _, want := range []string{"Protocol:               HTTP/3 (QUIC), 3 connections × 2 streams\n", "Concurrency Level:      6\n",
		"Phase breakdown", "QUIC handshake:", "99.9%", "--fail-if failed=0: passed", "--fail-if rps>1000000000: FAILED",
		"Responses by status code", "  200: 60\n", "QUIC (quic-go):         3 connections: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "TCP connect:") || strings.Contains(stdout, "TLS handshake:") {
		t.Errorf("the phase table has TCP's and TLS's rows for QUIC:\n%s", stdout)
	}
	raw, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := report.DecodeDocument(jsonFile, raw)
	if err != nil {
		t.Fatalf("the JSON document does not read back: %v", err)
	}
	r := doc.Report
	if r.Protocol != "h3" || r.Connections != 3 || r.StreamsPerConnection != 2 || r.ConcurrencyLevel != 6 || r.CompleteRequests != 60 ||
		doc.Run == nil || doc.Run.Protocol != "http3" || r.TLS == nil || r.TLS.Protocol != "TLSv1.3" {
		t.Errorf("document report %+v run %+v", r, doc.Run)
	}
	for _, f := range []string{hlog, html} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// gab sweep of an HTTP/3 target: each point's run goes over QUIC, and the
// sweep document (with each run's) matches the schemas.
func TestHTTP3Sweep(t *testing.T) {
	url, hits := startH3Server(t)
	jsonFile := filepath.Join(t.TempDir(), "sweep.json")
	status, stdout, stderr := runGab(t, "ab", "sweep", "--http3", "--streams", "3", "-n", "30", "-c", "1,2", "--repeat", "2", "--json", jsonFile, "h3="+url)
	if status != 0 {
		t.Fatalf("status %d\n%s\n%s", status, stdout, stderr)
	}
	if hits.Load() != 4*30 {
		t.Errorf("server saw %d requests, want 2 concurrencies × 2 runs × 30", hits.Load())
	}
	doc := readSweepDoc(t, jsonFile)
	for _, p := range doc.Points {
		for _, run := range p.Runs {
			if r := run.Document.Report; r == nil || r.Protocol != "h3" || r.StreamsPerConnection != 3 || r.ConcurrencyLevel != 3*p.Concurrency {
				t.Errorf("point c=%d: run report %+v", p.Concurrency, r)
			}
		}
	}
}

// Shards of an HTTP/3 run merge into one report over the whole run.
func TestHTTP3MergeShards(t *testing.T) {
	url, hits := startH3Server(t)
	dir := t.TempDir()
	var files []string
	for i := range 3 {
		f := filepath.Join(dir, fmt.Sprintf("s-%d.json", i))
		status, _, stderr := runGab(t, "gab", "--http3", "-n", "31", "-c", "3", "--streams", "2",
			"--shard", fmt.Sprintf("%d/3", i), "--run-id", "h3run", "--json", f, url)
		if status != 0 {
			t.Fatalf("shard %d: status %d: %s", i, status, stderr)
		}
		files = append(files, f)
	}
	if hits.Load() != 31 {
		t.Fatalf("the shards sent %d requests, want 31", hits.Load())
	}
	status, stdout, stderr := runGab(t, append([]string{"gab", "merge"}, files...)...)
	if status != 0 {
		t.Fatalf("merge: %d %s", status, stderr)
	}
	for _, want := range []string{"Protocol:               HTTP/3 (QUIC)", "Complete requests:      31\n", "Failed requests:        0\n",
		"HTML transferred:       3100 bytes\n", "Merged:                 3 shards of run h3run\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("merged report lacks %q:\n%s", want, stdout)
		}
	}
}

// --early-data: --extended says on how many connections the server took
// the first requests as 0-RTT data.
func TestHTTP3EarlyDataReport(t *testing.T) {
	if raceEnabled {
		t.Skip("quic-go's 0-RTT path races on the peer's transport parameters; scripts/test.sh runs this test without -race")
	}
	port := h3test.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "0rtt")
	}), &quic.Config{Allow0RTT: true})
	status, stdout, stderr := runGab(t, "ab", "--http3", "-k", "--tls-resume", "--early-data", "--extended", "-n", "30", "-c", "3",
		fmt.Sprintf("https://127.0.0.1:%d/", port))
	if status != 0 {
		t.Fatalf("status %d\n%s\n%s", status, stdout, stderr)
	}
	if !strings.Contains(stdout, "Complete requests:      30\n") || !strings.Contains(stdout, "sent their first requests as 0-RTT data, which the server accepted\n") {
		t.Errorf("report:\n%s", stdout)
	}
}

// gab capacity over HTTP/3: the search's steps run at --rate over QUIC.
func TestHTTP3Capacity(t *testing.T) {
	url, hits := startH3Server(t)
	status, stdout, stderr := runGab(t, "ab", "capacity", "--noise", "0", "--http3", "--slo", "failed<1%", "--step", "300ms", "--settle", "100ms",
		"--start", "50", "--max-rate", "100", url)
	if status != 0 || !strings.Contains(stdout, "Capacity:") || hits.Load() == 0 {
		t.Errorf("status %d, %d requests\n%s\n%s", status, hits.Load(), stdout, stderr)
	}
}
