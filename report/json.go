package report

import (
	"encoding/json"
	"io"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/client"
)

// This file is gab's JSON output (--format json, --json FILE): one document per
// run, in every ending. The schema is docs/json-schema.json; the Go types below
// are the same thing with doc comments. Field names carry their unit: _us
// (microseconds), _ms (milliseconds), _s (seconds), _bytes, _per_s.

// SchemaVersion is the document's schema_version. It changes only when a field
// changes meaning or disappears; new fields may appear within a version.
const SchemaVersion = 3

// Document is the whole JSON output.
type Document struct {
	SchemaVersion int `json:"schema_version"`
	// Tool is always "gab".
	Tool string `json:"tool"`
	// CommandLine is argv as given, argv[0] included.
	CommandLine []string `json:"command_line"`
	// StartTime is when the run started (just before the first connect), or when
	// gab gave up before starting; RFC 3339 in UTC with nanoseconds.
	StartTime string `json:"start_time"`
	// Ending is how the run ended: completed, time_limit, interrupted, fatal, or
	// not_started (an error before the run, e.g. a bad argument).
	Ending string `json:"ending"`
	// Error is set when gab exits with an error: the message ab would print and
	// the exit status.
	Error *JSONError `json:"error,omitempty"`
	// Report holds every figure of ab's text report (absent when not_started).
	Report *JSONReport `json:"report,omitempty"`
	// Percentiles is the --percentiles table (absent without the option).
	Percentiles []JSONPercentileRow `json:"percentiles,omitempty"`
	// PercentilesSource says where the --percentiles values come from:
	// "exact" (every sample), "hdr_histogram" (past the exact store, HDR
	// histograms of every request, 3 significant digits) or "1ms_buckets".
	PercentilesSource string `json:"percentiles_source,omitempty"`
	// Extended holds the --extended figures (absent if they were not gathered).
	Extended *JSONExtended `json:"extended,omitempty"`
	// Rate is set in rate mode (--rate).
	Rate *JSONRate `json:"rate,omitempty"`
	// ServerCPU is set with --server-pid.
	ServerCPU *JSONServerCPU `json:"server_cpu,omitempty"`
	// Run is what the command line asked for, as gab merge compares it.
	Run *JSONRun `json:"run,omitempty"`
	// Shard is set by --shard, and in merged documents (shard.go).
	Shard *JSONShard `json:"shard,omitempty"`
	// Sums are the timing columns' exact sums and histograms, from which gab
	// merge computes the report of several documents.
	Sums *JSONSums `json:"sums,omitempty"`
	// CGI is the CGI table (--cgi; absent otherwise).
	CGI *JSONCGI `json:"cgi,omitempty"`
	// Warmup is the warm-up sent before the run (--warmup; absent without).
	Warmup *JSONWarmup `json:"warmup,omitempty"`
	// Thresholds are the --fail-if verdicts (absent without the option).
	Thresholds *JSONThresholds `json:"thresholds,omitempty"`
	// Environment is where gab ran (absent in documents of older versions).
	Environment *JSONEnvironment `json:"environment,omitempty"`
	// Timeline is the latency over time, one entry per interval (--interval,
	// 1 s by default; absent if it was not gathered).
	Timeline *JSONTimeline `json:"timeline,omitempty"`
	// Figures are the catalog's figures of the run (catalog.go), key → value
	// in the figure's unit; a figure the run lacks is absent.
	Figures FigureValues `json:"figures,omitempty"`
}

// JSONEnvironment describes the client machine and gab itself.
type JSONEnvironment struct {
	GabVersion string `json:"gab_version"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`   // GOOS
	Arch       string `json:"arch"` // GOARCH
	// Cores is the number of logical CPUs; GOMAXPROCS those gab used (--cpus).
	Cores      int `json:"cores"`
	GOMAXPROCS int `json:"gomaxprocs"`
	// Kernel is the kernel's name and release (uname -sr), where known.
	Kernel string `json:"kernel,omitempty"`
}

// JSONError is a fatal error.
type JSONError struct {
	Message  string `json:"message"`   // ab's stderr text, without the trailing newline
	ExitCode int    `json:"exit_code"` // the process's exit status
}

// JSONTLS is the first TLS handshake, as ab's SSL/TLS lines.
type JSONTLS struct {
	Protocol      string `json:"protocol"`
	Cipher        string `json:"cipher"`
	PeerKeyBits   int    `json:"peer_key_bits"`
	CipherBits    int    `json:"cipher_bits"`
	ServerTempKey string `json:"server_temp_key,omitempty"`
	ServerName    string `json:"server_name,omitempty"`
}

// JSONFailures is ab's "Failed requests" breakdown.
type JSONFailures struct {
	Connect    int `json:"connect"`
	Receive    int `json:"receive"`
	Length     int `json:"length"`
	Exceptions int `json:"exceptions"`
}

// JSONColumn is one row of ab's "Connection Times (ms)" table: the printed ms
// values (ab's rounding; sd_ms unrounded, printed %5.1f) and ab's µs
// intermediates (mean truncated to the µs, median by ab's inverted rule).
type JSONColumn struct {
	MinMs    int64   `json:"min_ms"`
	MeanMs   int64   `json:"mean_ms"`
	SDMs     float64 `json:"sd_ms"`
	MedianMs int64   `json:"median_ms"`
	MaxMs    int64   `json:"max_ms"`
	MinUs    int64   `json:"min_us"`
	MeanUs   int64   `json:"mean_us"`
	SDUs     float64 `json:"sd_us"`
	MedianUs int64   `json:"median_us"`
	MaxUs    int64   `json:"max_us"`
	// Confidence is ab's verdict on median versus mean: "reliable", or
	// "warning" / "error" where the text prints its WARNING / ERROR lines
	// (unless -S).
	Confidence string `json:"confidence"`
}

// JSONConnectionTimes is ab's timing table.
type JSONConnectionTimes struct {
	Connect    JSONColumn `json:"connect"`
	Processing JSONColumn `json:"processing"`
	Waiting    JSONColumn `json:"waiting"`
	Total      JSONColumn `json:"total"`
}

// JSONServed is one row of ab's "Percentage of the requests served" table.
type JSONServed struct {
	Percent float64 `json:"percent"`
	TotalMs int64   `json:"total_ms"` // as ab prints it
	TotalUs int64   `json:"total_us"`
}

// JSONReport is ab's report. Every figure is present whatever ab would print
// (e.g. keep_alive_requests without -k); rates are 0 when the time taken is 0.
type JSONReport struct {
	ServerSoftware string `json:"server_software"`
	ServerHostname string `json:"server_hostname"`
	ServerPort     int    `json:"server_port"`
	Protocol       string `json:"protocol,omitempty"` // "h2" or "h2c" with --http2
	// Connections and StreamsPerConnection (--http2 only): concurrency_level
	// is their product, the requests in flight.
	Connections          int      `json:"connections,omitempty"`
	StreamsPerConnection int      `json:"streams_per_connection,omitempty"`
	TLS                  *JSONTLS `json:"tls,omitempty"`
	DocumentPath         string   `json:"document_path"`
	DocumentLengthBytes  int64    `json:"document_length_bytes"`
	// VariableLength is -l: the text says "Document Length: Variable".
	VariableLength bool `json:"variable_length"`

	ConcurrencyLevel int          `json:"concurrency_level"`
	TimeTakenS       float64      `json:"time_taken_s"`
	TimeTakenUs      int64        `json:"time_taken_us"`
	CompleteRequests int          `json:"complete_requests"`
	FailedRequests   int          `json:"failed_requests"`
	Failures         JSONFailures `json:"failures"`
	WriteErrors      int          `json:"write_errors"`
	Non2xxResponses  int          `json:"non_2xx_responses"`
	KeepAliveReqs    int          `json:"keep_alive_requests"`

	TotalTransferredBytes int64 `json:"total_transferred_bytes"`
	TotalBodySentBytes    int64 `json:"total_body_sent_bytes"`
	HTMLTransferredBytes  int64 `json:"html_transferred_bytes"`

	RequestsPerSecond       float64              `json:"requests_per_second"`
	TimePerRequestMs        float64              `json:"time_per_request_ms"`
	TimePerRequestAllMs     float64              `json:"time_per_request_across_all_ms"`
	TransferReceivedKBPerS  float64              `json:"transfer_rate_received_kbytes_per_s"`
	TransferSentKBPerS      float64              `json:"transfer_rate_sent_kbytes_per_s"`
	TransferTotalKBPerS     float64              `json:"transfer_rate_total_kbytes_per_s"`
	ConnectionTimes         *JSONConnectionTimes `json:"connection_times,omitempty"` // absent when nothing was recorded
	PercentageServed        []JSONServed         `json:"percentage_served,omitempty"`
	StatisticsFromHistogram bool                 `json:"statistics_from_histograms"`
	ExactSamples            int                  `json:"exact_samples"`
}

// JSONPercentileRow is one row of the --percentiles table: the nearest rank's
// value (samples.NearestRank) in µs, from percentiles_source.
type JSONPercentileRow struct {
	Percent   float64 `json:"percent"`
	ConnectUs int64   `json:"connect_us"`
	WaitingUs int64   `json:"waiting_us"`
	TotalUs   int64   `json:"total_us"`
}

// JSONDist describes a distribution in µs: count, min, mean, sd (n−1) and max
// exact; median and percentiles by the nearest rank (samples.NearestRank) from
// an HDR histogram with 3 significant digits (the bucket's highest value).
type JSONDist struct {
	Count    int64   `json:"count"`
	MinUs    int64   `json:"min_us"`
	MeanUs   float64 `json:"mean_us"`
	SDUs     float64 `json:"sd_us"`
	MedianUs int64   `json:"median_us"`
	P90Us    int64   `json:"p90_us"`
	P99Us    int64   `json:"p99_us"`
	P999Us   int64   `json:"p99_9_us"`
	MaxUs    int64   `json:"max_us"`
	// SumUs and Histogram are what gab merge combines (the histogram is
	// absent only in a merged document whose parts had none).
	SumUs     int64          `json:"sum_us"`
	Histogram *JSONHistogram `json:"histogram,omitempty"`
}

// JSONHistogram is an HDR histogram in its standard, mergeable encoding: V2
// compressed, base64 (decode with any HdrHistogram library, e.g. Go's
// hdrhistogram.Decode or Java's Histogram.fromString).
type JSONHistogram struct {
	Unit              string `json:"unit"` // always "us"
	LowestUs          int64  `json:"lowest_us"`
	HighestUs         int64  `json:"highest_us"`
	SignificantDigits int    `json:"significant_digits"`
	Encoding          string `json:"encoding"` // always "hdrhistogram-v2-compressed-base64"
	Data              string `json:"data"`
}

// JSONPhases are the extended report's phases.
type JSONPhases struct {
	TCPConnect   JSONDist `json:"tcp_connect"`
	TLSHandshake JSONDist `json:"tls_handshake"`
	RequestWrite JSONDist `json:"request_write"`
	Waiting      JSONDist `json:"waiting"`
	BodyTransfer JSONDist `json:"body_transfer"`
	Total        JSONDist `json:"total"`
}

// JSONFailureClass is one failure class with its first error message.
type JSONFailureClass struct {
	Count      int    `json:"count"`
	FirstError string `json:"first_error,omitempty"`
}

// JSONThroughput is the recorded-request rate over whole 1-second intervals.
type JSONThroughput struct {
	Intervals int     `json:"intervals"`
	MeanPerS  float64 `json:"mean_per_s"`
	SDPerS    float64 `json:"sd_per_s"`
	// PerSecond counts the requests recorded in each second of the run, from 0;
	// the last entry is usually a partial second.
	PerSecond []int64 `json:"per_second"`
}

// JSONCPU is the client's own CPU use over the run.
type JSONCPU struct {
	UserMs float64 `json:"user_ms"`
	SysMs  float64 `json:"sys_ms"`
	// PercentOfOneCore and CoresBusy are absent for runs under 1 s (too
	// short for a share of a core to mean anything).
	PercentOfOneCore *float64 `json:"percent_of_one_core,omitempty"`
	CoresBusy        *float64 `json:"cores_busy,omitempty"`
}

// JSONExtended is the --extended report.
type JSONExtended struct {
	DNSUs      int64      `json:"dns_us"`
	DNSLookups int        `json:"dns_lookups"`
	Phases     JSONPhases `json:"phases"`
	// StatusCounts counts responses per status code (keys are the codes).
	StatusCounts       map[string]int              `json:"status_counts"`
	FailuresByClass    map[string]JSONFailureClass `json:"failures_by_class"`
	Throughput         JSONThroughput              `json:"throughput"`
	ResponseTimeMeanMs float64                     `json:"response_time_mean_ms"`
	ResponseTimeSDMs   float64                     `json:"response_time_sd_ms"`
	ReceivedMbitPerS   float64                     `json:"bandwidth_received_mbit_per_s"`
	SentMbitPerS       float64                     `json:"bandwidth_sent_mbit_per_s"`
	ClientCPU          *JSONCPU                    `json:"client_cpu,omitempty"` // absent where unknown
	// SampleStore says how ab's tables were computed.
	SampleStore string `json:"sample_store"`
	// LatencyHistogram is the Total phase (start → end of each recorded request).
	LatencyHistogram JSONHistogram `json:"latency_histogram"`
}

// JSONRate is rate mode's figures.
type JSONRate struct {
	TargetPerS    float64 `json:"target_per_s"`
	AchievedPerS  float64 `json:"achieved_per_s"`
	Sent          int64   `json:"sent"`
	DueButNotSent int64   `json:"due_but_not_sent"`
	// OnSchedule of the sent left within OnScheduleTolUs of their intended time.
	OnSchedule      int64 `json:"on_schedule"`
	OnScheduleTolUs int64 `json:"on_schedule_tolerance_us"`
	// BelowTarget: the achieved rate is under 95 % of the target (the text
	// report warns).
	BelowTarget bool `json:"below_target"`
	// Lag is how late each request was sent after its intended time.
	Lag JSONDist `json:"lag"`
	// Corrected is the latency from each request's intended send time.
	Corrected          JSONDist      `json:"corrected"`
	CorrectedServed    []JSONServed  `json:"corrected_percentage_served"`
	CorrectedHistogram JSONHistogram `json:"corrected_histogram"`
}

// NewDocument builds the JSON document of a summary (of a run, or of a
// command line that never ran: NotStarted).
func NewDocument(s *Summary) *Document {
	d := &Document{
		SchemaVersion: SchemaVersion,
		Tool:          "gab",
		CommandLine:   s.CommandLine,
		Ending:        "not_started",
		StartTime:     s.Start.UTC().Format(time.RFC3339Nano),
	}
	if d.CommandLine == nil {
		d.CommandLine = []string{}
	}
	if e := s.Environment; e != nil {
		d.Environment = &JSONEnvironment{GabVersion: e.GabVersion, GoVersion: e.GoVersion, OS: e.OS, Arch: e.Arch,
			Cores: e.Cores, GOMAXPROCS: e.GOMAXPROCS, Kernel: e.Kernel}
	}
	if e := s.Error; e != nil {
		d.Error = &JSONError{Message: e.Message, ExitCode: e.ExitCode}
	}
	if !s.Started {
		return d
	}
	d.Ending = endingName(s.Ending)
	d.Report = jsonReport(s)
	if s.Run != nil {
		d.Run = jsonRun(s)
		if s.Run.Shard != nil {
			d.Shard = jsonShard(s.Run.Shard, s.Start)
		}
	}
	if s.Sums != nil {
		d.Sums = jsonSums(s.Sums)
	}
	for _, r := range s.PercentileTable {
		d.Percentiles = append(d.Percentiles, JSONPercentileRow(r))
	}
	if s.ServerCPU != nil {
		d.ServerCPU = jsonServerCPU(s.ServerCPU)
	}
	if len(d.Percentiles) > 0 {
		switch {
		case s.PercentilesFromHDR:
			d.PercentilesSource = "hdr_histogram"
		case s.FromHistograms:
			d.PercentilesSource = "1ms_buckets"
		default:
			d.PercentilesSource = "exact"
		}
	}
	if s.Extended != nil {
		d.Extended = jsonExtended(s)
	}
	if s.Rate != nil {
		d.Rate = jsonRate(s.Rate)
	}
	d.CGI = jsonCGI(s.CGI)
	d.Warmup = jsonWarmup(s)
	d.Thresholds = jsonThresholds(s)
	if s.Timeline != nil {
		d.Timeline = jsonTimeline(s.Timeline)
	}
	d.Figures = FiguresOf(d)
	return d
}

// WriteJSON writes the summary's JSON document.
func WriteJSON(w io.Writer, s *Summary) error { return WriteDocument(w, NewDocument(s)) }

// WriteDocument writes the document, indented, with a final newline. HTML
// characters stay as they are (error messages hold "->" and "<...>").
func WriteDocument(w io.Writer, d *Document) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}

func endingName(e client.Ending) string {
	switch e {
	case client.EndCompleted:
		return "completed"
	case client.EndTimeLimit:
		return "time_limit"
	case client.EndInterrupted:
		return "interrupted"
	}
	return "fatal"
}

func jsonColumn(c *ColumnStats) JSONColumn {
	return JSONColumn{
		MinMs: c.Min, MeanMs: c.Mean, SDMs: c.SD, MedianMs: c.Median, MaxMs: c.Max,
		MinUs: c.MinUs, MeanUs: c.MeanUs, SDUs: c.SDUs, MedianUs: c.MedianUs, MaxUs: c.MaxUs,
		Confidence: confidenceName(c.Confidence),
	}
}

func confidenceName(c Confidence) string {
	switch c {
	case NotWithinDeviation:
		return "warning"
	case MoreThanTwiceApart:
		return "error"
	}
	return "reliable"
}

func jsonReport(s *Summary) *JSONReport {
	r := &JSONReport{
		ServerSoftware:          s.ServerSoftware,
		ServerHostname:          s.Host,
		ServerPort:              int(port16(s.Port)),
		Protocol:                s.Protocol,
		Connections:             s.Connections,
		StreamsPerConnection:    s.Streams,
		DocumentPath:            s.Path,
		DocumentLengthBytes:     s.DocLength,
		VariableLength:          s.VariableLength,
		ConcurrencyLevel:        s.Concurrency,
		TimeTakenS:              s.Seconds,
		TimeTakenUs:             s.Elapsed.Microseconds(),
		CompleteRequests:        s.Complete,
		FailedRequests:          s.Failed.Total,
		Failures:                JSONFailures{s.Failed.Connect, s.Failed.Receive, s.Failed.Length, s.Failed.Exceptions},
		WriteErrors:             s.WriteErrors,
		Non2xxResponses:         s.Non2xx,
		KeepAliveReqs:           s.KeepAliveRequests,
		TotalTransferredBytes:   s.TotalRead,
		TotalBodySentBytes:      s.TotalSent,
		HTMLTransferredBytes:    s.BodyRead,
		RequestsPerSecond:       s.Rates.RequestsPerSecond,
		TimePerRequestMs:        s.Rates.TimePerRequest,
		TimePerRequestAllMs:     s.Rates.TimePerRequestAll,
		TransferReceivedKBPerS:  s.Rates.ReceivedKBps,
		TransferSentKBPerS:      s.Rates.SentKBps,
		TransferTotalKBPerS:     s.Rates.TotalKBps,
		StatisticsFromHistogram: s.FromHistograms,
		ExactSamples:            s.ExactSamples,
	}
	if t := s.TLS; t != nil {
		r.TLS = &JSONTLS{Protocol: t.Protocol, Cipher: t.Cipher, PeerKeyBits: t.PeerKeyBits,
			CipherBits: t.CipherBits, ServerTempKey: t.TempKey, ServerName: t.ServerName}
	}
	if s.Count > 0 {
		r.ConnectionTimes = &JSONConnectionTimes{
			Connect:    jsonColumn(&s.Connect),
			Processing: jsonColumn(&s.Processing),
			Waiting:    jsonColumn(&s.Waiting),
			Total:      jsonColumn(&s.Total),
		}
		for _, p := range s.Percentiles {
			r.PercentageServed = append(r.PercentageServed, JSONServed{Percent: float64(p.Percent), TotalMs: p.Ms, TotalUs: p.Us})
		}
	}
	return r
}

func jsonDist(d *DistFigures) JSONDist {
	out := JSONDist{
		Count: d.Count, MinUs: d.MinUs, MeanUs: d.MeanUs, SDUs: d.SDUs,
		MedianUs: d.MedianUs, P90Us: d.P90Us, P99Us: d.P99Us, P999Us: d.P999Us, MaxUs: d.MaxUs, SumUs: d.SumUs,
	}
	if d.Hist != nil {
		h := jsonHistogram(d.Hist)
		out.Histogram = &h
	}
	return out
}

// jsonHistogram encodes h in HdrHistogram's V2 compressed base64 form.
func jsonHistogram(h *hdrhistogram.Histogram) JSONHistogram {
	out := JSONHistogram{
		Unit:              "us",
		LowestUs:          h.LowestTrackableValue(),
		HighestUs:         h.HighestTrackableValue(),
		SignificantDigits: int(h.SignificantFigures()),
		Encoding:          "hdrhistogram-v2-compressed-base64",
	}
	if b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		out.Data = string(b)
	}
	return out
}

func jsonExtended(s *Summary) *JSONExtended {
	x := s.Extended
	e := &JSONExtended{
		DNSUs:      x.DNS.Microseconds(),
		DNSLookups: x.DNSLookups,
		Phases: JSONPhases{
			TCPConnect:   jsonDist(&x.Phases[client.PhaseTCP]),
			TLSHandshake: jsonDist(&x.Phases[client.PhaseTLS]),
			RequestWrite: jsonDist(&x.Phases[client.PhaseWrite]),
			Waiting:      jsonDist(&x.Phases[client.PhaseWait]),
			BodyTransfer: jsonDist(&x.Phases[client.PhaseBody]),
			Total:        jsonDist(&x.Phases[client.PhaseTotal]),
		},
		StatusCounts:     map[string]int{},
		FailuresByClass:  map[string]JSONFailureClass{},
		ReceivedMbitPerS: x.ReceivedMbitPerS,
		SentMbitPerS:     x.SentMbitPerS,
		SampleStore:      s.SampleStore,
		LatencyHistogram: jsonHistogram(x.LatencyHist),
	}
	for _, c := range x.Statuses {
		e.StatusCounts[strconv.Itoa(c.Code)] = c.Count
	}
	for _, f := range x.Failures {
		e.FailuresByClass[f.Name] = JSONFailureClass{Count: f.Count, FirstError: f.FirstError}
	}
	tp := x.Throughput
	e.Throughput = JSONThroughput{Intervals: tp.Intervals, MeanPerS: tp.Mean, SDPerS: tp.SD, PerSecond: x.PerSecond}
	if e.Throughput.PerSecond == nil {
		e.Throughput.PerSecond = []int64{}
	}
	e.ResponseTimeMeanMs = x.ResponseMeanUs / 1000
	e.ResponseTimeSDMs = x.ResponseSDUs / 1000
	if cpu := x.CPU; cpu.Known {
		e.ClientCPU = &JSONCPU{
			UserMs: float64(cpu.User) / 1e6,
			SysMs:  float64(cpu.Sys) / 1e6,
		}
		if x.CPUShare {
			pct, cores := x.CoresBusy*100, x.CoresBusy
			e.ClientCPU.PercentOfOneCore, e.ClientCPU.CoresBusy = &pct, &cores
		}
	}
	return e
}

func jsonRate(rr *RateFigures) *JSONRate {
	r := &JSONRate{
		TargetPerS:      rr.TargetPerS,
		AchievedPerS:    rr.AchievedPerS,
		Sent:            rr.Sent,
		OnSchedule:      rr.OnSchedule,
		OnScheduleTolUs: rr.OnScheduleToleranceUs,
		BelowTarget:     rr.BelowTarget,
		DueButNotSent:   rr.DueButNotSent,
		Lag:             jsonDist(&rr.Lag),
		Corrected:       jsonDist(&rr.Corrected),
	}
	r.CorrectedHistogram = *r.Corrected.Histogram // a live distribution always has one
	r.CorrectedServed = jsonServed(rr.CorrectedServed)
	return r
}

func jsonServed(rows []Served) []JSONServed {
	var out []JSONServed
	for _, row := range rows {
		out = append(out, JSONServed{Percent: row.Percent, TotalMs: row.Ms, TotalUs: row.Us})
	}
	return out
}
