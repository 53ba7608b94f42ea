// Package outfile is how gab writes the files it makes beyond ab's (charts,
// HTML reports, JSON documents, sweep tables): checked before the run, written
// through a buffer, and named in every error.
//
// A regular file (or a new one) is replaced atomically; a name that is not a
// regular file (a FIFO, a device, /dev/stdout) is written through, and a
// symbolic link is followed to the file it names, so that the link stays.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// maxLinks bounds the symbolic links followed from a name (Linux's own limit).
const maxLinks = 40

// dest is where the bytes for a name go.
type dest struct {
	path string      // the file written: the name, or the end of its symbolic links
	flag int         // open flags to write path in place; 0: a temporary file renamed onto path
	perm fs.FileMode // the permissions of the file written (an existing file's own)
	fd   int         // this process's descriptor that the name stands for, with isFD
	isFD bool
}

// throughFlags open a FIFO, a device or another process's descriptor in
// place: never created, never truncated.
const throughFlags = os.O_WRONLY | os.O_APPEND

// locate finds where name's bytes go without creating or opening anything:
// it follows the symbolic links one by one to the file that a rename is to
// replace, and stops at anything that is not to be replaced.
func locate(name string) (dest, error) {
	p := name
	for range maxLinks {
		dir := realDir(p)
		if fd, ok := ownDescriptor(dir, filepath.Base(p)); ok {
			// /dev/stdout, /dev/fd/N: the descriptor itself, so that what
			// gab writes there and on the descriptor keeps its order.
			return dest{path: name, fd: fd, isFD: true}, nil
		}
		if strings.HasPrefix(dir, "/proc/") {
			// Another process's descriptor, or another of procfs's
			// links: not a file that can be replaced.
			return dest{path: p, flag: throughFlags}, nil
		}
		lfi, err := os.Lstat(p)
		perm := fs.FileMode(0o644)
		if err == nil {
			perm = lfi.Mode().Perm()
		}
		switch {
		case errors.Is(err, fs.ErrNotExist): // a new file
		case err != nil:
			return dest{}, err
		case lfi.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return dest{}, err
			}
			if !filepath.IsAbs(link) {
				// Relative to the link's directory, as the kernel reads it
				// (no lexical cleaning of "..").
				if i := strings.LastIndexByte(p, os.PathSeparator); i >= 0 {
					link = p[:i+1] + link
				}
			}
			p = link
			continue
		case lfi.IsDir():
			return dest{}, errors.New("is a directory")
		case lfi.Mode()&fs.ModeSocket != 0:
			return dest{}, errors.New("is a socket")
		case !lfi.Mode().IsRegular(): // a FIFO, a device
			return dest{path: p, flag: throughFlags}, nil
		}
		if dir == "/dev" { // no temporary file among the devices
			return dest{path: p, flag: os.O_WRONLY | os.O_CREATE | os.O_TRUNC, perm: perm}, nil
		}
		return dest{path: p, perm: perm}, nil
	}
	return dest{}, syscall.ELOOP
}

// ownDescriptor reports whether dir/base names one of this process's file
// descriptors, and which.
func ownDescriptor(dir, base string) (int, bool) {
	if dir != "/dev/fd" && dir != "/proc/"+strconv.Itoa(os.Getpid())+"/fd" {
		return 0, false
	}
	fd, err := strconv.Atoi(base)
	return fd, err == nil && fd >= 0
}

// realDir is the absolute path of p's directory with its symbolic links
// resolved ("" if it cannot be resolved).
func realDir(p string) string {
	d, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return ""
	}
	d, err = filepath.Abs(d)
	if err != nil {
		return ""
	}
	return d
}

// CheckWritable checks that name can be written as WriteAtomic writes it,
// leaving nothing behind: for a regular or new file, by creating and removing
// a temporary file beside it (beside the file that its symbolic links name);
// for anything else, by its permissions alone, since opening a FIFO would
// block or wake its reader.
func CheckWritable(name string) error {
	d, err := locate(name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if d.isFD {
		if err := descriptorWritable(d.fd); err != nil {
			return fmt.Errorf("%s: cannot write there: %w", name, err)
		}
		return nil
	}
	if d.flag != 0 {
		err := access(d.path)
		if errors.Is(err, fs.ErrNotExist) && d.flag&os.O_CREATE != 0 {
			err = access(filepath.Dir(d.path))
		}
		if err != nil {
			return fmt.Errorf("%s: cannot write there: %w", name, err)
		}
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(d.path), ".gab-check-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write there: %w", name, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// WriteAtomic writes name. A regular file (or a new one) is written through a
// temporary file in its directory, synced and renamed into place only when
// complete, so that a reader (gab merge) never sees a half-written file: a
// process killed mid-write leaves the file as it was. A symbolic link is
// followed to the file it names (the rename happens beside that file, and the
// link stays). Anything else (a FIFO, a device, /dev/stdout) is written
// through, never replaced.
func WriteAtomic(name string, write func(io.Writer) error) error {
	d, err := locate(name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if d.isFD || d.flag != 0 {
		var f *os.File
		if d.isFD {
			f, err = dup(d.fd, name)
		} else {
			f, err = os.OpenFile(d.path, d.flag, d.perm)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, errors.Unwrap(err))
		}
		return WriteClose(f, write)
	}
	f, err := os.CreateTemp(filepath.Dir(d.path), "."+filepath.Base(d.path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	tmp := f.Name()
	err = buffered(f, write)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, d.perm) // CreateTemp's 0600 would differ from os.Create's files
	}
	if err == nil {
		err = os.Rename(tmp, d.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Create opens name as ab opens its -e and -g files (C's fopen "wb"):
// write-only, created or truncated, written through whatever is at the path.
// A FIFO opened this way waits for its reader, as ab's does, and a file that
// may be written but not read is written.
func Create(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
}

// WriteClose writes an open file through a buffer and closes it; an error
// names the file.
func WriteClose(f *os.File, write func(io.Writer) error) error {
	err := buffered(f, write)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	return nil
}

func buffered(f *os.File, write func(io.Writer) error) error {
	bw := bufio.NewWriterSize(f, 64<<10)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	return err
}
