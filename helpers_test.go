package main

// Test helpers shared by the main package's tests: running gab in process or
// as a built binary, the local test servers, waiting for processes.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gab/internal/sweep/sweeptest"
	"gab/internal/testtool"
	"gab/report"
)

// runArgs runs gab in-process with a fresh context and returns its exit status and output.
func runArgs(t *testing.T, ctx context.Context, argv ...string) (status int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	status = run(ctx, argv, &out, &errb)
	return status, out.String(), errb.String()
}

// startDocServer serves 100-byte documents; /hang answers only when the test ends.
func startDocServer(t *testing.T) (url string, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		if r.URL.Path == "/hang" || (r.URL.Path == "/hang-after-2" && n > 2) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Server", "test/1.0")
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, strings.Repeat("b", 100))
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return srv.URL, hits
}

// runGab is runArgs with the test's context.
func runGab(t *testing.T, argv ...string) (status int, stdout, stderr string) {
	t.Helper()
	return runArgs(t, t.Context(), argv...)
}

// extServer serves 100-byte documents; /404 answers 404 with the same body.
func extServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "ext/1.0")
		w.Header().Set("Content-Length", "100")
		switch r.URL.Path {
		case "/404":
			w.WriteHeader(http.StatusNotFound)
		case "/slow":
			select { // answers after 50 ms, or never once the test is over
			case <-time.After(50 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		io.WriteString(w, strings.Repeat("e", 100))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// needTool returns the path of a tool the suite compares against: a failure
// under CI when it is missing, a skip elsewhere.
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	return testtool.Need(t, name, pkg)
}

// builtGab is the gab binary that the process-level tests share: one build per
// test run, removed by TestMain.
var builtGab struct {
	once      sync.Once
	dir, link string
	err       error
}

// buildGab builds gab (once) into a temporary directory and links it there as
// "ab", so that its argv[0] is what ab's is. It returns the link's path.
func buildGab(t *testing.T) string {
	t.Helper()
	b := &builtGab
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "gab-test-bin-"); b.err != nil {
			return
		}
		bin := filepath.Join(b.dir, "gab")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		b.link = filepath.Join(b.dir, "ab")
		b.err = os.Symlink(bin, b.link)
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.link
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtGab.dir != "" {
		os.RemoveAll(builtGab.dir)
	}
	os.Exit(code)
}

// readRun reads and decodes a run's JSON document.
func readRun(t *testing.T, name string) *report.Run {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var d report.Run
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// readSweepDoc reads and validates a sweep document.
func readSweepDoc(t *testing.T, name string) *report.SweepDocument {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := sweeptest.Validate(raw, "docs"); err != nil {
		t.Errorf("the sweep document does not match docs/sweep-schema.json: %v", err)
	}
	var d report.SweepDocument
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// waitFor polls cond every 5 ms for up to limit.
func waitFor(limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// waitExit waits up to limit for cmd to end; it kills cmd (by its PID) and
// fails t if it does not.
func waitExit(t *testing.T, cmd *exec.Cmd, done <-chan error, limit time.Duration) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("gab did not exit within %v", limit)
		return nil
	}
}

// runWithin starts cmd and waits for it as waitExit does.
func runWithin(t *testing.T, cmd *exec.Cmd, limit time.Duration) error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return waitExit(t, cmd, done, limit)
}

func exitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func countLines(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}
