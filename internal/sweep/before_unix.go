//go:build unix

package sweep

import (
	"os/exec"
	"syscall"
)

// newProcessGroup puts --before's shell in a process group of its own, so
// that killProcessGroup ends whatever it started too.
func newProcessGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killProcessGroup kills the command's process group.
func killProcessGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
