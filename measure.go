package main

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

// This file measures one run, for the plain run (main.go's runFlushed) and
// for each of gab sweep's runs (sweep.go's measure) alike: the engine's run
// between two readings of the client's CPU and of --server-pid's processes,
// then the summary of every figure (report.Summarize).

// runMeter reads the client's CPU and, with --server-pid, the server's at the
// start and at the end of a run.
type runMeter struct {
	server *servercpu.Meter // nil without --server-pid or a server found listening
	label  string           // --server-pid's LABEL ("" without one)
	found  string           // how the server was found without --server-pid ("": named)

	started      time.Time
	cpuBefore    report.CPUUsage
	serverBefore time.Duration
	serverErr    error // a failed reading at the start
	machine      *hoststat.Snapshot
	calib        *calibrate.Read // the calibration file, read beside the run
}

// begin takes the readings at the start of the run.
func (m *runMeter) begin() {
	if m.server != nil {
		m.serverBefore, m.serverErr = m.server.Read()
	}
	m.calib = calibrate.StartRead()
	m.machine = hoststat.Read()
	m.cpuBefore = report.ProcessCPU()
	m.started = time.Now()
}

// rebase takes the start readings again (not the start time) when the
// measured part of the run begins: after a warm-up, at a ramp-up's end
// (client.Runner.OnMeasure), so that these are left out of the client's CPU,
// the server's and the machine's as they are of every other figure.
func (m *runMeter) rebase() {
	started := m.started
	m.begin()
	m.started = started
}

// clientCPU is the client's CPU since begin.
func (m *runMeter) clientCPU() report.CPUUsage { return report.ProcessCPU().Sub(m.cpuBefore) }

// serverCPU is --server-pid's measurement since begin (nil without it, or
// with the error of a failed reading); client is the client's CPU, for the
// ratio of the two.
func (m *runMeter) serverCPU(client report.CPUUsage) (*report.ServerCPU, error) {
	if m.server == nil {
		return nil, nil
	}
	after, err := m.server.Read()
	if err = cmp.Or(m.serverErr, err); err != nil {
		if m.found != "" {
			return nil, nil // a server found listening that ended is no error of the run
		}
		return nil, err
	}
	var cpus []int
	for _, pid := range m.server.PIDs() {
		cpus = hoststat.Union(cpus, hoststat.Affinity(pid))
	}
	return &report.ServerCPU{Label: m.label, PIDs: m.server.PIDs(), CPU: after - m.serverBefore, Resolution: servercpu.Resolution,
		Client: client, Found: m.found, CPUs: cpus}, nil
}

// findServer gives m, without --server-pid, the server of a loopback URL:
// the processes other than gab listening on its port (servercpu.Listening),
// whose CPU is then measured as --server-pid's is, so that the verdicts
// neither count it among the machine's other processes nor miss a core it
// shares with gab. Nothing is looked up through a proxy (-X), for --cgi, or
// for a host name other than localhost (no name is resolved).
func (m *runMeter) findServer(cfg *client.Config) {
	if m.server != nil || cfg.Proxy || cfg.Protocol == client.CGI {
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
	m.server, m.label = meter, ""
	m.found = "listening on " + net.JoinHostPort(host, strconv.Itoa(cfg.Target.Port))
}

// measured is what one run measured.
type measured struct {
	res       *client.Result // nil: the run never started
	err       error          // what ended the run with an error (res may hold what was measured before)
	cpu       report.CPUUsage
	server    *report.ServerCPU // nil without --server-pid (or a server found) or after a failed reading
	serverErr error             // a failed --server-pid reading
	machine   *hoststat.Delta   // what the machine did over the run (the verdicts' evidence)
	calib     *calibrate.Read   // the calibration file's read (nil: none)
}

// measureRun runs the engine between the meters' readings, the first
// taken again when its measured part begins (after a warm-up or a ramp-up).
func measureRun(ctx context.Context, runner *client.Runner, m *runMeter) *measured {
	m.begin()
	runner.OnMeasure(m.rebase)
	res, err := runner.Run(ctx)
	ms := &measured{res: res, err: err, cpu: m.clientCPU(), calib: m.calib}
	ms.server, ms.serverErr = m.serverCPU(ms.cpu)
	ms.machine = hoststat.Read().Sub(m.machine)
	return ms
}

// fatalError is the error that ends a run as gab reports it: the engine's
// *client.FatalError (ab's message and exit status), or any other error as
// "gab: ..." with status 1.
func fatalError(err error) *client.FatalError {
	fe := &client.FatalError{Message: "gab: " + err.Error() + "\n", Exit: exitError}
	errors.As(err, &fe)
	return fe
}

// summarize computes every figure of the run from what it measured (res must
// not be nil), with the command line's report options.
func (ms *measured) summarize(o *cliOptions, argv []string) *report.Run {
	opts := reportOptions(o, argv, ms.cpu, ms.server)
	opts.Machine = ms.machine
	opts.Ceiling = ms.calib.Ceiling(calibrate.Key(&o.Config))
	opts.InProcessServer = o.Demo
	return report.Summarize(ms.res, opts)
}
