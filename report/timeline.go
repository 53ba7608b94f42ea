package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/client"
	"gab/internal/samples"
)

// This file is the latency timeline (client.Config.Interval) as every writer
// shows it: the JSON document's timeline section, the --extended table, the
// standard HdrHistogram interval log (--hlog), and the merge of several
// documents' timelines by wall-clock interval (gab merge). Charts draw
// percentiles over time from these intervals, never from raw points.

// timelineSection is the run's latency over time: one entry per interval of the run
// from its start, empty intervals included.
type timelineSection struct {
	IntervalUs int64 `json:"interval_us"`
	// Corrected says every interval has rate mode's corrected latencies.
	Corrected bool              `json:"corrected"`
	Intervals []intervalFigures `json:"intervals"`

	// In the process that measured it: the run's start (interval i starts at
	// start + Intervals[i].StartUs), the interval and the engine's intervals,
	// to the nanosecond.
	start    time.Time
	interval time.Duration
	raw      []client.Interval
}

// IntervalLatency is one interval's latency distribution in µs: min and
// max exact, percentiles by the nearest rank (samples.NearestRank) from the
// histogram (bucket tops, 3 significant digits), and the histogram in the run
// histogram's encoding.
// The figures are 0 in an empty interval. It is exported because an interval
// embeds it: the document's checks (walkDocument) reach the strings of an
// embedded section only through an exported type.
type IntervalLatency struct {
	MinUs     int64         `json:"min_us"`
	P50Us     int64         `json:"p50_us"`
	P90Us     int64         `json:"p90_us"`
	P99Us     int64         `json:"p99_us"`
	P999Us    int64         `json:"p99_9_us"`
	MaxUs     int64         `json:"max_us"`
	Histogram histogramData `json:"histogram,omitzero"`
	// HistogramSameAs is set in a document only, instead of Histogram: the
	// sums column ("sums.total") whose histogram is the interval's (one
	// interval holding every request of the run).
	HistogramSameAs string `json:"histogram_same_as,omitempty"`
}

// intervalFigures is one interval: the requests recorded with an end time in it
// (they sum to complete_requests), the failures that ended in it (ab's Failed
// requests, connect failures included), the bytes read and written (heads
// included, counted when a request or a failure is recorded), and the
// latency of its requests (ab's Total: start to end).
type intervalFigures struct {
	StartUs  int64 `json:"start_us"` // since the document's start_time
	LengthUs int64 `json:"length_us"`
	Requests int64 `json:"requests"`
	Failures int64 `json:"failures"`
	Bytes    int64 `json:"bytes"`
	// SentBytes is the request bytes written (client.Interval.Sent; absent
	// in documents of gab versions before it, whose intervals did not count
	// them: a sum over such an interval is not measured).
	SentBytes *int64 `json:"sent_bytes,omitempty"`
	// Status counts the requests by status class (absent in documents of
	// gab versions before it).
	Status *statusClasses `json:"status_classes,omitempty"`
	IntervalLatency
	// Corrected is the latency from each request's intended send time (rate mode).
	Corrected *IntervalLatency `json:"corrected,omitempty"`
	// TargetPerS is the rate the schedule asked for in the interval (rate
	// mode: a ramp's or a step's rate there); the achieved rate is Requests
	// over the length.
	TargetPerS float64 `json:"target_per_s,omitempty"`
	// TLSHandshakes counts the interval's requests that opened a connection
	// with a TLS handshake, TLSHandshakeUs is the sum of those handshakes'
	// times (the extended report's TLS phase); both absent when none did.
	TLSHandshakes  int64 `json:"tls_handshakes,omitempty"`
	TLSHandshakeUs int64 `json:"tls_handshake_us,omitempty"`
}

// tlsPerRequestUs is the interval's TLS handshake time per request (µs):
// the TLS phase's mean over all its requests, those on a kept-alive
// connection counting 0, as ab's Connect column averages the connect.
func (iv *intervalFigures) tlsPerRequestUs() float64 {
	if iv.Requests == 0 {
		return 0
	}
	return float64(iv.TLSHandshakeUs) / float64(iv.Requests)
}

// statusClasses are an interval's requests by the class of their status.
type statusClasses struct {
	None int64 `json:"none"` // no status read, or one outside 100–599
	C1xx int64 `json:"1xx"`
	C2xx int64 `json:"2xx"`
	C3xx int64 `json:"3xx"`
	C4xx int64 `json:"4xx"`
	C5xx int64 `json:"5xx"`
}

func statusOf(c [6]int64) *statusClasses {
	return &statusClasses{None: c[0], C1xx: c[1], C2xx: c[2], C3xx: c[3], C4xx: c[4], C5xx: c[5]}
}

// counts are the classes in client.Interval.Status's order.
func (s *statusClasses) counts() [6]int64 {
	return [6]int64{s.None, s.C1xx, s.C2xx, s.C3xx, s.C4xx, s.C5xx}
}

func intervalLatency(l client.IntervalLatency) IntervalLatency {
	return IntervalLatency{
		MinUs: l.MinUs, P50Us: l.P50Us, P90Us: l.P90Us, P99Us: l.P99Us, P999Us: l.P999Us, MaxUs: l.MaxUs,
		Histogram: histogramData{
			Unit:              "us",
			LowestUs:          samples.HistLowestUS,
			HighestUs:         samples.HistHighestUS,
			SignificantDigits: samples.HistDigits,
			Encoding:          histogramEncoding,
			Data:              l.Histogram,
		},
	}
}

func timelineOf(res *client.Result) *timelineSection {
	rt := res.Timeline
	if rt == nil {
		return nil
	}
	tl := &timelineSection{IntervalUs: rt.Interval.Microseconds(), Corrected: rt.Corrected, Intervals: []intervalFigures{},
		start: res.Start, interval: rt.Interval, raw: rt.Intervals}
	for _, iv := range rt.Intervals {
		sent := iv.Sent
		j := intervalFigures{
			StartUs: iv.Start.Microseconds(), LengthUs: iv.Length.Microseconds(),
			Requests: iv.Requests, Failures: iv.Failures, Bytes: iv.Bytes, SentBytes: &sent, Status: statusOf(iv.Status),
			IntervalLatency: intervalLatency(iv.Latency),
			TLSHandshakes:   iv.TLSHandshakes, TLSHandshakeUs: iv.TLSUs,
		}
		if iv.Length > 0 && iv.Due > 0 {
			j.TargetPerS = iv.Due / iv.Length.Seconds()
		}
		if tl.Corrected {
			c := intervalLatency(iv.Corrected)
			j.Corrected = &c
		}
		tl.Intervals = append(tl.Intervals, j)
	}
	return tl
}

// hasTLS reports whether a request of the timeline did a TLS handshake.
func (tl *timelineSection) hasTLS() bool {
	if tl == nil {
		return false
	}
	for i := range tl.Intervals {
		if tl.Intervals[i].TLSHandshakes > 0 {
			return true
		}
	}
	return false
}

// span is interval i's start and length in seconds: to the nanosecond in the
// process that measured the run, to the µs in a document.
func (tl *timelineSection) span(i int) (start, length float64) {
	if i < len(tl.raw) {
		return tl.raw[i].Start.Seconds(), tl.raw[i].Length.Seconds()
	}
	return float64(tl.Intervals[i].StartUs) / 1e6, float64(tl.Intervals[i].LengthUs) / 1e6
}

// length is the timeline's interval.
func (tl *timelineSection) length() time.Duration {
	if tl.interval > 0 {
		return tl.interval
	}
	return time.Duration(tl.IntervalUs) * time.Microsecond
}

// latencyAcc merges interval latencies by their histograms.
type latencyAcc struct {
	h               *hdrhistogram.Histogram
	count, min, max int64
}

func (a *latencyAcc) add(count int64, l IntervalLatency) error {
	if count == 0 {
		return nil
	}
	h, err := samples.DecodeHist(l.Histogram.Data)
	if err != nil {
		return fmt.Errorf("interval histogram: %w", err)
	}
	if h.TotalCount() != count {
		return fmt.Errorf("interval histogram holds %d values for %d requests", h.TotalCount(), count)
	}
	if a.h == nil {
		a.h = samples.NewHist()
		a.min = math.MaxInt64
	}
	if dropped := a.h.Merge(h); dropped != 0 {
		return fmt.Errorf("interval histogram: %d values out of gab's range", dropped)
	}
	a.count += count
	a.min, a.max = min(a.min, l.MinUs), max(a.max, l.MaxUs)
	return nil
}

func (a *latencyAcc) latency() IntervalLatency {
	if a.h == nil {
		return intervalLatency(client.LatencyOf(samples.NewHist(), 0, 0, 0))
	}
	return intervalLatency(client.LatencyOf(a.h, a.count, a.min, a.max))
}

// intervalAcc merges intervals.
type intervalAcc struct {
	start, end             int64 // µs
	req, fail, bytes, sent int64
	tlsN, tlsUs            int64 // TLS handshakes and their time (µs)
	status                 [6]int64
	noStatus               bool // an interval without status classes was added
	noSent                 bool // an interval without sent_bytes was added
	lat, cor               latencyAcc
	corrected, anyIncluded bool
	due                    float64 // requests the schedule had due (rate mode)
}

func (a *intervalAcc) add(iv *intervalFigures, startUs int64) error {
	if !a.anyIncluded || startUs < a.start {
		a.start = startUs
	}
	a.end = max(a.end, startUs+iv.LengthUs)
	a.anyIncluded = true
	a.req += iv.Requests
	a.fail += iv.Failures
	a.bytes += iv.Bytes
	if iv.SentBytes == nil {
		a.noSent = true
	} else {
		a.sent += *iv.SentBytes
	}
	a.tlsN += iv.TLSHandshakes
	a.tlsUs += iv.TLSHandshakeUs
	a.due += iv.TargetPerS * float64(iv.LengthUs) / 1e6
	if iv.Status == nil {
		a.noStatus = true
	} else {
		for i, c := range iv.Status.counts() {
			a.status[i] += c
		}
	}
	if err := a.lat.add(iv.Requests, iv.IntervalLatency); err != nil {
		return err
	}
	if a.corrected {
		if iv.Corrected == nil {
			return errors.New("an interval without the corrected latencies")
		}
		return a.cor.add(iv.Requests, *iv.Corrected)
	}
	return nil
}

func (a *intervalAcc) interval() intervalFigures {
	iv := intervalFigures{StartUs: a.start, LengthUs: a.end - a.start, Requests: a.req, Failures: a.fail,
		Bytes: a.bytes, IntervalLatency: a.lat.latency(), TLSHandshakes: a.tlsN, TLSHandshakeUs: a.tlsUs}
	if iv.LengthUs > 0 && a.due > 0 {
		iv.TargetPerS = a.due / (float64(iv.LengthUs) / 1e6)
	}
	if !a.noStatus {
		iv.Status = statusOf(a.status)
	}
	if !a.noSent {
		sent := a.sent
		iv.SentBytes = &sent
	}
	if a.corrected {
		c := a.cor.latency()
		iv.Corrected = &c
	}
	return iv
}

// mergeTimelines merges the timelines of several documents (shards of one
// run, say) by wall-clock interval: interval i of the result covers
// [start+i·interval, start+(i+1)·interval), start being the earliest of
// the documents' starts (returned), and each document's interval goes into
// the merged interval in which its midpoint falls, so shards started
// together (--start-at) line up exactly. Counts add up (the TLS handshakes'
// counts and times too; the bytes sent only if every interval has them);
// percentiles come from the merged histograms (exact to 3 significant
// digits), min and max stay exact. Every document must have
// a timeline with the same interval; the corrected latencies are kept only
// if every document has them.
func mergeTimelines(docs []*Run, starts []time.Time) (*timelineSection, time.Time, error) {
	var base time.Time
	var d int64
	corrected := true
	for i, doc := range docs {
		if doc.Timeline == nil {
			return nil, time.Time{}, fmt.Errorf("document %d has no timeline", i+1)
		}
		st := starts[i]
		if i == 0 || st.Before(base) {
			base = st
		}
		if i == 0 {
			d = doc.Timeline.IntervalUs
		} else if doc.Timeline.IntervalUs != d {
			return nil, time.Time{}, fmt.Errorf("document %d has %d µs intervals, document 1 %d µs", i+1, doc.Timeline.IntervalUs, d)
		}
		corrected = corrected && doc.Timeline.Corrected
	}
	if len(docs) == 0 || d <= 0 {
		return nil, time.Time{}, errors.New("no timeline to merge")
	}
	var accs []intervalAcc
	noSent := !everySent(docs) // then no merged interval has the bytes sent, gaps included
	for i, doc := range docs {
		offset := starts[i].Sub(base).Microseconds()
		for j := range doc.Timeline.Intervals {
			iv := &doc.Timeline.Intervals[j]
			at := offset + iv.StartUs
			k := int((at + iv.LengthUs/2) / d)
			for len(accs) <= k {
				accs = append(accs, intervalAcc{corrected: corrected, noSent: noSent})
			}
			if err := accs[k].add(iv, at); err != nil {
				return nil, time.Time{}, fmt.Errorf("document %d, interval %d: %w", i+1, j, err)
			}
		}
	}
	out := &timelineSection{IntervalUs: d, Corrected: corrected, Intervals: []intervalFigures{}}
	for k := range accs {
		a := &accs[k]
		// The merged interval's own bounds: a whole interval, or less for a
		// last one that every document's run ended within.
		end := a.end
		if !a.anyIncluded || end > int64(k+1)*d || k < len(accs)-1 {
			end = int64(k+1) * d
		}
		a.start, a.end = int64(k)*d, max(end, int64(k)*d)
		out.Intervals = append(out.Intervals, a.interval())
	}
	return out, base, nil
}

// everySent reports whether every interval of the documents' timelines
// has its bytes sent (none of an earlier gab's document has).
func everySent(docs []*Run) bool {
	for _, doc := range docs {
		for j := range doc.Timeline.Intervals {
			if doc.Timeline.Intervals[j].SentBytes == nil {
				return false
			}
		}
	}
	return true
}

// timelineRows are the --extended table's rows: the intervals, or, past
// maxTimelineRows of them, groups of consecutive intervals merged into one
// row each so the table stays compact.
const maxTimelineRows = 60

func timelineRows(tl *timelineSection) ([]intervalFigures, int, error) {
	per := max(1, (len(tl.Intervals)+maxTimelineRows-1)/maxTimelineRows)
	rows, err := tl.grouped(per)
	return rows, per, err
}

// grouped is the intervals merged k at a time (the last group may be
// shorter); the intervals themselves for k 1.
func (tl *timelineSection) grouped(k int) ([]intervalFigures, error) {
	if k <= 1 {
		return tl.Intervals, nil
	}
	var out []intervalFigures
	for i := 0; i < len(tl.Intervals); i += k {
		a := intervalAcc{corrected: tl.Corrected}
		for j := i; j < min(i+k, len(tl.Intervals)); j++ {
			if err := a.add(&tl.Intervals[j], tl.Intervals[j].StartUs); err != nil {
				return nil, err
			}
		}
		out = append(out, a.interval())
	}
	return out, nil
}

// writeTimelineTable writes the --extended report's latency-over-time table.
func writeTimelineTable(p *errWriter, tl *timelineSection) {
	if tl == nil {
		return
	}
	p.printf("\nLatency over time (%v intervals from the start; requests, failures and KB received by end time;\n", tl.length())
	p.printf("  latency in ms: min and max exact, percentiles: nearest rank, bucket tops of HDR histograms, 3 significant digits)\n")
	if len(tl.Intervals) < 2 {
		p.printf("  (the run was shorter than two intervals: see the tables above)\n")
		return
	}
	rows, per, err := timelineRows(tl)
	if err != nil {
		p.printf("  (%v)\n", err)
		return
	}
	if per > 1 {
		p.printf("  (%d intervals, %d to a row)\n", len(tl.Intervals), per)
	}
	p.printf("%10s%10s%9s%10s%10s%10s%10s%10s%10s%10s\n", "start(s)", "requests", "failed", "KB", "min", "p50", "p90", "p99", "p99.9", "max")
	for _, r := range rows {
		p.printf("%10.3f%10d%9d%10.1f", float64(r.StartUs)/1e6, r.Requests, r.Failures, float64(r.Bytes)/1024)
		if r.Requests == 0 {
			p.printf("%10s%10s%10s%10s%10s%10s\n", "-", "-", "-", "-", "-", "-")
			continue
		}
		for _, v := range []int64{r.MinUs, r.P50Us, r.P90Us, r.P99Us, r.P999Us, r.MaxUs} {
			p.printf("%10s", ms3(float64(v)))
		}
		p.printf("\n")
	}
	if tl.Corrected {
		p.printf("\nCorrected latency over time (ms, from each request's intended send time; the schedule's target\n")
		p.printf("  and the achieved rate per second; uncorrected p99 beside)\n")
		p.printf("%10s%10s%10s%10s%10s%10s%10s%10s%10s%10s\n", "start(s)", "target/s", "achvd/s", "requests", "p50", "p90", "p99", "p99.9", "max", "uncor.p99")
		for _, r := range rows {
			achieved := 0.0
			if r.LengthUs > 0 {
				achieved = float64(r.Requests) / (float64(r.LengthUs) / 1e6)
			}
			p.printf("%10.3f%10.1f%10.1f%10d", float64(r.StartUs)/1e6, r.TargetPerS, achieved, r.Requests)
			if r.Requests == 0 {
				p.printf("%10s%10s%10s%10s%10s%10s\n", "-", "-", "-", "-", "-", "-")
				continue
			}
			c := r.Corrected
			for _, v := range []int64{c.P50Us, c.P90Us, c.P99Us, c.P999Us, c.MaxUs, r.P99Us} {
				p.printf("%10s", ms3(float64(v)))
			}
			p.printf("\n")
		}
	}
}

// WriteHlog writes the run's timeline as HdrHistogram's standard interval log
// (format 1.3, as Java's HistogramLogWriter writes it): the log's start time,
// a base time equal to it (so interval timestamps are seconds since the
// run's start), the legend, and one line per interval with its start,
// length, max (in ms) and compressed histogram of latencies in µs; in rate
// mode a second line per interval, tagged "corrected", holds the corrected
// latencies. HdrHistogram's log readers (Java, C, Python, JavaScript, Rust,
// Go) and plotters read it. A run without a timeline (r nil: it never
// started) gets the header alone, of start and interval.
func WriteHlog(w io.Writer, r *Run, start time.Time, interval time.Duration) error {
	tl := &timelineSection{start: start, interval: interval}
	if r != nil && r.Timeline != nil {
		tl = r.Timeline
		start = tl.start
	}
	p := newErrWriter(w)
	startS := float64(start.UnixNano()) / 1e9
	p.printf("#[Histogram log format version 1.3]\n")
	p.printf("#[StartTime: %.3f (seconds since epoch), %s]\n", startS, start.UTC().Format(time.RFC3339Nano))
	p.printf("#[BaseTime: %.3f (seconds since epoch)]\n", startS)
	p.printf("#[gab: values in microseconds (1 us to 24 h, 3 significant digits), Interval_Max in milliseconds; %v intervals by request end time", tl.length())
	if tl.Corrected {
		p.printf("; Tag=corrected: latency from the intended send time (--rate)")
	}
	p.printf("]\n")
	p.printf("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n")
	for i := range tl.Intervals {
		iv := &tl.Intervals[i]
		from, length := tl.span(i)
		line := func(tag string, l *IntervalLatency) {
			p.printf("%s%.3f,%.3f,%.3f,%s\n", tag, from, length, float64(l.MaxUs)/1000, l.Histogram.Data)
		}
		line("", &iv.IntervalLatency)
		if tl.Corrected && iv.Corrected != nil {
			line("Tag=corrected,", iv.Corrected)
		}
	}
	return p.flush()
}
