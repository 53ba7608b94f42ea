package abprint

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"gab/client"
)

// This file is the live status line (--progress): on a terminal, while a run
// goes on, one line on stderr redrawn at most 10 times a second with the
// elapsed time, the requests done of n (or the time left with -t), the
// current rate, the failures and the running p99. It is sampled from a timer
// (client.Runner.Live): the engine does nothing per request for it beyond
// counting its worker's own histogram bucket. Every other write to stderr
// (ab's "Completed N requests" lines) erases it first, and it is erased
// before the report. When stderr is not a terminal nothing is drawn, so ab's
// output stays byte for byte what it was.

// statusInterval is how often the line is redrawn.
const statusInterval = 100 * time.Millisecond

// StatusLine is stderr with the live line drawn under what is written to it.
type StatusLine struct {
	w     io.Writer
	width int // terminal columns: the line is cut to fit, so it never wraps
	// Prefix starts the line (gab sweep's run: "[3/8] nginx c=10 rep=1: ");
	// set before Start.
	Prefix string

	mu    sync.Mutex
	shown bool // the line is on the screen

	stopCh chan struct{}
	done   chan struct{}
}

// StatusOn decides whether the live line is drawn: --progress=always
// (progressBar) forces it, never turns it off, and auto draws it when
// stderr is a terminal (tty). It is drawn only for runs where ab prints
// progress (progress > 0: not -q, more than 150 requests), so that it never
// lands on the line ab's "(be patient)..." leaves open.
func StatusOn(progressBar string, progress int, tty bool) bool {
	switch {
	case progressBar == "never", progress <= 0:
		return false
	case progressBar == "always":
		return true
	}
	return tty
}

// TerminalWidth says whether w is a terminal, and its width (80 when
// unknown).
func TerminalWidth(w io.Writer) (tty bool, width int) {
	width = 80
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tty = true
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			width = cols
		}
	}
	return tty, width
}

func NewStatusLine(w io.Writer, width int) *StatusLine {
	return &StatusLine{w: w, width: width}
}

// Write erases the live line, then writes p.
func (s *StatusLine) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eraseLocked()
	return s.w.Write(p)
}

func (s *StatusLine) eraseLocked() {
	if s.shown {
		io.WriteString(s.w, "\r\x1b[K")
		s.shown = false
	}
}

// Start draws the line every statusInterval until Stop.
func (s *StatusLine) Start(rn *client.Runner, n int, timeLimit time.Duration) {
	s.stopCh, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		tick := time.NewTicker(statusInterval)
		defer tick.Stop()
		st := statusState{began: time.Now(), n: n, timeLimit: timeLimit}
		for {
			select {
			case <-s.stopCh:
				return
			case now := <-tick.C:
				text := s.Prefix + st.line(rn.Live(), now)
				s.mu.Lock()
				if r := []rune(text); len(r) > s.width-1 {
					text = string(r[:max(s.width-1, 0)])
				}
				io.WriteString(s.w, "\r\x1b[K"+text)
				s.shown = true
				s.mu.Unlock()
			}
		}
	}()
}

// Stop ends the redrawing and erases the line; Start may follow again.
func (s *StatusLine) Stop() {
	if s.stopCh == nil {
		return
	}
	close(s.stopCh)
	<-s.done
	s.stopCh = nil
	s.mu.Lock()
	s.eraseLocked()
	s.mu.Unlock()
}

// statusState computes the line's figures; the rate is over the last second.
type statusState struct {
	began     time.Time
	n         int
	timeLimit time.Duration
	window    []statusPoint // the last second's readings, oldest first
}

type statusPoint struct {
	at   time.Time
	done int64
}

func (st *statusState) line(ls client.LiveStats, now time.Time) string {
	st.window = append(st.window, statusPoint{now, ls.Done})
	for len(st.window) > 2 && now.Sub(st.window[1].at) >= time.Second {
		st.window = st.window[1:]
	}
	rate := 0.0
	if first := st.window[0]; now.After(first.at) {
		rate = float64(ls.Done-first.done) / now.Sub(first.at).Seconds()
	}
	elapsed := now.Sub(st.began)
	var b strings.Builder
	fmt.Fprintf(&b, "%5.1fs ", elapsed.Seconds())
	if st.timeLimit > 0 {
		left := max(st.timeLimit-elapsed, 0)
		fmt.Fprintf(&b, "(%.0fs left) %s done", left.Seconds(), thousands(ls.Done))
	} else {
		fmt.Fprintf(&b, "%s of %s done", thousands(ls.Done), thousands(int64(st.n)))
	}
	fmt.Fprintf(&b, " | %s req/s | %s failed | p99 ", thousands(int64(rate+0.5)), thousands(ls.Failed))
	if p99, ok := ls.Percentile(99); ok {
		fmt.Fprintf(&b, "≤ %s ms", strconv.FormatFloat(float64(p99)/1000, 'f', 3, 64))
	} else {
		b.WriteString("-")
	}
	return b.String()
}

// thousands formats n with thousands separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
