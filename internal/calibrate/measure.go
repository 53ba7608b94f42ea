package calibrate

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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"gab/internal/hoststat"
	"gab/internal/selfsigned"
	"gab/internal/servercpu"
)

// Options is what Measure needs from gab's command: how to run gab's command
// line and start its in-process target, and what to read the machine with.
type Options struct {
	Argv0   string // the program name, as typed
	Version string // gab's version, for the file
	// Seconds each mode is measured for, or Requests (> 0) it is measured
	// with instead.
	Seconds, Requests int
	// Run runs gab's command line (argv[0] is the program name) and
	// returns its exit status.
	Run func(ctx context.Context, argv []string, stdout, stderr io.Writer) int
	// Serve starts gab's in-process target on loopback (plain, or over TLS
	// with tlsConf): its base URL and the function that stops it.
	Serve func(tlsConf *tls.Config) (base string, stop func(), err error)
	// Host reads the machine (nil: hoststat.Read); Exe is the program
	// started as the minimal responder (nil: os.Executable).
	Host func() *hoststat.Snapshot
	Exe  func() (string, error)
	// Stderr takes the responder's stderr.
	Stderr io.Writer
}

// Measure takes the measurements.
func Measure(ctx context.Context, o Options) (*Calibration, error) {
	if o.Host == nil {
		o.Host = hoststat.Read
	}
	if o.Exe == nil {
		o.Exe = os.Executable
	}
	host := o.Host()
	c := &Calibration{Schema: Schema, SchemaVersion: 1, Time: time.Now().UTC().Format(time.RFC3339),
		GabVersion: o.Version, Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), LoadBefore: host.Load[0],
		OthersCores: -1, ClockNs: clockResolution(), Ceiling: map[string]float64{}}
	// gab's CPU and its children's (the responder's), to tell the other
	// processes' apart in the host's.
	self, _ := servercpu.New([]int{os.Getpid()})
	var selfBefore time.Duration
	if self != nil {
		selfBefore, _ = self.Read()
	}
	defer func() {
		h := o.Host()
		d := h.Sub(host)
		c.LoadAfter = h.Load[0]
		if self == nil || !d.Checked(hoststat.FileStat) || d.Elapsed <= 0 {
			return
		}
		// The responder ends with Measure; it has been waited for by then
		// and its CPU is in gab's children's.
		if selfAfter, err := self.Read(); err == nil {
			c.OthersCores = max(d.CPU.Busy()-(selfAfter-selfBefore), 0).Seconds() / d.Elapsed.Seconds()
		}
	}()
	cert, err := selfsigned.Cert()
	if err != nil {
		return nil, err
	}
	ports, stopResponder, err := startResponder(ctx, o)
	if err != nil {
		return nil, err
	}
	defer stopResponder()
	echo, plain, secure := "127.0.0.1:"+ports[0], "127.0.0.1:"+ports[1], "127.0.0.1:"+ports[2]

	// gab's in-process target, plain and over TLS (h2).
	inPlain, stopPlain, err := o.Serve(nil)
	if err != nil {
		return nil, err
	}
	defer stopPlain()
	inSecure, stopSecure, err := o.Serve(&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		return nil, err
	}
	defer stopSecure()

	if c.LoopbackRTTUs, err = loopbackRTT(echo, 2000); err != nil {
		return nil, err
	}
	lat := gabRun(ctx, o, "http://"+plain+"/", 0, 2000, "-k", "-c", "1")
	if lat.err != nil {
		return nil, lat.err
	}
	c.GabLatencyUs = lat.medianUs
	c.AddedUs = max(c.GabLatencyUs-c.LoopbackRTTUs, 0)
	if err := measureModes(ctx, o, c, [2]string{inPlain + "/", "http://" + plain + "/"}, [2]string{inSecure + "/", "https://" + secure + "/"}); err != nil {
		return nil, err
	}
	return c, nil
}

// startResponder starts the minimal responder, this program again in a
// process of its own (Serve), and reads its three ports: the echo port, the
// plain and the TLS one. stop ends it and waits for it.
func startResponder(ctx context.Context, o Options) (ports []string, stop func(), err error) {
	exe, err := o.Exe()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.CommandContext(ctx, exe, "calibrate", "--responder")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = o.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop = func() { stdin.Close(); cmd.Wait() }
	line, err := bufio.NewReader(io.LimitReader(stdoutPipe, 256)).ReadString('\n')
	ports = strings.Fields(line)
	if err != nil || len(ports) != 3 {
		stop()
		return nil, nil, fmt.Errorf("the responder did not start (%q)", line)
	}
	return ports, stop, nil
}

// measureModes measures every mode against the in-process target and the
// responder (plain's URLs, or secure's over TLS: in-process first) and sets
// c's modes and ceilings.
func measureModes(ctx context.Context, o Options, c *Calibration, plain, secure [2]string) error {
	for _, m := range modes {
		urls := plain
		if m.tls {
			urls = secure
		}
		for i, target := range []string{"in-process", "responder"} {
			if m.key == "h2" && target == "responder" {
				continue // the minimal responder speaks HTTP/1 only
			}
			r := gabRun(ctx, o, urls[i], o.Seconds, o.Requests, m.args...)
			cm := Mode{Mode: m.key, Target: target, RPS: r.rps, CPUCores: r.cpuCores}
			if r.err != nil {
				cm.Error = r.err.Error()
			} else if r.cpuCores > 0 {
				cm.RPSPerCore = r.rps / r.cpuCores
			}
			c.Modes = append(c.Modes, cm)
			if cm.RPSPerCore > 0 && (target == "responder" || c.Ceiling[m.key] == 0) {
				c.Ceiling[m.key] = cm.RPSPerCore
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	return nil
}

// gabResult is what one calibration run measured.
type gabResult struct {
	rps, cpuCores, medianUs float64
	err                     error
}

// gabRun runs gab's command line against url for seconds (or requests) and
// reads its JSON document.
func gabRun(ctx context.Context, o Options, url string, seconds, requests int, args ...string) gabResult {
	argv := append([]string{o.Argv0}, args...)
	if requests > 0 {
		argv = append(argv, "-n", strconv.Itoa(requests))
	} else {
		argv = append(argv, "-t", strconv.Itoa(seconds), "-n", "100000000")
	}
	argv = append(argv, "--format", "json", url)
	var out, errb bytes.Buffer
	if status := o.Run(ctx, argv, &out, &errb); status != 0 {
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
