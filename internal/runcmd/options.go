// Package runcmd is one run of ab's command line once it is parsed (Run:
// ab's sequence from the banner to the report): the options the root's
// flags.go fills (Options) and the combinations it refuses (Conflict), the
// measurement between the CPU meters' readings (MeasureRun), and the outputs
// after it: ab's report, the tables beyond ab's, the -e and -g files, the
// JSON document, --hlog, the pictures (--plot, --html, --histogram) and the
// live outputs. gab sweep and gab capacity measure each of their runs
// through MeasureRun too.
package runcmd

import (
	"time"

	"gab/client"
	"gab/internal/live"
	"gab/internal/threshold"
	"gab/report"
)

// Exit statuses, as ab uses them.
const (
	ExitOK    = 0
	ExitError = 1  // ab's err(): a failed write, a failed reading
	ExitUsage = 22 // EINVAL: a usage error
)

// TimeLimitRequests is the n that -t implies in ab; --no-cap lifts it.
const TimeLimitRequests = 50000

// Options is everything ab's command line says (parsed by the root's
// flags.go): the engine's configuration and how to present the results.
type Options struct {
	Config client.Config

	Version string // gab's version, for the JSON document's environment

	Argv0 string // argv[0] as given: ab prints it verbatim in its own messages
	URL   string // the URL argument ("" with --demo until the demo server is up)

	HTML                            bool   // -w (also -x -y -z)
	TableAttrs, RowAttrs, CellAttrs string // -x -y -z
	NoPercentiles                   bool   // -d
	NoConfidence                    bool   // -S
	GnuplotFile                     string // -g
	CSVFile                         string // -e
	Proxy                           bool   // -X was given (ab's isproxy), even with an empty host
	NoBanner                        bool   // -Q (httpd trunk's ab): no "This is ApacheBench" banner
	// Progress is ab's heartbeat: a "Completed N requests" line every Progress
	// recorded requests; 0 means no progress lines ("..." and "..done").
	Progress int

	// gab's long options.
	Demo        bool      // --demo
	CPUs        int       // --cpus (0: leave GOMAXPROCS alone)
	NoCap       bool      // --no-cap
	Format      string    // --format: "text" or "json"
	JSONFile    string    // --json
	Percentiles []float64 // --percentiles
	Extended    bool      // --extended
	ServerPIDs  []int     // --server-pid
	ServerLabel string    // --server-pid LABEL=...: the server's name ("" without)
	PlotFile    string    // --plot: the charts' image (its .gp and .dat go beside it)
	HTMLFile    string    // --html: the self-contained HTML report
	Histogram   bool      // --histogram: a latency histogram after the report
	ProgressBar string    // --progress: auto, always or never (the live status line)
	// Sharded runs (internal/shard): this shard's place and the run's totals (nil
	// without --shard), and --start-at (zero without it).
	Shard   *ShardSpec
	StartAt time.Time
	// FailIf are the --fail-if thresholds, checked after the run.
	FailIf []threshold.Threshold
	// Apdex are --apdex's thresholds (nil without the option).
	Apdex *report.Apdex
	// Ranges are the upper edges of the charts' response-time ranges
	// (--ranges; nil: report.DefaultRangeEdgesMs).
	Ranges []time.Duration
	// Interval is the latency timeline's interval (--interval; 0: the default,
	// client.DefaultInterval, when something shows the timeline).
	Interval time.Duration
	HlogFile string // --hlog
	// Live is --live, --metrics, --metrics-linger and --remote-write (internal/live).
	Live live.Spec
	// Dashboard is --dashboard's address (the HTML report served live), and
	// DashboardLinger how long it serves the finished report.
	Dashboard       string
	DashboardLinger time.Duration
}

// ShardSpec is a shard's place in its run and the whole run's figures.
type ShardSpec struct {
	Index, Count int
	RunID        string
	// The whole run's -n, -c and --rate, before the shares.
	Requests, Concurrency int
	Rate                  float64
}
