//go:build unix

package report

import (
	"syscall"
	"time"
)

// ProcessCPU reads the process's CPU time so far (getrusage RUSAGE_SELF);
// take it before and after a run and Sub the two.
func ProcessCPU() CPUUsage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return CPUUsage{}
	}
	return CPUUsage{
		User:  time.Duration(ru.Utime.Nano()),
		Sys:   time.Duration(ru.Stime.Nano()),
		Known: true,
	}
}
