package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
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
}

// ServerCPUFigures are the measurement and the figures printed and put in
// the JSON document.
type ServerCPUFigures struct {
	ServerCPU
	UsPerRequest     float64 // server CPU per complete request, µs (0 with none complete)
	PercentOfOneCore float64 // server CPU over the time taken
	ClientPercent    float64 // gab's CPU over the time taken (0 when unknown)
}

// serverCPUFigures relates the CPU times to the run's time taken and requests.
func serverCPUFigures(s *Summary, c *ServerCPU) *ServerCPUFigures {
	f := &ServerCPUFigures{ServerCPU: *c}
	if s.Complete > 0 {
		f.UsPerRequest = float64(c.CPU.Microseconds()) / float64(s.Complete)
	}
	if s.Seconds > 0 {
		f.PercentOfOneCore = c.CPU.Seconds() / s.Seconds * 100
		if c.Client.Known {
			f.ClientPercent = (c.Client.User + c.Client.Sys).Seconds() / s.Seconds * 100
		}
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

// WriteServerCPU prints the server CPU lines after ab's report (--server-pid);
// nothing without the option.
func WriteServerCPU(w io.Writer, s *Summary) error {
	f := s.ServerCPU
	if f == nil {
		return nil
	}
	c := &f.ServerCPU
	of := ""
	if c.Label != "" {
		of = " of " + c.Label
	}
	_, err := fmt.Fprintf(w, "\nServer CPU%s (PID %s, with threads and children; %d ms resolution):\n"+
		"  CPU time:             %.0f [ms]\n"+
		"  Per request:          %.1f [us] (mean, per complete request)\n"+
		"  Server CPU:           %.1f [%% of one core]\n",
		of, pidList(c.PIDs), c.Resolution.Milliseconds(), float64(c.CPU.Microseconds())/1000, f.UsPerRequest, f.PercentOfOneCore)
	if err == nil && c.Client.Known {
		_, err = fmt.Fprintf(w, "  Client CPU (gab):     %.1f [%% of one core]\n", f.ClientPercent)
	}
	return err
}

// JSONServerCPU is the --server-pid section of the JSON document.
type JSONServerCPU struct {
	Label            string   `json:"label,omitempty"`
	PIDs             []int    `json:"pids"`
	CPUMs            float64  `json:"cpu_ms"`
	ResolutionMs     float64  `json:"resolution_ms"`
	UsPerRequest     float64  `json:"us_per_request"`
	PercentOfOneCore float64  `json:"percent_of_one_core"`
	ClientPercent    *float64 `json:"client_percent_of_one_core,omitempty"`
}

func jsonServerCPU(f *ServerCPUFigures) *JSONServerCPU {
	c := &f.ServerCPU
	j := &JSONServerCPU{Label: c.Label, PIDs: c.PIDs, CPUMs: float64(c.CPU.Microseconds()) / 1000,
		ResolutionMs: float64(c.Resolution.Microseconds()) / 1000,
		UsPerRequest: f.UsPerRequest, PercentOfOneCore: f.PercentOfOneCore}
	if c.Client.Known {
		j.ClientPercent = &f.ClientPercent
	}
	return j
}
