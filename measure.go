package main

import (
	"context"
	"errors"
	"time"

	"gab/client"
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
	server *servercpu.Meter // nil without --server-pid
	label  string           // --server-pid's LABEL ("" without one)

	started      time.Time
	cpuBefore    report.CPUUsage
	serverBefore time.Duration
	serverErr    error // a failed reading at the start
	machine      *hoststat.Snapshot
	calib        *calibrationRead // the calibration file, read beside the run
}

// begin takes the readings at the start of the run.
func (m *runMeter) begin() {
	if m.server != nil {
		m.serverBefore, m.serverErr = m.server.Read()
	}
	m.calib = startCalibrationRead()
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
	if m.serverErr != nil {
		return nil, m.serverErr
	}
	after, err := m.server.Read()
	if err != nil {
		return nil, err
	}
	return &report.ServerCPU{Label: m.label, PIDs: m.server.PIDs(), CPU: after - m.serverBefore, Resolution: servercpu.Resolution, Client: client}, nil
}

// measured is what one run measured.
type measured struct {
	res       *client.Result // nil: the run never started
	err       error          // what ended the run with an error (res may hold what was measured before)
	cpu       report.CPUUsage
	server    *report.ServerCPU // nil without --server-pid or after a failed reading
	serverErr error             // a failed --server-pid reading
	machine   *hoststat.Delta   // what the machine did over the run (the verdicts' evidence)
	calib     *calibrationRead  // the calibration file's read (nil: none)
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
	opts.Ceiling = ms.calib.ceiling(calibrationKey(o))
	opts.InProcessServer = o.Demo
	return report.Summarize(ms.res, opts)
}
