package testtool

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// FullDevice returns the path of a device on which every write fails with
// ENOSPC: a copy of /dev/full made in the test's temporary directory where
// the process may make device nodes (root), so that a test of what gab writes
// there never risks the machine's own device; else /dev/full itself. Without
// /dev/full the test fails under CI and is skipped elsewhere; where a write to
// the device does not fail with ENOSPC (a container's stand-in), it is skipped
// with the reason.
func FullDevice(t testing.TB) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat("/dev/full", &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		Missing(t, "no /dev/full character device")
		return ""
	}
	p := "/dev/full"
	own := filepath.Join(t.TempDir(), "full")
	if unix.Mknod(own, unix.S_IFCHR|0o666, int(st.Rdev)) == nil {
		p = own
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("%s cannot be opened for writing: %v", p, err)
	}
	_, err = f.Write([]byte{0})
	f.Close()
	if !errors.Is(err, syscall.ENOSPC) {
		t.Skipf("a write to %s returns %v, not ENOSPC", p, err)
	}
	return p
}
