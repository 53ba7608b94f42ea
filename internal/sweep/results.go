package sweep

import (
	"time"

	"gab/internal/hoststat"
	"gab/report"
)

// Settings are what the sweep's command line asked for.
type Settings struct {
	Targets     []Target
	Concurrency []int
	// SizeOption is "--sizes", "--post-sizes" or "" (then Sizes is empty).
	SizeOption string
	Sizes      []Size
	Repeat     int
	// Auto is --repeat auto: Repeat is then the maximum, and a point stops
	// repeating once Settled; CI is --ci, the share of a point's mean its
	// req/s interval's half-width may reach (trust.go).
	Auto  bool
	CI    float64
	Pause time.Duration
	// MaxCV is the coefficient of variation above which a point is marked
	// unstable (a fraction).
	MaxCV float64
	// ServerPIDs are the processes whose CPU is measured, per target label
	// (nil: not measured).
	ServerPIDs map[string][]int
	// Param is --param (nil without): a value per point, set by Before,
	// the command run before each run with the value in place of
	// {NAME}.
	Param  *Param
	Before string
	// Order is OrderInterleaved or OrderRandom; Seed the random order's
	// seed (recorded so that the order can be repeated).
	Order string
	Seed  uint64
	// RequestsPerConn is --requests-per-conn (0 without): each point's -n
	// is its concurrency times it.
	RequestsPerConn int
	// Deviation is the latency deviation estimator the rankings and ratios
	// use: DeviationPooled or DeviationMeanOfRuns.
	Deviation string
	// Baseline is --baseline's target label ("" without).
	Baseline string
	// Ramp is --ramp: each run opens its connections evenly over it and
	// leaves the requests that start meanwhile out (client.Config.RampUp).
	Ramp time.Duration
}

// RunResult is what one run measured; the caller fills it in.
type RunResult struct {
	Run
	Order int    // position in the plan (0-based)
	URL   string // the URL measured (sizes substituted)
	Start time.Time
	// Ending is the run document's ending ("completed", "time_limit",
	// "interrupted", "fatal"); Error its message when gab would have exited
	// with an error.
	Ending string
	Error  string

	RPS       float64 // ab's Requests per second (0 when nothing was measured)
	Complete  int     // ab's Complete requests
	Failed    int     // ab's Failed requests
	Seconds   float64 // ab's Time taken for tests
	ReadBytes int64   // ab's Total transferred
	SentBytes int64   // every request byte written (ab's Total body sent with -p)

	ClientCPU      time.Duration
	ClientCPUKnown bool
	ServerCPU      time.Duration
	ServerCPUKnown bool
	// HostCPU is the whole host's CPU time over the run by kind, every
	// core summed (/proc/stat; HostCPUKnown false where not read).
	HostCPU      hoststat.CPUTimes
	HostCPUKnown bool

	// Document is the run's record (its JSON document): a point's figures
	// are of its runs' records as a report.Group.
	Document *report.Run
}

// PointResult is one point's statistics across its repetitions.
type PointResult struct {
	Point
	Label       string
	URL         string
	Size        *Size  // nil without a size list
	ParamValue  string // --param's value ("" without --param)
	Concurrency int
	Planned     int // repetitions planned
	Runs        []*RunResult

	RPS RPS
	// Group is the runs' records (those with a report) and their exact
	// merge (report.Group): every catalog figure of the point, by the
	// figure's Pool rule (Figure, Value).
	Group *report.Group
	// LatencyCount is the requests recorded in the merged total phase (0
	// when none was).
	LatencyCount int64
	// RunSDsMs are the repetitions' own latency sds (ms); DeviationMs is
	// the deviation by the sweep's estimator (Settings.Deviation): the
	// pooled sd of every request (the catalog's "sd" of Group) or the mean
	// of RunSDsMs.
	RunSDsMs    []float64
	DeviationMs float64
	// HostCPU is the whole host's CPU over the runs (/proc/stat; Known
	// false where it could not be read).
	HostCPU          HostCPU
	Complete, Failed int // sums of ab's counts over the repetitions
	ErrorRuns        int // runs that ended with an error (e.g. connection refused)
	// Verdicts are the point's flags: its runs' verdicts' kinds and
	// VerdictWideInterval (trust.go). StoppedAtMax: --repeat auto ran it to
	// the maximum without its interval narrowing to --ci.
	Verdicts     []string
	StoppedAtMax bool
}

// Done reports whether every planned repetition ran to its end.
func (p *PointResult) Done() bool {
	if len(p.Runs) < p.Planned {
		return false
	}
	for _, r := range p.Runs {
		if r.Ending == "interrupted" {
			return false
		}
	}
	return true
}

// Aggregate groups the runs by point, in the plan's order of first
// appearance, and computes each point's statistics. planned is the full plan
// (points with no run yet are left out).
func Aggregate(s *Settings, runs []*RunResult) []*PointResult {
	var order []Point
	byPoint := map[Point]*PointResult{}
	for _, r := range runs {
		p := byPoint[r.Point]
		if p == nil {
			p = &PointResult{Point: r.Point, Label: s.Targets[r.Target].Label,
				Concurrency: s.Concurrency[r.Point.Concurrency], Planned: s.Repeat, URL: r.URL}
			if r.Size >= 0 {
				p.Size = &s.Sizes[r.Size]
			}
			if r.Param >= 0 && s.Param != nil {
				p.ParamValue = s.Param.Values[r.Param]
			}
			byPoint[r.Point] = p
			order = append(order, r.Point)
		}
		p.Runs = append(p.Runs, r)
	}
	out := make([]*PointResult, len(order))
	for i, pt := range order {
		p := byPoint[pt]
		p.compute(s.MaxCV, s.Deviation)
		p.judge(s)
		out[i] = p
	}
	return out
}

func (p *PointResult) compute(maxCV float64, deviation string) {
	rps := make([]float64, 0, len(p.Runs))
	docs := make([]*report.Run, 0, len(p.Runs))
	for _, r := range p.Runs {
		rps = append(rps, r.RPS)
		docs = append(docs, r.Document)
		p.Complete += r.Complete
		p.Failed += r.Failed
		if r.Error != "" {
			p.ErrorRuns++
		}
		if sd, ok := runSD(r); ok {
			p.RunSDsMs = append(p.RunSDsMs, sd)
		}
	}
	p.HostCPU = hostCPUOf(p.Runs, p.Complete)
	p.RPS = SummarizeRPS(rps, maxCV)
	p.Group = report.NewGroup(docs)
	if m := p.Group.Merged; m != nil && m.Extended != nil {
		p.LatencyCount = m.Extended.Phases.Total.Count
	}
	p.DeviationMs, _ = p.Value("sd")
	if deviation == DeviationMeanOfRuns {
		p.DeviationMs = report.SpreadOf(p.RunSDsMs).Mean
	}
}

// Figure is the point's value of a catalog figure: its Group's, by the
// figure's Pool rule (the latencies of every request of every run, counts
// summed, rates the mean of the runs'); ok is false where no run has it.
func (p *PointResult) Figure(fig *report.Figure) (float64, bool) {
	if p.Group == nil {
		return 0, false
	}
	return p.Group.Value(fig)
}

// Value is Figure of the catalog's figure of that key.
func (p *PointResult) Value(key string) (float64, bool) {
	fig, ok := report.FigureByKey(key)
	if !ok {
		return 0, false
	}
	return p.Figure(&fig)
}
