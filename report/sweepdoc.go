package report

import "strconv"

// The sweep document (gab sweep --json FILE; docs/sweep-schema.json): a
// set of runs' record as a run's is, schema-versioned and validated here
// (DecodeSweep); internal/sweep writes it.

// SweepSchemaVersion is the sweep document's schema_version (docs/sweep-schema.json).
// It changes only when a field changes meaning or disappears; new fields may
// appear within a version. Version 2: a point's "figures" are its Group's
// by the catalog's pool rules; its fixed figure fields (SweepPoint's latency,
// bandwidth and CPU fields) are written for this version only, each the same
// value as in "figures" (SweepPoint.Figure reads either).
const SweepSchemaVersion = 2

// SweepDocument is gab sweep's JSON output (--json FILE); docs/sweep-schema.json
// is its schema.
type SweepDocument struct {
	Schema        string   `json:"schema"` // always "gab-sweep"
	SchemaVersion int      `json:"schema_version"`
	Tool          string   `json:"tool"` // always "gab"
	CommandLine   []string `json:"command_line"`
	StartTime     string   `json:"start_time"` // RFC 3339, UTC
	EndTime       string   `json:"end_time"`
	// Complete is false when the sweep was interrupted: the points and runs
	// are what was measured until then.
	Complete bool           `json:"complete"`
	Settings SweepSettings  `json:"settings"`
	Machine  SweepMachine   `json:"machine"`
	Points   []SweepPoint   `json:"points"`
	Rankings []SweepRanking `json:"rankings"`
	// BaselineRatios are every other target's figures at each point as
	// ratios to --baseline's (absent without --baseline); Changes each
	// target's from the first concurrency (or size) to the last.
	BaselineRatios []SweepComparison `json:"baseline_ratios,omitempty"`
	Changes        []SweepComparison `json:"changes,omitempty"`
}

// SweepComparison is one point against another as ratios with their 95 %
// intervals (delta method).
type SweepComparison struct {
	Label       string      `json:"label"`
	Size        *SweepSize  `json:"size,omitempty"`
	ParamValue  string      `json:"param_value,omitempty"`
	Concurrency int         `json:"concurrency"`
	BaseLabel   string      `json:"base_label"`
	BaseSize    *SweepSize  `json:"base_size,omitempty"`
	BaseConc    int         `json:"base_concurrency"`
	Throughput  *SweepRatio `json:"requests_per_second,omitempty"`
	Deviation   *SweepRatio `json:"latency_deviation,omitempty"`
	MeanLatency *SweepRatio `json:"latency_mean,omitempty"`
	P99         *SweepRatio `json:"latency_p99,omitempty"`
}

// SweepRatio is a ratio and its 95 % interval (equal to it without
// repetitions on both sides).
type SweepRatio struct {
	Ratio float64 `json:"ratio"`
	Lo    float64 `json:"ci95_low"`
	Hi    float64 `json:"ci95_high"`
}

// SweepSettings echoes the sweep's command line.
type SweepSettings struct {
	Targets     []SweepTarget `json:"targets"`
	Concurrency []int         `json:"concurrency"`
	SizeOption  string        `json:"size_option"` // "--sizes", "--post-sizes" or ""
	Sizes       []SweepSize   `json:"sizes"`
	Repeat      int           `json:"repeat"`
	// RepeatAuto is --repeat auto (Repeat is then the maximum); CI is the
	// share of a point's mean its req/s interval may reach (--ci).
	RepeatAuto bool    `json:"repeat_auto,omitempty"`
	CI         float64 `json:"ci,omitempty"`
	PauseS     float64 `json:"pause_s"`
	MaxCV      float64 `json:"max_cv"`
	CIMethod   string  `json:"ci_method"`
	// Param is --param (absent without), Before its command.
	Param  *SweepParam `json:"param,omitempty"`
	Before string      `json:"before,omitempty"`
	// Order is --order; Seed the random order's seed.
	Order string `json:"order,omitempty"`
	Seed  uint64 `json:"seed,omitempty"`
	// RequestsPerConn is --requests-per-conn (absent without).
	RequestsPerConn int `json:"requests_per_conn,omitempty"`
	// RampS is --ramp in seconds (absent without).
	RampS float64 `json:"ramp_s,omitempty"`
	// Deviation is the latency deviation estimator ("pooled" or
	// "mean-of-runs"); TieRule when two targets share a rank.
	Deviation string `json:"deviation,omitempty"`
	TieRule   string `json:"tie_rule,omitempty"`
	Baseline  string `json:"baseline,omitempty"`
}

// SweepParam is --param: its name and values.
type SweepParam struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// SweepTarget is a target as given (the URL may hold {size}).
type SweepTarget struct {
	Label      string `json:"label"`
	URL        string `json:"url"`
	ServerPIDs []int  `json:"server_pids,omitempty"`
}

// SweepSize is one size of the list.
type SweepSize struct {
	Text  string `json:"text"`
	Bytes int64  `json:"bytes"`
}

// SweepMachine describes where the sweep ran.
type SweepMachine struct {
	CPUs int `json:"cpus"`
	// Load averages (1, 5, 15 minutes) at the start and end (absent where
	// unknown).
	LoadStart []float64 `json:"load_average_start,omitempty"`
	LoadEnd   []float64 `json:"load_average_end,omitempty"`
}

// SweepPoint is one point: statistics across its repetitions and every run.
type SweepPoint struct {
	Label       string     `json:"label"`
	URL         string     `json:"url"`
	Size        *SweepSize `json:"size,omitempty"`
	ParamValue  string     `json:"param_value,omitempty"`
	Concurrency int        `json:"concurrency"`
	Repeats     int        `json:"repeats"`         // runs done
	Planned     int        `json:"repeats_planned"` // runs asked for
	Complete    bool       `json:"complete"`        // every planned run ran to its end

	// RPS and Latency are fixed fields (SweepFixedFields): req/s across the
	// repetitions (mean_per_s, sd_per_s, min_per_s, max_per_s,
	// ci95_half_width_per_s, cv, cv_above_max) and the latency over their
	// merged samples (count, mean_ms, sd_ms, p50_ms, p99_ms, min_ms, the
	// deviation by the sweep's estimator deviation_ms and the runs' own sds
	// run_sds_ms).
	RPS     FixedFields `json:"requests_per_second"`
	Latency FixedFields `json:"latency"`

	RequestsComplete int     `json:"requests_complete"`
	RequestsFailed   int     `json:"requests_failed"`
	RunsWithError    int     `json:"runs_with_error"`
	MbitPerS         float64 `json:"received_mbit_per_s"`
	SentMbitPerS     float64 `json:"sent_mbit_per_s"`
	// The CPU figures are absent where not measured.
	ClientCPUPercent  *float64 `json:"client_cpu_percent_of_one_core,omitempty"`
	ClientCPUUsPerReq *float64 `json:"client_cpu_us_per_request,omitempty"`
	ServerCPUUsPerReq *float64 `json:"server_cpu_us_per_request,omitempty"`
	ServerCPUPercent  *float64 `json:"server_cpu_percent_of_one_core,omitempty"`
	// HostCPU is the whole host's CPU over the runs (absent where
	// /proc/stat could not be read), fixed fields: each kind as a percentage
	// of every core's time (user_percent, system_percent, softirq_percent,
	// steal_percent, busy_percent), the busy time per complete request
	// (busy_us_per_request).
	HostCPU FixedFields `json:"host_cpu,omitempty"`
	// Figures are the point's catalog figures (PointResult.Figure), key →
	// value in the figure's unit; a figure no run has is absent.
	Figures FigureValues `json:"figures,omitempty"`
	// Verdicts are the point's flags (its runs' verdicts' kinds and
	// wide_interval); StoppedAtMax: --repeat auto ran it to the maximum.
	Verdicts     []string `json:"verdicts,omitempty"`
	StoppedAtMax bool     `json:"stopped_at_max,omitempty"`

	Runs []SweepRun `json:"runs"`
}

// Figure is the point's catalog figure of that key: from its "figures"; in
// a document without them (schema_version 1 from before they were
// written), from the fixed field that held the figure. ok is false where the
// point has no such figure.
func (p *SweepPoint) Figure(key string) (float64, bool) {
	for _, v := range p.Figures {
		if v.Key == key {
			return v.Value, true
		}
	}
	if len(p.Figures) > 0 {
		return 0, false // a figure no run had
	}
	return p.fixedFigure(key)
}

// SweepRun is one repetition.
type SweepRun struct {
	Repetition        int      `json:"repetition"` // 1-based
	Order             int      `json:"order"`      // 1-based position in the sweep
	URL               string   `json:"url"`
	Ending            string   `json:"ending"`
	Error             string   `json:"error,omitempty"`
	RequestsPerSecond float64  `json:"requests_per_second"`
	ClientCPUMs       *float64 `json:"client_cpu_ms,omitempty"`
	ServerCPUMs       *float64 `json:"server_cpu_ms,omitempty"`
	// Document is the run's full JSON document (docs/json-schema.json).
	Document *Run `json:"document"`
}

// SweepRanking is one size and concurrency's ranking: labels, best first.
type SweepRanking struct {
	Size         *SweepSize         `json:"size,omitempty"`
	ParamValue   string             `json:"param_value,omitempty"`
	Concurrency  int                `json:"concurrency"`
	ByThroughput []SweepRankedPoint `json:"by_throughput"`
	ByDeviation  []SweepRankedPoint `json:"by_deviation"`
}

// SweepRankedPoint is one place of a ranking.
type SweepRankedPoint struct {
	Rank int `json:"rank"`
	// RankRange is the rank range [lo, hi] by TieRule (lo = Rank; hi above
	// it where the target ties targets of different ranks). Absent in
	// documents from before it: [Rank, Rank].
	RankRange []int `json:"rank_range,omitempty"`
	// Tied: another target shares the rank (TieRule).
	Tied bool `json:"tied,omitempty"`
	// RankRangeLoose: the range overlaps (or runs against the means' order
	// of) the range of a target the test tells apart from this one, where
	// ties do not chain as intervals can (TieRule); Group is exact.
	RankRangeLoose bool `json:"rank_range_loose,omitempty"`
	// Group: the letters of the target's tie groups (TieRule): two targets
	// share a letter exactly when they are tied.
	Group           string  `json:"group,omitempty"`
	DeviationMs     float64 `json:"deviation_ms"`
	Label           string  `json:"label"`
	RPSMeanPerS     float64 `json:"rps_mean_per_s"`
	LatencySDMs     float64 `json:"latency_sd_ms"`
	RequestsCounted int64   `json:"latency_count"`
}

// RankText is the place's rank text (RankText), from Rank and RankRange.
func (r SweepRankedPoint) RankText() string {
	return rankRangeText(r.Rank, r.RankRange, r.Tied, r.RankRangeLoose)
}

// rankRangeText is a document's rank text (RankText) from its rank, its
// rank range [lo, hi] (absent in documents from before it: hi = rank), its
// tie and its loose mark.
func rankRangeText(rank int, rng []int, tied, loose bool) string {
	hi := rank
	if len(rng) == 2 {
		hi = rng[1]
	}
	return RankText(rank, hi, tied) + LooseMark(loose)
}

// SweepConfigurationName names a configuration of a sweep: its label, with
// its size and concurrency where the sweep has several.
func SweepConfigurationName(label, size string, c int, sizes, concs bool) string {
	if sizes {
		label += " " + size
	}
	if concs {
		label += " c=" + strconv.Itoa(c)
	}
	return label
}

// ConfigurationName is SweepConfigurationName for a document's point.
func (d *SweepDocument) ConfigurationName(p *SweepPoint) string {
	size := ""
	if p.Size != nil {
		size = p.Size.Text
	}
	return SweepConfigurationName(p.Label, size, p.Concurrency, len(d.Settings.Sizes) > 1, len(d.Settings.Concurrency) > 1)
}
