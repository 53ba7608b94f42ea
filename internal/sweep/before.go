package sweep

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// beforeTimeout bounds --before's command.
const beforeTimeout = 5 * time.Minute

// RunBefore runs --before's command for a run of the point (nothing
// without --before): sh -c with {NAME} replaced by the point's --param
// value (a value is one shell word: ParseParam), its output on stderr, in
// its own process group, which is killed when the sweep is interrupted or
// the command outlives beforeTimeout.
func (s *Settings) RunBefore(ctx context.Context, pt Point, stderr io.Writer) error {
	if s.Before == "" {
		return nil
	}
	command := s.Before
	if s.Param != nil {
		command = strings.ReplaceAll(command, s.Param.Placeholder(), s.Param.Values[pt.Param])
	}
	ctx, cancel := context.WithTimeout(ctx, beforeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = newProcessGroup()
	cmd.Cancel = func() error { return killProcessGroup(cmd) }
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return fmt.Errorf("--before %q did not end within %v", command, beforeTimeout)
		}
		return fmt.Errorf("--before %q: %v", command, err)
	}
	return nil
}
