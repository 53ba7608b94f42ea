package sweep

import (
	"context"
	"io"
	"runtime"
	"time"

	"gab/internal/hoststat"
	"gab/report"
)

// RunPlan runs the plan (Loop), each run measured by rn.Measure, --before's
// command ahead of a point's runs, each point's lines on rn.Stderr, until
// its end or an interruption.
func (rn *Runner) RunPlan(ctx context.Context) *Runs {
	s := rn.Settings
	loop := &Loop{Settings: s, Dims: s.Dims(), Lines: rn.Stderr,
		Before:  func(ctx context.Context, pt Point) error { return s.RunBefore(ctx, pt, rn.Stderr) },
		Measure: rn.Measure}
	return loop.Run(ctx)
}

// Complete says the runs m are the whole plan: neither interrupted nor
// stopped by --before's command.
func (m *Runs) Complete() bool { return !m.Interrupted && m.BeforeErr == nil }

// Meta is the outputs' header for the runs m, ending now: the command line
// (its credentials hidden), the start, whether complete, the machine.
func (m *Runs) Meta(commandLine []string) Meta {
	return Meta{CommandLine: commandLine, Start: m.Start, End: time.Now(), Complete: m.Complete(),
		Machine: report.SweepMachine{CPUs: runtime.NumCPU(), LoadStart: m.LoadStart, LoadEnd: hoststat.LoadAverage()}}
}

// WriteReport writes the sweep's report on stdout: the table and the runs
// that ended with an error.
func WriteReport(w io.Writer, s *Settings, points []*PointResult, complete bool) error {
	if err := WriteTable(w, s, points, complete); err != nil {
		return err
	}
	return WriteRunErrors(w, points)
}
