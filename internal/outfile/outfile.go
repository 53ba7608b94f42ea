// Package outfile is how gab writes the files it makes beyond ab's (charts,
// HTML reports, JSON documents, sweep tables): checked before the run, written
// through a buffer, and named in every error.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// CheckWritable creates a temporary file beside name and removes it; name
// itself must not be a directory.
func CheckWritable(name string) error {
	if fi, err := os.Stat(name); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: is a directory", name)
	}
	f, err := os.CreateTemp(filepath.Dir(name), ".gab-check-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write there: %w", name, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// WriteAtomic writes name through a temporary file in the same directory,
// synced and renamed into place only when complete, so that a reader (gab
// merge) never sees a half-written file: a process killed mid-write leaves no
// file at name.
func WriteAtomic(name string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
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
		err = os.Chmod(tmp, 0o644) // CreateTemp's 0600 would differ from os.Create's files
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
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
