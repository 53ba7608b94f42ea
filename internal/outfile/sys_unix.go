//go:build unix

package outfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// access reports whether the process may write name, by its permissions
// alone: nothing is opened.
func access(name string) error {
	return unix.Access(name, unix.W_OK)
}

// dup is a copy of descriptor fd (closed on exec) as a file called name.
func dup(fd int, name string) (*os.File, error) {
	nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: name, Err: err}
	}
	return os.NewFile(uintptr(nfd), name), nil
}

// descriptorWritable reports whether descriptor fd is open for writing.
func descriptorWritable(fd int) error {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err == nil && fl&unix.O_ACCMODE == unix.O_RDONLY {
		err = unix.EBADF
	}
	return err
}
