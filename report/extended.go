package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"gab/client"
)

// This file renders gab's figures beyond ab's (--extended, and the corrected
// tables of rate mode). Every table names its unit and precision.

// printer formats to a buffered writer and keeps the first error.
type printer struct {
	w   *bufio.Writer
	err error
}

func newPrinter(w io.Writer) *printer { return &printer{w: bufio.NewWriter(w)} }

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *printer) flush() error {
	if p.err != nil {
		return p.err
	}
	return p.w.Flush()
}

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

// ThroughputOf computes Throughput from Result.Extra.PerSecond and the time taken.
func ThroughputOf(perSecond []int64, elapsed time.Duration) Throughput {
	n := int(elapsed / time.Second)
	counts := make([]int64, n) // seconds without a completion are missing from the series' end
	copy(counts, perSecond)
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

// FailureClasses lists ab's failure classes plus write errors, in ab's order.
func FailureClasses(res *client.Result) []FailureClass {
	return []FailureClass{
		{"connect", res.Failed.Connect, res.FirstError["connect"]},
		{"receive", res.Failed.Receive, res.FirstError["receive"]},
		{"length", res.Failed.Length, res.FirstError["length"]},
		{"exceptions", res.Failed.Exceptions, res.FirstError["exceptions"]},
		{"write", res.WriteErrors, res.FirstError["write"]},
	}
}

// StatusCodes returns the status codes seen, ascending.
func StatusCodes(counts map[int]int) []int {
	codes := make([]int, 0, len(counts))
	for c := range counts {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	return codes
}

// PhasePercents are the percentile columns of the phase table.
var PhasePercents = [...]float64{90, 99, 99.9}

// ms3 prints µs as ms with 3 decimals (µs resolution).
func ms3(us float64) string { return strconv.FormatFloat(us/1000, 'f', 3, 64) }

// SampleStorePrecision says how ab's tables were computed.
func SampleStorePrecision(s *Summary) string {
	if s.FromHistograms {
		return fmt.Sprintf("exact for the first %d requests, then 1 ms buckets (min, mean, sd, max exact; medians and percentiles to the nearest ms)", s.ExactSamples)
	}
	return fmt.Sprintf("exact (all %d requests stored to the µs)", s.Count)
}

// WriteExtended writes the --extended report, to follow ab's report (and the
// --percentiles table). res.Extra must be set (client.Config.Extended).
func WriteExtended(w io.Writer, s *Summary, res *client.Result, cpu CPUUsage) error {
	p := newPrinter(w)
	x := res.Extra
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

	p.printf("\nPhase breakdown (ms, to the µs; min, mean, sd, max exact; median, p90, p99, p99.9: bucket tops of HDR histograms, 3 significant digits)\n")
	p.printf("%-16s%10s%10s%10s%10s%10s%10s%10s%10s\n", "", "min", "mean", "sd", "median", "p90", "p99", "p99.9", "max")
	for ph := client.Phase(0); ph < client.PhaseCount; ph++ {
		d := &x.Phases[ph]
		p.printf("%-16s%10s%10s%10s%10s", ph.String()+":", ms3(float64(d.Min)), ms3(d.Mean()), ms3(d.SD()), ms3(float64(d.Percentile(50))))
		for _, pc := range PhasePercents {
			p.printf("%10s", ms3(float64(d.Percentile(pc))))
		}
		p.printf("%10s\n", ms3(float64(d.Max)))
	}

	p.printf("\nResponses by status code (count)\n")
	codes := StatusCodes(res.StatusCounts)
	if len(codes) == 0 {
		p.printf("  none\n")
	}
	for _, c := range codes {
		p.printf("  %03d: %d\n", c, res.StatusCounts[c])
	}

	p.printf("\nFailures by class (count, first error)\n")
	for _, f := range FailureClasses(res) {
		if f.FirstError != "" {
			p.printf("  %-11s %d  %s\n", f.Name+":", f.Count, oneLine(f.FirstError))
		} else {
			p.printf("  %-11s %d\n", f.Name+":", f.Count)
		}
	}
	if extra := s.Failed.Total - (s.Failed.Connect + s.Failed.Receive + s.Failed.Length + s.Failed.Exceptions); extra > 0 {
		p.printf("  (%d more failed requests have no class: response heads over 8191 bytes, as in ab)\n", extra)
	}
	if res.Retries > 0 {
		p.printf("  retried:    %d  (sent again once on a new connection: the server closed a kept-alive one before answering)\n", res.Retries)
	}

	p.printf("\n")
	tp := ThroughputOf(x.PerSecond, res.Elapsed)
	switch {
	case tp.Intervals >= 2:
		p.printf("Throughput:             %.2f [#/sec] mean, sd %.2f (over %d whole 1-second intervals)\n", tp.Mean, tp.SD, tp.Intervals)
	case tp.Intervals == 1:
		p.printf("Throughput:             %.2f [#/sec] (one whole 1-second interval: no sd)\n", tp.Mean)
	default:
		p.printf("Throughput:             %.2f [#/sec] (run shorter than 1 s: no sd)\n", s.Rates.RequestsPerSecond)
	}
	if s.Count > 0 {
		p.printf("Response time:          %.3f [ms] mean, sd %.3f (Total column, exact µs)\n", float64(s.Total.MeanUs)/1000, s.Total.SDUs/1000)
	}
	p.printf("Bandwidth:              %.3f [Mbit/s] received, %.3f [Mbit/s] sent (10^6 bits)\n",
		MbitPerSecond(s.TotalRead, s.Seconds), MbitPerSecond(s.TotalSent, s.Seconds))
	if cpu.Known {
		busy := cpu.CoresBusy(res.Elapsed)
		p.printf("Client CPU:             %.3f [s] user, %.3f [s] sys, %.1f%% of one core, %.2f cores busy\n",
			cpu.User.Seconds(), cpu.Sys.Seconds(), busy*100, busy)
	} else {
		p.printf("Client CPU:             unknown on this platform\n")
	}
	p.printf("Sample store:           %s\n", SampleStorePrecision(s))
	return p.flush()
}

// oneLine keeps an error message on one report line.
func oneLine(s string) string {
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
func WriteCorrected(w io.Writer, s *Summary, res *client.Result, percents []float64) error {
	if res.Extra == nil || res.Extra.Rate == nil {
		return nil
	}
	rr := res.Extra.Rate
	p := newPrinter(w)
	p.printf("\nCorrected for coordinated omission (times from each request's intended send time)\n")
	p.printf("Target rate:            %.2f [#/sec]\n", rr.Target)
	if s.Seconds > 0 {
		p.printf("Achieved rate:          %.2f [#/sec] (mean)\n", float64(s.Complete)/s.Seconds)
	}
	p.printf("Requests sent:          %d on schedule, %d due but never sent\n", rr.Sent, rr.BehindAtEnd)
	p.printf("Behind schedule:        %s [ms] mean, %s [ms] p99, %s [ms] max (send time − intended; p99 from an HDR histogram, 3 significant digits)\n",
		ms3(rr.Lag.Mean()), ms3(float64(rr.Lag.Percentile(99))), ms3(float64(rr.Lag.Max)))
	d := &rr.Corrected
	if d.Count == 0 {
		return p.flush()
	}
	p.printf("\nConnection Times (ms), corrected (min, mean, sd, max exact; median: rank n/2, bucket top of an HDR histogram, 3 significant digits)\n")
	p.printf("              min  mean[+/-sd] median   max\n")
	p.printf("Total:      %5d %4d %5.1f %6d %7d\n", roundMs(d.Min), roundMs(int64(d.Mean())), d.SD()/1000,
		roundMs(d.Percentile(50)), roundMs(d.Max))
	if d.Count > 1 {
		p.printf("\nPercentage of the requests served within a certain time (ms, corrected; bucket tops of an HDR histogram, 3 significant digits)\n")
		for _, pc := range CorrectedRows(percents) {
			if pc >= 100 {
				p.printf(" 100%%  %5d (longest request)\n", roundMs(d.Max))
				continue
			}
			p.printf("%5s  %5d\n", percentLabel(pc), roundMs(d.Percentile(pc)))
		}
	}
	return p.flush()
}
