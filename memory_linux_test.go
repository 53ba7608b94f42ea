package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gcHeap is a GODEBUG=gctrace=1 line's heap sizes: at the collection's
// start, its end, and live after it, in MB.
var gcHeap = regexp.MustCompile(`(?m)^gc \d+ .* (\d+)->(\d+)->\d+ MB`)

// TestSmallRunsPeakRSS: a capacity search of a few hundred requests a step
// and a sweep of small rate-paced -t --no-cap runs stay under 64 MB of peak
// RSS (the child's own VmHWM, peakRSS), as a 256 MiB container needs, and their
// heap under 48 MB (its size at each collection, GODEBUG=gctrace=1, which
// does not depend on when Go reuses or returns memory): each run's sample
// store grows with the requests it records instead of setting aside
// 10,000,000 samples (160 MB) for the cap of its -t. Before, these commands
// had heaps of 330 MB and peak RSS of 50 to 205 MB and 56 to 83 MB.
func TestSmallRunsPeakRSS(t *testing.T) {
	const mostRSSKB, mostHeapMB = 64 << 10, 48
	bin := buildGab(t)
	url, _ := startDocServer(t)
	for _, args := range [][]string{
		{"capacity", "--noise", "0", "--slo", "p99<200ms", "--step", "500ms", "--settle", "100ms", "--start", "100", "--max-rate", "400", url + "/"},
		{"sweep", "-c", "1,2,4", "-t", "1", "--no-cap", "--rate", "100", url + "/"},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel() // both are paced by their rates, not by the machine
			cmd := exec.CommandContext(t.Context(), bin, args...)
			cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
			var buf bytes.Buffer
			cmd.Stdout, cmd.Stderr = &buf, &buf
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			rssKB := peakRSS(cmd)
			out := buf.Bytes()
			if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
				t.Fatalf("%s: %v\n%s", strings.Join(args, " "), cmd.ProcessState, out)
			}
			t.Logf("gab %s: peak RSS %d KB", args[0], rssKB)
			if rssKB == 0 {
				t.Fatal("no VmHWM read from the child's /proc status")
			}
			if rssKB > mostRSSKB {
				t.Errorf("gab %s: peak RSS %d KB, want at most %d KB", strings.Join(args, " "), rssKB, mostRSSKB)
			}
			gcs := gcHeap.FindAllSubmatch(out, -1)
			if len(gcs) == 0 {
				t.Fatalf("gab %s: no garbage collection traced:\n%s", args[0], out)
			}
			heap := 0
			for _, m := range gcs {
				for _, v := range m[1:] {
					n, _ := strconv.Atoi(string(v))
					heap = max(heap, n)
				}
			}
			if heap > mostHeapMB {
				t.Errorf("gab %s: heap of %d MB at a collection, want at most %d MB", strings.Join(args, " "), heap, mostHeapMB)
			}
		})
	}
}

// peakRSS waits for the started cmd and returns the largest VmHWM (the
// high-water mark of its resident memory, in KB) read from its
// /proc/PID/status while it ran, every millisecond. The rusage of the
// reaped child is no measure: Go starts a child sharing the parent's address
// space (CLONE_VM) until its exec, and the kernel carries that space's
// high-water mark into the child's ru_maxrss, so inside this test binary
// (large under -race, after the Chromium tests) every child read 1.3 GB.
// VmHWM belongs to the address space exec made and only grows; the readings
// miss at most the last millisecond before the exit.
func peakRSS(cmd *exec.Cmd) int64 {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	path := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					if kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64); err == nil {
						peak = max(peak, kb)
					}
				}
			}
		}
		select {
		case <-done:
			return peak
		case <-tick.C:
		}
	}
}
