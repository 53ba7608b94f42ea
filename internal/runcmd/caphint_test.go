package runcmd

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"gab/client"
)

// capResult is a -t run that ended at ab's 50,000-request cap after 0.48 s.
func capResult() (*Options, *client.Result) {
	o := &Options{Argv0: "ab"}
	o.Config.TimeLimit, o.Config.Requests = 3*time.Second, TimeLimitRequests
	return o, &client.Result{Ending: client.EndCompleted, Complete: TimeLimitRequests, Elapsed: 480 * time.Millisecond}
}

// On a terminal, one stderr line says the cap ended the run and how to lift it.
func TestCapHintOnATerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	o, res := capResult()
	capHint(&SyncWriter{W: tty}, o, res)
	tty.Close()
	got, _ := io.ReadAll(ptmx) // ends with EIO once the terminal side is closed
	want := "gab: the run ended at ab's 50000-request cap of -t after 0.48 of 3 seconds; --no-cap lifts the cap"
	if !strings.Contains(string(got), want) {
		t.Errorf("terminal got %q, want %q", got, want)
	}
}

// Without a terminal (a pipe, a file, a buffer) nothing changes: ab's output only.
func TestCapHintNotWithoutATerminal(t *testing.T) {
	o, res := capResult()
	var b bytes.Buffer
	capHint(&SyncWriter{W: &b}, o, res)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	capHint(&SyncWriter{W: w}, o, res)
	w.Close()
	piped, _ := io.ReadAll(r)
	if b.Len() != 0 || len(piped) != 0 {
		t.Errorf("hint without a terminal: buffer %q, pipe %q", b.String(), piped)
	}
	// Nor on a terminal when the cap did not end the run.
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	for _, change := range []func(*Options, *client.Result){
		func(o *Options, r *client.Result) { r.Ending = client.EndTimeLimit },
		func(o *Options, r *client.Result) { o.NoCap = true },
		func(o *Options, r *client.Result) { o.Config.TimeLimit = 0 },
	} {
		o, res := capResult()
		change(o, res)
		capHint(&SyncWriter{W: tty}, o, res)
	}
	tty.Close()
	if got, _ := io.ReadAll(ptmx); len(got) != 0 {
		t.Errorf("hint where the cap did not end the run: %q", got)
	}
}
