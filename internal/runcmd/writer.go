package runcmd

import (
	"bufio"
	"fmt"
	"io"
	"sync"
)

// SyncWriter serialises the writes of a run and of the event sink, which
// writes from many goroutines. Stdout is buffered (buf); stderr is not.
// FlushFirst, if set, is flushed before each write, so that stdout text printed
// before a stderr line comes out first on a terminal, as with ab's
// line-buffered stdout.
type SyncWriter struct {
	mu         sync.Mutex
	W          io.Writer
	buf        *bufio.Writer // nil: unbuffered
	FlushFirst *SyncWriter
	reported   bool // a write error was reported already (bufio keeps returning it)
}

// ReportWriteError prints a stdout write error once, however many times
// bufio hands the same saved error back. It reports whether err was non-nil.
func (s *SyncWriter) ReportWriteError(errw io.Writer, err error) bool {
	if err == nil {
		return false
	}
	s.mu.Lock()
	first := !s.reported
	s.reported = true
	s.mu.Unlock()
	if first {
		fmt.Fprintf(errw, "gab: stdout: %v\n", err)
	}
	return true
}

// NewBufferedWriter is a SyncWriter that buffers its writes to w.
func NewBufferedWriter(w io.Writer) *SyncWriter {
	return &SyncWriter{W: w, buf: bufio.NewWriterSize(w, 64<<10)}
}

func (s *SyncWriter) Write(p []byte) (int, error) {
	if s.FlushFirst != nil {
		s.FlushFirst.Flush() // an error stays in the bufio.Writer and is reported at the end
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buf != nil {
		return s.buf.Write(p)
	}
	return s.W.Write(p)
}

// Flush writes out what is buffered; its error is the first write error seen.
func (s *SyncWriter) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buf == nil {
		return nil
	}
	return s.buf.Flush()
}
