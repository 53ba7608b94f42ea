package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gab/internal/testtool"
)

// scrapeValue scrapes addr's /metrics and returns the value of the one
// sample whose line starts with prefix (ok false when there is none, or
// more than one).
func scrapeValue(t *testing.T, addr, prefix string) (v float64, ok bool) {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
			v, err = strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("sample %q", l)
			}
		}
	}
	return v, n == 1
}

// TestLiveSentBytes: the bytes gab writes reach the live outputs as the
// bytes it reads do. A run of identical POSTs (a 4000-byte body) writes
// the same bytes for each request, so each --live interval line's
// sent_bytes is its requests times that, and the lines, when they hold
// every request, sum to the report's "Total body sent"; the final line and
// --metrics' gab_sent_bytes_total after the run (during the linger) hold
// that total.
func TestLiveSentBytes(t *testing.T) {
	url := extServer(t) + "/"
	dir := t.TempDir()
	body, file, doc := filepath.Join(dir, "body"), filepath.Join(dir, "live.ndjson"), filepath.Join(dir, "run.json")
	if err := os.WriteFile(body, bytes.Repeat([]byte("0123456789"), 400), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(testtool.FreePort(t))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		s, _, stderr := runArgs(t, ctx, "gab", "-q", "-k", "-n", "300", "-c", "2", "-p", body, "--rate", "1000", "--interval", "100ms",
			"--live", file, "--json", doc, "--metrics", addr, "--metrics-linger", "5m", url)
		if s != 0 {
			t.Errorf("status %d: %s", s, stderr)
		}
		done <- s
	}()
	exited := false
	if !waitFor(60*time.Second, func() bool {
		select {
		case <-done:
			exited = true
			return true
		default:
		}
		return metricsFinished(addr)
	}) || exited {
		t.Fatal("the run did not finish within 60 s, or gab exited before its linger")
	}
	scraped, ok := scrapeValue(t, addr, "gab_sent_bytes_total{")
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("gab did not end its linger on the interrupt")
	}
	d := readRun(t, doc)
	r := d.Report
	total := r.TotalBodySentBytes
	if r.CompleteRequests != 300 || r.FailedRequests != 0 || total < 300*4000 || total%300 != 0 {
		t.Fatalf("the run: %d complete, %d failed, %d bytes sent: the test wants 300 identical POSTs", r.CompleteRequests, r.FailedRequests, total)
	}
	if !ok || scraped != float64(total) {
		t.Errorf("gab_sent_bytes_total after the run: %v (found %v), the report's total body sent %d", scraped, ok, total)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := readLiveLines(t, raw)
	checkFinal(t, lines, d)
	per := total / 300
	var sent, reqs int64
	for i, l := range lines[:len(lines)-1] {
		if l.SentBytes != l.Requests*per {
			t.Errorf("line %d: %d requests sent %d bytes, want %d each", i, l.Requests, l.SentBytes, per)
		}
		sent += l.SentBytes
		reqs += l.Requests
	}
	// A request recorded after its interval was handed on is in the final
	// line only: compare the sum when the lines hold every request.
	if reqs == 300 && sent != total {
		t.Errorf("the interval lines sent %d bytes in all, the report %d", sent, total)
	}
	if f := lines[len(lines)-1]; f.SentBytes != total {
		t.Errorf("the final line's sent_bytes %d, the report's %d", f.SentBytes, total)
	}
}
