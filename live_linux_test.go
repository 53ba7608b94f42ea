package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestLiveReaderNeverSlowsTheRun: a --live FIFO that nobody opens, and one
// whose reader never reads (a pipe of 4 KiB), leave the run to complete
// with its report; gab says the reader did not take the lines, and exits.
func TestLiveReaderNeverSlowsTheRun(t *testing.T) {
	defer func(d time.Duration) { liveClosing = d }(liveClosing)
	liveClosing = 300 * time.Millisecond
	url := extServer(t) + "/"
	for _, reader := range []string{"none", "stuck"} {
		t.Run(reader, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "live")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			rd := -1
			if reader == "stuck" {
				fd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
				if err != nil {
					t.Fatal(err)
				}
				rd = fd
				if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, 4096); err != nil {
					t.Fatal(err)
				}
			}
			defer func() {
				if rd < 0 { // let the sink's open return
					fd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
					if err != nil {
						t.Fatal(err)
					}
					rd = fd
				}
				// Drain what the late sink still writes (it is never
				// closed: gab gave up on it), until it is quiet.
				buf, quiet := make([]byte, 1<<16), 0
				for deadline := time.Now().Add(5 * time.Second); quiet < 20 && time.Now().Before(deadline); {
					if n, err := unix.Read(rd, buf); n > 0 {
						quiet = 0
					} else if n == 0 && err == nil {
						break // EOF
					} else {
						quiet++
						time.Sleep(10 * time.Millisecond)
					}
				}
				unix.Close(rd)
			}()
			// 1 s at 100 ms intervals: 10 lines of about 1 KB, more than
			// the stuck reader's 4 KiB pipe holds (300 requests made 4
			// lines, 4049 bytes, which fit).
			status, stdout, stderr := runGab(t, "gab", "-k", "-n", "2000", "-c", "2", "--rate", "2000", "--interval", "100ms", "--live", fifo, url)
			if status != 0 || !strings.Contains(stdout, "Complete requests:      2000") {
				t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
			}
			if !strings.Contains(stderr, "--live "+fifo+": its reader did not take the last lines") {
				t.Errorf("stderr %q", stderr)
			}
		})
	}
}
