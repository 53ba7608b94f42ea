package report

import (
	"encoding/json"
	"io"
	"time"

	"gab/client"
	"gab/internal/threshold"
)

// This file is the run record: Run is the one thing that flows after the
// engine. Summarize fills it from a client.Result, Merge from several runs,
// DecodeDocument from a JSON document; every writer reads it; marshalled as it
// is, it is gab's JSON document (--format json, --json FILE). The schema is
// docs/json-schema.json; the Go types below are the same thing with doc
// comments. Field names carry their unit: _us (microseconds), _ms
// (milliseconds), _s (seconds), _bytes, _per_s. What only the outputs of the
// process that measured the run need (ab's -w attributes, the -e rows, the
// --fail-if verdicts as printed, ...) is in unexported fields, never
// serialized.

// SchemaVersion is the document's schema_version. It changes only when a field
// changes meaning or disappears; new fields may appear within a version.
const SchemaVersion = 4

// Run is a run's record: every figure of every output, and the JSON document.
type Run struct {
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
	Error *runError `json:"error,omitempty"`
	// Report holds every figure of ab's text report (absent when not_started).
	Report *abReport `json:"report,omitempty"`
	// Percentiles is the --percentiles table (absent without the option).
	Percentiles []percentileRow `json:"percentiles,omitempty"`
	// PercentilesSource says where the --percentiles values come from:
	// "exact" (every sample), "hdr_histogram" (past the exact store, HDR
	// histograms of every request, 3 significant digits) or "1ms_buckets".
	PercentilesSource string `json:"percentiles_source,omitempty"`
	// Extended holds the --extended figures (absent if they were not gathered).
	Extended *extendedFigures `json:"extended,omitempty"`
	// Rate is set in rate mode (--rate).
	Rate *rateFigures `json:"rate,omitempty"`
	// ServerCPU is set with --server-pid.
	ServerCPU *serverCPUFigures `json:"server_cpu,omitempty"`
	// Run is what the command line asked for, as gab merge compares it.
	Run *RunInfo `json:"run,omitempty"`
	// Shard is set by --shard, and in merged documents (shard.go).
	Shard *Shard `json:"shard,omitempty"`
	// Sums are the timing columns' exact sums and histograms, from which gab
	// merge computes the report of several documents.
	Sums *sumsSection `json:"sums,omitempty"`
	// CGI is the CGI table (--cgi; absent otherwise).
	CGI *cgiTable `json:"cgi,omitempty"`
	// Warmup is the warm-up sent before the run (--warmup; absent without).
	Warmup *warmupFigures `json:"warmup,omitempty"`
	// RampUp is the ramp-up's requests, sent and left out of every other
	// figure (gab sweep --ramp; absent without).
	RampUp *rampFigures `json:"ramp_up,omitempty"`
	// Thresholds are the --fail-if verdicts (absent without the option).
	Thresholds *thresholdVerdicts `json:"thresholds,omitempty"`
	// Environment is where gab ran (absent in documents of older versions).
	Environment *environmentInfo `json:"environment,omitempty"`
	// Timeline is the latency over time, one entry per interval (--interval,
	// 1 s by default; absent if it was not gathered).
	Timeline *timelineSection `json:"timeline,omitempty"`
	// Figures are the catalog's figures of the run (catalog.go), key → value
	// in the figure's unit; a figure the run lacks is absent.
	Figures FigureValues `json:"figures,omitempty"`
	// Outstanding are the requests still in flight when the run stopped
	// (outstanding.go; absent when there were none).
	Outstanding *outstandingFigures `json:"outstanding,omitempty"`
	// Apdex is the run's APDEX (--apdex; absent without the option).
	Apdex *apdexSection `json:"apdex,omitempty"`
	// Verdicts say whether the figures can be trusted as the server's
	// (verdicts.go; absent when the run was not judged).
	Verdicts *verdictsSection `json:"verdicts,omitempty"`
	// Targets are the results per target of a URL list (--urls, --targets;
	// targets.go), absent without one.
	Targets []targetSection `json:"targets,omitempty"`
	// Distributions are the measured distributions beyond ab's columns and
	// the extended phases, by name (distribution.go's measuredDists), each
	// in its unit; absent when the run measured none.
	Distributions map[string]*distFigures `json:"distributions,omitempty"`

	local local
}

// local is what the outputs of the process that made a run need beyond its
// document (set by Summarize, and by Merge where it applies; zero in a
// decoded document).
type local struct {
	// elapsed is the time taken to the nanosecond (the document's is in µs).
	elapsed time.Duration
	// count is ab's done: the requests behind the timing tables.
	count int
	// The command line's report settings (-k, -p/-u, -d, -S, -w's -x/-y/-z).
	keepAlive, bodySent, noPercentiles, noConfidence bool
	htmlAttrs                                        HTMLAttrs
	// quic is quic-go's counters over an HTTP/3 run's connections.
	quic *client.QUICStats
	// serverCPU is --server-pid's measurement (nil without it).
	serverCPU *ServerCPU
	// retries counts requests sent again once on a new connection because
	// the server closed a kept-alive one before answering.
	retries int
	// html is the -w report's timing table, csv the -e file's rows (set when
	// count > 0).
	html htmlTimes
	csv  [101]int64
	// hdrPercentiles: past the exact store, the --percentiles table and
	// the percentile curve come from the HDR histograms of every request.
	hdrPercentiles bool
	// curve is the percentile curve and table of the run's charts
	// (RunChartData), from every recorded request.
	curve runCurve
	// histogram is --histogram's rows; verdicts the --fail-if verdicts.
	histogram []histogramBucket
	verdicts  []threshold.Verdict
	// precision replaces the 1 ms histograms' line under ab's tables (a
	// merged report says how exact its medians and percentiles are).
	precision string
	// mergeNotes say why a merged run lacks a section some of its runs had
	// (the timeline, APDEX).
	mergeNotes []string
	// live marks a run in progress (Live): the page shows only the counts
	// its intervals carry.
	live bool
	// unmeasured are the counts a window's intervals did not carry (a
	// document of an earlier gab): the catalog's figures of them are absent.
	unmeasured unmeasured
}

// unmeasured flags counts of a run that were not measured.
type unmeasured uint8

const (
	unmeasuredSent   unmeasured = 1 << iota // the bytes sent (sent_bytes)
	unmeasuredStatus                        // the statuses (status_classes): non-2xx
)

// Ending names: client.Ending's String(), and not_started for a command
// line that never ran.
const (
	endCompleted   = "completed"
	endTimeLimit   = "time_limit"
	endInterrupted = "interrupted"
	endFatal       = "fatal"
	endNotStarted  = "not_started"
)

// environmentInfo describes the client machine and gab itself.
type environmentInfo struct {
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

// runError is how gab ended when it ended with an error.
type runError struct {
	Message  string `json:"message"`   // ab's stderr text, without the trailing newline
	ExitCode int    `json:"exit_code"` // the process's exit status
}

// tlsInfo is the first TLS handshake, as ab's SSL/TLS lines.
type tlsInfo struct {
	Protocol      string `json:"protocol"`
	Cipher        string `json:"cipher"`
	PeerKeyBits   int    `json:"peer_key_bits"`
	CipherBits    int    `json:"cipher_bits"`
	ServerTempKey string `json:"server_temp_key,omitempty"`
	ServerName    string `json:"server_name,omitempty"`
}

// failures is ab's "Failed requests" breakdown.
type failures struct {
	Connect    int `json:"connect"`
	Receive    int `json:"receive"`
	Length     int `json:"length"`
	Exceptions int `json:"exceptions"`
}

// add adds o's counts to f's.
func (f *failures) add(o *failures) {
	f.Connect += o.Connect
	f.Receive += o.Receive
	f.Length += o.Length
	f.Exceptions += o.Exceptions
}

// counters are ab's counts of a run: they add up across runs (add).
type counters struct {
	CompleteRequests int      `json:"complete_requests"`
	FailedRequests   int      `json:"failed_requests"`
	Failures         failures `json:"failures"`
	WriteErrors      int      `json:"write_errors"`
	Non2xxResponses  int      `json:"non_2xx_responses"`
	KeepAliveReqs    int      `json:"keep_alive_requests"`

	TotalTransferredBytes int64 `json:"total_transferred_bytes"`
	TotalBodySentBytes    int64 `json:"total_body_sent_bytes"`
	HTMLTransferredBytes  int64 `json:"html_transferred_bytes"`
}

// add adds o's counts to c's.
func (c *counters) add(o *counters) {
	c.CompleteRequests += o.CompleteRequests
	c.FailedRequests += o.FailedRequests
	c.Failures.add(&o.Failures)
	c.WriteErrors += o.WriteErrors
	c.Non2xxResponses += o.Non2xxResponses
	c.KeepAliveReqs += o.KeepAliveReqs
	c.TotalTransferredBytes += o.TotalTransferredBytes
	c.TotalBodySentBytes += o.TotalBodySentBytes
	c.HTMLTransferredBytes += o.HTMLTransferredBytes
}

// columnStats are one row of ab's "Connection Times (ms)" table: the printed
// ms values (ab's rounding; sd_ms unrounded, printed %5.1f) and ab's µs
// intermediates (mean truncated to the µs, median by ab's inverted rule).
type columnStats struct {
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
	Confidence confidence `json:"confidence"`
}

// connectionTimes is ab's timing table.
type connectionTimes struct {
	Connect    columnStats `json:"connect"`
	Processing columnStats `json:"processing"`
	Waiting    columnStats `json:"waiting"`
	Total      columnStats `json:"total"`
}

// column is the row of ab's column c.
func (t *connectionTimes) column(c column) *columnStats {
	return [...]*columnStats{&t.Connect, &t.Processing, &t.Waiting, &t.Total}[c]
}

// served is one row of a "Percentage of the requests served" table.
type served struct {
	Percent float64 `json:"percent"`
	TotalMs int64   `json:"total_ms"` // as ab prints it
	TotalUs int64   `json:"total_us"`
}

// abReport is ab's report. Every figure is present whatever ab would print
// (e.g. keep_alive_requests without -k); rates are 0 when the time taken is 0.
type abReport struct {
	ServerSoftware string `json:"server_software"`
	ServerHostname string `json:"server_hostname"`
	ServerPort     int    `json:"server_port"`
	Protocol       string `json:"protocol,omitempty"` // "h2" or "h2c" with --http2, "h3" with --http3
	// Connections and StreamsPerConnection (--http2 and --http3 only):
	// concurrency_level is their product, the requests in flight.
	Connections          int      `json:"connections,omitempty"`
	StreamsPerConnection int      `json:"streams_per_connection,omitempty"`
	TLS                  *tlsInfo `json:"tls,omitempty"`
	DocumentPath         string   `json:"document_path"`
	DocumentLengthBytes  int64    `json:"document_length_bytes"`
	// VariableLength is -l: the text says "Document Length: Variable".
	VariableLength bool `json:"variable_length"`

	ConcurrencyLevel int     `json:"concurrency_level"`
	TimeTakenS       float64 `json:"time_taken_s"`
	TimeTakenUs      int64   `json:"time_taken_us"`
	counters

	RequestsPerSecond       float64          `json:"requests_per_second"`
	TimePerRequestMs        float64          `json:"time_per_request_ms"`
	TimePerRequestAllMs     float64          `json:"time_per_request_across_all_ms"`
	TransferReceivedKBPerS  float64          `json:"transfer_rate_received_kbytes_per_s"`
	TransferSentKBPerS      float64          `json:"transfer_rate_sent_kbytes_per_s"`
	TransferTotalKBPerS     float64          `json:"transfer_rate_total_kbytes_per_s"`
	ConnectionTimes         *connectionTimes `json:"connection_times,omitempty"` // absent when nothing was recorded
	PercentageServed        []served         `json:"percentage_served,omitempty"`
	StatisticsFromHistogram bool             `json:"statistics_from_histograms"`
	ExactSamples            int              `json:"exact_samples"`
}

// percentileRow is one row of the --percentiles table: the nearest rank's
// value (samples.NearestRank) in µs, from percentiles_source.
type percentileRow struct {
	Percent   float64 `json:"percent"`
	ConnectUs int64   `json:"connect_us"`
	WaitingUs int64   `json:"waiting_us"`
	TotalUs   int64   `json:"total_us"`
}

// phaseDists are the extended report's phases.
type phaseDists struct {
	TCPConnect   distFigures `json:"tcp_connect"`
	TLSHandshake distFigures `json:"tls_handshake"`
	RequestWrite distFigures `json:"request_write"`
	Waiting      distFigures `json:"waiting"`
	BodyTransfer distFigures `json:"body_transfer"`
	Total        distFigures `json:"total"`
}

// list is the phases in client.Phase order.
func (p *phaseDists) list() [client.PhaseCount]*distFigures {
	return [...]*distFigures{&p.TCPConnect, &p.TLSHandshake, &p.RequestWrite, &p.Waiting, &p.BodyTransfer, &p.Total}
}

// failureClass is one failure class with its first error message.
type failureClass struct {
	Count      int    `json:"count"`
	FirstError string `json:"first_error,omitempty"`
	// FirstAtS is when the first error ended, in seconds since start_time
	// (absent without one, and in documents of earlier gab versions).
	FirstAtS *float64 `json:"first_at_s,omitempty"`
}

// throughputFigures is the recorded-request rate over whole 1-second intervals.
type throughputFigures struct {
	Intervals int     `json:"intervals"`
	MeanPerS  float64 `json:"mean_per_s"`
	SDPerS    float64 `json:"sd_per_s"`
	// PerSecond counts the requests recorded in each second of the run, from 0;
	// the last entry is usually a partial second.
	PerSecond []int64 `json:"per_second"`
}

// clientCPU is the client's own CPU use over the run.
type clientCPU struct {
	UserMs float64 `json:"user_ms"`
	SysMs  float64 `json:"sys_ms"`
	// PercentOfOneCore and CoresBusy are absent for runs under 1 s (too
	// short for a share of a core to mean anything).
	PercentOfOneCore *float64 `json:"percent_of_one_core,omitempty"`
	CoresBusy        *float64 `json:"cores_busy,omitempty"`
}

// extendedFigures is the --extended report.
type extendedFigures struct {
	DNSUs      int64      `json:"dns_us"`
	DNSLookups int        `json:"dns_lookups"`
	Phases     phaseDists `json:"phases"`
	// StatusCounts counts responses per status code (keys are the codes).
	StatusCounts map[string]int `json:"status_counts"`
	// FailuresByClass are ab's failure classes (connect, receive, length,
	// exceptions) and write errors, each with its first error.
	FailuresByClass map[string]failureClass `json:"failures_by_class"`
	Throughput      throughputFigures       `json:"throughput"`
	// ResponseTimeMeanMs and ResponseTimeSDMs are the phase table's Total row.
	ResponseTimeMeanMs float64    `json:"response_time_mean_ms"`
	ResponseTimeSDMs   float64    `json:"response_time_sd_ms"`
	ReceivedMbitPerS   float64    `json:"bandwidth_received_mbit_per_s"`
	SentMbitPerS       float64    `json:"bandwidth_sent_mbit_per_s"`
	ClientCPU          *clientCPU `json:"client_cpu,omitempty"` // absent where unknown
	// SampleStore says how ab's tables were computed.
	SampleStore string `json:"sample_store"`
	// Engine is what moved an HTTP/1 run's bytes (--engine): "epoll" or
	// "uring" (the Linux event loops), "portable" (a goroutine per
	// connection); absent for the other protocols. A merged run's is its
	// runs' when they agree, "mixed" when they differ, absent when only
	// some name one (mergeruns.go).
	Engine string `json:"engine,omitempty"`
	// LatencyHistogram is the Total phase's histogram under its old name:
	// written by schema version 4 only (legacyNames), read from every
	// version (Run.UnmarshalJSON puts it in the phase): nil in a run.
	LatencyHistogram *histogramData `json:"latency_histogram,omitempty"`
}

// rateFigures is rate mode's figures.
type rateFigures struct {
	TargetPerS   float64 `json:"target_per_s"`
	AchievedPerS float64 `json:"achieved_per_s"`
	// Sent were dispatched on the schedule; DueButNotSent were due by the end
	// but never sent.
	Sent          int64 `json:"sent"`
	DueButNotSent int64 `json:"due_but_not_sent"`
	// OnSchedule of the sent left within OnScheduleTolUs of their intended time.
	OnSchedule      int64 `json:"on_schedule"`
	OnScheduleTolUs int64 `json:"on_schedule_tolerance_us"`
	// BelowTarget: the achieved rate is under client.AchievedShortfall (95 %)
	// of the target (the text report warns that the client did not keep up).
	BelowTarget bool `json:"below_target"`
	// Lag is how late each request was sent after its intended time.
	Lag distFigures `json:"lag"`
	// Corrected is the latency from each request's intended send time;
	// CorrectedServed its percentile table (ab's rows plus --percentiles'
	// entries, the 100 % row the exact max).
	Corrected       distFigures `json:"corrected"`
	CorrectedServed []served    `json:"corrected_percentage_served"`
	// CorrectedHistogram is Corrected's histogram under its old name:
	// written by schema version 4 only (legacyNames), read from every
	// version (Run.UnmarshalJSON puts it in Corrected): nil in a run.
	CorrectedHistogram *histogramData `json:"corrected_histogram,omitempty"`
	// Steps are a schedule's steps (--rate R1,R2,... or a ramp; with the
	// timeline), absent for a constant rate.
	Steps []rateStep `json:"steps,omitempty"`
}

// NotStarted is the run of a command line that never ran (an error in it, or
// before the first request): no figures, only the invocation and the error.
// start is when gab gave up.
func NotStarted(commandLine []string, start time.Time, message string, exitCode int) *Run {
	r := newRun(new(Run), commandLine, start)
	if message != "" || exitCode != 0 {
		r.SetError(message, exitCode)
	}
	return r
}

// newRun makes r a run's record before any figure: a not_started document.
func newRun(r *Run, commandLine []string, start time.Time) *Run {
	if commandLine == nil {
		commandLine = []string{}
	}
	*r = Run{SchemaVersion: SchemaVersion, Tool: "gab", CommandLine: commandLine, Ending: endNotStarted,
		StartTime: start.UTC().Format(time.RFC3339Nano)}
	return r
}

// WriteJSON writes the run's JSON document, indented, with a final newline.
// HTML characters stay as they are (error messages hold "->" and "<...>").
func WriteJSON(w io.Writer, r *Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
