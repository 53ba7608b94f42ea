package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
)

// FatalError ends a run the way ab's err()/apr_err() end it: Message goes to
// stderr exactly as ab prints it, then "Total of N requests completed" goes to
// stdout when N > 0, and the process exits with Exit.
type FatalError struct {
	Message string // complete stderr text, trailing newline included
	Exit    int
	Err     error // the underlying cause, if any: what Unwrap gives errors.Is and errors.As
}

func (e *FatalError) Error() string { return strings.TrimSpace(e.Message) }
func (e *FatalError) Unwrap() error { return e.Err }

// aprError builds ab's "<op>: <text> (<code>)" message; the exit status is code & 255.
func aprError(op string, code int, text string, cause error) *FatalError {
	return &FatalError{Message: fmt.Sprintf("%s: %s (%d)\n", op, text, code), Exit: code & 255, Err: cause}
}

// aprTimeout is APR's status for an expired poll (ab's -s).
const aprTimeout = 70007

func timeoutError() *FatalError {
	return aprError("apr_pollset_poll", aprTimeout, "The timeout specified has expired", nil)
}

// errnoOf digs the errno out of a network error; 0 if there is none.
func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		if errors.As(se.Err, &errno) {
			return errno
		}
	}
	return 0
}

// glibcText holds glibc's strerror wording for the errors a run can meet; Go's
// own texts are lower-case and sometimes worded differently.
var glibcText = map[syscall.Errno]string{
	syscall.EPERM:         "Operation not permitted",
	syscall.ENOENT:        "No such file or directory",
	syscall.EINTR:         "Interrupted system call",
	syscall.EBADF:         "Bad file descriptor",
	syscall.EAGAIN:        "Resource temporarily unavailable",
	syscall.ENOMEM:        "Cannot allocate memory",
	syscall.EACCES:        "Permission denied",
	syscall.EINVAL:        "Invalid argument",
	syscall.ENFILE:        "Too many open files in system",
	syscall.EMFILE:        "Too many open files",
	syscall.ENOSPC:        "No space left on device",
	syscall.EPIPE:         "Broken pipe",
	syscall.EADDRINUSE:    "Address already in use",
	syscall.EADDRNOTAVAIL: "Cannot assign requested address",
	syscall.ENETDOWN:      "Network is down",
	syscall.ENETUNREACH:   "Network is unreachable",
	syscall.ECONNABORTED:  "Software caused connection abort",
	syscall.ECONNRESET:    "Connection reset by peer",
	syscall.ENOBUFS:       "No buffer space available",
	syscall.ETIMEDOUT:     "Connection timed out",
	syscall.ECONNREFUSED:  "Connection refused",
	syscall.EHOSTDOWN:     "Host is down",
	syscall.EHOSTUNREACH:  "No route to host",
	syscall.EAFNOSUPPORT:  "Address family not supported by protocol",
}

// ErrnoText is glibc's strerror text for errno.
func ErrnoText(errno syscall.Errno) string {
	if t, ok := glibcText[errno]; ok {
		return t
	}
	t := errno.Error()
	if t == "" {
		return fmt.Sprintf("Unknown error %d", int(errno))
	}
	return strings.ToUpper(t[:1]) + t[1:]
}

// sysError turns a socket error into ab's "<op>: <strerror> (<errno>)" form.
func sysError(op string, err error) *FatalError {
	if errno := errnoOf(err); errno != 0 {
		return aprError(op, int(errno), ErrnoText(errno), err)
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return aprError(op, int(syscall.ETIMEDOUT), ErrnoText(syscall.ETIMEDOUT), err)
	}
	// No errno (e.g. a TLS alert): report it as EIO-like with Go's text.
	return &FatalError{Message: fmt.Sprintf("%s: %v\n", op, err), Exit: 1, Err: err}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// resolveError is ab's apr_sockaddr_info_get() failure: 670000 + |EAI code|.
func resolveError(host string, err error) *FatalError {
	code, text := 670002, "Name or service not known" // EAI_NONAME
	var de *net.DNSError
	if errors.As(err, &de) && de.IsTemporary && !de.IsNotFound {
		code, text = 670003, "Temporary failure in name resolution" // EAI_AGAIN
	}
	return aprError("apr_sockaddr_info_get() for "+host, code, text, err)
}
