package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// blockedOnPipeWrite reports whether a thread of process pid sleeps in the
// kernel's pipe write (its wchan, "pipe_write" or "anon_pipe_write"): the
// process is blocked writing to a full pipe. known is false where the kernel
// hides the wait channels (every thread reads "0" or nothing).
func blockedOnPipeWrite(pid int) (blocked, known bool) {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		w := strings.TrimSpace(string(b))
		if err != nil || w == "" || w == "0" {
			continue
		}
		known = true
		if strings.HasSuffix(w, "pipe_write") {
			return true, true
		}
	}
	return false, known
}
