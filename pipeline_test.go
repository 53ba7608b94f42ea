package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --pipeline's checks: a number from 1 to 1024, with -k, on HTTP/1, without
// --request-timeout; each refusal is one line and ab's usage exit (22).
func TestFlagPipeline(t *testing.T) {
	for _, tc := range []struct {
		name   string
		argv   []string
		stderr string
	}{
		{"zero", []string{"ab", "-k", "--pipeline", "0", testURL}, "gab: --pipeline must be from 1 to 1024, not 0\n"},
		{"above the cap", []string{"ab", "-k", "--pipeline", "1025", testURL}, "gab: --pipeline must be from 1 to 1024, not 1025\n"},
		{"without -k", []string{"ab", "--pipeline", "8", testURL}, "gab: --pipeline needs -k (pipelined requests share a kept-alive connection)\n"},
		{"with --http2", []string{"ab", "-k", "--http2", "--pipeline", "8", testURL}, "gab: --pipeline is HTTP/1's: it cannot be used with --http2, --http3 or --cgi\n"},
		{"with --cgi", []string{"ab", "-k", "--cgi", "x", "--pipeline", "8", testURL}, "gab: --pipeline is HTTP/1's: it cannot be used with --http2, --http3 or --cgi\n"},
		{"above ab's concurrency", []string{"ab", "-k", "-n", "20000", "-c", "20000", "--pipeline", "11", testURL},
			"gab: --pipeline 11 with -c 20000 is more than 200000 requests in flight (ab's -c limit)\n"},
		{"with --request-timeout", []string{"ab", "-k", "--request-timeout", "1", "--pipeline", "8", testURL},
			"gab: --pipeline cannot be used with --request-timeout (a request waits behind the others on its connection)\n"},
	} {
		_, status, done, stdout, stderr := parse(t, tc.argv...)
		if !done || status != 22 || stdout != "" || stderr != tc.stderr {
			t.Errorf("%s: status %d (done %v), stdout %q, stderr %q; want 22, %q", tc.name, status, done, stdout, stderr, tc.stderr)
		}
	}
	o, _, done, _, stderr := parse(t, "ab", "-k", "--http1.1", "--pipeline", "16", testURL)
	if done || o.Config.Pipeline != 16 || stderr != "" {
		t.Errorf("-k --http1.1 --pipeline 16: done %v, Pipeline %d, stderr %q", done, o.Config.Pipeline, stderr)
	}
}

// A pipelined run writes ab's report and its -g file, a line per request.
func TestPipelineGnuplotFile(t *testing.T) {
	url, hits := startDocServer(t)
	tsv := filepath.Join(t.TempDir(), "g.tsv")
	status, stdout, stderr := runGab(t, "ab", "-k", "--pipeline", "4", "-n", "40", "-c", "2", "-g", tsv, url+"/doc")
	if status != 0 || stderr != "" || !strings.Contains(stdout, "\nComplete requests:      40\nFailed requests:        0\nKeep-Alive requests:    40\n") {
		t.Fatalf("status %d, stderr %q, stdout:\n%s", status, stderr, stdout)
	}
	if hits.Load() != 40 {
		t.Errorf("the server saw %d requests, want 40", hits.Load())
	}
	g, err := os.ReadFile(tsv)
	if err != nil || !strings.HasPrefix(string(g), "starttime\tseconds\tctime\tdtime\tttime\twait\n") || strings.Count(string(g), "\n") != 41 {
		t.Errorf("-g file: %v\n%s", err, g)
	}
}
