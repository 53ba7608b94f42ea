//go:build !unix

package sweep

import (
	"os/exec"
	"syscall"
)

// newProcessGroup: no process groups here; killProcessGroup kills the
// command alone.
func newProcessGroup() *syscall.SysProcAttr { return nil }

// killProcessGroup kills the command.
func killProcessGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
