package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gab/internal/testtool"
)

// Interrupts and write errors of a real gab process.

// startSlowServer answers every request after delay with a 100-byte body, and
// with a head padded to padHead bytes of X-Pad when padHead > 0.
func startSlowServer(t *testing.T, delay time.Duration, padHead int) (url string, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-time.After(delay):
		case <-stop:
		case <-r.Context().Done():
		}
		if padHead > 0 {
			w.Header().Set("X-Pad", strings.Repeat("p", padHead))
		}
		w.Header().Set("Content-Length", "100")
		_, _ = io.WriteString(w, strings.Repeat("s", 100))
	}))
	t.Cleanup(func() {
		close(stop)
		srv.Close()
	})
	return srv.URL, hits
}

// SIGINT and SIGTERM end a run with ab's partial report, exit status 1, and -g
// and -e files that hold exactly the completed requests.
func TestInterruptWritesPartialReportAndFiles(t *testing.T) {
	ab := buildGab(t)
	url, hits := startSlowServer(t, 40*time.Millisecond, 0)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			tsv, csv := filepath.Join(dir, "g.tsv"), filepath.Join(dir, "e.csv")
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(ab, "-n", "150", "-c", "3", "-g", tsv, "-e", csv, url+"/slow")
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			before := hits.Load()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			if !waitFor(10*time.Second, func() bool { return hits.Load()-before >= 10 }) {
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("the run did not start: stderr %q", stderr.String())
			}
			answered := hits.Load() - before - 3 // at most c requests are still in flight
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := waitExit(t, cmd, done, 10*time.Second)
			if st := exitStatus(err); st != 1 {
				t.Errorf("exit status %d (%v), want 1; stderr %q", st, err, stderr.String())
			}
			out := stdout.String()
			if strings.Contains(out, "..done") || stderr.Len() != 0 {
				t.Errorf("an interrupted run printed ..done or wrote to stderr %q:\n%s", stderr.String(), out)
			}
			if !strings.Contains(out, "(be patient)...\n\nServer Software:        \n") ||
				!strings.Contains(out, "\nFailed requests:        0\n") || !strings.Contains(out, "Percentage of the requests served within") {
				t.Errorf("not ab's partial report:\n%s", out)
			}
			m := completeLine.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no Complete requests line:\n%s", out)
			}
			complete, _ := strconv.Atoi(m[1])
			if complete < int(answered) || complete > int(hits.Load()-before) {
				t.Errorf("Complete requests %d; the server had answered at least %d and received %d", complete, answered, hits.Load()-before)
			}
			if rows := countLines(t, tsv); rows != complete+1 {
				t.Errorf("-g file has %d lines, want header + %d rows", rows, complete)
			}
			if lines := countLines(t, csv); lines != 102 {
				t.Errorf("-e file has %d lines, want 102", lines)
			}
		})
	}
}

// A second SIGINT while the first is being handled ends gab at once: here the
// partial report cannot be written because nobody reads gab's stdout pipe.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	ab := buildGab(t)
	// -v 2 dumps every 4 KiB response head to stdout: stdout's 64 KiB buffer and
	// the pipe fill up, and gab blocks writing.
	url, hits := startSlowServer(t, 0, 4096)
	cmd := exec.Command(ab, "-v", "2", "-n", "100000", url+"/")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() { _ = stdout.Close() }()
	// Stalled: gab sleeps in a write to its full stdout pipe (seen in its
	// threads' wait channels), and the request count stops growing. Where the
	// kernel hides wait channels, the count alone must hold still for 1 s.
	var last int64 = -1
	still := 0
	began := time.Now()
	stalled := waitFor(30*time.Second, func() bool {
		time.Sleep(200 * time.Millisecond)
		n := hits.Load()
		if n == last && n > 0 {
			still++
		} else {
			still = 0
		}
		last = n
		blocked, known := blockedOnPipeWrite(cmd.Process.Pid)
		return still > 0 && (blocked || !known && still >= 5)
	})
	if !stalled {
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("gab did not block on its full stdout (%d requests)", hits.Load())
	}
	t.Logf("stalled after %v at %d requests", time.Since(began), hits.Load())
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("gab exited (%v) while its report could not be written", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// Blocked as it is, gab would never exit without the second SIGINT: the
	// bound is generous, for a loaded machine.
	err = waitExit(t, cmd, done, 10*time.Second)
	if st := exitStatus(err); st != 1 {
		t.Errorf("exit status %d (%v), want 1", st, err)
	}
}

// A -g or -e file on a full file system, or a full stdout, is reported on
// stderr with the system's text, and gab exits non-zero.
func TestWriteErrorsReported(t *testing.T) {
	full := testtool.FullDevice(t) // a write there fails with ENOSPC
	ab := buildGab(t)
	url, _ := startSlowServer(t, 0, 0)
	for _, tc := range []struct {
		name     string
		args     []string
		toFull   bool // stdout to the full device
		wantHead string
	}{
		{"gnuplot", []string{"-g", full}, false, "gab: " + full + ": "},
		{"csv", []string{"-e", full}, false, "gab: " + full + ": "},
		{"stdout", nil, true, "gab: stdout: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"-n", "20", "-c", "2"}, tc.args...), url+"/")
			cmd := exec.Command(ab, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if tc.toFull {
				f, err := os.OpenFile(full, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				cmd.Stdout = f
			}
			err := runWithin(t, cmd, 20*time.Second)
			if st := exitStatus(err); st == 0 || st == -1 {
				t.Errorf("exit status %d (%v), want a non-zero status", st, err)
			}
			msg := stderr.String()
			if !strings.HasPrefix(msg, tc.wantHead) || !strings.HasSuffix(msg, "no space left on device\n") || strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr %q, want one line %q...no space left on device", msg, tc.wantHead)
			}
			if !tc.toFull && !strings.Contains(stdout.String(), "Complete requests:      20\n") {
				t.Errorf("the report is missing:\n%s", stdout.String())
			}
		})
	}
}
