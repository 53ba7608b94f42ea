package targets

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// This file reads the body file of ab's -p and -u.

// MaxPostFile is the largest -p/-u file gab loads into memory; ab's malloc
// would fail somewhere around there too.
const MaxPostFile = 1 << 32

// ReadPostFile reads a -p/-u file as ab does (open, stat, read that many
// bytes); an error's text is ab's complete message.
func ReadPostFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("ab: Could not open POST data file (%s): %s\n", name, Strerror(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ab: Could not stat POST data file (%s): %s\n", name, Strerror(err))
	}
	if fi.Size() > MaxPostFile {
		return nil, errors.New("ab: Could not allocate POST data buffer\n")
	}
	body := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, body); err != nil {
		return nil, fmt.Errorf("ab: Could not read POST data file: %s\n", Strerror(err))
	}
	return body, nil
}
