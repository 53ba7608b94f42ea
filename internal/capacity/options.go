package capacity

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gab/client"
	"gab/gnuplot"
	"gab/internal/outfile"
	"gab/internal/threshold"
	"gab/report"
)

// Options are gab capacity's own options, as its flag set (NewFlagSet)
// reads them.
type Options struct {
	SLO                        []string
	Step, Settle               time.Duration
	Start, MaxRate, Resolution float64
	Repeat, Attempts, Noise    int
	Format, JSONFile           string
	PlotFile, HTMLFile         string
	Demo, Help                 bool
}

// DefaultNoise is --noise's default: the steps at a low rate that measure
// the machine's latency noise before the searches.
const DefaultNoise = 3

// DefaultConns is -c's default for gab capacity: the most connections a
// step may open.
const DefaultConns = 256

// NewFlagSet is gab capacity's own options, bound to o; step and settle are
// the command line's duration values (a Go duration or seconds) over
// o.Step and o.Settle.
func NewFlagSet(o *Options, step, settle pflag.Value) *pflag.FlagSet {
	fs := pflag.NewFlagSet("gab capacity", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.StringArrayVar(&o.SLO, "slo", nil, "an objective every passing step meets on the corrected latencies: `EXPR` as --fail-if's (p99<20ms, p99.9<100ms, mean<5ms, failed<0.1%); repeatable, at least one")
	fs.Var(step, "step", "each step's measured `DURATION` (default 10s)")
	fs.Var(settle, "settle", "each step's first `DURATION` at its rate, on its connections, left out of its figures (default a fifth of --step, 100ms to 2s; 0: none)")
	fs.Float64Var(&o.Start, "start", 100, "the first step's `RATE` (requests per second); the climb doubles it")
	fs.Float64Var(&o.MaxRate, "max-rate", 1e7, "no step above `RATE`")
	fs.Float64Var(&o.Resolution, "resolution", 5, "stop bisecting when the failing and passing rates are within `PCT` % (0.1 to 100)")
	fs.IntVar(&o.Attempts, "attempts", 2, "a rate fails when `K` steps in a row fail (2 to 10; a busy machine's stall fails a step, never passes one)")
	fs.IntVar(&o.Repeat, "repeat", 1, "search `R` times (1 to 100); the capacity is the geometric mean of those found with its 95 % interval (on a log scale), the others' bounds beside it")
	fs.IntVar(&o.Noise, "noise", DefaultNoise, "before each target's searches, `K` steps at a quarter of --start (at least 1 req/s) measure the machine's latency noise and say when the objectives lie inside it (0 to 10; 0: none)")
	fs.StringVar(&o.Format, "format", "text", "output `text|json`")
	fs.StringVar(&o.JSONFile, "json", "", "also write the document to `FILE`")
	fs.StringVar(&o.PlotFile, "plot", "", "draw the knee (p99 against achieved req/s, corrected and uncorrected) into `FILE`.png|.svg|.pdf with gnuplot")
	fs.StringVar(&o.HTMLFile, "html", "", "write a self-contained HTML report (the knee, every step, the ranking) to `FILE`")
	fs.BoolVar(&o.Demo, "demo", false, "search the built-in server")
	fs.BoolVarP(&o.Help, "help", "h", false, "print this help")
	return fs
}

// Usage is gab capacity's help before its options (a format of argv[0]).
const Usage = `Usage: %s capacity --slo EXPR [--slo EXPR ...] [ab options] [capacity options] TARGET...
TARGET is URL or LABEL=URL. The highest constant rate at which every objective holds on the
corrected latencies (from each request's intended send time) and at least 98 %% of the rate is
achieved: a geometric climb until a rate fails (--attempts steps in a row), then a bisection.
Each step is a run at a constant --rate: --settle, then --step measured, on the same kept-alive
connections. Unless an objective on failed is given, failed<0.1%% is one, and unless one on
non2xx is given, non2xx<0.1%% is one: an answer that is not 2xx (a 503 of a server shedding load)
is not capacity. Before the searches, --noise steps (3) at a quarter of --start measure the machine's
latency noise: its p99's range, and whether the objectives lie inside it (the same low rate passing
in some steps and failing in others: they cannot be judged on this machine); --noise 0 skips them.
Several targets are searched step by step in turn and ranked. ab's options apply to every step, except:
    -c N            the most connections a step may open (default 256); a step opens
                    rate x the largest latency objective x 1.5 of them, at least 2
    -n, -t, --rate, --warmup    set by the search; -k and -r are implied (a server's
                    resets are failures counted against the objectives)
    --server-pid [LABEL=]PID[,PID...]   the server's CPU in every step and at the capacity
                    (one TARGET; without it, the processes listening on a loopback URL's port)
A failing step where gab itself was at its limit (its CPU at the cores it may use, its goroutines
waiting for a CPU, a schedule behind with connections free; or --demo's server in its process)
ends the search: the capacity is then "at least", the client's. Each step carries a single run's
busy-machine and kernel-drop verdicts; a search whose lowest failing rate failed only in steps on a
busy machine ends "disturbed: the machine was busy", at least what passed.
Capacity options:
`

// Settings are the search's settings, checked.
type Settings struct {
	Objectives   []threshold.Threshold
	LatencyMax   time.Duration // the largest latency objective (1s without one)
	LatencyGiven bool          // an objective on latency was given
	Step         time.Duration
	Settle       time.Duration
	Conns        int  // -c: the most connections a step may open
	InProcess    bool // --demo: the server shares gab's process
	Options      *Options
}

// NewSettings checks the options: conns is -c (0: not given), settleGiven
// whether --settle was.
func NewSettings(o *Options, conns int, settleGiven bool) (*Settings, error) {
	s := &Settings{Options: o, Conns: DefaultConns, Step: 10 * time.Second}
	if conns > 0 {
		s.Conns = conns
	}
	if err := s.objectives(o.SLO); err != nil {
		return nil, err
	}
	if o.Step > 0 {
		s.Step = o.Step
	}
	if s.Step < 100*time.Millisecond {
		return nil, fmt.Errorf("--step must be at least 100ms, not %v", s.Step)
	}
	s.Settle = max(min(s.Step/5, 2*time.Second), client.MinInterval)
	if settleGiven {
		s.Settle = o.Settle
		if s.Settle != 0 && s.Settle < client.MinInterval {
			return nil, fmt.Errorf("--settle must be 0 or at least %v, not %v", client.MinInterval, s.Settle)
		}
	}
	return s, checkRanges(o)
}

// objectives parses --slo's expressions as --fail-if's (the catalog's
// names, report.ParseThreshold), and adds the default objectives on
// failures: a request the server failed or answered with a status other
// than 2xx was not served.
func (s *Settings) objectives(slo []string) error {
	if len(slo) == 0 {
		return errors.New("--slo is required: an objective such as --slo 'p99<20ms'")
	}
	hasFailed, hasNon2xx := false, false
	for _, e := range slo {
		t, err := report.ParseThreshold(e)
		if err != nil {
			return errors.New(strings.Replace(err.Error(), "--fail-if", "--slo", 1))
		}
		if !StepFigure(t.Metric) {
			return fmt.Errorf("--slo %q: an objective is on latency (pN, median, mean, min, max) or failures (failed, non2xx)", e)
		}
		if t.Kind == threshold.Latency && (t.Op == "<" || t.Op == "<=") {
			s.LatencyMax = max(s.LatencyMax, time.Duration(t.Value)*time.Microsecond)
			s.LatencyGiven = true
		}
		hasFailed = hasFailed || t.Key == "failed"
		hasNon2xx = hasNon2xx || t.Key == "non2xx"
		s.Objectives = append(s.Objectives, t)
	}
	for _, d := range []struct {
		given bool
		expr  string
	}{{hasFailed, "failed<0.1%"}, {hasNon2xx, "non2xx<0.1%"}} {
		if !d.given {
			t, _ := report.ParseThreshold(d.expr)
			s.Objectives = append(s.Objectives, t)
		}
	}
	if s.LatencyMax == 0 {
		s.LatencyMax = time.Second
	}
	return nil
}

// checkRanges checks the numeric options' ranges.
func checkRanges(o *Options) error {
	switch {
	case math.IsNaN(o.Start) || o.Start < MinRate || o.Start > MaxRate:
		return fmt.Errorf("--start must be from %v to 1e9 requests per second", MinRate)
	case math.IsNaN(o.MaxRate) || o.MaxRate < o.Start || o.MaxRate > MaxRate:
		return errors.New("--max-rate must be from --start to 1e9 requests per second")
	case math.IsNaN(o.Resolution) || o.Resolution < MinResolution || o.Resolution > MaxResolution:
		return fmt.Errorf("--resolution must be from %g to %g (per cent)", MinResolution, MaxResolution)
	case o.Attempts < MinAttempts || o.Attempts > MaxAttempts:
		return fmt.Errorf("--attempts must be from %d to %d", MinAttempts, MaxAttempts)
	case o.Noise < 0 || o.Noise > MaxNoise:
		return fmt.Errorf("--noise must be from 0 to %d", MaxNoise)
	case o.Repeat < 1 || o.Repeat > MaxRepeat:
		return fmt.Errorf("--repeat must be from 1 to %d", MaxRepeat)
	case o.Format != "text" && o.Format != "json":
		return fmt.Errorf("--format must be text or json, not %q", o.Format)
	}
	return nil
}

// ConnsFor is how many connections a step at rate opens: enough to carry
// rate requests per second at the largest latency objective, with half as
// many again to spare, at least 2, at most -c.
func (s *Settings) ConnsFor(rate float64) int {
	n := math.Ceil(rate * s.LatencyMax.Seconds() * 1.5)
	return int(min(max(n, 2), float64(s.Conns)))
}

// schedBound is how long gab's goroutines may wait for a CPU (p99) before a
// step counts as client-bound: a fifth of the largest latency objective (the
// error such waits add to the latencies near it), at least
// report.ClientSchedBound.
func (s *Settings) schedBound() time.Duration {
	return max(s.LatencyMax/5, report.ClientSchedBound)
}

// StepConfig is the run of a step at rate from a target's engine
// configuration: a constant rate for the settle and the step, on
// ConnsFor(rate) kept-alive connections, a reset counted as a failure, the
// timeline's interval the settle's (0: the engine's default).
func (s *Settings) StepConfig(base client.Config, rate float64, uncapped int) client.Config {
	cfg := base
	cfg.Rate, cfg.RateSchedule = rate, nil
	cfg.TimeLimit, cfg.Requests = s.Settle+s.Step, uncapped
	cfg.Concurrency = s.ConnsFor(rate)
	cfg.WarmupRequests, cfg.WarmupTime = 0, 0
	cfg.Extended, cfg.Quiet, cfg.Events = true, true, nil
	cfg.KeepGoing = true // -r: a reset connection is a failure counted, not the end of the step
	cfg.Interval = s.Settle
	return cfg
}

// LongOption refuses the long options of a single run that do not apply to
// gab capacity's steps (nil: it applies to every step).
func LongOption(name string) error {
	switch name {
	case "dashboard", "dashboard-linger":
		return fmt.Errorf("--%s does not apply to gab capacity (it serves one run's report)", name)
	case "rate", "warmup", "no-cap", "extended", "hlog", "interval", "progress", "fail-if", "histogram", "version",
		"shard", "shards", "run-id", "start-at", "start-at-force":
		return fmt.Errorf("--%s does not apply to gab capacity", name)
	}
	return nil
}

// ShortFlag is ab's flag -c (no value) as gab capacity takes it: own
// reports that capacity consumes it (-h into o.Help; -k, which every step
// implies), an error that it does not apply.
func ShortFlag(c byte, o *Options) (own bool, err error) {
	switch c {
	case 'h':
		o.Help = true
		return true, nil
	case 'k':
		return true, nil // every step keeps its connections alive
	case 'w', 'V':
		return false, fmt.Errorf("-%c does not apply to gab capacity", c)
	}
	return false, nil
}

// ShortValue is ab's option -c VALUE as gab capacity takes it: pass
// reports that it goes on to every step's options; -c (1 to most) sets
// *conns instead, and the options the search sets are errors.
func ShortValue(c byte, value string, most int, conns *int) (pass bool, err error) {
	switch c {
	case 'c':
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > most {
			return false, fmt.Errorf("-c %q: the most connections a step may open, 1 to %d", value, most)
		}
		*conns = n
		return false, nil
	case 'n', 't', 'e', 'g', 'v':
		return false, fmt.Errorf("-%c does not apply to gab capacity", c)
	}
	return true, nil
}

// WriteJSON writes the document, indented.
func WriteJSON(w io.Writer, d *report.CapacityDocument) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// CheckOutputs checks, before the first step, that every output named can
// be written: usage is an error of the command line (--plot's format),
// err one of the file system.
func CheckOutputs(o *Options) (usage, err error) {
	if f := o.PlotFile; f != "" {
		if _, err := gnuplot.TerminalFor(f); err != nil {
			return fmt.Errorf("--plot: %v", err), nil
		}
		if err := gnuplot.CheckImagePath(f); err != nil {
			return nil, fmt.Errorf("--plot: %v", err)
		}
	}
	for _, f := range []string{o.JSONFile, o.HTMLFile} {
		if f == "" {
			continue
		}
		if err := outfile.CheckWritable(f); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
