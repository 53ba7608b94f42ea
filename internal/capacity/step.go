package capacity

import (
	"math"
	"strings"
	"time"

	"gab/client"
	"gab/internal/threshold"
	"gab/report"
)

// StepRun is what a step's run measured (Config.Measure's answer).
type StepRun struct {
	Result *client.Result // nil: the run never started
	Run    *report.Run    // Result summarized with the step's settings (nil without Result)
	// Err is what ended the run early, or a failed reading of the server's
	// CPU ("": none).
	Err    string
	CPU    report.CPUUsage   // the client's CPU over the run
	Server *report.ServerCPU // the server's (nil: not measured)
	Wall   time.Duration     // the run's time, settle included
	Sched  time.Duration     // the Go scheduler's wait (p99) over the run
}

// Judge is the step at rate that m measured: its figures from the run's
// window past the settle, read through the catalog (the latencies from the
// intended send times), its objectives checked as --fail-if checks a run's,
// its machine verdicts and whether a failure is the client's.
func (s *Settings) Judge(rate float64, m StepRun) report.CapacityStep {
	st := report.CapacityStep{TargetPerS: rate, Connections: s.ConnsFor(rate), Error: m.Err}
	res := m.Result
	if srv := m.Server; srv != nil && res != nil && m.Wall > 0 {
		pct := 100 * srv.CPU.Seconds() / m.Wall.Seconds()
		st.ServerCPUPercent = &pct
		if res.Complete > 0 {
			us := float64(srv.CPU.Microseconds()) / float64(res.Complete)
			st.ServerCPUUsPerRequest = &us
		}
	}
	if m.Run != nil {
		machineVerdicts(&st, m.Run)
	}
	if res == nil || m.Run == nil || res.Extra == nil || res.Extra.Rate == nil {
		if st.Error == "" {
			st.Error = "the step measured nothing"
		}
		return st
	}
	win, err := s.window(m)
	if err != nil {
		if st.Error == "" {
			st.Error = "the step's timeline: " + err.Error()
		}
		return st
	}
	vs, ok := s.figures(&st, win, res)
	st.Kept = st.AchievedPerS >= MinAchieved*rate
	s.clientVerdict(&st, win, vs, ok, m)
	return st
}

// clientVerdict says whether the step passed, and whether a failure was the
// client's (gab at its limit, or the server inside gab).
func (s *Settings) clientVerdict(st *report.CapacityStep, win *report.Run, vs []threshold.Verdict, ok bool, m StepRun) {
	res := m.Result
	// The busy share counts the requests still unanswered at the step's
	// end for their time in flight. While the server has answered nothing
	// at all, every connection waits on it: a schedule behind then is the
	// server's failure, not a client that could not drive the rate.
	busy := win.ConnectionsBusy(st.Connections)
	if len(res.Outstanding) > 0 && res.Complete == 0 && res.Failed.Total == 0 {
		busy = 1
	}
	rr := res.Extra.Rate
	cb := report.ClientBound(report.ClientLoad{
		CPU: m.CPU.User + m.CPU.Sys, Wall: m.Wall, Cores: report.Cores(),
		Sent: rr.Sent, Behind: behindPast(rr.BehindAtEnd, st.TargetPerS, behindGrace), Busy: busy,
		SchedP99: waitedFor(vs, st.Kept, m.Sched), SchedBound: s.schedBound(),
	})
	// A step that met every objective at the rate shows the server's
	// capacity whatever the client's limits (they only add to the
	// latencies); a failing one is the client's when the client was at its
	// limit, or when the server runs inside gab (--demo).
	st.Pass = ok && st.Kept && st.Error == ""
	if !st.Pass && s.InProcess {
		cb.Bound, cb.Reasons = true, append(cb.Reasons, "the server runs in gab's own process (--demo): its limit is gab's")
	}
	// Every connection busy while the server answered within the largest
	// objective (uncorrected p99): the queue was in gab's connections.
	st.AtMaxConnections = !st.Pass && st.Connections >= s.Conns && busy >= report.ClientBusyFree &&
		time.Duration(st.UncorrectedP99Us)*time.Microsecond < s.LatencyMax
	if !st.Pass && cb.Bound {
		st.ClientBound, st.ClientReasons = true, cb.Reasons
	}
}

// window is the step's run past its settle: report.Window over the
// timeline's whole intervals (of the settle's length) from the settle on,
// the requests in flight at the end among them; the interval the engine's
// stop cut short is left out, whose time would lower the achieved rate
// with requests due before it. Without a settle, or when the run ended
// early (its error fails the step whatever its figures), the whole run.
func (s *Settings) window(m StepRun) (*report.Run, error) {
	if s.Settle == 0 || m.Err != "" || m.Run.Timeline == nil {
		return m.Run, nil
	}
	return report.Window(m.Run, s.Settle, m.Result.Elapsed/s.Settle*s.Settle)
}

// figures sets the step's figures from its window, read through the
// catalog (the latencies from each request's intended send time, the
// window's FromIntendedSend view), and checks its objectives on them.
func (s *Settings) figures(st *report.CapacityStep, win *report.Run, res *client.Result) ([]threshold.Verdict, bool) {
	cor := win.FromIntendedSend()
	if cor == nil {
		cor = win // no corrected latencies: never in rate mode
	}
	st.Complete = int64(figure(win, "complete"))
	st.Non2xx = int64(figure(win, "non2xx"))
	st.AchievedPerS = figure(win, "rps")
	if win.Outstanding != nil {
		st.Outstanding = win.Outstanding.Requests
	}
	us := func(r *report.Run, key string) int64 { return int64(math.Round(figure(r, key) * 1e3)) }
	st.P50Us, st.P99Us, st.P999Us = us(cor, "p50"), us(cor, "p99"), us(cor, "p99.9")
	st.UncorrectedP99Us, st.UncorrectedMeanUs = us(win, "p99"), figure(win, "mean")*1e3
	// What a step counts as failed beyond the catalog's failed (ab's
	// Failed requests, and the requests in flight at the end older than
	// -s): a request gab could not write was not served (ab lists write
	// errors apart), and one unanswered at the end is a failure once older
	// than the largest latency objective.
	extra := int64(win.Report.WriteErrors) + unansweredPast(res, win, s.LatencyMax)
	st.Failed = int64(figure(win, "failed")) + extra
	f := cor.ThresholdFigures()
	value := f.Value
	f.Value = func(m threshold.Metric) (float64, bool) {
		v, ok := value(m)
		if ok && m.Key == "failed" {
			v += float64(extra)
		}
		return v, ok
	}
	vs, ok := threshold.CheckAll(s.Objectives, f)
	for _, v := range vs {
		st.Objectives = append(st.Objectives, strings.TrimPrefix(v.Line(), "--fail-if "))
	}
	return vs, ok
}

// figure is a catalog figure of the run (0 where it lacks it).
func figure(r *report.Run, key string) float64 {
	f, _ := report.FigureByKey(key)
	v, _ := f.Value(r)
	return v
}

// unansweredPast is how many of the requests unanswered at the run's end
// (in the window) are older than bound from their intended send times, or
// -s when shorter, beyond those the catalog already counts as failed (older
// than -s from their starts).
func unansweredPast(res *client.Result, win *report.Run, bound time.Duration) int64 {
	o := win.Outstanding
	if o == nil {
		return 0
	}
	if res.Timeout > 0 {
		bound = min(bound, res.Timeout)
	}
	var n int64
	for _, f := range res.Outstanding {
		if f.Corrected > bound {
			n++
		}
	}
	return max(0, n-o.Failed)
}

// machineVerdicts copies to the step the single-run verdicts of its run
// (settle and step: report.Summarize's judge, the machine's /proc/stat and
// TCP counters over the run) that say the machine, not the server, may have
// failed it: busy_machine and kernel_drops.
func machineVerdicts(st *report.CapacityStep, run *report.Run) {
	lines := run.VerdictLines()
	for i, k := range run.VerdictKinds() {
		switch k {
		case "busy_machine":
			st.BusyMachine = true
		case "kernel_drops":
			st.KernelDrops = true
		default:
			continue
		}
		if i < len(lines) {
			st.Verdicts = append(st.Verdicts, lines[i])
		}
	}
}

// behindGrace is how late a request may still be unsent at a step's end
// without counting as the client falling behind: a timer woken late on a busy
// machine is not a client that cannot keep the rate.
const behindGrace = 100 * time.Millisecond

// behindPast is behind less the requests due in the grace before the end.
func behindPast(behind int64, rate float64, grace time.Duration) int64 {
	return max(0, behind-int64(math.Ceil(rate*grace.Seconds())))
}

// waitedFor is the client's scheduling wait (p99) when it may explain the
// step's failures: the rate kept and every failing objective a latency that
// would pass without that wait; 0 otherwise (a failure it cannot explain is
// the server's).
func waitedFor(vs []threshold.Verdict, kept bool, wait time.Duration) time.Duration {
	if !kept {
		return 0
	}
	for _, v := range vs {
		if v.Pass {
			continue
		}
		if v.Kind != threshold.Latency || v.NoData {
			return 0
		}
		if !v.Holds(v.Actual - float64(wait.Microseconds())) {
			return 0
		}
	}
	return wait
}
