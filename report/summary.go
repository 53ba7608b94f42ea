package report

import (
	"strings"
	"time"

	"gab/client"
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
	// Histogram asks for --histogram's rows (Summary.Histogram).
	Histogram bool
	// ServerCPU is --server-pid's measurement over the run (nil without it).
	ServerCPU *ServerCPU
	// Run describes the command line for the JSON document's run and shard
	// sections (nil: no JSON document, and no sums are gathered).
	Run *RunInfo
	// FailIf are the --fail-if thresholds, checked against the figures.
	FailIf []threshold.Threshold
	// Environment describes where gab ran (Environment(version); nil: not
	// said), for the JSON document and the HTML report.
	Environment *EnvironmentInfo
}

// HTMLAttrs are the -x, -y and -z strings, used verbatim (the CLI supplies
// ab's default "bgcolor=white" for Cell).
type HTMLAttrs struct{ Table, Row, Cell string }

// Column names one of ab's four timing columns.
type Column = samples.Field

const (
	ConnectColumn    = samples.Connect    // ab's ctime: start → connection ready
	ProcessingColumn = samples.Processing // Total − Connect
	WaitingColumn    = samples.Wait       // request written → first response byte
	TotalColumn      = samples.Total      // start → response complete
)

// ColumnStats are one row of ab's "Connection Times (ms)" table. The µs fields
// are ab's intermediate values; the ms fields are what ab prints.
type ColumnStats struct {
	MinUs, MaxUs int64
	MeanUs       int64   // sum/count truncated to whole µs
	MedianUs     int64   // ab's inverted median rule, truncated to µs
	SDUs         float64 // sample sd around MeanUs

	Min, Mean, Median, Max int64   // (µs+500)/1000
	SD                     float64 // SDUs/1000, printed %5.1f
	// Confidence is ab's median-versus-mean verdict (printed without -S).
	Confidence Confidence
}

// HTMLTimes are the HTML report's table, which ab computes differently from
// the text one: sums rounded to ms before dividing, and Processing as the
// difference of the rounded Total and Connect figures. All in ms.
type HTMLTimes struct {
	ConnectMin, ConnectAvg, ConnectMax          int64
	ProcessingMin, ProcessingAvg, ProcessingMax int64
	TotalMin, TotalAvg, TotalMax                int64
}

// Rates are ab's derived figures; meaningful only when Seconds > 0 (and, for
// the per-request ones, Complete > 0).
type Rates struct {
	RequestsPerSecond float64 // [#/sec] (mean)
	TimePerRequest    float64 // [ms] (mean): c·T·1000/done
	TimePerRequestAll float64 // [ms] (mean, across all concurrent requests)
	ReceivedKBps      float64 // Transfer rate [Kbytes/sec] received
	SentKBps          float64 // kb/s sent (body runs)
	TotalKBps         float64 // kb/s total (body runs)
}

// Percentile is one row of ab's percentile table.
type Percentile struct {
	Percent int   // 50, 66, 75, 80, 90, 95, 98, 99, 100
	Us      int64 // the total time of the sample at ab's index
	Ms      int64 // what ab prints
}

// abPercents are the rows of ab's percentile table.
var abPercents = [...]int{50, 66, 75, 80, 90, 95, 98, 99, 100}

// Summary is every figure any of gab's outputs prints, computed once by
// Summarize: ab's report (with ab's arithmetic), and the tables and documents
// beyond it (--percentiles, --extended, rate mode's corrected tables, the CGI
// table, the JSON document). Every writer (WriteText, WriteHTML, WriteCSV,
// WritePercentiles, WriteCGI, WriteCorrected, WriteExtended, WriteJSON) is a
// function of a Summary and an io.Writer and computes nothing of its own; a new
// figure goes into the Summary (and the Document, for the JSON form) first.
type Summary struct {
	// CommandLine, Start and Ending describe the run for the JSON document.
	// Started is false for a command line that never ran (NotStarted): then
	// only Error and the invocation are meaningful.
	CommandLine []string
	// Environment is where gab ran (nil: not said).
	Environment *EnvironmentInfo
	Start       time.Time // just before the first connect (wall clock)
	Ending      client.Ending
	Started     bool
	// Error is set when gab ends with an error after the command line was
	// accepted (SetError), or before the run (NotStarted).
	Error *RunError

	ServerSoftware string
	Host           string
	Port           int
	// Protocol is "h2" or "h2c" for HTTP/2 runs, "h3" for HTTP/3, "" otherwise.
	Protocol string
	// QUIC is quic-go's counters over an HTTP/3 run's connections (nil
	// otherwise), for --extended.
	QUIC *client.QUICStats
	// TLS is the first handshake's description (nil for plain HTTP, or when
	// no handshake succeeded).
	TLS            *client.TLSInfo
	Path           string
	DocLength      int64
	VariableLength bool

	Concurrency int
	// Connections and Streams (HTTP/2 only) are the connections and the
	// streams per connection whose product is Concurrency.
	Connections, Streams int
	// Elapsed is ab's "Time taken for tests", truncated to whole µs;
	// Seconds is the same as ab's double.
	Elapsed time.Duration
	Seconds float64

	Complete          int
	Failed            client.Failures
	WriteErrors       int
	Non2xx            int
	KeepAlive         bool // -k given: the Keep-Alive line is printed
	KeepAliveRequests int
	TotalRead         int64 // Total transferred
	BodySent          bool  // -p/-u given
	TotalSent         int64 // Total body sent
	BodyRead          int64 // HTML transferred
	// Retries counts requests sent again once on a new connection because the
	// server closed a kept-alive one before answering.
	Retries int
	// HTMLAttrs are the -w report's attributes (Options.HTML).
	HTMLAttrs HTMLAttrs

	// Rates are set when Seconds > 0. The text report prints them only when
	// Complete > 0 as well; the HTML one whenever Seconds > 0.
	Rates Rates

	// Count is the number of requests behind the timing tables (ab's done).
	Count                               int
	Connect, Processing, Waiting, Total ColumnStats
	HTML                                HTMLTimes
	// Percentiles is ab's table (computed whenever Count > 0; printed only
	// when Count > 1 and not NoPercentiles).
	Percentiles   []Percentile
	NoPercentiles bool
	NoConfidence  bool

	// FromHistograms says the run outgrew the exact sample store: min, max,
	// mean and sd are still exact, medians and percentiles come from 1 ms
	// buckets. ExactSamples is how many requests were stored exactly.
	FromHistograms bool
	// PercentilesFromHDR says that, past the exact store, the --percentiles
	// table and --fail-if's percentiles come from the HDR histograms of every
	// request (3 significant digits) rather than 1 ms buckets.
	PercentilesFromHDR bool
	hdr                *hdrColumns
	ExactSamples       int
	// SampleStore says, in words, how ab's tables were computed (exact, or
	// from 1 ms buckets past the exact store).
	SampleStore string

	// CSV is the -e file: CSV[p] is the Total time in µs within which p % of
	// the requests were served (ab's index rule), for p = 0…100; set when
	// Count > 0.
	CSV [101]int64

	// PercentileTable is the --percentiles table (nil without the option or
	// when nothing was recorded).
	PercentileTable []PercentileRow
	// CGI is the CGI-mode table (nil outside --cgi).
	CGI *CGIStats
	// Extended holds the figures beyond ab's (nil unless the client gathered
	// them: --extended, --format json, --json, --rate).
	Extended *Extended
	// Rate holds rate mode's figures (nil outside --rate).
	Rate *RateFigures
	// ServerCPU holds --server-pid's figures (nil without it).
	ServerCPU *ServerCPUFigures
	// Histogram is --histogram's latency histogram (Options.Histogram; nil
	// without it or when nothing was recorded).
	Histogram []HistogramBucket
	// Warmup is what the warm-up (--warmup) sent before the run, left out of
	// every other figure (nil without one).
	Warmup *client.WarmupResult
	// Thresholds are the --fail-if verdicts, in the order given (nil without
	// the option); ThresholdsFailed is set when any failed.
	Thresholds       []threshold.Verdict
	ThresholdsFailed bool
	// Timeline is the latency over time (client.Config.Interval; nil otherwise).
	Timeline *Timeline

	// ranks answers Percentile's rank queries over every recorded request
	// (nil when the run recorded none).
	ranks ranker

	// Run is what the command line asked for and the shard's place (nil
	// unless a JSON document is written); Sums are the timing columns' exact
	// sums and histograms for gab merge (set with Run). Precision, when set,
	// says how exact the medians and percentiles are in place of the 1 ms
	// histograms' line (a merged report).
	Run       *RunInfo
	Sums      *ColumnSums
	Precision string
}

// ranker answers rank queries (0-based) over a column: *samples.Ranks for a
// run, merged histograms for gab merge.
type ranker interface {
	ValueAt(c Column, i int) int64
}

// Percentile returns the column's value in µs at percent p (fractional p
// allowed) for the figures beyond ab's: the value of rank
// samples.NearestRank(Count, p), HdrHistogram's rule (ab's own table keeps
// ab's index rule, percentileIndex). In histogram mode the value is its 1 ms
// bucket's (clamped to the exact min and max). In exact mode a column other
// than Total costs two passes over the samples; a Summary is not safe for
// concurrent Percentile calls.
func (s *Summary) Percentile(c Column, p float64) int64 {
	if s.Count == 0 {
		return 0
	}
	return s.valueAt(c, int(samples.NearestRank(int64(s.Count), p))-1)
}

// valueAt is the value of rank i (0-based) in the column's ascending order.
func (s *Summary) valueAt(c Column, i int) int64 { return s.ranks.ValueAt(c, i) }

// Summarize computes every figure of every output from a run's result. In exact
// mode it sorts res.Samples.Exact() in place into ab's order
// (samples.CompareByTotal, the -g file's order) and keeps it for Percentile;
// its extra memory is a constant 256 KB, whatever the number of samples. The
// sums of squared deviations are taken in the order the samples are found,
// as ab takes them in recording order, so summarize a run once: a second call
// would sum them in sorted order, which can change the sd's last bits.
func Summarize(res *client.Result, o Options) *Summary {
	s := &Summary{
		ServerSoftware:    res.ServerSoftware,
		Host:              o.Host,
		Port:              o.Port,
		Protocol:          res.Protocol,
		QUIC:              res.QUIC,
		Path:              o.Path,
		DocLength:         res.DocLength,
		VariableLength:    o.VariableLength,
		Concurrency:       o.Concurrency,
		Connections:       o.Connections,
		Streams:           o.Streams,
		Elapsed:           res.Elapsed.Truncate(time.Microsecond),
		Seconds:           secondsTaken(res.Elapsed),
		Complete:          res.Complete,
		Failed:            res.Failed,
		WriteErrors:       res.WriteErrors,
		Non2xx:            res.Non2xx,
		KeepAlive:         o.KeepAlive,
		KeepAliveRequests: res.KeepAlive,
		TotalRead:         res.TotalRead,
		BodySent:          o.BodySent,
		TotalSent:         res.TotalSent,
		BodyRead:          res.BodyRead,
		Retries:           res.Retries,
		HTMLAttrs:         o.HTML,
		NoPercentiles:     o.NoPercentiles,
		NoConfidence:      o.NoConfidence,
		CommandLine:       o.CommandLine,
		Environment:       o.Environment,
		Start:             res.Start,
		Ending:            res.Ending,
		Started:           true,
		Timeline:          timelineOf(res),
	}
	if o.TLS {
		s.TLS = res.TLS
	}
	if s.Seconds > 0 {
		s.Rates = computeRates(s)
	}
	if res.Samples != nil {
		if o.Run != nil {
			s.Run, s.Sums = o.Run, columnSums(res.Samples) // before the sort below
		}
		if res.Samples.Overflowed() {
			s.summarizeHistograms(res.Samples)
		} else {
			s.summarizeExact(res.Samples)
		}
	}
	s.SampleStore = sampleStorePrecision(s)
	if s.Count > 0 {
		s.csvRows()
	}
	s.useHDRPast(res)
	if len(o.Percentiles) > 0 && s.Count > 0 {
		s.PercentileTable = percentileRows(s, o.Percentiles)
	}
	s.CGI = SummarizeCGI(res.CGI)
	if o.ServerCPU != nil {
		s.ServerCPU = serverCPUFigures(s, o.ServerCPU)
	}
	if res.Extra != nil {
		s.Extended = summarizeExtended(s, res, o.CPU)
		if rr := res.Extra.Rate; rr != nil {
			s.Rate = summarizeRate(s, rr, o.Percentiles)
		}
	}
	if s.Rate != nil && s.Count > 0 {
		// In rate mode the schedule, not the concurrency, sets the pace: ab's
		// c·T/done would be the connections' share of the run, not a latency.
		// The line carries the measured mean instead.
		s.Rates.TimePerRequest = float64(s.Total.MeanUs) / 1000
	}
	s.Warmup = res.Warmup
	s.checkThresholds(o.FailIf)
	if o.Histogram {
		s.Histogram = s.LatencyHistogram(histogramRows)
	}
	return s
}

// RunError is how gab ended when it ended with an error: ab's stderr text and
// the exit status.
type RunError struct {
	Message  string // without the trailing newline
	ExitCode int
}

// SetError records that gab ends with an error (message as printed, exit status).
func (s *Summary) SetError(message string, exitCode int) {
	s.Error = &RunError{Message: strings.TrimRight(message, "\n"), ExitCode: exitCode}
}

// NotStarted is the Summary of a command line that never ran (an error in
// it, or before the first request): no figures, only the invocation and the
// error. start is when gab gave up.
func NotStarted(commandLine []string, start time.Time, message string, exitCode int) *Summary {
	s := &Summary{CommandLine: commandLine, Start: start}
	if message != "" || exitCode != 0 {
		s.SetError(message, exitCode)
	}
	return s
}

func computeRates(s *Summary) Rates {
	r := Rates{
		RequestsPerSecond: requestsPerSecond(s.Complete, s.Seconds),
		ReceivedKBps:      kilobytesPerSecond(s.TotalRead, s.Seconds),
		SentKBps:          kilobytesPerSecond(s.TotalSent, s.Seconds),
		TotalKBps:         kilobytesPerSecond(s.TotalRead+s.TotalSent, s.Seconds),
	}
	if s.Complete > 0 {
		r.TimePerRequest = timePerRequest(s.Concurrency, s.Seconds, s.Complete)
		r.TimePerRequestAll = timePerRequestAcross(s.Seconds, s.Complete)
	}
	return r
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

func (s *Summary) summarizeExact(store *samples.Store) {
	exact := store.Exact()
	n := len(exact)
	s.Count = n
	s.ExactSamples = n
	if n == 0 {
		return
	}
	var acc [4]columnAccumulator
	for i, smp := range exact {
		for c := range acc {
			acc[c].add(smp.Value(Column(c)), i == 0)
		}
	}
	var means [4]int64
	for c := range acc {
		means[c] = truncatedMean(acc[c].sum, n)
	}
	// ab sums the squared deviations in recording order, before any sort.
	for _, smp := range exact {
		for c := range acc {
			d := float64(smp.Value(Column(c))) - float64(means[c])
			acc[c].devSq += d * d
		}
	}
	s.ranks = store.Ranks() // sorts exact: the sums above are taken first
	for c := range acc {
		a := acc[c]
		*s.stats(Column(c)) = newColumnStats(int64(a.min), int64(a.max), means[c], s.median(Column(c)),
			sampleSD(a.devSq, n))
	}
	s.HTML = htmlTimes(int64(acc[ConnectColumn].min), int64(acc[ConnectColumn].max), acc[ConnectColumn].sum,
		int64(acc[TotalColumn].min), int64(acc[TotalColumn].max), acc[TotalColumn].sum, n)
	s.Percentiles = s.percentileRows()
}

// median is ab's median of the column (see medianIndexes) from exact ranks.
func (s *Summary) median(c Column) int64 {
	lo, hi := medianIndexes(s.Count)
	v := s.valueAt(c, lo)
	if hi == lo {
		return v
	}
	return (v + s.valueAt(c, hi)) / 2
}

// summarizeHistograms computes the tables from the 1 ms histograms that hold
// every request once the exact store overflowed. Min, max, mean and sd come
// from exact sums. Ranks resolve to bucket values (k ms for bucket k, clamped
// to the exact min and max), so ab's odd-count median, the average of two
// neighbouring samples, becomes the average of their two bucket values.
func (s *Summary) summarizeHistograms(store *samples.Store) {
	h := store.Histograms()
	n := int(h.Total.Count.Load())
	s.Count = n
	s.ExactSamples = len(store.Exact())
	s.FromHistograms = true
	if n == 0 {
		return
	}
	s.ranks = store.Ranks()
	for c := range 4 {
		col := h.Field(Column(c))
		sum := col.Sum.Load()
		mean := truncatedMean(sum, n)
		hi, lo := col.SumSquares()
		sd := sampleSD(squaredDeviationsExact(hi, lo, sum, uint64(n), mean), n)
		mlo, mhi := medianIndexes(n)
		median := (s.valueAt(Column(c), mlo) + s.valueAt(Column(c), mhi)) / 2
		*s.stats(Column(c)) = newColumnStats(int64(col.Min()), int64(col.Max()), mean, median, sd)
	}
	s.HTML = htmlTimes(int64(h.Connect.Min()), int64(h.Connect.Max()), h.Connect.Sum.Load(),
		int64(h.Total.Min()), int64(h.Total.Max()), h.Total.Sum.Load(), n)
	s.Percentiles = s.percentileRows()
}

func (s *Summary) stats(c Column) *ColumnStats {
	switch c {
	case ConnectColumn:
		return &s.Connect
	case ProcessingColumn:
		return &s.Processing
	case WaitingColumn:
		return &s.Waiting
	}
	return &s.Total
}

func newColumnStats(minUs, maxUs, meanUs, medianUs int64, sdUs float64) ColumnStats {
	cs := ColumnStats{
		MinUs: minUs, MaxUs: maxUs, MeanUs: meanUs, MedianUs: medianUs, SDUs: sdUs,
		Min: roundMs(minUs), Max: roundMs(maxUs), Mean: roundMs(meanUs), Median: roundMs(medianUs),
		SD: doubleMs(sdUs),
	}
	cs.Confidence = confidenceOf(cs.Mean, cs.Median, cs.SD)
	return cs
}

func htmlTimes(conMin, conMax int64, conSum uint64, totMin, totMax int64, totSum uint64, n int) HTMLTimes {
	t := HTMLTimes{
		ConnectMin: roundMs(conMin), ConnectAvg: htmlAverage(conSum, n), ConnectMax: roundMs(conMax),
		TotalMin: roundMs(totMin), TotalAvg: htmlAverage(totSum, n), TotalMax: roundMs(totMax),
	}
	t.ProcessingMin = t.TotalMin - t.ConnectMin
	t.ProcessingAvg = t.TotalAvg - t.ConnectAvg
	t.ProcessingMax = t.TotalMax - t.ConnectMax
	return t
}

func (s *Summary) percentileRows() []Percentile {
	rows := make([]Percentile, len(abPercents))
	for i, p := range abPercents {
		us := s.valueAt(TotalColumn, percentileIndex(s.Count, p))
		rows[i] = Percentile{Percent: p, Us: us, Ms: roundMs(us)}
	}
	return rows
}

// csvRows computes the -e file's rows.
func (s *Summary) csvRows() {
	for i := range s.CSV {
		s.CSV[i] = s.valueAt(TotalColumn, csvIndex(s.Count, i))
	}
}
