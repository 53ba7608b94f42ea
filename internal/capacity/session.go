package capacity

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"gab/client"
	"gab/internal/hoststat"
	"gab/internal/printable"
	"gab/report"
)

// Session is one gab capacity command's searches: every target's noise
// steps, then its searches step by step in turn (Run).
type Session struct {
	*Settings
	// Targets are the targets to search, Bases their engines'
	// configurations (ab's options for every step, the target's URL).
	Targets []*report.CapacityTarget
	Bases   []client.Config
	// searches are each target's searches (Repeat each), in Targets' order.
	searches [][]Search
	// Uncapped is -n's value for a step's run: no request count limits it.
	Uncapped int
	// Measure runs one step of target i at cfg and summarizes it: the
	// single-run measurement (RunMeasure: runcmd.MeasureRun between its
	// readings of the client's, the server's and the machine's CPU, with
	// its live outputs); name names the step for them.
	Measure func(ctx context.Context, i int, cfg client.Config, name string) StepRun
	// Log gets a line per step's verdict and the noise (nil: none).
	Log io.Writer

	steps int
}

// NewSession is the session of s's targets (labels and URLs) with their
// engines' configurations: Repeat searches each, from the options.
func NewSession(s *Settings, labels, urls []string, bases []client.Config) *Session {
	o := s.Options
	ss := &Session{Settings: s, Bases: bases}
	for i := range labels {
		var searches []Search
		for range o.Repeat {
			searches = append(searches, Search{Start: o.Start, MaxRate: o.MaxRate, Resolution: o.Resolution / 100, Attempts: o.Attempts})
		}
		ss.Targets = append(ss.Targets, &report.CapacityTarget{Label: labels[i], URL: urls[i]})
		ss.searches = append(ss.searches, searches)
	}
	return ss
}

// NewDocument is the document's header for the session's settings.
func (ss *Session) NewDocument(commandLine []string) *report.CapacityDocument {
	s, o := ss.Settings, ss.Options
	doc := &report.CapacityDocument{Tool: "gab", Schema: Schema, SchemaVersion: SchemaVersion,
		CommandLine: commandLine, Start: time.Now(), Repeat: o.Repeat, Attempts: o.Attempts,
		StepS: s.Step.Seconds(), SettleS: s.Settle.Seconds(), ResolutionPercent: o.Resolution,
		MinAchieved: MinAchieved, MaxConnections: s.Conns, TieRule: report.TieRule,
		Machine: report.CapacityMachine{CPUs: runtime.NumCPU(), Cores: report.Cores(), LoadStart: hoststat.LoadAverage()}}
	for _, t := range s.Objectives {
		doc.Objectives = append(doc.Objectives, t.Expr)
	}
	if s.LatencyGiven {
		doc.LatencyObjectiveMs = float64(s.LatencyMax.Microseconds()) / 1e3
	}
	return doc
}

// Run measures the noise and the searches into doc, its targets ranked;
// interrupted says ctx ended it first (the searches then at least what they
// passed, the document incomplete).
func (ss *Session) Run(ctx context.Context, doc *report.CapacityDocument) (interrupted bool) {
	interrupted = !ss.noise(ctx, doc)
	for rep := 0; rep < ss.Options.Repeat && !interrupted; rep++ {
		interrupted = !ss.search(ctx, rep)
	}
	doc.End, doc.Machine.LoadEnd, doc.Complete = time.Now(), hoststat.LoadAverage(), !interrupted
	for k, t := range ss.Targets {
		if interrupted {
			for i := range ss.searches[k] {
				ss.searches[k][i].Interrupt() // a search that had not ended: at least what it passed
			}
		}
		Finish(t, ss.searches[k]...)
		doc.Targets = append(doc.Targets, t)
	}
	Rank(doc.Targets)
	return interrupted
}

// step measures and judges one step of target i at rate; ok is false when
// ctx ended it.
func (ss *Session) step(ctx context.Context, i int, rate float64, name string) (report.CapacityStep, bool) {
	ss.steps++
	cfg := ss.StepConfig(ss.Bases[i], rate, ss.Uncapped)
	m := ss.Measure(ctx, i, cfg, fmt.Sprintf("%d: %s %s", ss.steps, ss.Targets[i].Label, name))
	return ss.Judge(rate, m), ctx.Err() == nil
}

// noise measures each target's latency noise at a low rate before any
// search (--noise K steps at a quarter of --start); false when interrupted.
func (ss *Session) noise(ctx context.Context, doc *report.CapacityDocument) bool {
	k := ss.Options.Noise
	if k == 0 {
		return true
	}
	rate := max(MinRate, ss.Options.Start/4)
	for i, t := range ss.Targets {
		var probes []report.CapacityStep
		for j := range k {
			st, ok := ss.step(ctx, i, rate, fmt.Sprintf("noise %d of %d at %s/s", j+1, k, Rate(rate)))
			if !ok {
				return false
			}
			probes = append(probes, st)
		}
		t.Noise = NoiseOf(rate, probes)
		if ss.Log != nil {
			fmt.Fprintf(ss.Log, "%s: latency noise: %s\n", printable.String(t.Label), t.Noise.Line(Rate, Ms, strings.Join(doc.Objectives, ", ")))
		}
	}
	return true
}

// search runs every target's search rep step by step in turn; false when
// interrupted.
func (ss *Session) search(ctx context.Context, rep int) bool {
	for _, searches := range ss.searches {
		// A rate failing below one an earlier search passed is measured
		// once more before it fails.
		for i := range rep {
			searches[rep].Passed = max(searches[rep].Passed, searches[i].Result().CapacityPerS)
		}
	}
	for active := true; active; {
		active = false
		for i, t := range ss.Targets {
			srch := &ss.searches[i][rep]
			rate, ok := srch.Next()
			if !ok {
				continue
			}
			active = true
			st, ok := ss.step(ctx, i, rate, Rate(rate)+"/s")
			if !ok {
				return false
			}
			srch.Record(st)
			if ss.Log != nil {
				fmt.Fprintf(ss.Log, "%s: %s/s: %s\n", printable.String(t.Label), Rate(rate), st.Verdict())
			}
		}
	}
	return true
}
