package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

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

// throughputOf is the recorded-request rate over the whole 1-second
// intervals of a run that took elapsed (the last, partial second is left
// out), from its requests of each second, perSecond (not kept in the
// result); in time and memory of perSecond's length, whatever the time taken
// (a document read back may claim any).
func throughputOf(perSecond []int64, elapsed time.Duration) throughputFigures {
	n := int(elapsed / time.Second)
	// Seconds without a completion are missing from the series' end: zeros.
	counts := perSecond[:min(n, len(perSecond))]
	t := throughputFigures{Intervals: n}
	if n == 0 {
		return t
	}
	var sum float64
	for _, c := range counts {
		sum += float64(c)
	}
	t.MeanPerS = sum / float64(n)
	if n > 1 {
		var ss float64
		for _, c := range counts {
			d := float64(c) - t.MeanPerS
			ss += d * d
		}
		ss += float64(n-len(counts)) * t.MeanPerS * t.MeanPerS
		t.SDPerS = math.Sqrt(ss / float64(n-1))
	}
	return t
}

// MbitPerSecond converts a byte count over a duration to 10^6 bits per second
// (the catalog's bandwidth figures, and gab sweep's per-run bandwidth).
func MbitPerSecond(bytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(bytes) * 8 / 1e6 / seconds
}

// failureClassNames are ab's failure classes plus write errors, in ab's
// order (the --extended table's).
var failureClassNames = [...]string{"connect", "receive", "length", "exceptions", "write"}

// failureCounts are the counts of failureClassNames' classes, in their order.
func (c *counters) failureCounts() [len(failureClassNames)]int {
	f := &c.Failures
	return [...]int{f.Connect, f.Receive, f.Length, f.Exceptions, c.WriteErrors}
}

// engineMixed is a merged run's engine when its runs' differ.
const engineMixed = "mixed"

// engineNames are the --extended text's names of the HTTP/1 engines (the
// values a document's extended.engine may take).
var engineNames = map[string]string{
	"epoll":     "epoll (HTTP/1 event loops)",
	"uring":     "io_uring (HTTP/1 event loops)",
	"portable":  "portable (a goroutine per connection)",
	engineMixed: "mixed (the merged runs' engines differ)",
}

// minCPUShareRun is the shortest run whose client CPU share is stated: below
// it, start-up work and the CPU clock's granularity outweigh the run.
const minCPUShareRun = time.Second

// extendedOf gathers the extended figures of a run's result (whose counts
// are c); derive adds the rates, means and shares.
func extendedOf(res *client.Result, c *counters, cpu CPUUsage) *extendedFigures {
	x := res.Extra
	e := &extendedFigures{
		DNSUs:           x.DNS.Microseconds(),
		DNSLookups:      x.DNSLookups,
		StatusCounts:    map[string]int{},
		FailuresByClass: map[string]failureClass{},
		Throughput:      throughputFigures{PerSecond: x.PerSecond},
		Engine:          res.Engine,
	}
	ph := e.Phases.list()
	for p := range x.Phases {
		*ph[p] = distOf(&x.Phases[p])
	}
	for code, n := range res.StatusCounts {
		e.StatusCounts[strconv.Itoa(code)] = n
	}
	for i, n := range c.failureCounts() {
		name := failureClassNames[i]
		fc := failureClass{Count: n, FirstError: res.FirstError[name]}
		if at, ok := res.FirstErrorAt[name]; ok && fc.FirstError != "" {
			s := at.Seconds()
			fc.FirstAtS = &s
		}
		e.FailuresByClass[name] = fc
	}
	if cpu.Known {
		e.ClientCPU = &clientCPU{UserMs: float64(cpu.User) / 1e6, SysMs: float64(cpu.Sys) / 1e6}
	}
	return e
}

// derive computes the extended figures that follow from what the run
// recorded: throughput, bandwidth, the response time's mean and sd (the
// phase table's Total row, so that the two agree to the µs) and the share of
// a core the client used (none for runs shorter than minCPUShareRun).
func (x *extendedFigures) derive(rp *abReport, elapsed time.Duration, sampleStore string) {
	perSecond := x.Throughput.PerSecond
	if perSecond == nil {
		perSecond = []int64{}
	}
	x.Throughput = throughputOf(perSecond, elapsed)
	x.Throughput.PerSecond = perSecond
	x.ReceivedMbitPerS = MbitPerSecond(rp.TotalTransferredBytes, rp.TimeTakenS)
	x.SentMbitPerS = MbitPerSecond(rp.TotalBodySentBytes, rp.TimeTakenS)
	total := &x.Phases.Total
	x.ResponseTimeMeanMs, x.ResponseTimeSDMs = total.MeanUs/1000, total.SDUs/1000
	x.SampleStore = sampleStore
	if c := x.ClientCPU; c != nil {
		c.PercentOfOneCore, c.CoresBusy = nil, nil
		if elapsed >= minCPUShareRun {
			// The times in ns again (exact: the ms are ns/1e6 in a double).
			ns := math.Round(c.UserMs*1e6) + math.Round(c.SysMs*1e6)
			cores := ns / float64(elapsed)
			pct := cores * 100
			c.PercentOfOneCore, c.CoresBusy = &pct, &cores
		}
	}
}

// rateOf gathers rate mode's figures, the corrected times counting the
// requests in flight at the stop at their age from their intended send
// times; derive adds the achieved rate.
func rateOf(rr *client.RateResult, inFlight []client.InFlight, percents []float64) *rateFigures {
	cor := &rr.Corrected
	if len(inFlight) > 0 && cor.Hist != nil {
		all := samples.NewDist()
		all.Merge(cor)
		for _, f := range inFlight {
			all.Add(f.Corrected.Microseconds())
		}
		cor = &all
	}
	return &rateFigures{
		TargetPerS:      rr.Target,
		Sent:            rr.Sent,
		DueButNotSent:   rr.BehindAtEnd,
		OnSchedule:      rr.OnSchedule,
		OnScheduleTolUs: client.ScheduleTolerance.Microseconds(),
		Lag:             distOf(&rr.Lag),
		Corrected:       distOf(cor),
		CorrectedServed: correctedServed(cor, percents),
	}
}

// correctedServed is d's corrected percentile table: the rows of
// correctedRows(percents), the 100 % row the exact max (none if d is empty).
func correctedServed(d *samples.Dist, percents []float64) []served {
	if d.Count == 0 {
		return nil
	}
	var rows []served
	for _, p := range correctedRows(percents) {
		us := d.Max
		if p < 100 {
			us = d.Percentile(p)
		}
		rows = append(rows, served{Percent: p, TotalUs: us, TotalMs: roundMs(us)})
	}
	return rows
}

// ms3 prints µs as ms with 3 decimals (µs resolution).
func ms3(us float64) string { return strconv.FormatFloat(us/1000, 'f', 3, 64) }

// sampleStorePrecision says how ab's tables were computed.
func sampleStorePrecision(rp *abReport) string {
	if rp.StatisticsFromHistogram {
		return fmt.Sprintf("exact for the first %d requests, then 1 ms buckets (min, mean, sd, max exact; medians and percentiles to the nearest ms)", rp.ExactSamples)
	}
	return fmt.Sprintf("exact (all %d requests stored to the µs)", rp.ExactSamples)
}

// writeExtended writes the --extended report, to follow ab's report (and the
// --percentiles table).
func writeExtended(w io.Writer, r *Run) error {
	p := newErrWriter(w)
	x, rp := r.Extended, r.Report
	p.printf("\nExtended report (gab)\n")
	if x == nil || rp == nil {
		p.printf("(no extended figures were gathered)\n")
		return p.flush()
	}
	dnsMs := float64(x.DNSUs) / 1000
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
	for ph, d := range x.Phases.list() {
		name := client.Phase(ph).String()
		if rp.Protocol == "h3" && client.Phase(ph) == client.PhaseTCP {
			continue // QUIC has no TCP connect: its handshake is one phase
		} else if rp.Protocol == "h3" && client.Phase(ph) == client.PhaseTLS {
			name = "QUIC handshake"
		}
		p.printf("%-16s%10s%10s%10s%10s", name+":", ms3(float64(d.MinUs)), ms3(d.MeanUs), ms3(d.SDUs), ms3(float64(d.MedianUs)))
		for _, us := range [...]int64{d.P90Us, d.P99Us, d.P999Us} {
			p.printf("%10s", ms3(float64(us)))
		}
		p.printf("%10s\n", ms3(float64(d.MaxUs)))
	}

	writeStatusAndFailures(p, r)

	p.printf("\n")
	writeOutstanding(p, r, false)
	tp := x.Throughput
	switch {
	case tp.Intervals >= 2:
		p.printf("Throughput:             %.2f [#/sec] mean, sd %.2f (over %d whole 1-second intervals)\n", tp.MeanPerS, tp.SDPerS, tp.Intervals)
	case tp.Intervals == 1:
		p.printf("Throughput:             %.2f [#/sec] (one whole 1-second interval: no sd)\n", tp.MeanPerS)
	default:
		p.printf("Throughput:             %.2f [#/sec] (run shorter than 1 s: no sd)\n", rp.RequestsPerSecond)
	}
	if x.Phases.Total.Count > 0 {
		p.printf("Response time:          %s [ms] mean, sd %s (the phase table's Total)\n",
			strconv.FormatFloat(x.ResponseTimeMeanMs, 'f', 3, 64), strconv.FormatFloat(x.ResponseTimeSDMs, 'f', 3, 64))
	}
	p.printf("Bandwidth:              %.3f [Mbit/s] received, %.3f [Mbit/s] sent (10^6 bits)\n",
		x.ReceivedMbitPerS, x.SentMbitPerS)
	if q := r.local.quic; q != nil {
		p.printf("QUIC (quic-go):         %d connections: %d packets sent, %d received, %d lost (%.2f%%, their frames sent again), min RTT %s [ms]\n",
			q.Connections, q.PacketsSent, q.PacketsReceived, q.PacketsLost, 100*float64(q.PacketsLost)/float64(max(q.PacketsSent, 1)),
			ms3(float64(q.MinRTT.Microseconds())))
		if q.EarlyData > 0 {
			p.printf("                        %d of them sent their first requests as 0-RTT data, which the server accepted\n", q.EarlyData)
		}
	}
	if cpu := x.ClientCPU; cpu != nil && cpu.CoresBusy != nil {
		p.printf("Client CPU:             %.3f [s] user, %.3f [s] sys, %.1f%% of one core, %.2f cores busy\n",
			cpu.UserMs/1000, cpu.SysMs/1000, *cpu.PercentOfOneCore, *cpu.CoresBusy)
	} else if cpu != nil {
		p.printf("Client CPU:             %.3f [s] user, %.3f [s] sys (no share of a core: the run took under %v)\n",
			cpu.UserMs/1000, cpu.SysMs/1000, minCPUShareRun)
	} else {
		p.printf("Client CPU:             unknown on this platform\n")
	}
	p.printf("Sample store:           %s\n", x.SampleStore)
	if name, ok := engineNames[x.Engine]; ok {
		p.printf("I/O engine:             %s\n", name)
	}
	writeTimelineTable(p, r.Timeline)
	writeFigures(p, r)
	return p.flush()
}

// writeStatusAndFailures writes --extended's responses by status code and
// failures by class.
func writeStatusAndFailures(p *errWriter, r *Run) {
	x, rp := r.Extended, r.Report
	p.printf("\nResponses by status code (count)\n")
	if len(x.StatusCounts) == 0 {
		p.printf("  none\n")
	}
	for _, c := range statusCodes(x.StatusCounts) {
		p.printf("  %03d: %d\n", c, x.StatusCounts[strconv.Itoa(c)])
	}

	p.printf("\nFailures by class (count, first error)\n")
	for _, name := range failureClassNames {
		f := x.FailuresByClass[name]
		if f.FirstError != "" {
			p.printf("  %-11s %d  %s\n", name+":", f.Count, OneLine(f.FirstError))
		} else {
			p.printf("  %-11s %d\n", name+":", f.Count)
		}
	}
	fl := &rp.Failures
	if n := rp.FailedRequests - (fl.Connect + fl.Receive + fl.Length + fl.Exceptions); n > 0 {
		p.printf("  (%d more failed requests have no class: response heads over 8191 bytes, as in ab)\n", n)
	}
	if r.local.retries > 0 {
		p.printf("  retried:    %d  (sent again once on a new connection: the server closed a kept-alive one before answering)\n", r.local.retries)
	}
}

// statusCodes are the status codes counted, ascending.
func statusCodes(counts map[string]int) []int {
	codes := make([]int, 0, len(counts))
	for k := range counts {
		if c, err := strconv.Atoi(k); err == nil {
			codes = append(codes, c)
		}
	}
	sort.Ints(codes)
	return codes
}

// OneLine keeps a message (an error's text, which may hold line breaks) on
// one line: every run of white space becomes one space, none at the ends.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// correctedRows are the corrected percentile table's rows: ab's (50 … 99, 100)
// plus any --percentiles entries, ascending, without duplicates.
func correctedRows(extra []float64) []float64 {
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

// writeCorrected writes rate mode's section after ab's tables: the target and
// achieved rates, how far the client fell behind its schedule, and ab's two
// tables again with every time counted from the request's intended send time.
// It writes nothing outside rate mode.
func writeCorrected(w io.Writer, r *Run) error {
	rr := r.Rate
	if rr == nil || r.Report == nil {
		return nil
	}
	p := newErrWriter(w)
	p.printf("\nCorrected for coordinated omission (times from each request's intended send time)\n")
	p.printf("Target rate:            %.2f [#/sec]\n", rr.TargetPerS)
	if r.Report.TimeTakenS > 0 {
		p.printf("Achieved rate:          %.2f [#/sec] (mean)\n", rr.AchievedPerS)
	}
	if rr.BelowTarget {
		p.printf("WARNING: the achieved rate is %.1f%% of the target: the client (or its -c connections) did not keep up\n",
			100*rr.AchievedPerS/rr.TargetPerS)
	}
	p.printf("Requests sent:          %d, %d on schedule (within %s [ms] of the intended time), %d due but never sent\n",
		rr.Sent, rr.OnSchedule, ms3(float64(rr.OnScheduleTolUs)), rr.DueButNotSent)
	p.printf("Behind schedule:        %s [ms] mean, %s [ms] p99, %s [ms] max (send time − intended; p99: nearest rank, from an HDR histogram, 3 significant digits)\n",
		ms3(rr.Lag.MeanUs), ms3(float64(rr.Lag.P99Us)), ms3(float64(rr.Lag.MaxUs)))
	writeOutstanding(p, r, true)
	writeRateSteps(p, rr.Steps)
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
		for _, row := range rr.CorrectedServed {
			if row.Percent >= 100 {
				p.printf(" 100%%  %5d (longest request)\n", row.TotalMs)
				continue
			}
			p.printf("%5s  %5d\n", percentLabel(row.Percent), row.TotalMs)
		}
	}
	return p.flush()
}
