package sweep

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"gab/internal/longopt"
)

// This file is gab sweep's own options as its command line gives them; the
// root's sweep.go splits the command line (ab's options for every run, -c's
// list, these, the targets).

// OwnFlags are gab sweep's own long options, as its command line gives them
// (Options checks them).
type OwnFlags struct {
	Sizes, PostSizes, CSVFile, JSONFile string
	PlotFile, HTMLFile                  string
	Repeat, CI                          string
	Pause, Ramp                         longopt.Duration
	MaxCVPercent                        float64
	Demo, Help                          bool
	ServerPIDs                          []string
	Order, Deviation, Baseline          string
	Param, Before                       string
	RequestsPerConn                     int
	Seed                                uint64
}

// NewFlagSet is gab sweep's own long options, parsed into so.
func NewFlagSet(so *OwnFlags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("gab sweep", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.StringVar(&so.Sizes, "sizes", "", "`LIST` of sizes (4,100b,10k,1m; 1k = 1024 bytes; each up to 1024g), each replacing {size} in the targets")
	fs.StringVar(&so.PostSizes, "post-sizes", "", "POST a generated body of each size in `LIST` (each up to 64m, built in memory for its run; content type -T); {size} in a target takes the size too")
	fs.StringVar(&so.Repeat, "repeat", "1", "measure each point `R` times (1 to 1000), interleaved across the targets; auto[:MAX]: until its req/s 95 % interval is within --ci of the mean (at least 3, at most MAX, 20 by default)")
	fs.StringVar(&so.CI, "ci", "5%", "flag points whose req/s 95 % interval's half-width exceeds `PCT` % of the mean; --repeat auto repeats until it does not")
	fs.Var(&so.Pause, "pause", "wait `DURATION` between runs (Go duration or seconds; at most 1h)")
	fs.StringVar(&so.Order, "order", OrderInterleaved, "run `ORDER`: interleaved (every point's first repetition, then every point's second, ...) or random (each such round shuffled; the seed is in --json)")
	fs.Uint64Var(&so.Seed, "seed", 0, "--order random's seed `N` (1 or more; default: from the clock), as the JSON records it, to run an order again")
	fs.IntVar(&so.RequestsPerConn, "requests-per-conn", 0, "each point sends c × `N` requests (-n), so every client makes N at every concurrency (not with -n or -t)")
	fs.StringVar(&so.Param, "param", "", "sweep a parameter: `NAME=V1,V2,...`, set by --before's command before each run (a column and an x axis)")
	fs.StringVar(&so.Before, "before", "", "run `COMMAND` (sh -c; {NAME} replaced by --param's value) before each run; a failure stops the sweep")
	fs.Var(&so.Ramp, "ramp", "open each run's connections evenly over `DURATION` and leave the requests that start meanwhile out of every figure (as --warmup's)")
	fs.StringVar(&so.Deviation, "deviation", DeviationPooled, "latency deviation `ESTIMATOR` for the table, rankings and ratios: pooled (every request's sd) or mean-of-runs (the runs' own sds averaged, JMeter's)")
	fs.StringVar(&so.Baseline, "baseline", "", "also print every target's figures as ratios to target `LABEL`'s at the same point, with 95 % intervals")
	fs.Float64Var(&so.MaxCVPercent, "max-cv", 5, "mark points whose req/s vary more than `PCT` % (coefficient of variation; 0 to 1000)")
	fs.StringVar(&so.CSVFile, "csv", "", "write one row per point to `FILE`")
	fs.StringVar(&so.JSONFile, "json", "", "write the sweep, every run's JSON document included, to `FILE`")
	fs.StringVar(&so.PlotFile, "plot", "", "draw the sweep's charts into `FILE`.png|.svg|.pdf with gnuplot (FILE.png.gp and FILE.png.dat beside it)")
	fs.StringVar(&so.HTMLFile, "html", "", "write a self-contained HTML report of the sweep (charts, points, rankings) to `FILE`")
	fs.BoolVar(&so.Demo, "demo", false, "sweep the built-in server (serves /bytes/N for any size N, accepts POST bodies)")
	fs.StringArrayVar(&so.ServerPIDs, "server-pid", nil, "measure the CPU of processes `[LABEL=]PID[,PID...]`, their threads and children, per run (Linux); repeatable, once per label")
	fs.BoolVarP(&so.Help, "help", "h", false, "print this help")
	return fs
}

// Usage is gab sweep's help before its options (%s: argv[0]).
const Usage = `Usage: %s sweep [ab options] [sweep options] TARGET...
TARGET is URL or LABEL=URL. ab's options apply to every run (-n or -t per run, -k, -H, ...), except:
    -c LIST         concurrency values, e.g. -c 1,10,100 (default 1)
    -v N            also print ab's report of each run (stdout); N >= 2 as ab's -v
Limits: at most 100 targets and 100 values per list; at most 10000 runs
(targets x sizes x concurrencies x --repeat).
Sweep options:
`

// Args are gab sweep's command line, split by the root (ab's grammar for
// the short options, which come before the first target; long options
// anywhere).
type Args struct {
	AB          []string  // ab's options for every run (no -c)
	Concurrency string    // -c's list ("" when not given)
	ShortSeen   [256]bool // ab's options given that take a value
	Verbose     bool      // -v given
	Targets     []string
	Own         OwnFlags
}

// ShortFlag sees one of ab's options without a value: handled keeps it from
// the runs' command line.
func (a *Args) ShortFlag(c byte) (handled bool, err error) {
	switch c {
	case 'h':
		a.Own.Help = true
		return true, nil
	case 'w', 'V':
		return false, fmt.Errorf("-%c does not apply to gab sweep", c)
	}
	return false, nil
}

// ShortValue sees one of ab's options with its value: pass puts both on the
// runs' command line.
func (a *Args) ShortValue(c byte, value string) (pass bool, err error) {
	a.ShortSeen[c] = true
	switch c {
	case 'c':
		a.Concurrency = value
		return false, nil
	case 'e', 'g', 'x', 'y', 'z':
		return false, fmt.Errorf("-%c does not apply to gab sweep (each run would overwrite it; see --csv and --json)", c)
	case 'v':
		a.Verbose = true
	}
	return true, nil
}

// Options are the sweep's options to check (Options.Settings).
func (a *Args) Options() Options {
	f, nOrT := &a.Own, a.ShortSeen['n'] || a.ShortSeen['t']
	return Options{Concurrency: a.Concurrency, Sizes: f.Sizes, PostSizes: f.PostSizes, Repeat: f.Repeat, CI: f.CI,
		Pause: time.Duration(f.Pause), Ramp: time.Duration(f.Ramp), MaxCVPercent: f.MaxCVPercent,
		Order: f.Order, Seed: f.Seed, Deviation: f.Deviation, Baseline: f.Baseline, Param: f.Param, Before: f.Before,
		RequestsPerConn: f.RequestsPerConn, NOrT: nOrT, Demo: f.Demo, Targets: len(a.Targets), ServerPIDs: len(f.ServerPIDs)}
}

// LongOption refuses an ab long option that does not apply to gab sweep
// (nil: it goes to every run).
func LongOption(name string) error {
	switch name {
	case "dashboard", "dashboard-linger":
		return fmt.Errorf("--%s does not apply to gab sweep (it serves one run's report)", name)
	case "format", "extended":
		return fmt.Errorf("--%s does not apply to gab sweep (see --csv and --json)", name)
	case "version", "histogram", "hlog", "progress", "fail-if",
		"start-at", "start-at-force", "shard", "shards", "run-id":
		// Single runs' outputs and scheduling: no sweep run would use them.
		return fmt.Errorf("--%s does not apply to gab sweep", name)
	}
	return nil
}
