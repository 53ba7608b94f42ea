package testtool

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// FIFO is a named pipe that a test reads, with a second name outside its
// directory (a hard link in another temporary directory of the test), so
// that the test can end its read whatever the code under test did to Path.
type FIFO struct {
	Path string
	keep string
	got  chan string
}

// MakeFIFO makes the FIFO dir/name, without a reader until Start.
func MakeFIFO(t testing.TB, dir, name string) *FIFO {
	t.Helper()
	f := &FIFO{Path: filepath.Join(dir, name), keep: filepath.Join(t.TempDir(), "keep"), got: make(chan string, 1)}
	if err := syscall.Mkfifo(f.Path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(f.Path, f.keep); err != nil {
		t.Fatal(err)
	}
	return f
}

// Start reads the FIFO in the background, from the first writer's open to
// the last close.
func (f *FIFO) Start() {
	go func() {
		b, _ := os.ReadFile(f.keep)
		f.got <- string(b)
	}()
}

// Read returns what the reader got. It first opens the FIFO for writing
// without blocking, which ends a read still waiting for a first writer (the
// reader then gets nothing; ENXIO if it has already read to the end).
func (f *FIFO) Read() string {
	if w, err := os.OpenFile(f.keep, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
	return <-f.got
}
