// Package chart holds the data gab's charts are drawn from, shared by the
// renderers (gnuplot scripts, the HTML report) and their sources (a finished
// run's summary, saved JSON documents).
package chart

// LatencyPoint is one request: when it started and how long it took.
type LatencyPoint struct {
	StartS    float64 // seconds from the run's start (ms precision, as stored)
	LatencyUs uint32  // total time, µs (start → response complete)
}

// CurvePoint is the total latency at one percentile.
type CurvePoint struct {
	Percent float64
	Us      int64
}

// Data is one run's chart data.
type Data struct {
	Label string // the run's name in a legend

	// Latency holds the requests of the exact store in time order: all of
	// them up to the chart's limit, past it a largest-triangle-three-buckets
	// downsampling over time (LTTB) with every request slower than p99.9
	// kept; LatencyNote says which. Recorded is the number of requests of
	// the run; Stored those in the exact store (fewer when the run outgrew
	// it). Latency is nil when the data has no per-request times (a saved
	// JSON document).
	Latency     []LatencyPoint
	LatencyNote string
	// LatencyTitle is LatencyNote in brief, for the chart's title.
	LatencyTitle string
	Stored       int
	Recorded     int
	Failed       int // ab's Failed requests

	// Curve is the total latency at percentiles from 0 to 99.99 (as far as
	// the number of requests resolves them), with the maximum as 100.
	// CurvePrecision says how exact it is.
	Curve          []CurvePoint
	CurvePrecision string
	// Table is the total latency at TablePercents, with TablePrecision
	// (CurvePrecision when empty).
	Table          []CurvePoint
	TablePrecision string

	// PerSecond counts requests recorded in each whole second of the run
	// (the partial last second is left out); FailuresPerSecond likewise for
	// failed requests, nil when not known.
	PerSecond         []int64
	FailuresPerSecond []int64
	ElapsedS          float64

	// Intervals is the run's timeline (nil without one): when set, the
	// rates and the latency over time are drawn from it. IntervalNote says
	// how long they are and how that was chosen.
	Intervals    []Interval
	IntervalNote string
	// HasPhases says the intervals' phase means are set, HasTLS that their
	// TLSUs is too (the run did TLS handshakes): ConnectUs is then the TCP
	// connect alone.
	HasPhases, HasTLS bool
	// TargetPerS is rate mode's target rate (a schedule's mean over the
	// run); 0 outside rate mode.
	TargetPerS float64

	// Ranges counts the recorded requests by total time in bands (Gatling's
	// response-time ranges): RangeEdgesMs are the bands' upper edges, the
	// last band open; nil when not known.
	Ranges       []int64
	RangeEdgesMs []float64
	RangesNote   string

	// Objectives are the --fail-if thresholds on the latency distribution,
	// drawn over the percentile curve.
	Objectives []Objective
}

// Objective is a --fail-if bound on a latency figure: at a percentile
// (Percent; 100 for the maximum), or on the mean (Percent < 0).
type Objective struct {
	Label   string // the expression as given
	Percent float64
	Us      float64
	Passed  bool
}

// Interval is one interval of a run's timeline: the requests recorded and
// the failures that ended in it, and its requests' latency percentiles (HDR
// histogram bucket tops, 3 significant digits; the maximum exact), the
// phases' means in µs (when Data.HasPhases; TLSUs the TLS handshake's when
// Data.HasTLS, else part of ConnectUs), each over all the interval's
// requests; CorrectedP99Us (rate mode) is 0 when not kept.
type Interval struct {
	StartS, LengthS            float64
	Requests, Failures         int64
	P50Us, P90Us, P99Us, MaxUs int64
	CorrectedP99Us             int64
	ConnectUs, TLSUs           float64
	WaitUs, RestUs             float64
	// TargetPerS is rate mode's target rate in the interval (0 when not
	// known).
	TargetPerS float64
	// Status counts the requests by status class (none, 1xx … 5xx) when
	// HasStatus.
	Status    [6]int64
	HasStatus bool
}

// TablePercents are the rows of the reports' percentile tables.
var TablePercents = []float64{50, 75, 90, 95, 99, 99.9, 99.99, 100}
