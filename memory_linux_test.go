package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestSmallRunsPeakRSS: a capacity search of a few hundred requests a step
// and a sweep of small rate-paced -t --no-cap runs stay under 64 MB of peak
// RSS (the child's rusage Maxrss), as a 256 MiB container needs: each run's
// sample store grows with the requests it records instead of setting aside
// 10,000,000 samples (160 MB) for the cap of its -t (200 MB and 80 MB were
// measured for these commands before).
func TestSmallRunsPeakRSS(t *testing.T) {
	const mostKB = 64 << 10
	bin := buildGab(t)
	url, _ := startDocServer(t)
	for _, args := range [][]string{
		{"capacity", "--slo", "p99<200ms", "--step", "500ms", "--settle", "100ms", "--start", "100", "--max-rate", "400", url + "/"},
		{"sweep", "-c", "1,2,4", "-t", "1", "--no-cap", "--rate", "100", url + "/"},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel() // both are paced by their rates, not by the machine
			cmd := exec.CommandContext(t.Context(), bin, args...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
			}
			ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			if !ok {
				t.Fatal("no rusage")
			}
			if ru.Maxrss > mostKB {
				t.Errorf("gab %s: peak RSS %d KB, want at most %d KB", strings.Join(args, " "), ru.Maxrss, mostKB)
			}
		})
	}
}
