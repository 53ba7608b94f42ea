//go:build !linux

package testtool

import "testing"

// FullDevice is Linux's /dev/full (see fulldev_linux.go); elsewhere the test
// fails under CI and is skipped otherwise.
func FullDevice(t testing.TB) string {
	t.Helper()
	Missing(t, "no /dev/full: it is Linux's")
	return ""
}
