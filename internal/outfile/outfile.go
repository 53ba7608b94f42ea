// Package outfile is how gab writes the files it makes beyond ab's (charts,
// HTML reports): checked before the run, written whole or not at all.
package outfile

import (
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
// renamed into place only when complete.
func WriteAtomic(name string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
