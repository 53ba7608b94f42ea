package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"gab/internal/testsrv"
)

// runOnTerminal runs gab with stderr on a pseudo-terminal and returns what
// the terminal received (the line discipline turns \n into \r\n).
func runOnTerminal(t *testing.T, argv []string) (stdout, terminal string, exit int) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(ptmx) // ends with EIO once the terminal side is closed
		got <- b
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	exit = runWith(ctx, argv, &out, tty, runHooks{})
	tty.Close()
	return out.String(), strings.ReplaceAll(string(<-got), "\r\n", "\n"), exit
}

var statusText = regexp.MustCompile(`\r\x1b\[K *\d+\.\ds [0-9,]+ of 400 done \| [0-9,]+ req/s \| 0 failed \| p99 (≤ \d+\.\d{3} ms|-)`)

// TestStatusLineOnTerminal: on a terminal the line is redrawn during the run,
// ab's progress lines still start at the beginning of a line, and the last
// drawing is erased before "Finished".
func TestStatusLineOnTerminal(t *testing.T) {
	srv, err := testsrv.NewNginx()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// 400 requests at 800 per second: half a second or more.
	stdout, term, exit := runOnTerminal(t, []string{"ab", "-n", "400", "-c", "2", "--rate", "800", srv.URL() + "/"})
	if exit != 0 {
		t.Fatalf("exit %d: %s", exit, term)
	}
	draws := statusText.FindAllStringIndex(term, -1)
	if len(draws) < 2 {
		t.Fatalf("%d drawings of the status line, want a few:\n%q", len(draws), term)
	}
	// At most 10 a second: each drawing's elapsed time (0.1 s precision)
	// is later than the one before.
	prev := -1.0
	for _, d := range draws {
		var secs float64
		fmt.Sscanf(strings.TrimLeft(term[d[0]+4:d[1]], " "), "%fs", &secs)
		if secs <= prev {
			t.Errorf("drawn at %.1fs after %.1fs: more than 10 a second\n%q", secs, prev, term)
		}
		prev = secs
	}
	if !strings.Contains(draws0(term, draws), "p99 ≤ ") {
		t.Errorf("the last drawing has no p99: %q", draws0(term, draws))
	}
	for _, n := range []string{"100", "200", "300", "400"} {
		line := "Completed " + n + " requests\n"
		i := strings.Index(term, line)
		if i < 0 {
			t.Fatalf("no %q in %q", line, term)
		}
		if before := term[:i]; !strings.HasSuffix(before, "\n") && !strings.HasSuffix(before, "\r\x1b[K") {
			t.Errorf("%q does not start a line: %q", line, before[max(0, len(before)-40):])
		}
	}
	last := draws[len(draws)-1]
	rest := term[last[1]:]
	if i := strings.Index(rest, "Finished 400 requests"); i < 0 || !strings.Contains(rest[:i], "\r\x1b[K") {
		t.Errorf("the status line is not erased before the end of the run: %q", rest)
	}
	if !strings.Contains(stdout, "Complete requests:      400") || strings.Contains(stdout, "\x1b") {
		t.Errorf("stdout:\n%q", stdout)
	}
}

func draws0(term string, draws [][]int) string {
	d := draws[len(draws)-1]
	return term[d[0]:d[1]]
}

// TestStatusLineAbsentWithoutTerminal: with stderr not a terminal, ab's
// progress lines are all there is, byte for byte; --progress=never on a
// terminal likewise; --progress=always draws without a terminal.
func TestStatusLineAbsentWithoutTerminal(t *testing.T) {
	srv, err := testsrv.NewNginx()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	want := "Completed 100 requests\nCompleted 200 requests\nCompleted 300 requests\nCompleted 400 requests\nFinished 400 requests\n"
	got := runInProcess([]string{"ab", "-n", "400", "-c", "2", "--rate", "800", srv.URL() + "/"}, runHooks{})
	if got.Exit != 0 || got.Stderr != want {
		t.Errorf("no terminal: exit %d, stderr %q; want %q", got.Exit, got.Stderr, want)
	}
	_, term, exit := runOnTerminal(t, []string{"ab", "-n", "400", "-c", "2", "--rate", "800", "--progress=never", srv.URL() + "/"})
	if exit != 0 || term != want {
		t.Errorf("--progress=never: exit %d, terminal %q; want %q", exit, term, want)
	}
	got = runInProcess([]string{"ab", "-n", "400", "-c", "2", "--rate", "800", "--progress=always", srv.URL() + "/"}, runHooks{})
	if !statusText.MatchString(got.Stderr) {
		t.Errorf("--progress=always: no status line in %q", got.Stderr)
	}
	// -q turns it off with ab's own progress lines.
	_, term, _ = runOnTerminal(t, []string{"ab", "-q", "-n", "400", "-c", "2", "--rate", "800", srv.URL() + "/"})
	if term != "" {
		t.Errorf("-q: terminal got %q", term)
	}
}
