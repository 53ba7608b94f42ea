package main

import (
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestCompareReadsFirstFileOnce gives gab compare a run document through a
// named pipe, which holds it only once: the comparison must come from that
// one reading.
func TestCompareReadsFirstFileOnce(t *testing.T) {
	dir := t.TempDir()
	b := writeJSONTo(t, dir, "b.json", syntheticDoc(1250, 1500, 0))
	raw, err := os.ReadFile(writeJSONTo(t, dir, "a.json", syntheticDoc(1000, 2000, 0)))
	if err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(dir, "a.pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	// The writer writes the document at its first opening, then opens and
	// closes again and again, writing nothing, until told to stop: a
	// second reading finds an empty document rather than waiting.
	var stop atomic.Bool
	wrote := make(chan error, 1)
	go func() {
		for i := 0; !stop.Load(); i++ {
			f, err := os.OpenFile(pipe, os.O_WRONLY, 0)
			if err != nil {
				wrote <- err
				return
			}
			if i == 0 {
				_, err = f.Write(raw)
			}
			f.Close()
			if err != nil {
				wrote <- err
				return
			}
			runtime.Gosched()
		}
		wrote <- nil
	}()
	status, stdout, stderr := runArgs(t, t.Context(), "gab", "compare", pipe, b)
	// Linux opens a FIFO for reading and writing without waiting: holding
	// it so releases the writer's last opening.
	stop.Store(true)
	hold, err := os.OpenFile(pipe, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Error(err)
	}
	hold.Close()
	if status != 0 {
		t.Fatalf("compare of a pipe: %d %s\n%s", status, stderr, stdout)
	}
}
