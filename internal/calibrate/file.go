// Package calibrate is gab calibrate: it measures what gab can drive on this
// machine and what it adds (requests per second per core of gab's CPU for
// HTTP/1 with and without keep-alive, HTTPS and h2, against gab's own
// in-process target and against a minimal loopback responder in a process of
// its own; the latency gab adds over a loopback round trip; the clock's
// resolution), writes them to the calibration file, and reads that file
// beside later runs, whose client-bound verdict compares their rate with this
// machine's ceiling (report.ClientLoad.Ceiling).
package calibrate

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"gab/client"
	"gab/internal/outfile"
	"gab/report"
)

// Schema names the calibration file's format.
const Schema = "gab-calibration"

// Calibration is the calibration file.
type Calibration struct {
	Schema        string  `json:"schema"`
	SchemaVersion int     `json:"schema_version"`
	Time          string  `json:"time"`
	GabVersion    string  `json:"gab_version"`
	Cores         int     `json:"cores"`
	GOMAXPROCS    int     `json:"gomaxprocs"`
	LoadBefore    float64 `json:"load_average_before"`
	LoadAfter     float64 `json:"load_average_after"`
	// OthersCores is the CPU that processes other than gab and its
	// responder used during the calibration, in cores (-1: unknown).
	OthersCores float64 `json:"others_cores"`
	// Busy says the machine was busy (BusyReason): the ceilings are lower
	// than a quiet machine's; only --force writes such a file.
	Busy          bool    `json:"busy,omitempty"`
	ClockNs       float64 `json:"clock_resolution_ns"`
	LoopbackRTTUs float64 `json:"loopback_rtt_us"`
	GabLatencyUs  float64 `json:"gab_latency_us"`
	AddedUs       float64 `json:"added_latency_us"`
	Modes         []Mode  `json:"modes"`
	// Ceiling is req/s per core of gab's CPU by mode (modes' keys): the
	// minimal responder's figure where measured, else the in-process
	// target's.
	Ceiling map[string]float64 `json:"ceiling_per_core"`
}

// Mode is one measurement.
type Mode struct {
	Mode       string  `json:"mode"`
	Target     string  `json:"target"` // "in-process" or "responder"
	RPS        float64 `json:"rps"`
	CPUCores   float64 `json:"cpu_cores"` // CPU over the run's time: gab's (the whole process's in-process)
	RPSPerCore float64 `json:"rps_per_core"`
	Error      string  `json:"error,omitempty"`
}

// The modes: key, title, the options of the run.
var modes = []struct {
	key, title string
	tls        bool
	args       []string
}{
	{"h1_keepalive", "HTTP/1 keep-alive (-k -c 8)", false, []string{"-k", "-c", "8"}},
	{"h1_close", "HTTP/1, a connection per request (-c 8)", false, []string{"-c", "8"}},
	{"https_keepalive", "HTTPS keep-alive (-k -c 8)", true, []string{"-k", "-c", "8"}},
	{"h2", "h2 over TLS (--http2 -c 2 --streams 8)", true, []string{"--http2", "-c", "2", "--streams", "8"}},
}

// Key is the calibration's mode of a run's configuration ("" when none
// fits).
func Key(cfg *client.Config) string {
	h1 := cfg.Protocol == client.HTTP10 || cfg.Protocol == client.HTTP11
	switch {
	case h1 && !cfg.Target.TLS && cfg.KeepAlive:
		return "h1_keepalive"
	case h1 && !cfg.Target.TLS:
		return "h1_close"
	case h1 && cfg.KeepAlive:
		return "https_keepalive"
	case cfg.Protocol == client.HTTP2 && cfg.Target.TLS:
		return "h2"
	}
	return ""
}

// File is where gab calibrate writes and runs read the calibration:
// $XDG_CACHE_HOME/gab/calibration.json (os.UserCacheDir).
func File() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "gab", "calibration.json"), nil
}

// FileText is File's name for a help text.
func FileText() string {
	if name, err := File(); err == nil {
		return name
	}
	return "$XDG_CACHE_HOME/gab/calibration.json"
}

// WriteFile writes c to the file name (outfile.WriteAtomic).
func WriteFile(name string, c *Calibration) error {
	b, _ := json.MarshalIndent(c, "", "  ")
	return outfile.WriteAtomic(name, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err })
}

// MaxFile bounds what a run reads of the calibration file.
const MaxFile = 1 << 16

// wait is how long after its start a run's read of the calibration file may
// still be waited for when the run's figures are summarized; a read not done
// by then (a slow or hung file system) is left and the run goes without the
// calibration.
const wait = time.Second

// Read is a read of the calibration file under way beside a run (StartRead
// starts it): a run never waits on the file.
type Read struct {
	started time.Time
	done    chan struct{}
	c       *Calibration // nil: no usable file
}

// reads are the reads under way, by file name: a run whose file is still
// being read by an earlier one (gab sweep's, on a hung file system) shares
// that read rather than starting another.
var reads = struct {
	sync.Mutex
	pending map[string]*Read
}{pending: map[string]*Read{}}

// StartRead starts reading the calibration file (File) in the background
// (nil: no cache directory).
func StartRead() *Read {
	name, err := File()
	if err != nil {
		return nil
	}
	return startRead(name)
}

func startRead(name string) *Read {
	reads.Lock()
	defer reads.Unlock()
	if cr := reads.pending[name]; cr != nil {
		return cr
	}
	cr := &Read{started: time.Now(), done: make(chan struct{})}
	reads.pending[name] = cr
	go func() {
		cr.c = readFile(name)
		reads.Lock()
		delete(reads.pending, name)
		reads.Unlock()
		close(cr.done)
	}()
	return cr
}

// readFile is ReadFile (tests replace it with a read that hangs, as on a
// hung file system).
var readFile = ReadFile

// ReadFile reads the calibration file name: nil unless it is a regular file
// of at most MaxFile bytes holding a calibration. It opens the file without
// blocking (a FIFO's open waits for a writer otherwise) and checks what it
// opened, not what the name was before.
func ReadFile(name string) *Calibration {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > MaxFile {
		return nil
	}
	var c Calibration
	if json.NewDecoder(io.LimitReader(f, MaxFile)).Decode(&c) != nil || c.Schema != Schema {
		return nil
	}
	return &c
}

// Ceiling is this machine's calibrated req/s per core for the calibration
// mode key (0: no calibration file, nothing for that mode, or a read not
// done a second after it started).
func (cr *Read) Ceiling(key string) float64 {
	if cr == nil || key == "" {
		return 0
	}
	select {
	case <-cr.done:
	default:
		t := time.NewTimer(time.Until(cr.started.Add(wait)))
		defer t.Stop()
		select {
		case <-cr.done:
		case <-t.C:
			return 0
		}
	}
	if cr.c == nil {
		return 0
	}
	v := cr.c.Ceiling[key]
	if !(v > 0 && v < 1e12) {
		return 0
	}
	return v
}

// BusyReason says why the machine was too busy for a calibration to be
// trusted ("" when it was not): other processes used report.BusyOthersShare
// or more of its cores during the calibration, or the load average before
// it reached the cores. Waiting for a CPU lowers the req/s per core
// measured, and so the ceiling later runs' client-bound verdicts use.
func (c *Calibration) BusyReason() string {
	var why []string
	if c.Cores > 0 && c.OthersCores >= report.BusyOthersShare*float64(c.Cores) {
		why = append(why, fmt.Sprintf("other processes used %.2f of the %d cores (%.0f %%; %.0f %% or more is a busy machine)",
			c.OthersCores, c.Cores, 100*c.OthersCores/float64(c.Cores), 100*report.BusyOthersShare))
	}
	if c.Cores > 0 && c.LoadBefore >= float64(c.Cores) {
		why = append(why, fmt.Sprintf("the load average was %.2f before it began, for %d cores", c.LoadBefore, c.Cores))
	}
	return strings.Join(why, "; ")
}
