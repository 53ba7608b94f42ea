package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"gab/client"
)

// capHint tells a user at a terminal that -t's run ended at ab's 50,000-request
// cap rather than at the time limit, and how to lift it. ab says nothing, and
// neither does gab when stderr is not a terminal (scripts see ab's output).
func capHint(stderr io.Writer, o *cliOptions, res *client.Result) {
	cfg := &o.Config
	if cfg.TimeLimit <= 0 || o.NoCap || cfg.Requests != timeLimitRequests ||
		res.Ending != client.EndCompleted || res.Complete != timeLimitRequests || !isTerminal(stderr) {
		return
	}
	fmt.Fprintf(stderr, "gab: the run ended at ab's %d-request cap of -t after %.2f of %g seconds; --no-cap lifts the cap\n",
		timeLimitRequests, res.Elapsed.Seconds(), cfg.TimeLimit.Seconds())
}

// isTerminal reports whether w is a terminal (through gab's stderr wrapper).
func isTerminal(w io.Writer) bool {
	if sw, ok := w.(*syncWriter); ok {
		w = sw.w
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
