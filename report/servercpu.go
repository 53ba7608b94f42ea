package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"gab/internal/hoststat"
)

// ServerCPU is the CPU time of the --server-pid processes (their threads and
// children) over a run, beside gab's own.
type ServerCPU struct {
	// Label names the server (--server-pid LABEL=PID; "" without a label).
	// The command line allows letters, digits, '.', '_' and '-' only.
	Label      string
	PIDs       []int
	CPU        time.Duration // user + system over the run
	Resolution time.Duration // of CPU (10 ms: /proc's clock ticks)
	Client     CPUUsage      // gab's own CPU over the run
	// Found says how gab found the server of a loopback URL without
	// --server-pid ("listening on 127.0.0.1:8080"; "": --server-pid named
	// it). Such a server's CPU is in the record and --extended's figures,
	// not in the text after ab's report, which stays ab's.
	Found string
	// CPUs are the CPUs the server's processes may run on (their affinity,
	// together; nil: unknown).
	CPUs []int
}

// serverCPUFigures are the --server-pid section: the measurement and the
// figures printed.
type serverCPUFigures struct {
	Label            string  `json:"label,omitempty"`
	PIDs             []int   `json:"pids"`
	Found            string  `json:"found,omitempty"` // how gab found it without --server-pid
	CPUs             string  `json:"cpus,omitempty"`  // the CPUs it may run on ("0-3")
	CPUMs            float64 `json:"cpu_ms"`
	ResolutionMs     float64 `json:"resolution_ms"`
	UsPerRequest     float64 `json:"us_per_request"`      // server CPU per complete request (0 with none complete)
	PercentOfOneCore float64 `json:"percent_of_one_core"` // server CPU over the time taken
	// ClientPercent is gab's CPU over the time taken (absent when unknown).
	ClientPercent *float64 `json:"client_percent_of_one_core,omitempty"`
}

// serverCPUFigures relates the CPU times to the run's time taken and requests.
func serverCPUOf(c *ServerCPU, rp *abReport) *serverCPUFigures {
	f := &serverCPUFigures{Label: c.Label, PIDs: c.PIDs, Found: c.Found, CPUs: hoststat.FormatCPUList(c.CPUs), CPUMs: float64(c.CPU.Microseconds()) / 1000,
		ResolutionMs: float64(c.Resolution.Microseconds()) / 1000}
	if rp.CompleteRequests > 0 {
		f.UsPerRequest = float64(c.CPU.Microseconds()) / float64(rp.CompleteRequests)
	}
	var client float64
	if s := rp.TimeTakenS; s > 0 {
		f.PercentOfOneCore = c.CPU.Seconds() / s * 100
		if c.Client.Known {
			client = (c.Client.User + c.Client.Sys).Seconds() / s * 100
		}
	}
	if c.Client.Known {
		f.ClientPercent = &client
	}
	return f
}

func pidList(pids []int) string {
	parts := make([]string, len(pids))
	for i, p := range pids {
		parts[i] = strconv.Itoa(p)
	}
	return strings.Join(parts, ",")
}

// writeServerCPU prints the server CPU lines after ab's report (--server-pid);
// nothing without the option.
func writeServerCPU(w io.Writer, r *Run) error {
	f := r.ServerCPU
	if f == nil || f.Found != "" {
		return nil
	}
	of := ""
	if f.Label != "" {
		of = " of " + f.Label
	}
	_, err := fmt.Fprintf(w, "\nServer CPU%s (PID %s, with threads and children; %d ms resolution):\n"+
		"  CPU time:             %.0f [ms]\n"+
		"  Per request:          %.1f [us] (mean, per complete request)\n"+
		"  Server CPU:           %.1f [%% of one core]\n",
		of, pidList(f.PIDs), int64(f.ResolutionMs), f.CPUMs, f.UsPerRequest, f.PercentOfOneCore)
	if err == nil && f.ClientPercent != nil {
		_, err = fmt.Fprintf(w, "  Client CPU (gab):     %.1f [%% of one core]\n", *f.ClientPercent)
	}
	return err
}
