package report

import (
	"strings"

	"gab/client"
	"gab/internal/hoststat"
	"gab/internal/samples"
	"gab/internal/threshold"
)

// Options are the command-line settings that shape ab's report.
type Options struct {
	Host string // Server Hostname, without IPv6 brackets
	Port int    // Server Port (the URL's, even through a proxy)
	Path string // Document Path

	// Concurrency is the requests in flight, printed as ab's "Concurrency
	// Level" and used for its first "Time per request": -c, or with HTTP/2
	// -c connections × --streams.
	Concurrency int
	// Connections and Streams are HTTP/2's -c and --streams, for the Protocol
	// line (0 outside HTTP/2).
	Connections, Streams int
	KeepAlive            bool // -k: print "Keep-Alive requests" (even when 0)
	// BodySent (-p/-u) prints "Total body sent:" and the sent/total rate lines.
	BodySent bool

	VariableLength bool // -l: "Document Length: Variable"
	NoPercentiles  bool // -d: no percentile table
	NoConfidence   bool // -S: min/avg/max table, no ERROR/WARNING lines

	// TLS (https) prints the SSL/TLS lines from Result.TLS. (The HTTP/2
	// Protocol line comes from Result.Protocol.)
	TLS bool

	// HTML holds the -x, -y and -z attributes of the -w report.
	HTML HTMLAttrs
	// Percentiles is the --percentiles list (nil without the option); rate
	// mode's corrected table adds its entries to ab's rows.
	Percentiles []float64
	// CPU is the client's own CPU time over the run (ProcessCPU before and
	// after, subtracted), for the extended report and the JSON document.
	CPU CPUUsage
	// CommandLine is argv as given, for the JSON document.
	CommandLine []string
	// Histogram asks for --histogram's rows.
	Histogram bool
	// ServerCPU is --server-pid's measurement over the run (nil without it).
	ServerCPU *ServerCPU
	// Run describes the command line for the JSON document's run section
	// (nil: no JSON document, and no sums are gathered); Summarize adds the
	// report settings above. Shard is the shard's place in its run (--shard;
	// nil otherwise); Summarize adds its start delay.
	Run   *RunInfo
	Shard *Shard
	// FailIf are the --fail-if thresholds, checked against the figures.
	FailIf []threshold.Threshold
	// Apdex are --apdex's thresholds (nil without the option).
	Apdex *Apdex
	// Environment describes where gab ran (Environment(version); nil: not
	// said), for the JSON document and the HTML report.
	Environment *environmentInfo
	// Machine is what the machine did over the run (two hoststat readings
	// around it); with it Summarize judges the run (verdicts.go). Nil: not
	// judged.
	Machine *hoststat.Delta
	// Ceiling is this machine's calibrated req/s per core for the run's
	// kind of requests (gab calibrate; 0: none), for the client-bound
	// verdict.
	Ceiling float64
	// InProcessServer says the target runs inside gab (--demo), on the
	// cores gab may use: the run measures gab as much as the server.
	InProcessServer bool
}

// HTMLAttrs are the -x, -y and -z strings, used verbatim (the CLI supplies
// ab's default "bgcolor=white" for Cell).
type HTMLAttrs struct{ Table, Row, Cell string }

// column names one of ab's four timing columns.
type column = samples.Field

const (
	connectColumn    = samples.Connect    // ab's ctime: start → connection ready
	processingColumn = samples.Processing // Total − Connect
	waitingColumn    = samples.Wait       // request written → first response byte
	totalColumn      = samples.Total      // start → response complete
)

// htmlTimes are the -w report's table, which ab computes differently from
// the text one: sums rounded to ms before dividing, and Processing as the
// difference of the rounded Total and Connect figures. All in ms.
type htmlTimes struct {
	ConnectMin, ConnectAvg, ConnectMax          int64
	ProcessingMin, ProcessingAvg, ProcessingMax int64
	TotalMin, TotalAvg, TotalMax                int64
}

// abPercents are the rows of ab's percentile table.
var abPercents = [...]int{50, 66, 75, 80, 90, 95, 98, 99, 100}

// tables answers rank queries over a run's timing columns while its figures
// are computed: the exact store's or its 1 ms buckets' ranks in a run, the
// merged histograms' in a merge.
type tables struct {
	ranks ranker // nil when nothing was recorded
	n     int
	// hdr, when set, holds the HDR histograms of every request that the
	// finer percentiles come from past the exact store.
	hdr *hdrColumns
}

// ranker answers rank queries (0-based) over a column: *samples.Ranks for a
// run, merged histograms for gab merge.
type ranker interface {
	ValueAt(c column, i int) int64
}

// valueAt is the value of rank i (0-based) in the column's ascending order.
func (t *tables) valueAt(c column, i int) int64 { return t.ranks.ValueAt(c, i) }

// percentile returns the column's value in µs at percent p (fractional p
// allowed) for the figures beyond ab's: the value of rank
// samples.NearestRank(n, p), HdrHistogram's rule (ab's own table keeps ab's
// index rule, percentileIndex). In histogram mode the value is its 1 ms
// bucket's (clamped to the exact min and max). In exact mode a column other
// than Total costs two passes over the samples.
func (t *tables) percentile(c column, p float64) int64 {
	if t.n == 0 {
		return 0
	}
	return t.valueAt(c, int(samples.NearestRank(int64(t.n), p))-1)
}

// source says where the figures from the tables beyond ab's (the
// --percentiles table, APDEX's counts) come from: every exact sample
// ("exact"), past the exact store the HDR histograms of every request
// ("hdr_histogram") or else the 1 ms buckets ("1ms_buckets").
func (t *tables) source(rp *abReport) string {
	switch {
	case t.hdr != nil:
		return "hdr_histogram"
	case rp.StatisticsFromHistogram:
		return "1ms_buckets"
	}
	return "exact"
}

// median is ab's median of the column (see medianIndexes).
func (t *tables) median(c column) int64 {
	lo, hi := medianIndexes(t.n)
	v := t.valueAt(c, lo)
	if hi == lo {
		return v
	}
	return (v + t.valueAt(c, hi)) / 2
}

// Summarize computes every figure of every output from a run's result. In exact
// mode it sorts res.Samples.Exact() in place into ab's order
// (samples.CompareByTotal, the -g file's order); its extra memory is a
// constant 256 KB, whatever the number of samples. The sums of squared
// deviations are taken in the order the samples are found, as ab takes them
// in recording order, so summarize a run once: a second call would sum them
// in sorted order, which can change the sd's last bits.
func Summarize(res *client.Result, o Options) *Run {
	// The record and the sections every run has, allocated at once.
	a := new(struct {
		run    Run
		report abReport
		times  connectionTimes
		served [len(abPercents)]served
	})
	r := newRun(&a.run, o.CommandLine, res.Start)
	r.Environment = o.Environment
	r.Ending = res.Ending.String()
	r.local = local{elapsed: res.Elapsed, keepAlive: o.KeepAlive, bodySent: o.BodySent,
		noPercentiles: o.NoPercentiles, noConfidence: o.NoConfidence, htmlAttrs: o.HTML,
		quic: res.QUIC, retries: res.Retries}
	f := res.Failed
	a.report = abReport{
		ServerSoftware: res.ServerSoftware, ServerHostname: o.Host, ServerPort: int(port16(o.Port)),
		Protocol: res.Protocol, Connections: o.Connections, StreamsPerConnection: o.Streams,
		DocumentPath: o.Path, DocumentLengthBytes: res.DocLength, VariableLength: o.VariableLength,
		ConcurrencyLevel: o.Concurrency,
		counters: counters{
			CompleteRequests: res.Complete, FailedRequests: f.Total,
			Failures:    failures{Connect: f.Connect, Receive: f.Receive, Length: f.Length, Exceptions: f.Exceptions},
			WriteErrors: res.WriteErrors, Non2xxResponses: res.Non2xx, KeepAliveReqs: res.KeepAlive,
			TotalTransferredBytes: res.TotalRead, TotalBodySentBytes: res.TotalSent, HTMLTransferredBytes: res.BodyRead,
		},
	}
	r.Report = &a.report
	if t := res.TLS; o.TLS && t != nil {
		r.Report.TLS = &tlsInfo{Protocol: t.Protocol, Cipher: t.Cipher, PeerKeyBits: t.PeerKeyBits,
			CipherBits: t.CipherBits, ServerTempKey: t.TempKey, ServerName: t.ServerName}
	}
	t := &tables{}
	if res.Samples != nil {
		if o.Run != nil {
			r.Run = runSection(o)
			if o.Shard != nil {
				r.Shard = shardSection(o.Shard, res.Start)
			}
			r.Sums = columnSums(res.Samples) // before the sort below
		}
		if res.Samples.Overflowed() {
			r.summarizeHistograms(t, res.Samples, &a.times)
		} else {
			r.summarizeExact(t, res.Samples, &a.times)
		}
	}
	t.useHDRPast(r, res)
	r.CGI = summarizeCGI(res.CGI)
	r.Outstanding = outstandingOf(res, res.Extra != nil && res.Extra.Rate != nil)
	if x := res.Extra; x != nil {
		r.Extended = extendedOf(res, &r.Report.counters, o.CPU)
		r.Distributions = measuredOf(x)
		if rr := x.Rate; rr != nil {
			r.Rate = rateOf(rr, res.Outstanding, o.Percentiles)
		}
	}
	if w := res.Warmup; w != nil {
		r.Warmup = &warmupFigures{Requests: w.Complete, Failed: w.Failed, TimeS: w.Elapsed.Seconds()}
	}
	if rr := res.Ramp; rr != nil {
		r.RampUp = &rampFigures{Requests: rr.Requests, TimeS: rr.Elapsed.Seconds()}
	}
	r.Timeline = timelineOf(res)
	r.Targets = targetsOf(res.Targets)
	if r.Rate != nil {
		r.Rate.Steps = rateStepsOf(res.Extra.Rate.Phases, r)
	}
	r.Apdex = newApdex(o.Apdex)
	r.local.serverCPU = o.ServerCPU
	rp := r.Report
	if t.n > 0 {
		rp.PercentageServed = a.served[:]
	}
	r.derive(t, o.Percentiles)
	r.chartCurve(t)
	r.checkThresholds(o.FailIf)
	r.judge(judgeInputs{host: o.Machine, ceiling: o.Ceiling, inProcess: o.InProcessServer, cpu: o.CPU, server: o.ServerCPU, connect: res.Extra, opening: res.Opening, percents: o.Percentiles})
	if ct := r.Report.ConnectionTimes; o.Histogram && ct != nil {
		r.local.histogram = t.latencyHistogram(&ct.Total, histogramRows)
	}
	return r
}

// derive computes the figures that follow from what a run recorded: the time
// taken and ab's rates, ab's percentile table and -e rows, the --percentiles
// table, the extended and rate sections' rates, means and shares, the server
// CPU's shares, and last the catalog's figures.
// Summarize and Merge both end with it, so that a merged run's figures are a
// single run's arithmetic over the merged counts, sums and distributions.
func (r *Run) derive(t *tables, percents []float64) {
	rp := r.Report
	rp.TimeTakenUs = r.local.elapsed.Microseconds()
	rp.TimeTakenS = secondsTaken(r.local.elapsed)
	if s := rp.TimeTakenS; s > 0 {
		rp.RequestsPerSecond = requestsPerSecond(rp.CompleteRequests, s)
		rp.TransferReceivedKBPerS = kilobytesPerSecond(rp.TotalTransferredBytes, s)
		rp.TransferSentKBPerS = kilobytesPerSecond(rp.TotalBodySentBytes, s)
		rp.TransferTotalKBPerS = kilobytesPerSecond(rp.TotalTransferredBytes+rp.TotalBodySentBytes, s)
		if rp.CompleteRequests > 0 {
			rp.TimePerRequestMs = timePerRequest(rp.ConcurrencyLevel, s, rp.CompleteRequests)
			rp.TimePerRequestAllMs = timePerRequestAcross(s, rp.CompleteRequests)
		}
	}
	if n := t.n; n > 0 {
		if len(rp.PercentageServed) != len(abPercents) {
			rp.PercentageServed = make([]served, len(abPercents))
		}
		for i, p := range abPercents {
			us := t.valueAt(totalColumn, percentileIndex(n, p))
			rp.PercentageServed[i] = served{Percent: float64(p), TotalMs: roundMs(us), TotalUs: us}
		}
		for i := range r.local.csv {
			r.local.csv[i] = t.valueAt(totalColumn, csvIndex(n, i))
		}
		if len(percents) > 0 {
			r.Percentiles = t.percentileRows(percents)
			r.PercentilesSource = t.source(rp)
		}
	}
	store := r.local.precision
	if store == "" {
		store = sampleStorePrecision(rp)
	}
	if x := r.Extended; x != nil {
		x.derive(rp, r.local.elapsed, store)
	}
	if rr := r.Rate; rr != nil {
		rr.AchievedPerS, rr.BelowTarget = 0, false
		if s := rp.TimeTakenS; s > 0 {
			rr.AchievedPerS = float64(rp.CompleteRequests) / s
			rr.BelowTarget = rr.AchievedPerS < client.AchievedShortfall*rr.TargetPerS
		}
		if ct := rp.ConnectionTimes; ct != nil {
			// In rate mode the schedule, not the concurrency, sets the pace:
			// ab's c·T/done would be the connections' share of the run, not
			// a latency. The line carries the measured mean instead.
			rp.TimePerRequestMs = float64(ct.Total.MeanUs) / 1000
		}
	}
	if c := r.local.serverCPU; c != nil {
		r.ServerCPU = serverCPUOf(c, rp)
	}
	r.deriveApdex(t)
	r.Figures = figuresOf(r)
}

// SetError records that gab ends with an error (message as printed, exit status).
func (r *Run) SetError(message string, exitCode int) {
	r.Error = &runError{Message: strings.TrimRight(message, "\n"), ExitCode: exitCode}
}

// columnAccumulator gathers one column's exact sums, as ab's first loop does.
type columnAccumulator struct {
	min, max uint32
	sum      uint64
	devSq    float64
}

func (a *columnAccumulator) add(v uint32, first bool) {
	if first || v < a.min {
		a.min = v
	}
	if first || v > a.max {
		a.max = v
	}
	a.sum += uint64(v)
}

// summarizeExact computes ab's tables from the exact store, with ab's
// arithmetic in ab's order.
func (r *Run) summarizeExact(t *tables, store *samples.Store, ct *connectionTimes) {
	exact := store.Exact()
	n := len(exact)
	r.local.count, t.n = n, n
	r.Report.ExactSamples = n
	if n == 0 {
		return
	}
	var acc [4]columnAccumulator
	for i, smp := range exact {
		for c := range acc {
			acc[c].add(smp.Value(column(c)), i == 0)
		}
	}
	var means [4]int64
	for c := range acc {
		means[c] = truncatedMean(acc[c].sum, n)
	}
	// ab sums the squared deviations in recording order, before any sort.
	for _, smp := range exact {
		for c := range acc {
			d := float64(smp.Value(column(c))) - float64(means[c])
			acc[c].devSq += d * d
		}
	}
	t.ranks = store.Ranks() // sorts exact: the sums above are taken first
	for c := range acc {
		a := acc[c]
		*ct.column(column(c)) = newColumnStats(int64(a.min), int64(a.max), means[c], t.median(column(c)),
			sampleSD(a.devSq, n))
	}
	r.Report.ConnectionTimes = ct
	r.local.html = htmlTimesOf(int64(acc[connectColumn].min), int64(acc[connectColumn].max), acc[connectColumn].sum,
		int64(acc[totalColumn].min), int64(acc[totalColumn].max), acc[totalColumn].sum, n)
}

// summarizeHistograms computes the tables from the 1 ms histograms that hold
// every request once the exact store overflowed. Min, max, mean and sd come
// from exact sums. Ranks resolve to bucket values (k ms for bucket k, clamped
// to the exact min and max), so ab's odd-count median, the average of two
// neighbouring samples, becomes the average of their two bucket values.
func (r *Run) summarizeHistograms(t *tables, store *samples.Store, ct *connectionTimes) {
	h := store.Histograms()
	n := int(h.Total.Count.Load())
	r.local.count, t.n = n, n
	r.Report.ExactSamples = len(store.Exact())
	r.Report.StatisticsFromHistogram = true
	if n == 0 {
		return
	}
	t.ranks = store.Ranks()
	for c := range 4 {
		col := h.Field(column(c))
		sum := col.Sum.Load()
		mean := truncatedMean(sum, n)
		hi, lo := col.SumSquares()
		sd := sampleSD(squaredDeviationsExact(hi, lo, sum, uint64(n), mean), n)
		*ct.column(column(c)) = newColumnStats(int64(col.Min()), int64(col.Max()), mean, t.median(column(c)), sd)
	}
	r.Report.ConnectionTimes = ct
	r.local.html = htmlTimesOf(int64(h.Connect.Min()), int64(h.Connect.Max()), h.Connect.Sum.Load(),
		int64(h.Total.Min()), int64(h.Total.Max()), h.Total.Sum.Load(), n)
}

func newColumnStats(minUs, maxUs, meanUs, medianUs int64, sdUs float64) columnStats {
	cs := columnStats{
		MinUs: minUs, MaxUs: maxUs, MeanUs: meanUs, MedianUs: medianUs, SDUs: sdUs,
		MinMs: roundMs(minUs), MaxMs: roundMs(maxUs), MeanMs: roundMs(meanUs), MedianMs: roundMs(medianUs),
		SDMs: doubleMs(sdUs),
	}
	cs.Confidence = confidenceOf(cs.MeanMs, cs.MedianMs, cs.SDMs)
	return cs
}

func htmlTimesOf(conMin, conMax int64, conSum uint64, totMin, totMax int64, totSum uint64, n int) htmlTimes {
	t := htmlTimes{
		ConnectMin: roundMs(conMin), ConnectAvg: htmlAverage(conSum, n), ConnectMax: roundMs(conMax),
		TotalMin: roundMs(totMin), TotalAvg: htmlAverage(totSum, n), TotalMax: roundMs(totMax),
	}
	t.ProcessingMin = t.TotalMin - t.ConnectMin
	t.ProcessingAvg = t.TotalAvg - t.ConnectAvg
	t.ProcessingMax = t.TotalMax - t.ConnectMax
	return t
}
