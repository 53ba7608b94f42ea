package capacity

import (
	"context"
	"strings"
	"time"

	"gab/client"
	"gab/internal/live"
	"gab/internal/runcmd"
	"gab/internal/servercpu"
	"gab/report"
)

// RunMeasure is a session's Measure: a step of target i (whose parsed
// options are opts[i]) measured as a single run is (runcmd.MeasureRun
// between the meters' readings: the client's CPU, and the server's of
// --server-pid or found listening on a loopback URL's port), summarized
// with the step's settings and streamed to the live outputs lv (nil: none)
// as a run of its own.
func RunMeasure(opts []*runcmd.Options, lv *live.Outputs) func(context.Context, int, client.Config, string) StepRun {
	return func(ctx context.Context, i int, cfg client.Config, name string) (m StepRun) {
		o := opts[i]
		stream := lv.Begin(&cfg, o.URL, name, client.DefaultInterval)
		defer func() {
			if stream != nil {
				lv.Finish(stream, m.Run, m.Result)
			}
		}()
		runner, err := client.New(cfg)
		meter := runcmd.Meter{Label: o.ServerLabel}
		if err == nil && len(o.ServerPIDs) > 0 {
			meter.Server, err = servercpu.New(o.ServerPIDs)
		}
		if err != nil {
			m.Err = err.Error()
			return m
		}
		meter.FindServer(&cfg)
		begin, sched := time.Now(), report.ReadSched()
		ms := runcmd.MeasureRun(ctx, runner, &meter)
		m.Wall, m.Sched = time.Since(begin), report.ReadSched().P99Since(sched)
		m.Result, m.CPU, m.Server = ms.Res, ms.CPU, ms.Server
		if ms.Err != nil {
			m.Err = strings.TrimSpace(runcmd.FatalError(ms.Err).Message)
		} else if ms.ServerErr != nil {
			m.Err = ms.ServerErr.Error()
		}
		if ms.Res != nil {
			so := *o
			so.Config = cfg // the step's connections and rate
			m.Run = ms.Summarize(&so, nil)
		}
		return m
	}
}
