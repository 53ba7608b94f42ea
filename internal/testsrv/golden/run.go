package golden

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os/exec"
	"syscall"
	"time"

	"gab/internal/testsrv"
	"gab/internal/testtool"
)

// Servers is a fresh set of test servers standing in for the goldens' ports.
type Servers struct {
	Nginx *testsrv.Nginx
	Py    *testsrv.Py
	TLS   *testsrv.Nginx
	Ports Ports

	releaseRefused func() // frees Ports.Refused, held bound meanwhile
}

// StartServers starts Nginx, Py and the TLS Nginx and reserves a refused port
// (bound, not listening, until Close), all with 5-digit port numbers (so
// byte totals match the goldens).
func StartServers() (*Servers, error) {
	s := &Servers{}
	var err error
	for range 20 {
		s.Close()
		s = &Servers{}
		if s.Nginx, err = testsrv.NewNginx(); err != nil {
			return nil, err
		}
		if s.Py, err = testsrv.NewPy(); err != nil {
			s.Close()
			return nil, err
		}
		if s.TLS, err = testsrv.NewNginxTLS(); err != nil {
			s.Close()
			return nil, err
		}
		var refused int
		refused, s.releaseRefused, err = testtool.ReserveClosedPort()
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Ports = Ports{Nginx: s.Nginx.Port(), Py: s.Py.Port(), TLS: s.TLS.Port(), Refused: refused}
		if s.Ports.fiveDigits() {
			return s, nil
		}
	}
	s.Close()
	return nil, errors.New("no 5-digit loopback ports available")
}

func (p Ports) fiveDigits() bool {
	for _, n := range []int{p.Nginx, p.Py, p.TLS, p.Refused} {
		if n < 10000 || n > 65535 {
			return false
		}
	}
	return true
}

// Close stops every server.
func (s *Servers) Close() {
	if s == nil {
		return
	}
	if s.Nginx != nil {
		s.Nginx.Close()
	}
	if s.Py != nil {
		s.Py.Close()
	}
	if s.TLS != nil {
		s.TLS.Close()
	}
	if s.releaseRefused != nil {
		s.releaseRefused()
	}
}

// Result is what a run printed and its exit status.
type Result struct {
	Stdout, Stderr string
	Exit           int
}

// RunBinary runs the program at path with argv (argv[0] as given, so "ab"
// is what the program sees) in dir, killing it after limit. The result's
// Exit is -1 if the program was killed.
func RunBinary(ctx context.Context, path string, argv []string, dir string, limit time.Duration) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path)
	cmd.Args = argv
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.Exit = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Exit = -1
		}
	default:
		return res, err
	}
	return res, nil
}

// IPv6Loopback reports whether ::1 is usable here. Without it a connect to
// [::1] fails with another error than the goldens' "Connection refused".
func IPv6Loopback() bool {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		return false
	}
	ln.Close()
	return true
}
