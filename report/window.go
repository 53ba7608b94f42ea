package report

import (
	"errors"
	"fmt"
	"math"
	"time"

	"gab/client"
	"gab/internal/samples"
	"gab/internal/threshold"
)

// This file is a window of a run: the run's figures over a span of its
// timeline, as a run of its own whose catalog figures, --fail-if checks and
// verdicts read as a whole run's do. Rate steps (ratesteps.go) and gab
// capacity's steps (a step's measured part past its settle) are windows.

// windowPrecision says how a window's figures were computed (the extended
// section's sample store).
const windowPrecision = "the timeline's intervals: counts exact; latency from their HDR histograms (3 significant digits; min and max exact, mean and sd to the histograms' precision)"

// Window is the run's figures over the timeline's intervals that start in
// [from, to) (since the run's start): a run whose time taken is theirs (from
// the first one's start to the last one's end), whose counts (complete,
// failed by ab's classes, write errors, non-2xx, bytes read and sent) are
// the sums of theirs, and whose latency (the extended Total phase, and in
// rate mode the corrected latency) is their histograms merged, so that the
// catalog's figures (rps, p99, failed, sent_mbit_per_s, ...) and --fail-if's
// checks read the window as they read a run. The requests still in flight
// at the run's stop belong to the window that holds the run's last whole
// interval (only an interval cut short by the run's end may follow it),
// counted as a run counts them (outstanding.go). The verdicts are the
// run's (the machine's readings span the whole run), and a window has no
// ab tables, client or server CPU, keep-alive count or body bytes read
// (the intervals do not carry them: 0, and no catalog figure reads them).
// In a document read back the intervals carry neither the failures'
// classes nor the write errors (0) either; in one of an earlier gab, whose
// intervals lack the bytes sent or the status classes, the catalog's
// sent_mbit_per_s or non2xx of a window is absent (not measured), not 0.
// A run without a timeline, or a span without an interval, is an error.
func Window(r *Run, from, to time.Duration) (*Run, error) {
	tl := r.Timeline
	if r.Report == nil || tl == nil {
		return nil, errors.New("the run has no timeline")
	}
	wa := windowAcc{acc: intervalAcc{corrected: tl.Corrected}}
	next := len(tl.Intervals) // the first interval after the window
	for i := range tl.Intervals {
		iv := &tl.Intervals[i]
		at, length := tl.startLength(i)
		if at >= to && next > i {
			next = i
		}
		if at < from || at >= to {
			continue
		}
		var raw *client.Interval
		if i < len(tl.raw) {
			raw = &tl.raw[i]
		}
		if err := wa.add(iv, raw, at, length); err != nil {
			return nil, fmt.Errorf("interval %d: %w", i, err)
		}
	}
	// The window holds the run's last whole interval when only an interval
	// cut short by the run's end (the time the engine took to stop) follows.
	last := true
	for i := next; i < len(tl.Intervals); i++ {
		last = last && tl.Intervals[i].LengthUs < tl.IntervalUs
	}
	if !wa.acc.anyIncluded {
		return nil, fmt.Errorf("%w from %v to %v", errEmptyWindow, from, to)
	}
	return wa.run(r, last)
}

// startLength is interval i's start and length: to the nanosecond in the
// process that measured the run, to the µs in a document.
func (tl *timelineSection) startLength(i int) (start, length time.Duration) {
	if i < len(tl.raw) {
		return tl.raw[i].Start, tl.raw[i].Length
	}
	iv := &tl.Intervals[i]
	return time.Duration(iv.StartUs) * time.Microsecond, time.Duration(iv.LengthUs) * time.Microsecond
}

// errEmptyWindow is Window's error for a span in which no interval starts.
var errEmptyWindow = errors.New("no interval of the timeline starts")

// windowAcc gathers a window's intervals.
type windowAcc struct {
	acc        intervalAcc
	start, end time.Duration // the first interval's start, the last one's end
	intervals  []intervalFigures
	writeErr   int64
	failuresBy [client.FailuresUnclassified + 1]int64
	byClass    bool // every interval split its failures by class (in the process that measured it)
}

func (w *windowAcc) add(iv *intervalFigures, raw *client.Interval, at, length time.Duration) error {
	if !w.acc.anyIncluded {
		w.start, w.byClass = at, true
	}
	if err := w.acc.add(iv, iv.StartUs); err != nil {
		return err
	}
	w.end = max(w.end, at+length)
	w.intervals = append(w.intervals, *iv)
	if raw == nil {
		w.byClass = false
		return nil
	}
	w.writeErr += raw.WriteErrors
	for k, n := range raw.FailuresBy {
		w.failuresBy[k] += n
	}
	return nil
}

// run is the window's record, of run r; last says it holds r's last whole
// interval (and so the requests in flight at r's stop).
func (w *windowAcc) run(r *Run, last bool) (*Run, error) {
	a := &w.acc
	start := r.Timeline.start
	if start.IsZero() {
		t, err := time.Parse(time.RFC3339Nano, r.StartTime)
		if err != nil {
			return nil, fmt.Errorf("the run's start time: %v", err)
		}
		start = t
	}
	win := newRun(new(Run), r.CommandLine, start.Add(w.start))
	win.Ending, win.Environment, win.Error, win.Run = r.Ending, r.Environment, r.Error, r.Run
	win.local = local{elapsed: w.end - w.start, keepAlive: r.local.keepAlive, bodySent: r.local.bodySent, precision: windowPrecision}
	rp := *r.Report
	rp.counters = counters{CompleteRequests: int(a.req), FailedRequests: int(a.fail), WriteErrors: int(w.writeErr),
		TotalTransferredBytes: a.bytes, TotalBodySentBytes: a.sent}
	if a.noSent {
		win.local.unmeasured |= unmeasuredSent
	}
	if a.noStatus {
		win.local.unmeasured |= unmeasuredStatus
	}
	if w.byClass {
		f := &w.failuresBy
		rp.Failures = failures{Connect: int(f[client.FailureConnect]), Receive: int(f[client.FailureReceive]),
			Length: int(f[client.FailureLength]), Exceptions: int(f[client.FailureExceptions])}
	}
	if !a.noStatus {
		rp.Non2xxResponses = int(a.status[1] + a.status[3] + a.status[4] + a.status[5])
	}
	rp.ConnectionTimes, rp.PercentageServed, rp.ExactSamples, rp.StatisticsFromHistogram = nil, nil, 0, false
	rp.TLS = r.Report.TLS
	win.Report = &rp
	if last && r.Outstanding != nil {
		o := *r.Outstanding
		win.Outstanding = &o
	}
	total := a.lat.dist()
	win.Extended = &extendedFigures{StatusCounts: map[string]int{}, FailuresByClass: map[string]failureClass{}}
	win.Extended.Phases.Total = distOf(&total)
	if a.corrected && r.Rate != nil {
		cor := a.cor.dist()
		if o := win.Outstanding; o != nil && o.CorrectedAge != nil {
			if ages := o.CorrectedAge.decoded(); ages != nil {
				cor.Merge(ages)
			}
		}
		win.Rate = &rateFigures{OnScheduleTolUs: r.Rate.OnScheduleTolUs, Corrected: distOf(&cor)}
		if span := (w.end - w.start).Seconds(); span > 0 {
			win.Rate.TargetPerS = a.due / span
		}
	}
	// The window's timeline: its intervals from its start.
	win.Timeline = &timelineSection{IntervalUs: r.Timeline.IntervalUs, Corrected: r.Timeline.Corrected, Intervals: w.intervals,
		start: start.Add(w.start), interval: r.Timeline.interval}
	for i := range w.intervals {
		w.intervals[i].StartUs -= w.start.Microseconds()
	}
	win.Verdicts = r.Verdicts
	win.derive(&tables{}, nil)
	return win, nil
}

// dist is the merged intervals' distribution: count, min and max exact, the
// sum and the sd from the histogram (3 significant digits).
func (a *latencyAcc) dist() samples.Dist {
	if a.h == nil || a.count == 0 {
		return samples.NewDist()
	}
	n := float64(a.count)
	sd := 0.0
	if a.count > 1 {
		sd = a.h.StdDev() * math.Sqrt(n/(n-1)) // the population's sd to the sample's (n−1)
	}
	return samples.DistOf(a.count, a.min, a.max, int64(a.h.Mean()*n+0.5), sd, a.h)
}

// FromIntendedSend is the run as rate mode's corrected latencies give it: a
// copy whose latency figures (the catalog's mean, sd, min, max and
// percentiles, and so --fail-if's checks on them) are the times from each
// request's intended send time, those still in flight at the stop counted
// at their ages from it (as the rate section's corrected times count them);
// every other figure is the run's. Nil without the corrected latencies.
func (r *Run) FromIntendedSend() *Run {
	if r.Rate == nil || r.Report == nil || r.Rate.Corrected.Histogram == nil {
		return nil
	}
	v := *r
	// The corrected times already hold the requests in flight at the stop
	// (rateOf, Window): the view keeps their count and failures but no
	// ages of its own, so that latencyWithOutstanding does not add them
	// twice; without a Sums section the catalog reads the Total phase.
	v.Sums = nil
	x := extendedFigures{}
	if r.Extended != nil {
		x = *r.Extended
	}
	x.Phases.Total = r.Rate.Corrected
	v.Extended = &x
	if o := r.Outstanding; o != nil {
		v.Outstanding = &outstandingFigures{Requests: o.Requests, Failed: o.Failed, TimeoutS: o.TimeoutS}
	}
	v.Thresholds, v.local.verdicts = nil, nil
	v.Figures = figuresOf(&v)
	return &v
}

// ThresholdFigures are the figures --fail-if's (and gab capacity's --slo)
// thresholds test on the run: the catalog's (Figure.Value), a latency in
// µs, a count's percentage of the requests recorded and those in flight at
// the stop.
func (r *Run) ThresholdFigures() threshold.Figures { return r.thresholdFigures() }

// ConnectionsBusy is the share of the time its conns connections spent
// carrying the run's requests (BusyShare, at most 1): the completed
// requests' total times and the ages of those in flight at the stop, over
// the run's time taken.
func (r *Run) ConnectionsBusy(conns int) float64 {
	if r.Report == nil {
		return 0
	}
	return min(1, BusyShare(r.inFlightTime(), conns, r.local.elapsed))
}
