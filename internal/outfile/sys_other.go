//go:build !unix

package outfile

import (
	"errors"
	"os"
)

// access has no permission check to make without unix's access(2): the
// write itself reports the error.
func access(string) error { return nil }

func dup(_ int, name string) (*os.File, error) {
	return nil, &os.PathError{Op: "dup", Path: name, Err: errors.ErrUnsupported}
}

func descriptorWritable(int) error { return nil }
