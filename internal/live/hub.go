// Package live hands a run's timeline on while the run goes (gab's --live,
// --metrics, --remote-write and --dashboard): the engine's collector passes
// each interval as it closes (client.Config.OnInterval) to a Stream, which
// adds it to the run's cumulative counts and gives the Hub an Event; the Hub
// queues the event for every sink, each of which handles its events in order
// on a goroutine of its own. A sink that falls behind loses interval events
// (its queue is bounded, its losses counted), never the run's final event,
// and never slows the collector: publishing takes a short lock and copies a
// pointer.
package live

import (
	"sync"
	"time"

	"gab/client"
	"gab/report"
)

// Run names one measured run among those a gab process streams: a plain
// run, or one capacity step or sweep point.
type Run struct {
	// ID identifies the process's runs (label run_id): the start time of
	// the process, the same for every step or point.
	ID string
	// Target is the URL benchmarked (credentials removed).
	Target string
	// Step names the capacity step or sweep point ("" for a plain run).
	Step string
	// Interval is the timeline's interval; Rate tells rate mode (the
	// intervals carry the requests due, Interval.Due).
	Interval time.Duration
	Rate     bool
}

// Totals are a run's cumulative counts.
type Totals struct {
	// Complete counts the recorded requests (ab's Complete requests).
	Complete int64
	// Failed counts ab's Failed requests, FailuresBy by class (indexed as
	// client.Interval.FailuresBy).
	Failed     int64
	FailuresBy [client.FailuresUnclassified + 1]int64
	// Status counts the recorded requests by status class (client.Interval.Status).
	Status [6]int64
	// Bytes is every byte read, heads included; Sent every request byte
	// written, heads and bodies (the report's "Total body sent").
	Bytes, Sent int64
}

func (t *Totals) add(iv *client.Interval) {
	t.Complete += iv.Requests
	t.Failed += iv.Failures
	t.Bytes += iv.Bytes
	t.Sent += iv.Sent
	for i, v := range iv.FailuresBy {
		t.FailuresBy[i] += v
	}
	for i, v := range iv.Status {
		t.Status[i] += v
	}
}

// Event is one thing a sink is told about a run: an interval that closed,
// or the run's end (Final). Sinks must not modify it (it is shared).
type Event struct {
	Run *Run
	// Time is when the event was published (the interval's close, a
	// little after its end; the run's end).
	Time time.Time
	// Index is the interval's index in the run's timeline (interval events).
	Index    int
	Interval client.Interval
	// Totals are cumulative: over the intervals handed on so far, and in the
	// final event the run's own, equal to the report's (Complete, Failed,
	// its classes, Bytes and Sent from the report, Status from the run's
	// timeline, which holds the records that came after their interval was
	// handed on).
	Totals Totals
	// Final marks the run's last event; Report is the run's record and
	// Timeline its exact intervals (nil without a timeline).
	Final    bool
	Report   *report.Run
	Timeline []client.Interval
	// Ending is how the run ended (client.Ending's String()).
	Ending string
}

// Handler handles a sink's events in order, on the sink's goroutine.
// dropped is how many interval events the sink has lost so far (its queue
// was full).
type Handler func(ev *Event, dropped int64)

// Sub is one sink attached to a Hub.
type Sub struct {
	name  string
	depth int
	h     Handler

	mu      sync.Mutex
	q       []*Event
	pending int // interval events in q
	dropped int64
	wake    chan struct{}
	closed  bool
	busy    bool // handling an event
	done    chan struct{}
}

// Name is the sink's name, as Attach was given it.
func (s *Sub) Name() string { return s.name }

// Dropped is how many interval events the sink has lost.
func (s *Sub) Dropped() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Queued is how many interval events wait in the sink's queue (not the one
// being handled): a sink that handles events in batches, such as the
// dashboard rendering a page, acts when none is left.
func (s *Sub) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

func (s *Sub) put(ev *Event) {
	s.mu.Lock()
	switch {
	case s.closed:
	case !ev.Final && s.pending >= s.depth:
		s.dropped++
	default:
		s.q = append(s.q, ev)
		if !ev.Final {
			s.pending++
		}
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Sub) loop() {
	defer close(s.done)
	for {
		s.mu.Lock()
		if len(s.q) == 0 {
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return
			}
			<-s.wake
			continue
		}
		ev := s.q[0]
		s.q[0] = nil
		s.q = s.q[1:]
		if !ev.Final {
			s.pending--
		}
		dropped := s.dropped
		s.busy = true
		s.mu.Unlock()
		s.h(ev, dropped)
		s.mu.Lock()
		s.busy = false
		s.mu.Unlock()
	}
}

// Hub fans a process's run events out to its sinks.
type Hub struct {
	mu   sync.Mutex
	subs []*Sub
}

// DefaultDepth is a sink's queue of interval events when Attach is given 0:
// a minute of 1 s intervals.
const DefaultDepth = 64

// Attach adds a sink whose queue holds depth interval events (0:
// DefaultDepth) and starts its goroutine. Attach sinks before the first
// run's Begin: a sink sees the events published after it was attached.
func (h *Hub) Attach(name string, depth int, handle Handler) *Sub {
	if depth <= 0 {
		depth = DefaultDepth
	}
	s := &Sub{name: name, depth: depth, h: handle, wake: make(chan struct{}, 1), done: make(chan struct{})}
	h.mu.Lock()
	h.subs = append(h.subs, s)
	h.mu.Unlock()
	go s.loop()
	return s
}

// Subs are the sinks attached.
func (h *Hub) Subs() []*Sub {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*Sub(nil), h.subs...)
}

func (h *Hub) publish(ev *Event) {
	if h == nil {
		return
	}
	h.mu.Lock()
	subs := h.subs
	h.mu.Unlock()
	for _, s := range subs {
		s.put(ev)
	}
}

// Close lets every sink handle what it has queued, waiting at most wait
// in all, and returns the sinks that did not finish in time (still handling
// an event: a reader that does not read). Events published after Close are
// dropped.
func (h *Hub) Close(wait time.Duration) (late []*Sub) {
	if h == nil {
		return nil
	}
	subs := h.Subs()
	for _, s := range subs {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	passed := false
	for _, s := range subs {
		if !passed {
			select {
			case <-s.done:
				continue
			case <-deadline.C:
				passed = true
			}
		}
		s.mu.Lock()
		if s.busy || len(s.q) > 0 {
			late = append(late, s)
		}
		s.mu.Unlock()
	}
	return late
}

// Stream is one run's way into the Hub.
type Stream struct {
	hub    *Hub
	run    *Run
	next   int
	totals Totals
}

// Begin starts streaming run r (which must not change afterwards: the
// sinks read it). A nil Hub gives a Stream that publishes nothing.
func (h *Hub) Begin(r Run) *Stream {
	return &Stream{hub: h, run: &r}
}

// Run is the run the stream is about.
func (s *Stream) Run() *Run { return s.run }

// OnInterval is the run's client.Config.OnInterval: it adds iv to the
// cumulative counts and publishes it. The engine calls it from one
// goroutine at a time.
func (s *Stream) OnInterval(iv client.Interval) {
	s.totals.add(&iv)
	ev := &Event{Run: s.run, Time: time.Now(), Index: s.next, Interval: iv, Totals: s.totals}
	s.next++
	s.hub.publish(ev)
}

// Finish publishes the run's final event: its record sum and the engine's
// result res (nil when the run never started). Call it once, after Run
// returned.
func (s *Stream) Finish(sum *report.Run, res *client.Result) {
	ev := &Event{Run: s.run, Time: time.Now(), Final: true, Report: sum, Totals: FinalTotals(sum, res)}
	if res != nil {
		ev.Ending = res.Ending.String()
		if res.Timeline != nil {
			ev.Timeline = res.Timeline.Intervals
		}
	}
	s.hub.publish(ev)
}

// FinalTotals are a finished run's totals as its report states them:
// Complete, Failed, the classes and the bytes read and written from sum,
// the status classes from res's timeline; without a report, Complete and
// Failed from res and the rest from its timeline. Failures of no class are
// Failed less the classes.
func FinalTotals(sum *report.Run, res *client.Result) Totals {
	var t Totals
	if res != nil && res.Timeline != nil {
		for i := range res.Timeline.Intervals {
			t.add(&res.Timeline.Intervals[i])
		}
	}
	if sum != nil && sum.Report != nil {
		r := sum.Report
		t.Complete, t.Failed = int64(r.CompleteRequests), int64(r.FailedRequests)
		t.FailuresBy = [client.FailuresUnclassified + 1]int64{
			client.FailureConnect:    int64(r.Failures.Connect),
			client.FailureReceive:    int64(r.Failures.Receive),
			client.FailureLength:     int64(r.Failures.Length),
			client.FailureExceptions: int64(r.Failures.Exceptions),
		}
		t.FailuresBy[client.FailuresUnclassified] = max(t.Failed-int64(r.Failures.Connect+r.Failures.Receive+r.Failures.Length+r.Failures.Exceptions), 0)
		t.Bytes, t.Sent = r.TotalTransferredBytes, r.TotalBodySentBytes
	} else if res != nil {
		t.Complete, t.Failed = int64(res.Complete), int64(res.Failed.Total)
	}
	return t
}
