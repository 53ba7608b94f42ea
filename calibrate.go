package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"gab/client"
	"gab/internal/hoststat"
	"gab/internal/outfile"
	"gab/internal/selfsigned"
	"gab/internal/servercpu"
	"gab/report"
)

// gab calibrate measures what gab can drive on this machine and what it
// adds: requests per second per core of gab's CPU for HTTP/1 with and
// without keep-alive, HTTPS and h2, against gab's own in-process target (a
// net/http server in gab's process: the figure is per core of the whole
// process) and against a minimal loopback responder in a process of its own
// (gab's CPU alone); the latency gab adds over a loopback round trip; the
// clock's resolution. It prints them with the rule they give and writes them
// to the calibration file, where later runs find this machine's ceiling for
// their client-bound verdict (report.ClientLoad.Ceiling).

const calibrateUsage = `Usage: %s calibrate [options]
Measures what gab can drive on this machine and the latency it adds, prints them with the rule they give,
and writes them to the calibration file (later runs compare their rate with it: the client-bound verdict).
Options:
`

// calibrationSchema names the calibration file's format.
const calibrationSchema = "gab-calibration"

// calibration is the calibration file.
type calibration struct {
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
	// Busy says the machine was busy (calibrationBusy): the ceilings are
	// lower than a quiet machine's; only --force writes such a file.
	Busy          bool              `json:"busy,omitempty"`
	ClockNs       float64           `json:"clock_resolution_ns"`
	LoopbackRTTUs float64           `json:"loopback_rtt_us"`
	GabLatencyUs  float64           `json:"gab_latency_us"`
	AddedUs       float64           `json:"added_latency_us"`
	Modes         []calibrationMode `json:"modes"`
	// Ceiling is req/s per core of gab's CPU by mode (calibrationModes'
	// keys): the minimal responder's figure where measured, else the
	// in-process target's.
	Ceiling map[string]float64 `json:"ceiling_per_core"`
}

// calibrationMode is one measurement.
type calibrationMode struct {
	Mode       string  `json:"mode"`
	Target     string  `json:"target"` // "in-process" or "responder"
	RPS        float64 `json:"rps"`
	CPUCores   float64 `json:"cpu_cores"` // CPU over the run's time: gab's (the whole process's in-process)
	RPSPerCore float64 `json:"rps_per_core"`
	Error      string  `json:"error,omitempty"`
}

// The modes: key, title, the options of the run.
var calibrationModes = []struct {
	key, title string
	tls        bool
	args       []string
}{
	{"h1_keepalive", "HTTP/1 keep-alive (-k -c 8)", false, []string{"-k", "-c", "8"}},
	{"h1_close", "HTTP/1, a connection per request (-c 8)", false, []string{"-c", "8"}},
	{"https_keepalive", "HTTPS keep-alive (-k -c 8)", true, []string{"-k", "-c", "8"}},
	{"h2", "h2 over TLS (--http2 -c 2 --streams 8)", true, []string{"--http2", "-c", "2", "--streams", "8"}},
}

// calibrationKey is the calibration's mode of a run's options ("" when
// none fits).
func calibrationKey(o *cliOptions) string {
	cfg := &o.Config
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

// calibrationFile is where gab calibrate writes and runs read the
// calibration: $XDG_CACHE_HOME/gab/calibration.json (os.UserCacheDir).
func calibrationFile() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "gab", "calibration.json"), nil
}

// maxCalibrationFile bounds what a run reads of the calibration file.
const maxCalibrationFile = 1 << 16

// calibrationWait is how long after its start a run's read of the
// calibration file may still be waited for when the run's figures are
// summarized; a read not done by then (a slow or hung file system) is left
// and the run goes without the calibration.
const calibrationWait = time.Second

// calibrationRead is a read of the calibration file under way beside a run
// (runMeter.begin starts it): a run never waits on the file.
type calibrationRead struct {
	started time.Time
	done    chan struct{}
	c       *calibration // nil: no usable file
}

// calibrationReads are the reads under way, by file name: a run whose file
// is still being read by an earlier one (gab sweep's, on a hung file
// system) shares that read rather than starting another.
var calibrationReads = struct {
	sync.Mutex
	pending map[string]*calibrationRead
}{pending: map[string]*calibrationRead{}}

// startCalibrationRead starts reading the calibration file in the
// background (nil: no cache directory).
func startCalibrationRead() *calibrationRead {
	name, err := calibrationFile()
	if err != nil {
		return nil
	}
	calibrationReads.Lock()
	defer calibrationReads.Unlock()
	if cr := calibrationReads.pending[name]; cr != nil {
		return cr
	}
	cr := &calibrationRead{started: time.Now(), done: make(chan struct{})}
	calibrationReads.pending[name] = cr
	go func() {
		cr.c = readCalibrationFile(name)
		calibrationReads.Lock()
		delete(calibrationReads.pending, name)
		calibrationReads.Unlock()
		close(cr.done)
	}()
	return cr
}

// readCalibrationFile is readCalibration (tests replace it with a read
// that hangs, as on a hung file system).
var readCalibrationFile = readCalibration

// readCalibration reads the calibration file name: nil unless it is a
// regular file of at most maxCalibrationFile bytes holding a calibration.
// It opens the file without blocking (a FIFO's open waits for a writer
// otherwise) and checks what it opened, not what the name was before.
func readCalibration(name string) *calibration {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > maxCalibrationFile {
		return nil
	}
	var c calibration
	if json.NewDecoder(io.LimitReader(f, maxCalibrationFile)).Decode(&c) != nil || c.Schema != calibrationSchema {
		return nil
	}
	return &c
}

// ceiling is this machine's calibrated req/s per core for the calibration
// mode key (0: no calibration file, nothing for that mode, or a read not
// done calibrationWait after it started).
func (cr *calibrationRead) ceiling(key string) float64 {
	if cr == nil || key == "" {
		return 0
	}
	select {
	case <-cr.done:
	default:
		t := time.NewTimer(time.Until(cr.started.Add(calibrationWait)))
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

// calibrationHost reads the machine around the calibration (tests replace
// it to simulate a busy or a quiet machine).
var calibrationHost = hoststat.Read

// calibrationExe is the program started as the minimal responder (tests
// replace it: their own executable is the test binary).
var calibrationExe = os.Executable

// busyReason says why the machine was too busy for a calibration to be
// trusted ("" when it was not): other processes used BusyOthersShare or
// more of its cores during the calibration, or the load average before it
// reached the cores. Waiting for a CPU lowers the req/s per core measured,
// and so the ceiling later runs' client-bound verdicts use.
func (c *calibration) busyReason() string {
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

func runCalibrate(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	var seconds, requests int
	var out string
	var responder, force bool
	sc, status, done := parseSubcommand(argv, "calibrate", calibrateUsage, stdout, stderr, func(fs *pflag.FlagSet) {
		fs.IntVar(&seconds, "seconds", 2, "measure each mode for `N` seconds (1 to 60)")
		fs.IntVar(&requests, "requests", 0, "measure each mode with `N` requests instead (10 to 10000000)")
		fs.StringVar(&out, "out", "", "write the calibration to `FILE` (default: the calibration file that runs read, "+calibrationFileText()+")")
		fs.BoolVar(&force, "force", false, "write the calibration even when the machine was busy while it was taken (its ceiling is then too low)")
		fs.BoolVar(&responder, "responder", false, "")
		fs.Lookup("responder").Hidden = true
	})
	if done {
		return status
	}
	if responder {
		return serveResponder(os.Stdin, stdout)
	}
	switch {
	case sc.fset.NArg() > 0:
		fmt.Fprintf(stderr, "gab calibrate: takes no arguments, not %q\n", sc.fset.Arg(0))
		return exitUsage
	case seconds < 1 || seconds > 60:
		fmt.Fprintf(stderr, "gab calibrate: --seconds must be from 1 to 60, not %d\n", seconds)
		return exitUsage
	case sc.fset.Changed("requests") && (requests < 10 || requests > 10_000_000):
		fmt.Fprintf(stderr, "gab calibrate: --requests must be from 10 to 10000000, not %d\n", requests)
		return exitUsage
	}
	if out == "" {
		var err error
		if out, err = calibrationFile(); err == nil {
			err = os.MkdirAll(filepath.Dir(out), 0o755) // the cache's own directory, made if new
		}
		if err != nil {
			fmt.Fprintf(stderr, "gab calibrate: %v\n", err)
			return exitError
		}
	}
	// The output path is checked before the measurements, not after them.
	if err := outfile.CheckWritable(out); err != nil {
		fmt.Fprintf(stderr, "gab calibrate: --out %v\n", err)
		return exitError
	}
	c, err := calibrate(ctx, argv[0], seconds, requests, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "gab calibrate: %v\n", err)
		return exitError
	}
	busy := c.busyReason()
	c.Busy = busy != ""
	write := !c.Busy || force
	b, _ := json.MarshalIndent(c, "", "  ")
	if *sc.format == "json" {
		if _, err := stdout.Write(append(b, '\n')); err != nil {
			return exitError
		}
	} else if err := writeCalibration(stdout, c, out, write); err != nil {
		return exitError
	}
	if !write {
		fmt.Fprintf(stderr, "gab calibrate: not written to %s: the machine was busy (%s), so the ceilings are too low; calibrate on a quiet machine, or --force to write them anyway\n", out, busy)
		return exitError
	}
	if err := outfile.WriteAtomic(out, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err }); err != nil {
		fmt.Fprintf(stderr, "gab calibrate: %v\n", err)
		return exitError
	}
	return exitOK
}

func calibrationFileText() string {
	if name, err := calibrationFile(); err == nil {
		return name
	}
	return "$XDG_CACHE_HOME/gab/calibration.json"
}

// calibrate takes the measurements.
func calibrate(ctx context.Context, argv0 string, seconds, requests int, stderr io.Writer) (*calibration, error) {
	host := calibrationHost()
	c := &calibration{Schema: calibrationSchema, SchemaVersion: 1, Time: time.Now().UTC().Format(time.RFC3339),
		GabVersion: version, Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), LoadBefore: host.Load[0],
		OthersCores: -1, ClockNs: clockResolution(), Ceiling: map[string]float64{}}
	// gab's CPU and its children's (the responder's), to tell the other
	// processes' apart in the host's.
	self, _ := servercpu.New([]int{os.Getpid()})
	var selfBefore time.Duration
	if self != nil {
		selfBefore, _ = self.Read()
	}
	defer func() {
		h := calibrationHost()
		d := h.Sub(host)
		c.LoadAfter = h.Load[0]
		if self == nil || !d.Checked(hoststat.FileStat) || d.Elapsed <= 0 {
			return
		}
		// The responder ends with calibrate; it has been waited for by then
		// and its CPU is in gab's children's.
		if selfAfter, err := self.Read(); err == nil {
			c.OthersCores = max(d.CPU.Busy()-(selfAfter-selfBefore), 0).Seconds() / d.Elapsed.Seconds()
		}
	}()
	cert, err := selfsigned.Cert()
	if err != nil {
		return nil, err
	}
	// The minimal responder: this program again, in a process of its own.
	exe, err := calibrationExe()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, "calibrate", "--responder")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	line, err := bufio.NewReader(io.LimitReader(stdoutPipe, 256)).ReadString('\n')
	ports := strings.Fields(line)
	if err != nil || len(ports) != 3 {
		return nil, fmt.Errorf("the responder did not start (%q)", line)
	}
	echo, plain, secure := "127.0.0.1:"+ports[0], "127.0.0.1:"+ports[1], "127.0.0.1:"+ports[2]

	// gab's in-process target: the demo's handler, plain and over TLS (h2).
	inPlain, stopPlain, err := startDemoServer(nil)
	if err != nil {
		return nil, err
	}
	defer stopPlain()
	inSecure, stopSecure, err := startDemoServer(&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		return nil, err
	}
	defer stopSecure()

	if c.LoopbackRTTUs, err = loopbackRTT(echo, 2000); err != nil {
		return nil, err
	}
	lat := gabRun(ctx, argv0, "http://"+plain+"/", 0, 2000, "-k", "-c", "1")
	if lat.err != nil {
		return nil, lat.err
	}
	c.GabLatencyUs = lat.medianUs
	c.AddedUs = max(c.GabLatencyUs-c.LoopbackRTTUs, 0)

	for _, m := range calibrationModes {
		targets := []struct{ name, url string }{{"in-process", inPlain + "/"}, {"responder", "http://" + plain + "/"}}
		if m.tls {
			targets = []struct{ name, url string }{{"in-process", inSecure + "/"}, {"responder", "https://" + secure + "/"}}
		}
		for _, t := range targets {
			if m.key == "h2" && t.name == "responder" {
				continue // the minimal responder speaks HTTP/1 only
			}
			r := gabRun(ctx, argv0, t.url, seconds, requests, m.args...)
			cm := calibrationMode{Mode: m.key, Target: t.name, RPS: r.rps, CPUCores: r.cpuCores}
			if r.err != nil {
				cm.Error = r.err.Error()
			} else if r.cpuCores > 0 {
				cm.RPSPerCore = r.rps / r.cpuCores
			}
			c.Modes = append(c.Modes, cm)
			if cm.RPSPerCore > 0 && (t.name == "responder" || c.Ceiling[m.key] == 0) {
				c.Ceiling[m.key] = cm.RPSPerCore
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
	}
	return c, nil
}

// gabResult is what one calibration run measured.
type gabResult struct {
	rps, cpuCores, medianUs float64
	err                     error
}

// gabRun runs gab's command line against url for seconds (or requests) and
// reads its JSON document.
func gabRun(ctx context.Context, argv0, url string, seconds, requests int, args ...string) gabResult {
	argv := append([]string{argv0}, args...)
	if requests > 0 {
		argv = append(argv, "-n", strconv.Itoa(requests))
	} else {
		argv = append(argv, "-t", strconv.Itoa(seconds), "-n", "100000000")
	}
	argv = append(argv, "--format", "json", url)
	var out, errb bytes.Buffer
	if status := run(ctx, argv, &out, &errb); status != 0 {
		return gabResult{err: fmt.Errorf("%s: exit %d: %s", strings.Join(argv[1:], " "), status, strings.TrimSpace(errb.String()))}
	}
	var d struct {
		Report struct {
			RPS             float64 `json:"requests_per_second"`
			TimeS           float64 `json:"time_taken_s"`
			ConnectionTimes struct {
				Total struct {
					MedianUs float64 `json:"median_us"`
				} `json:"total"`
			} `json:"connection_times"`
		} `json:"report"`
		Extended struct {
			ClientCPU struct {
				UserMs float64 `json:"user_ms"`
				SysMs  float64 `json:"sys_ms"`
			} `json:"client_cpu"`
		} `json:"extended"`
	}
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		return gabResult{err: err}
	}
	r := gabResult{rps: d.Report.RPS, medianUs: d.Report.ConnectionTimes.Total.MedianUs}
	if d.Report.TimeS > 0 {
		r.cpuCores = (d.Extended.ClientCPU.UserMs + d.Extended.ClientCPU.SysMs) / 1000 / d.Report.TimeS
	}
	return r
}

// clockResolution is the smallest step of the monotonic clock seen in a
// million readings, in ns.
func clockResolution() float64 {
	best := time.Duration(1 << 62)
	start := time.Now()
	prev := start
	for range 1_000_000 {
		now := time.Now()
		if d := now.Sub(prev); d > 0 && d < best {
			best = d
		}
		prev = now
	}
	return float64(best)
}

// loopbackRTT is the median of n 1-byte TCP round trips to the responder's
// echo port, in µs.
func loopbackRTT(addr string, n int) (float64, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.(*net.TCPConn).SetNoDelay(true)
	c.SetDeadline(time.Now().Add(30 * time.Second))
	b := []byte{'x'}
	rtts := make([]float64, 0, n)
	for range n {
		t := time.Now()
		if _, err := c.Write(b); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(c, b); err != nil {
			return 0, err
		}
		rtts = append(rtts, float64(time.Since(t).Nanoseconds())/1000)
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2], nil
}

// The minimal responder's answers (ab's requests are HTTP/1.0; -k asks for
// keep-alive).
var (
	responderBody  = strings.Repeat("a", 99) + "\n"
	responderKeep  = []byte("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 100\r\n\r\n" + responderBody)
	responderClose = []byte("HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\n" + responderBody)
)

// serveResponder is gab calibrate --responder: an echo port, a minimal
// HTTP/1 responder and the same over TLS, on loopback; it prints their
// ports and serves until stdin ends.
func serveResponder(stdin io.Reader, stdout io.Writer) int {
	cert, err := selfsigned.Cert()
	if err != nil {
		return exitError
	}
	var lns []net.Listener
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return exitError
		}
		defer ln.Close()
		lns = append(lns, ln)
	}
	go acceptEach(lns[0], func(c net.Conn) { io.Copy(c, c) })
	go acceptEach(lns[1], respond)
	go acceptEach(tls.NewListener(lns[2], &tls.Config{Certificates: []tls.Certificate{cert}}), respond)
	fmt.Fprintf(stdout, "%d %d %d\n", lns[0].Addr().(*net.TCPAddr).Port, lns[1].Addr().(*net.TCPAddr).Port, lns[2].Addr().(*net.TCPAddr).Port)
	io.Copy(io.Discard, stdin)
	return exitOK
}

func acceptEach(ln net.Listener, serve func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			serve(c)
		}()
	}
}

// respond answers each request head (up to its blank line) as it arrives;
// a head over 8 KiB ends the connection.
func respond(c net.Conn) {
	buf := make([]byte, 16<<10)
	have := 0
	for {
		n, err := c.Read(buf[have:])
		have += n
		for {
			end := bytes.Index(buf[:have], []byte("\r\n\r\n"))
			if end < 0 {
				break
			}
			keep := bytes.Contains(bytes.ToLower(buf[:end]), []byte("keep-alive"))
			have = copy(buf, buf[end+4:have])
			if !keep {
				c.Write(responderClose)
				return
			}
			if _, err := c.Write(responderKeep); err != nil {
				return
			}
		}
		if err != nil || have > 8<<10 {
			return
		}
	}
}

// writeCalibration prints the calibration and the rule it gives.
func writeCalibration(w io.Writer, c *calibration, file string, written bool) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "gab calibrate: %d cores, gab may use %d; load average %.2f before, %.2f after\n", c.Cores, c.GOMAXPROCS, c.LoadBefore, c.LoadAfter)
	if c.OthersCores >= 0 {
		fmt.Fprintf(bw, "Other processes used %.2f of the %d cores (%.0f %%) during the calibration\n", c.OthersCores, c.Cores, 100*c.OthersCores/float64(max(c.Cores, 1)))
	} else {
		fmt.Fprintf(bw, "Other processes' CPU during the calibration: unknown (no /proc/stat)\n")
	}
	if why := c.busyReason(); why != "" {
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
	fmt.Fprintf(bw, "%-42s %18s %18s\n", "Requests per second per core of gab's CPU", "in-process target", "minimal responder")
	for _, m := range calibrationModes {
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
	for _, m := range calibrationModes {
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
	if written {
		fmt.Fprintf(bw, "\nWritten to %s: later runs' client-bound verdicts compare their rate with it.\n", file)
	} else {
		fmt.Fprintf(bw, "\nNot written to %s: the machine was busy (gab calibrate --force writes it anyway).\n", file)
	}
	return bw.Flush()
}
