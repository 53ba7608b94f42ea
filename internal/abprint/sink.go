// Package abprint is what ab prints: its banner and usage text, and during a
// run the engine's events as ab's lines (Sink: progress, errors, -v's dumps,
// the TLS handshake's) and gab's live status line (StatusLine, --progress).
package abprint

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"

	"gab/client"
	"gab/internal/printable"
	"gab/report"
)

// Sink renders the engine's events the way ab prints them during a run:
// progress and errors on stderr, -v dumps on stdout. Workers call it
// concurrently; every line is written with a single Write, so lines never mix.
type Sink struct {
	out, errw io.Writer
	verbosity int
	every     int // ab's heartbeat interval; 0: no progress lines

	mu      sync.Mutex
	printed int // the last "Completed" count printed

	now func() time.Time // for the TLS session's start time
}

var _ client.Events = (*Sink)(nil)

// NewSink is a sink writing -v's dumps to out and progress and errors to
// errw; every is ab's heartbeat interval (0: no progress lines).
func NewSink(out, errw io.Writer, verbosity, every int) *Sink {
	return &Sink{out: out, errw: errw, verbosity: verbosity, every: every, now: time.Now}
}

// Completed prints ab's progress lines. Workers may report counts out of
// order, so every multiple of the interval up to done is printed, in order, once.
func (s *Sink) Completed(done int) {
	if s.every <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for next := s.printed + s.every; next <= done; next += s.every {
		fmt.Fprintf(s.errw, "Completed %d requests\n", next)
		s.printed = next
	}
}

// HeaderReceived is ab's -v 2 dump of the head buffer after each read. ab
// prints it with %s, so it stops at a NUL byte. Unlike ab, control bytes other
// than tab, CR and LF are shown escaped (see appendTerminalSafe): the head is
// the server's text, and it must not drive the terminal it is dumped to.
func (s *Sink) HeaderReceived(buf []byte) {
	if s.verbosity < 2 {
		return
	}
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	line := make([]byte, 0, len(buf)+24)
	line = append(line, "LOG: header received:\n"...)
	line = appendTerminalSafe(line, buf)
	line = append(line, '\n')
	s.out.Write(line)
}

// appendTerminalSafe appends b as printable.String writes text, \xNN for
// every byte a terminal could take for a command, but keeps tab, CR and LF:
// the head's lines stay lines.
func appendTerminalSafe(dst, b []byte) []byte {
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\t\r\n")
		if i < 0 {
			return append(dst, printable.String(string(b))...)
		}
		dst = append(append(dst, printable.String(string(b[:i]))...), b[i])
		b = b[i+1:]
	}
	return dst
}

// Status prints ab's per-response status lines (-v 2 for non-2xx, -v 3 for 2xx).
func (s *Sink) Status(code int) {
	switch {
	case s.verbosity < 2:
	case code < 200 || code > 299:
		fmt.Fprintf(s.out, "WARNING: Response code not 2xx (%03d)\n", code)
	case s.verbosity >= 3:
		fmt.Fprintf(s.out, "LOG: Response code = %d\n", code)
	}
}

func (s *Sink) SendFailed()   { io.WriteString(s.out, "Send request failed!\n") }
func (s *Sink) SendTimedOut() { io.WriteString(s.out, "Send request timed out!\n") }

// ReceiveError prints a receive error that -r made non-fatal (-v ≥ 1).
func (s *Sink) ReceiveError(err *client.FatalError) {
	if err != nil {
		io.WriteString(s.errw, err.Message)
	}
}

// TLSHandshakeFailed is ab's line for every failed handshake; the OpenSSL
// error-queue line that follows in ab is replaced by Go's error text.
func (s *Sink) TLSHandshakeFailed(err error) {
	msg := "SSL handshake failed (1).\n"
	if err != nil {
		msg += report.OneLine(err.Error()) + "\n"
	}
	io.WriteString(s.errw, msg)
}

// Notice is a remark of gab's own (ab never prints these).
func (s *Sink) Notice(msg string) { io.WriteString(s.errw, "gab: "+report.OneLine(msg)+"\n") }
