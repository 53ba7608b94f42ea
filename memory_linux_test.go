package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// gcHeap is a GODEBUG=gctrace=1 line's heap sizes: at the collection's
// start, its end, and live after it, in MB.
var gcHeap = regexp.MustCompile(`(?m)^gc \d+ .* (\d+)->(\d+)->\d+ MB`)

// TestSmallRunsPeakRSS: a capacity search of a few hundred requests a step
// and a sweep of small rate-paced -t --no-cap runs stay under 64 MB of peak
// RSS (the child's rusage Maxrss), as a 256 MiB container needs, and their
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
		{"capacity", "--slo", "p99<200ms", "--step", "500ms", "--settle", "100ms", "--start", "100", "--max-rate", "400", url + "/"},
		{"sweep", "-c", "1,2,4", "-t", "1", "--no-cap", "--rate", "100", url + "/"},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel() // both are paced by their rates, not by the machine
			cmd := exec.CommandContext(t.Context(), bin, args...)
			cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
			}
			ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			if !ok {
				t.Fatal("no rusage")
			}
			if ru.Maxrss > mostRSSKB {
				t.Errorf("gab %s: peak RSS %d KB, want at most %d KB", strings.Join(args, " "), ru.Maxrss, mostRSSKB)
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
