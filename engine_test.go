package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// --engine: a value other than epoll, uring or auto, and uring with a
// protocol other than HTTP/1, are usage errors (exit 22, one line); uring
// takes http:// and https://.
func TestEngineFlagErrors(t *testing.T) {
	for _, argv := range [][]string{
		{"ab", "--engine", "iouring", testURL},
		{"ab", "--engine", "uring", "--http2", testURL},
		{"ab", "--engine", "uring", "--http3", "-k", "https://127.0.0.1:1/"},
		{"ab", "--engine", "uring", "-b", "4096", testURL},
		{"ab", "--engine", "uring", "--rate", "100", testURL},
		{"ab", "--engine", "uring", "--request-timeout", "1s", testURL},
		{"ab", "--engine", "uring", "-k", "--pipeline", "4", testURL},
	} {
		_, status, done, stdout, stderr := parse(t, argv...)
		if !done || status != exitUsage || stdout != "" || !oneLineNaming(stderr, "gab: ", "--engine") {
			t.Errorf("%q: status %d (done %v), stdout %q, stderr %q", argv, status, done, stdout, stderr)
		}
	}
	for _, e := range []string{"epoll", "uring", "auto"} {
		for _, url := range []string{testURL, "https://127.0.0.1:1/"} {
			o, _, done, _, stderr := parse(t, "ab", "--engine", e, url)
			if done || o.Config.Engine != e {
				t.Errorf("--engine %s %s: Engine %q (done %v, stderr %q)", e, url, o.Config.Engine, done, stderr)
			}
		}
	}
}

// The engine that ran is named in --extended and the JSON document, not in
// ab's default output.
func TestEngineNamedInExtendedAndJSON(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the event loops are Linux only")
	}
	url := extServer(t)
	for _, tc := range []struct{ engine, text string }{
		{"epoll", "epoll (HTTP/1 event loops)"},
		{"uring", "io_uring (HTTP/1 event loops)"},
	} {
		doc := filepath.Join(t.TempDir(), "run.json")
		status, stdout, stderr := runGab(t, "gab", "--engine", tc.engine, "-n", "20", "-c", "2", "-k", "--extended", "--json", doc, url+"/")
		if tc.engine == "uring" && strings.Contains(stderr, "io_uring is not available") {
			t.Skip("no io_uring here: " + stderr)
		}
		if status != 0 || !strings.Contains(stdout, "I/O engine:             "+tc.text+"\n") {
			t.Errorf("--engine %s: status %d, stderr %q, stdout:\n%s", tc.engine, status, stderr, stdout)
		}
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Extended struct{ Engine string } `json:"extended"`
		}
		if err := json.Unmarshal(raw, &d); err != nil || d.Extended.Engine != tc.engine {
			t.Errorf("--engine %s: JSON extended.engine %q (%v)", tc.engine, d.Extended.Engine, err)
		}
		_, plain, _ := runGab(t, "gab", "--engine", tc.engine, "-n", "20", "-c", "2", "-k", url+"/")
		if strings.Contains(plain, "engine") {
			t.Errorf("--engine %s: ab's output names the engine:\n%s", tc.engine, plain)
		}
	}
}
