package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/client"
	"gab/internal/samples"
)

// This file computes and renders gab's figures beyond ab's (--extended, and
// the corrected tables of rate mode). Every table names its unit and precision.

// CPUUsage is the client process's own CPU time over the run.
type CPUUsage struct {
	User, Sys time.Duration
	Known     bool // false where the platform cannot tell
}

// Sub is the CPU used between an earlier reading and this one.
func (c CPUUsage) Sub(before CPUUsage) CPUUsage {
	return CPUUsage{User: c.User - before.User, Sys: c.Sys - before.Sys, Known: c.Known && before.Known}
}

// CoresBusy is the CPU time per second of elapsed time (1 = one core fully busy).
func (c CPUUsage) CoresBusy(elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return float64(c.User+c.Sys) / float64(elapsed)
}

// Throughput is the recorded-request rate measured over whole 1-second
// intervals of the run (the last, partial second is left out).
type Throughput struct {
	Intervals int     // whole seconds measured
	Mean      float64 // requests per second, mean over the intervals
	SD        float64 // sample standard deviation over the intervals (0 for fewer than two)
}

// ThroughputOf computes Throughput from Result.Extra.PerSecond and the time
// taken, in time and memory of perSecond's length, whatever the time taken
// (a document read back may claim any).
func ThroughputOf(perSecond []int64, elapsed time.Duration) Throughput {
	n := int(elapsed / time.Second)
	// Seconds without a completion are missing from the series' end: zeros.
	counts := perSecond[:min(n, len(perSecond))]
	t := Throughput{Intervals: n}
	if n == 0 {
		return t
	}
	var sum float64
	for _, c := range counts {
		sum += float64(c)
	}
	t.Mean = sum / float64(n)
	if n > 1 {
		var ss float64
		for _, c := range counts {
			d := float64(c) - t.Mean
			ss += d * d
		}
		ss += float64(n-len(counts)) * t.Mean * t.Mean
		t.SD = math.Sqrt(ss / float64(n-1))
	}
	return t
}

// MbitPerSecond converts a byte count over a duration to 10^6 bits per second.
func MbitPerSecond(bytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(bytes) * 8 / 1e6 / seconds
}

// FailureClass is one row of the extended report's failure table.
type FailureClass struct {
	Name       string // connect, receive, length, exceptions, write
	Count      int
	FirstError string // the first error message of the class ("" if none was kept)
}

// failureClasses lists ab's failure classes plus write errors, in ab's order.
func failureClasses(res *client.Result) []FailureClass {
	return []FailureClass{
		{"connect", res.Failed.Connect, res.FirstError["connect"]},
		{"receive", res.Failed.Receive, res.FirstError["receive"]},
		{"length", res.Failed.Length, res.FirstError["length"]},
		{"exceptions", res.Failed.Exceptions, res.FirstError["exceptions"]},
		{"write", res.WriteErrors, res.FirstError["write"]},
	}
}

// StatusCount is the number of responses with one status code.
type StatusCount struct{ Code, Count int }

// statusCounts lists the codes seen, ascending.
func statusCounts(counts map[int]int) []StatusCount {
	out := make([]StatusCount, 0, len(counts))
	for c, n := range counts {
		out = append(out, StatusCount{c, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// DistFigures describe a distribution in µs: count, min, mean, sd (n−1) and
// max exact; median and percentiles by the nearest rank (samples.NearestRank)
// from an HDR histogram with 3 significant digits (the bucket's highest value).
type DistFigures struct {
	Count                          int64
	MinUs                          int64
	MeanUs, SDUs                   float64
	MedianUs, P90Us, P99Us, P999Us int64
	MaxUs                          int64
	// SumUs and Hist are what gab merge combines (Hist is nil only in a
	// merged document whose parts had none).
	SumUs int64
	Hist  *hdrhistogram.Histogram
}

func distFigures(d *samples.Dist) DistFigures {
	return DistFigures{
		Count: d.Count, MinUs: d.Min, MeanUs: d.Mean(), SDUs: d.SD(),
		MedianUs: d.Percentile(50), P90Us: d.Percentile(90), P99Us: d.Percentile(99), P999Us: d.Percentile(99.9),
		MaxUs: d.Max, SumUs: d.Sum, Hist: d.Hist,
	}
}

// Extended are the figures beyond ab's (--extended, and the JSON document's
// "extended" section).
type Extended struct {
	// DNS is the time spent resolving DNSLookups names before the run.
	DNS        time.Duration
	DNSLookups int
	// Phases holds each phase's figures (client.Phase order).
	Phases [client.PhaseCount]DistFigures
	// Statuses counts responses per status code, ascending by code.
	Statuses []StatusCount
	// Failures are the failure classes with their first error; Unclassified
	// counts failed requests in no class (response heads over 8191 bytes).
	Failures     []FailureClass
	Unclassified int
	// PerSecond counts the requests recorded in each second of the run, from
	// 0 (the last entry is usually a partial second); Throughput is over its
	// whole seconds.
	PerSecond  []int64
	Throughput Throughput
	// Bandwidth in 10^6 bits per second over the time taken.
	ReceivedMbitPerS, SentMbitPerS float64
	// CPU is the client's CPU time over the run; CoresBusy is CPU per second
	// of elapsed time (1 = one core fully busy).
	CPU       CPUUsage
	CoresBusy float64
	// CPUShare says the run lasted MinCPUShareRun or more, long enough for
	// CoresBusy to mean something; shorter runs state only the CPU times.
	CPUShare bool
	// ResponseMeanUs and ResponseSDUs are the response time's mean and sd:
	// the phase table's Total row, so that the two agree to the µs.
	ResponseMeanUs, ResponseSDUs float64
	// LatencyHist is the Total phase's HDR histogram (the JSON document
	// carries it encoded, for merging).
	LatencyHist *hdrhistogram.Histogram
}

// MinCPUShareRun is the shortest run whose client CPU share is stated: below
// it, start-up work and the CPU clock's granularity outweigh the run.
const MinCPUShareRun = time.Second

func summarizeExtended(s *Summary, res *client.Result, cpu CPUUsage) *Extended {
	x := res.Extra
	e := &Extended{
		DNS:              x.DNS,
		DNSLookups:       x.DNSLookups,
		Statuses:         statusCounts(res.StatusCounts),
		Failures:         failureClasses(res),
		PerSecond:        x.PerSecond,
		Throughput:       ThroughputOf(x.PerSecond, res.Elapsed),
		ReceivedMbitPerS: MbitPerSecond(s.TotalRead, s.Seconds),
		SentMbitPerS:     MbitPerSecond(s.TotalSent, s.Seconds),
		CPU:              cpu,
		CoresBusy:        cpu.CoresBusy(res.Elapsed),
		CPUShare:         res.Elapsed >= MinCPUShareRun,
		LatencyHist:      x.Phases[client.PhaseTotal].Hist,
	}
	if t := &x.Phases[client.PhaseTotal]; t.Count > 0 {
		e.ResponseMeanUs, e.ResponseSDUs = t.Mean(), t.SD()
	}
	for p := range x.Phases {
		e.Phases[p] = distFigures(&x.Phases[p])
	}
	e.Unclassified = s.Failed.Total - (s.Failed.Connect + s.Failed.Receive + s.Failed.Length + s.Failed.Exceptions)
	return e
}

// RateFigures are rate mode's figures (--rate).
type RateFigures struct {
	TargetPerS float64
	// AchievedPerS is Complete over the time taken (0 when that is 0).
	AchievedPerS float64
	// Sent were dispatched on the schedule; DueButNotSent were due by the end
	// but never sent.
	Sent, DueButNotSent int64
	// OnSchedule of the Sent left within OnScheduleToleranceUs of their
	// intended send time.
	OnSchedule, OnScheduleToleranceUs int64
	// BelowTarget: the achieved rate is under client.AchievedShortfall (95 %)
	// of the target, so the report warns that the client did not keep up.
	BelowTarget bool
	// Lag is how late each request was sent after its intended time; Corrected
	// the latency from each request's intended send time.
	Lag, Corrected DistFigures
	// CorrectedServed is the corrected percentile table: ab's rows plus the
	// --percentiles entries (CorrectedRows), the 100 % row the exact max.
	CorrectedServed []Served
}

// Served is one row of a "Percentage of the requests served" table.
type Served struct {
	Percent float64
	Us, Ms  int64 // the value, and as printed (ab's rounding to ms)
}

func summarizeRate(s *Summary, rr *client.RateResult, percents []float64) *RateFigures {
	r := &RateFigures{
		TargetPerS:    rr.Target,
		Sent:          rr.Sent,
		DueButNotSent: rr.BehindAtEnd,
		OnSchedule:    rr.OnSchedule,

		OnScheduleToleranceUs: client.ScheduleTolerance.Microseconds(),
		Lag:                   distFigures(&rr.Lag),
		Corrected:             distFigures(&rr.Corrected),
	}
	if s.Seconds > 0 {
		r.AchievedPerS = float64(s.Complete) / s.Seconds
		r.BelowTarget = r.AchievedPerS < client.AchievedShortfall*r.TargetPerS
	}
	r.CorrectedServed = correctedServed(&rr.Corrected, percents)
	return r
}

// correctedServed is d's corrected percentile table: the rows of
// CorrectedRows(percents), the 100 % row the exact max (none if d is empty).
func correctedServed(d *samples.Dist, percents []float64) []Served {
	if d.Count == 0 {
		return nil
	}
	var rows []Served
	for _, p := range CorrectedRows(percents) {
		us := d.Max
		if p < 100 {
			us = d.Percentile(p)
		}
		rows = append(rows, Served{Percent: p, Us: us, Ms: roundMs(us)})
	}
	return rows
}

// ms3 prints µs as ms with 3 decimals (µs resolution).
func ms3(us float64) string { return strconv.FormatFloat(us/1000, 'f', 3, 64) }

// sampleStorePrecision says how ab's tables were computed.
func sampleStorePrecision(s *Summary) string {
	if s.FromHistograms {
		return fmt.Sprintf("exact for the first %d requests, then 1 ms buckets (min, mean, sd, max exact; medians and percentiles to the nearest ms)", s.ExactSamples)
	}
	return fmt.Sprintf("exact (all %d requests stored to the µs)", s.Count)
}

// WriteExtended writes the --extended report, to follow ab's report (and the
// --percentiles table).
func WriteExtended(w io.Writer, s *Summary) error {
	p := newErrWriter(w)
	x := s.Extended
	p.printf("\nExtended report (gab)\n")
	if x == nil {
		p.printf("(no extended figures were gathered)\n")
		return p.flush()
	}
	dnsMs := float64(x.DNS.Microseconds()) / 1000
	switch {
	case x.DNSLookups == 0:
		p.printf("DNS resolution:         none (literal address)\n")
	case x.DNSLookups == 1:
		p.printf("DNS resolution:         %.3f [ms] (1 name, once before the run)\n", dnsMs)
	default:
		p.printf("DNS resolution:         %.3f [ms] (%d names, once before the run)\n", dnsMs, x.DNSLookups)
	}

	p.printf("\nPhase breakdown (ms, to the µs; min, mean, sd, max exact; median, p90, p99, p99.9: nearest rank, bucket tops of HDR histograms, 3 significant digits)\n")
	p.printf("%-16s%10s%10s%10s%10s%10s%10s%10s%10s\n", "", "min", "mean", "sd", "median", "p90", "p99", "p99.9", "max")
	for ph := client.Phase(0); ph < client.PhaseCount; ph++ {
		d, name := &x.Phases[ph], ph.String()
		if s.Protocol == "h3" && ph == client.PhaseTCP {
			continue // QUIC has no TCP connect: its handshake is one phase
		} else if s.Protocol == "h3" && ph == client.PhaseTLS {
			name = "QUIC handshake"
		}
		p.printf("%-16s%10s%10s%10s%10s", name+":", ms3(float64(d.MinUs)), ms3(d.MeanUs), ms3(d.SDUs), ms3(float64(d.MedianUs)))
		for _, us := range [...]int64{d.P90Us, d.P99Us, d.P999Us} {
			p.printf("%10s", ms3(float64(us)))
		}
		p.printf("%10s\n", ms3(float64(d.MaxUs)))
	}

	p.printf("\nResponses by status code (count)\n")
	if len(x.Statuses) == 0 {
		p.printf("  none\n")
	}
	for _, c := range x.Statuses {
		p.printf("  %03d: %d\n", c.Code, c.Count)
	}

	p.printf("\nFailures by class (count, first error)\n")
	for _, f := range x.Failures {
		if f.FirstError != "" {
			p.printf("  %-11s %d  %s\n", f.Name+":", f.Count, OneLine(f.FirstError))
		} else {
			p.printf("  %-11s %d\n", f.Name+":", f.Count)
		}
	}
	if x.Unclassified > 0 {
		p.printf("  (%d more failed requests have no class: response heads over 8191 bytes, as in ab)\n", x.Unclassified)
	}
	if s.Retries > 0 {
		p.printf("  retried:    %d  (sent again once on a new connection: the server closed a kept-alive one before answering)\n", s.Retries)
	}

	p.printf("\n")
	tp := x.Throughput
	switch {
	case tp.Intervals >= 2:
		p.printf("Throughput:             %.2f [#/sec] mean, sd %.2f (over %d whole 1-second intervals)\n", tp.Mean, tp.SD, tp.Intervals)
	case tp.Intervals == 1:
		p.printf("Throughput:             %.2f [#/sec] (one whole 1-second interval: no sd)\n", tp.Mean)
	default:
		p.printf("Throughput:             %.2f [#/sec] (run shorter than 1 s: no sd)\n", s.Rates.RequestsPerSecond)
	}
	if x.Phases[client.PhaseTotal].Count > 0 {
		p.printf("Response time:          %s [ms] mean, sd %s (the phase table's Total)\n", ms3(x.ResponseMeanUs), ms3(x.ResponseSDUs))
	}
	p.printf("Bandwidth:              %.3f [Mbit/s] received, %.3f [Mbit/s] sent (10^6 bits)\n",
		x.ReceivedMbitPerS, x.SentMbitPerS)
	if q := s.QUIC; q != nil {
		p.printf("QUIC (quic-go):         %d connections: %d packets sent, %d received, %d lost (%.2f%%, their frames sent again), min RTT %s [ms]\n",
			q.Connections, q.PacketsSent, q.PacketsReceived, q.PacketsLost, 100*float64(q.PacketsLost)/float64(max(q.PacketsSent, 1)),
			ms3(float64(q.MinRTT.Microseconds())))
	}
	if cpu := x.CPU; cpu.Known && x.CPUShare {
		p.printf("Client CPU:             %.3f [s] user, %.3f [s] sys, %.1f%% of one core, %.2f cores busy\n",
			cpu.User.Seconds(), cpu.Sys.Seconds(), x.CoresBusy*100, x.CoresBusy)
	} else if cpu.Known {
		p.printf("Client CPU:             %.3f [s] user, %.3f [s] sys (no share of a core: the run took under %v)\n",
			cpu.User.Seconds(), cpu.Sys.Seconds(), MinCPUShareRun)
	} else {
		p.printf("Client CPU:             unknown on this platform\n")
	}
	p.printf("Sample store:           %s\n", s.SampleStore)
	writeTimelineTable(p, s.Timeline)
	writeFigures(p, NewDocument(s))
	return p.flush()
}

// OneLine keeps a message (an error's text, which may hold line breaks) on
// one line: every run of white space becomes one space, none at the ends.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// CorrectedRows are the corrected percentile table's rows: ab's (50 … 99, 100)
// plus any --percentiles entries, ascending, without duplicates.
func CorrectedRows(extra []float64) []float64 {
	set := map[float64]bool{}
	for _, p := range abPercents {
		set[float64(p)] = true
	}
	for _, p := range extra {
		set[p] = true
	}
	rows := make([]float64, 0, len(set))
	for p := range set {
		rows = append(rows, p)
	}
	sort.Float64s(rows)
	return rows
}

// WriteCorrected writes rate mode's section after ab's tables: the target and
// achieved rates, how far the client fell behind its schedule, and ab's two
// tables again with every time counted from the request's intended send time.
// It writes nothing outside rate mode.
func WriteCorrected(w io.Writer, s *Summary) error {
	rr := s.Rate
	if rr == nil {
		return nil
	}
	p := newErrWriter(w)
	p.printf("\nCorrected for coordinated omission (times from each request's intended send time)\n")
	p.printf("Target rate:            %.2f [#/sec]\n", rr.TargetPerS)
	if s.Seconds > 0 {
		p.printf("Achieved rate:          %.2f [#/sec] (mean)\n", rr.AchievedPerS)
	}
	if rr.BelowTarget {
		p.printf("WARNING: the achieved rate is %.1f%% of the target: the client (or its -c connections) did not keep up\n",
			100*rr.AchievedPerS/rr.TargetPerS)
	}
	p.printf("Requests sent:          %d, %d on schedule (within %s [ms] of the intended time), %d due but never sent\n",
		rr.Sent, rr.OnSchedule, ms3(float64(rr.OnScheduleToleranceUs)), rr.DueButNotSent)
	p.printf("Behind schedule:        %s [ms] mean, %s [ms] p99, %s [ms] max (send time − intended; p99: nearest rank, from an HDR histogram, 3 significant digits)\n",
		ms3(rr.Lag.MeanUs), ms3(float64(rr.Lag.P99Us)), ms3(float64(rr.Lag.MaxUs)))
	d := &rr.Corrected
	if d.Count == 0 {
		return p.flush()
	}
	p.printf("\nConnection Times (ms), corrected (min, mean, sd, max exact; median: nearest rank, bucket top of an HDR histogram, 3 significant digits)\n")
	p.printf("              min  mean[+/-sd] median   max\n")
	p.printf("Total:      %5d %4d %5.1f %6d %7d\n", roundMs(d.MinUs), roundMs(int64(d.MeanUs)), d.SDUs/1000,
		roundMs(d.MedianUs), roundMs(d.MaxUs))
	if d.Count > 1 {
		p.printf("\nPercentage of the requests served within a certain time (ms, corrected; nearest rank, bucket tops of an HDR histogram, 3 significant digits)\n")
		for _, r := range rr.CorrectedServed {
			if r.Percent >= 100 {
				p.printf(" 100%%  %5d (longest request)\n", r.Ms)
				continue
			}
			p.printf("%5s  %5d\n", percentLabel(r.Percent), r.Ms)
		}
	}
	return p.flush()
}
