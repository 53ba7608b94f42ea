package calibrate

import (
	"bufio"
	"fmt"
	"io"

	"gab/report"
)

// WriteText prints the calibration and the rule it gives; written says it
// was written to file.
func WriteText(w io.Writer, c *Calibration, file string, written bool) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "gab calibrate: %d cores, gab may use %d; load average %.2f before, %.2f after\n", c.Cores, c.GOMAXPROCS, c.LoadBefore, c.LoadAfter)
	if c.OthersCores >= 0 {
		fmt.Fprintf(bw, "Other processes used %.2f of the %d cores (%.0f %%) during the calibration\n", c.OthersCores, c.Cores, 100*c.OthersCores/float64(max(c.Cores, 1)))
	} else {
		fmt.Fprintf(bw, "Other processes' CPU during the calibration: unknown (no /proc/stat)\n")
	}
	if why := c.BusyReason(); why != "" {
		fmt.Fprintf(bw, "The machine was busy: %s. gab waited for a CPU, so the figures below are lower than this machine's and so is the ceiling later runs' client-bound verdicts would use.\n", why)
	}
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "Clock resolution:     %.0f ns (the monotonic clock's smallest step)\n", c.ClockNs)
	fmt.Fprintf(bw, "Loopback round trip:  %.1f µs (median of 2000 1-byte TCP round trips to another process)\n", c.LoopbackRTTUs)
	if c.GabLatencyUs > c.LoopbackRTTUs {
		fmt.Fprintf(bw, "Latency gab adds:     %.1f µs (gab -k -c 1's median %.1f µs against the minimal responder, less the round trip)\n\n", c.AddedUs, c.GabLatencyUs)
	} else {
		fmt.Fprintf(bw, "Latency gab adds:     none measurable (gab -k -c 1's median %.1f µs against the minimal responder is within the round trip)\n\n", c.GabLatencyUs)
	}
	writeModes(bw, c)
	if written {
		fmt.Fprintf(bw, "\nWritten to %s: later runs' client-bound verdicts compare their rate with it.\n", file)
	} else {
		fmt.Fprintf(bw, "\nNot written to %s: the machine was busy (gab calibrate --force writes it anyway).\n", file)
	}
	return bw.Flush()
}

// writeModes prints the table of the modes, the rules their ceilings give
// and the modes' errors.
func writeModes(bw *bufio.Writer, c *Calibration) {
	fmt.Fprintf(bw, "%-42s %18s %18s\n", "Requests per second per core of gab's CPU", "in-process target", "minimal responder")
	for _, m := range modes {
		fmt.Fprintf(bw, "  %-40s", m.title)
		for _, target := range []string{"in-process", "responder"} {
			cell := "-"
			for _, cm := range c.Modes {
				if cm.Mode == m.key && cm.Target == target {
					if cm.Error != "" {
						cell = "error"
					} else {
						cell = fmt.Sprintf("%.0f (%.0f/s)", cm.RPSPerCore, cm.RPS)
					}
				}
			}
			fmt.Fprintf(bw, " %18s", cell)
		}
		fmt.Fprintln(bw)
	}
	fmt.Fprintf(bw, "  (in-process: per core of gab's whole process, target included; responder: gab's own CPU; in brackets: req/s)\n\n")
	for _, m := range modes {
		if v := c.Ceiling[m.key]; v > 0 {
			fmt.Fprintf(bw, "Rule: %s above %.0f req/s per core gab may use (%.0f %% of %.0f) the results here are the client's.\n",
				m.title, report.ClientCPUBound*v, 100*report.ClientCPUBound, v)
		}
	}
	for _, cm := range c.Modes {
		if cm.Error != "" {
			fmt.Fprintf(bw, "%s against the %s: %s\n", cm.Mode, cm.Target, cm.Error)
		}
	}
}
