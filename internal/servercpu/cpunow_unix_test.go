//go:build unix

package servercpu

import (
	"syscall"
	"time"
)

// cpuNow is this process's CPU time so far.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
