//go:build !linux

package main

// blockedOnPipeWrite is known only on Linux (pipewait_linux_test.go).
func blockedOnPipeWrite(pid int) (blocked, known bool) { return false, false }
