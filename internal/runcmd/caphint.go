package runcmd

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"gab/client"
)

// CapHint tells a user at a terminal that -t's run ended at ab's 50,000-request
// cap rather than at the time limit, and how to lift it. ab says nothing, and
// neither does gab when stderr is not a terminal (scripts see ab's output).
func CapHint(stderr io.Writer, o *Options, res *client.Result) {
	cfg := &o.Config
	if cfg.TimeLimit <= 0 || o.NoCap || cfg.Requests != TimeLimitRequests ||
		res.Ending != client.EndCompleted || res.Complete != TimeLimitRequests || !IsTerminal(stderr) {
		return
	}
	fmt.Fprintf(stderr, "gab: the run ended at ab's %d-request cap of -t after %.2f of %g seconds; --no-cap lifts the cap\n",
		TimeLimitRequests, res.Elapsed.Seconds(), cfg.TimeLimit.Seconds())
}

// IsTerminal reports whether w is a terminal (through gab's stderr wrapper).
func IsTerminal(w io.Writer) bool {
	if sw, ok := w.(*SyncWriter); ok {
		w = sw.W
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
