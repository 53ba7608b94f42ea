package runcmd

import (
	"cmp"
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"gab/client"
	"gab/internal/calibrate"
	"gab/internal/hoststat"
	"gab/internal/servercpu"
	"gab/report"
)

// This file measures one run, for the plain run (Run) and
// for each of gab sweep's runs (internal/sweep's Runner) alike: the engine's run
// between two readings of the client's CPU and of --server-pid's processes,
// then the summary of every figure (report.Summarize).

// Meter reads the client's CPU and, with --server-pid, the server's at the
// start and at the end of a run.
type Meter struct {
	Server *servercpu.Meter // nil without --server-pid or a server found listening
	Label  string           // --server-pid's LABEL ("" without one)
	found  string           // how the server was found without --server-pid ("": named)

	started      time.Time
	cpuBefore    report.CPUUsage
	serverBefore time.Duration
	ServerErr    error // a failed reading at the start
	Machine      *hoststat.Snapshot
	calib        *calibrate.Read // the calibration file, read beside the run
}

// begin takes the readings at the start of the run.
func (m *Meter) begin() {
	if m.Server != nil {
		m.serverBefore, m.ServerErr = m.Server.Read()
	}
	m.calib = calibrate.StartRead()
	m.Machine = hoststat.Read()
	m.cpuBefore = report.ProcessCPU()
	m.started = time.Now()
}

// rebase takes the start readings again (not the start time) when the
// measured part of the run begins: after a warm-up, at a ramp-up's end
// (client.Runner.OnMeasure), so that these are left out of the client's CPU,
// the server's and the machine's as they are of every other figure.
func (m *Meter) rebase() {
	started := m.started
	m.begin()
	m.started = started
}

// clientCPU is the client's CPU since begin.
func (m *Meter) clientCPU() report.CPUUsage { return report.ProcessCPU().Sub(m.cpuBefore) }

// serverCPU is --server-pid's measurement since begin (nil without it, or
// with the error of a failed reading); client is the client's CPU, for the
// ratio of the two.
func (m *Meter) serverCPU(client report.CPUUsage) (*report.ServerCPU, error) {
	if m.Server == nil {
		return nil, nil
	}
	after, err := m.Server.Read()
	if err = cmp.Or(m.ServerErr, err); err != nil {
		if m.found != "" {
			return nil, nil // a server found listening that ended is no error of the run
		}
		return nil, err
	}
	var cpus []int
	for _, pid := range m.Server.PIDs() {
		cpus = hoststat.Union(cpus, hoststat.Affinity(pid))
	}
	return &report.ServerCPU{Label: m.Label, PIDs: m.Server.PIDs(), CPU: after - m.serverBefore, Resolution: servercpu.Resolution,
		Client: client, Found: m.found, CPUs: cpus}, nil
}

// FindServer gives m, without --server-pid, the server of a loopback URL:
// the processes other than gab listening on its port (servercpu.Listening),
// whose CPU is then measured as --server-pid's is, so that the verdicts
// neither count it among the machine's other processes nor miss a core it
// shares with gab. Nothing is looked up through a proxy (-X), for --cgi, or
// for a host name other than localhost (no name is resolved).
func (m *Meter) FindServer(cfg *client.Config) {
	if m.Server != nil || cfg.Proxy || cfg.Protocol == client.CGI {
		return
	}
	var addrs []netip.Addr
	host := cfg.Target.Host
	if strings.EqualFold(host, "localhost") {
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	} else if a, err := netip.ParseAddr(host); err == nil && a.Unmap().IsLoopback() {
		addrs = []netip.Addr{a}
	}
	if len(addrs) == 0 {
		return
	}
	pids := servercpu.Listening(addrs, cfg.Target.Port, cfg.Protocol == client.HTTP3)
	if len(pids) == 0 {
		return
	}
	meter, err := servercpu.New(pids)
	if err != nil {
		return // a process ended meanwhile
	}
	m.Server, m.Label = meter, ""
	m.found = "listening on " + net.JoinHostPort(host, strconv.Itoa(cfg.Target.Port))
}

// measured is what one run measured.
type Measured struct {
	Res       *client.Result // nil: the run never started
	Err       error          // what ended the run with an error (Res may hold what was measured before)
	CPU       report.CPUUsage
	Server    *report.ServerCPU // nil without --server-pid (or a server found) or after a failed reading
	ServerErr error             // a failed --server-pid reading
	Machine   *hoststat.Delta   // what the machine did over the run (the verdicts' evidence)
	calib     *calibrate.Read   // the calibration file's read (nil: none)
}

// MeasureRun runs the engine between the meters' readings, the first
// taken again when its measured part begins (after a warm-up or a ramp-up).
func MeasureRun(ctx context.Context, runner *client.Runner, m *Meter) *Measured {
	m.begin()
	runner.OnMeasure(m.rebase)
	res, err := runner.Run(ctx)
	ms := &Measured{Res: res, Err: err, CPU: m.clientCPU(), calib: m.calib}
	ms.Server, ms.ServerErr = m.serverCPU(ms.CPU)
	ms.Machine = hoststat.Read().Sub(m.Machine)
	return ms
}

// FatalError is the error that ends a run as gab reports it: the engine's
// *client.FatalError (ab's message and exit status), or any other error as
// "gab: ..." with status 1.
func FatalError(err error) *client.FatalError {
	fe := &client.FatalError{Message: "gab: " + err.Error() + "\n", Exit: ExitError}
	errors.As(err, &fe)
	return fe
}

// Summarize computes every figure of the run from what it measured (res must
// not be nil), with the command line's report options.
func (ms *Measured) Summarize(o *Options, cmdline []string) *report.Run {
	opts := ReportOptions(o, cmdline, ms.CPU, ms.Server)
	opts.Machine = ms.Machine
	opts.Ceiling = ms.calib.Ceiling(calibrate.Key(&o.Config))
	opts.InProcessServer = o.Demo
	return report.Summarize(ms.Res, opts)
}
