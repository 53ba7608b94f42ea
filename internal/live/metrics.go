package live

import (
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"gab/client"
	"gab/internal/samples"
)

// This file is the state behind --metrics and --remote-write: for each run,
// the series gab exports, kept up to date by a sink from the events and read
// by the scrape handler (prom.go) and the remote writer (remotewrite.go).
//
// The latency histogram (gab_request_duration_seconds) is filled from the
// intervals' HDR histograms with fixed bounds that are bucket starts of
// gab's HDR geometry (DurationBounds), so that every bucket's count is
// exact: the requests whose total time, to the µs the timeline records, is
// below the bound.

// DurationBounds are the upper bounds in µs of the latency histogram's
// buckets: 100 µs × 2^k and 150 µs × 2^k, from 100 µs to 78.6 s. Each is
// the lowest value of one of the HDR histogram's buckets (gab's geometry: 3
// significant digits), so that no HDR bucket straddles a bound.
var DurationBounds = func() []int64 {
	var b []int64
	for v := int64(100); v <= 150<<19; v *= 2 {
		b = append(b, v, v*3/2)
	}
	return b
}()

// resultLabels are gab_requests_total's result values, by
// client.Interval.Status's index, then "failed".
var resultLabels = [...]string{"none", "1xx", "2xx", "3xx", "4xx", "5xx", "failed"}

// classLabels are gab_failures_total's class values, by
// client.Interval.FailuresBy's index.
var classLabels = [client.FailuresUnclassified + 1]string{
	client.FailureConnect:       "connect",
	client.FailureReceive:       "receive",
	client.FailureLength:        "length",
	client.FailureExceptions:    "exceptions",
	client.FailuresUnclassified: "unclassified",
}

// runSeries are one run's series.
type runSeries struct {
	run    *Run
	totals Totals
	// buckets[i] counts the requests below DurationBounds[i] and at or
	// above the previous bound (not cumulative); over those past the last.
	buckets []int64
	over    int64
	count   int64
	sumUs   int64 // exact at the end; during the run the HDR buckets' lowest values (a lower bound within 0.1 %)
	// rate is the schedule's rate over the last interval (rate mode).
	rate     float64
	conns    int64
	finished bool
	updated  time.Time // the last event's time
}

// Metrics holds the series of a process's runs. Its methods are safe for
// concurrent use.
type Metrics struct {
	mu   sync.Mutex
	runs []*runSeries
	// bad counts interval histograms that did not decode (never expected:
	// gab made them).
	bad int64
}

func (m *Metrics) seriesLocked(r *Run) *runSeries {
	for _, s := range m.runs {
		if s.run == r {
			return s
		}
	}
	s := &runSeries{run: r, buckets: make([]int64, len(DurationBounds))}
	m.runs = append(m.runs, s)
	return s
}

// Handle takes an event in (a Hub handler: a sink's goroutine calls it).
// The histogram is decoded outside the lock.
func (m *Metrics) Handle(ev *Event, _ int64) {
	if ev.Final {
		var b histBuckets
		b.init()
		for i := range ev.Timeline {
			b.addEncoded(ev.Timeline[i].Latency.Histogram, ev.Timeline[i].Requests)
		}
		if ev.Report != nil && ev.Report.Sums != nil && ev.Report.Sums.Total.Count == b.count {
			b.sumUs = int64(ev.Report.Sums.Total.SumUs) // exact
		}
		m.mu.Lock()
		s := m.seriesLocked(ev.Run)
		// The counters never go back: the final counts hold what the
		// intervals handed on held, and what came late.
		s.totals, s.finished, s.updated = maxTotals(s.totals, ev.Totals), true, ev.Time
		if b.count >= s.count {
			s.buckets, s.over, s.count, s.sumUs = b.buckets, b.over, b.count, max(b.sumUs, s.sumUs)
		}
		m.bad += b.bad
		s.conns = 0
		m.mu.Unlock()
		return
	}
	var b histBuckets
	b.init()
	b.addEncoded(ev.Interval.Latency.Histogram, ev.Interval.Requests)
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.seriesLocked(ev.Run)
	s.totals, s.updated = ev.Totals, ev.Time
	for i, c := range b.buckets {
		s.buckets[i] += c
	}
	s.over += b.over
	s.count += b.count
	s.sumUs += b.sumUs
	m.bad += b.bad
	s.conns = ev.Interval.ConnsOpen
	if ev.Run.Rate && ev.Interval.Length > 0 {
		s.rate = ev.Interval.Due / ev.Interval.Length.Seconds()
	}
}

// maxTotals is each count's larger value: the report's totals hold every
// interval's records (and bytes read for requests never recorded), so a
// counter can only grow, but a counter must never go back whatever happens.
func maxTotals(a, b Totals) Totals {
	a.Complete, a.Failed, a.Bytes, a.Sent = max(a.Complete, b.Complete), max(a.Failed, b.Failed), max(a.Bytes, b.Bytes), max(a.Sent, b.Sent)
	for i := range a.FailuresBy {
		a.FailuresBy[i] = max(a.FailuresBy[i], b.FailuresBy[i])
	}
	for i := range a.Status {
		a.Status[i] = max(a.Status[i], b.Status[i])
	}
	return a
}

// histBuckets gathers a histogram's values into DurationBounds' buckets.
type histBuckets struct {
	buckets            []int64
	over, count, sumUs int64
	bad                int64
}

func (b *histBuckets) init() { b.buckets = make([]int64, len(DurationBounds)) }

// addEncoded adds an interval's histogram of n values (in its V2
// compressed base64 encoding).
func (b *histBuckets) addEncoded(data string, n int64) {
	if n == 0 {
		return
	}
	h, err := samples.DecodeHist(data)
	if err != nil || h.TotalCount() != n {
		b.bad++
		return
	}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		// Every value of the bar is below a bound exactly when its lowest
		// is: the bounds are bucket starts.
		i := sort.Search(len(DurationBounds), func(i int) bool { return bar.From < DurationBounds[i] })
		if i == len(DurationBounds) {
			b.over += bar.Count
		} else {
			b.buckets[i] += bar.Count
		}
		b.count += bar.Count
		b.sumUs += bar.From * bar.Count
	}
}

// sample is one series' value: its name, labels (name, value pairs, the
// run's first) and value.
type sample struct {
	name   string
	labels []string
	value  float64
}

// family is one metric family: its samples share a name's base, a type and
// a help text.
type family struct {
	name, typ, help, unit string
	samples               []sample
}

// snapshot is every family's samples now, in a fixed order.
func (m *Metrics) snapshot() []family {
	m.mu.Lock()
	defer m.mu.Unlock()
	fams := []family{
		{name: "gab_requests", typ: "counter", help: "Requests gab recorded, by the class of their status (none: no status read), and ab's failed requests (result=\"failed\"): the sum is the complete requests plus the failed ones."},
		{name: "gab_failures", typ: "counter", help: "ab's failed requests by class (unclassified: an oversized response head)."},
		{name: "gab_request_duration_seconds", typ: "histogram", unit: "seconds", help: "Requests' total time (ab's Total: connect to the response's end); each bucket counts the requests below its bound, to the microsecond. _count is the complete requests."},
		{name: "gab_received_bytes", typ: "counter", unit: "bytes", help: "Bytes gab read, response heads included."},
		{name: "gab_sent_bytes", typ: "counter", unit: "bytes", help: "Bytes gab wrote, request heads and bodies (ab's Total body sent at the end)."},
		{name: "gab_rate_target_per_second", typ: "gauge", help: "The rate the --rate schedule asked for over the last interval (absent without --rate)."},
		{name: "gab_connections_open", typ: "gauge", help: "Connections gab had open at the last interval's close, connecting ones included."},
		{name: "gab_run_finished", typ: "gauge", help: "1 once the run has ended and every series holds its final value."},
	}
	for _, s := range m.runs {
		base := []string{"run_id", s.run.ID, "target", s.run.Target}
		if s.run.Step != "" {
			base = append(base, "step", s.run.Step)
		}
		with := func(kv ...string) []string { return append(append([]string(nil), base...), kv...) }
		t := &s.totals
		for i, v := range t.Status {
			fams[0].samples = append(fams[0].samples, sample{"gab_requests_total", with("result", resultLabels[i]), float64(v)})
		}
		fams[0].samples = append(fams[0].samples, sample{"gab_requests_total", with("result", resultLabels[6]), float64(t.Failed)})
		for i, v := range t.FailuresBy {
			fams[1].samples = append(fams[1].samples, sample{"gab_failures_total", with("class", classLabels[i]), float64(v)})
		}
		var cum int64
		for i, c := range s.buckets {
			cum += c
			fams[2].samples = append(fams[2].samples, sample{"gab_request_duration_seconds_bucket", with("le", formatSeconds(DurationBounds[i])), float64(cum)})
		}
		fams[2].samples = append(fams[2].samples,
			sample{"gab_request_duration_seconds_bucket", with("le", "+Inf"), float64(cum + s.over)},
			sample{"gab_request_duration_seconds_count", with(), float64(s.count)},
			sample{"gab_request_duration_seconds_sum", with(), float64(s.sumUs) / 1e6})
		fams[3].samples = append(fams[3].samples, sample{"gab_received_bytes_total", with(), float64(t.Bytes)})
		fams[4].samples = append(fams[4].samples, sample{"gab_sent_bytes_total", with(), float64(t.Sent)})
		if s.run.Rate {
			fams[5].samples = append(fams[5].samples, sample{"gab_rate_target_per_second", with(), s.rate})
		}
		fams[6].samples = append(fams[6].samples, sample{"gab_connections_open", with(), float64(s.conns)})
		fin := 0.0
		if s.finished {
			fin = 1
		}
		fams[7].samples = append(fams[7].samples, sample{"gab_run_finished", with(), fin})
	}
	return fams
}

// Finished reports whether every run seen has ended (and at least one was).
func (m *Metrics) Finished() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.runs {
		if !s.finished {
			return false
		}
	}
	return len(m.runs) > 0
}

// formatSeconds writes µs as seconds, exactly (at most 6 decimals).
func formatSeconds(us int64) string {
	return strconv.FormatFloat(float64(us)/1e6, 'f', -1, 64)
}

// formatValue writes a sample's value as Prometheus's parsers read it.
func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
