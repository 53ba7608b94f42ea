package sweep

import (
	"sort"
	"time"

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
	Pause      time.Duration
	// MaxCV is the coefficient of variation above which a point is marked
	// unstable (a fraction).
	MaxCV float64
	// ServerPIDs are the processes whose CPU is measured, per target label
	// (nil: not measured).
	ServerPIDs map[string][]int
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

	// Document is the run's record (its JSON document): a point's latencies
	// are of its runs' records merged (report.MergeRuns).
	Document *report.Run
}

// PointResult is one point's statistics across its repetitions.
type PointResult struct {
	Point
	Label       string
	URL         string
	Size        *Size // nil without a size list
	Concurrency int
	Planned     int // repetitions planned
	Runs        []*RunResult

	RPS RPS
	// Latency over every request of every repetition (the merged runs'
	// total phase), ms: count, mean and sd exact, P50/P99 the nearest rank
	// in the merged HDR histograms (3 significant digits). LatencyCount is
	// 0 when no request was recorded.
	LatencyCount                 int64
	LatencyMeanMs, LatencySDMs   float64
	LatencyP50Ms, LatencyP99Ms   float64
	Complete, Failed             int     // sums over the repetitions
	ErrorRuns                    int     // runs that ended with an error (e.g. connection refused)
	MbitPerS                     float64 // mean over the repetitions of received Mbit/s
	SentMbitPerS                 float64 // likewise sent
	ClientCPUPct                 float64 // client CPU over the runs' elapsed time, % of one core
	ClientCPUUsPerReq            float64 // client CPU per complete request, µs
	ClientCPUKnown               bool
	ServerCPUUsPerReq, ServerPct float64 // server CPU per complete request (µs), % of one core
	ServerCPUKnown               bool
	// merged is the runs' records merged (report.MergeRuns; nil when no
	// run has a report): the point's latencies and counts.
	merged *report.Run
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
			byPoint[r.Point] = p
			order = append(order, r.Point)
		}
		p.Runs = append(p.Runs, r)
	}
	out := make([]*PointResult, len(order))
	for i, pt := range order {
		p := byPoint[pt]
		p.compute(s.MaxCV)
		out[i] = p
	}
	return out
}

func (p *PointResult) compute(maxCV float64) {
	rps := make([]float64, 0, len(p.Runs))
	var docs []*report.Run
	var mbit, sent float64
	var seconds float64
	var clientCPU, serverCPU time.Duration
	p.ClientCPUKnown, p.ServerCPUKnown = len(p.Runs) > 0, len(p.Runs) > 0
	for _, r := range p.Runs {
		rps = append(rps, r.RPS)
		if r.Document != nil && r.Document.Report != nil {
			docs = append(docs, r.Document)
		}
		p.Complete += r.Complete
		p.Failed += r.Failed
		if r.Error != "" {
			p.ErrorRuns++
		}
		mbit += report.MbitPerSecond(r.ReadBytes, r.Seconds)
		sent += report.MbitPerSecond(r.SentBytes, r.Seconds)
		seconds += r.Seconds
		clientCPU += r.ClientCPU
		serverCPU += r.ServerCPU
		p.ClientCPUKnown = p.ClientCPUKnown && r.ClientCPUKnown
		p.ServerCPUKnown = p.ServerCPUKnown && r.ServerCPUKnown
	}
	p.RPS = SummarizeRPS(rps, maxCV)
	if n := len(p.Runs); n > 0 {
		p.MbitPerS = mbit / float64(n)
		p.SentMbitPerS = sent / float64(n)
	}
	if len(docs) > 0 {
		p.merged, _ = report.MergeRuns(docs) // fails only for records that are not a run's
	}
	if m := p.merged; m != nil && m.Extended != nil {
		t := &m.Extended.Phases.Total
		p.LatencyCount = t.Count
		if t.Count > 0 {
			p.LatencyMeanMs, p.LatencySDMs = t.MeanUs/1000, t.SDUs/1000
			p.LatencyP50Ms, p.LatencyP99Ms = float64(t.MedianUs)/1000, float64(t.P99Us)/1000
		}
	}
	if seconds > 0 && p.Complete > 0 {
		p.ClientCPUPct = clientCPU.Seconds() / seconds * 100
		p.ClientCPUUsPerReq = float64(clientCPU.Microseconds()) / float64(p.Complete)
		p.ServerPct = serverCPU.Seconds() / seconds * 100
	} else {
		p.ClientCPUKnown, p.ServerCPUKnown = false, false
	}
	if p.Complete > 0 {
		p.ServerCPUUsPerReq = float64(serverCPU.Microseconds()) / float64(p.Complete)
	} else {
		p.ServerCPUKnown = false
	}
}

// Ranking orders the targets of one size and concurrency: by mean req/s
// (highest first) and by latency sd (lowest first; the "deviation" server
// studies rank by).
type Ranking struct {
	Size         *Size
	Concurrency  int
	ByThroughput []*PointResult
	ByDeviation  []*PointResult
}

// Rankings returns one ranking per size and concurrency that has more than
// one target measured, in the order of the points. Points that recorded no
// request rank last in both.
func Rankings(points []*PointResult) []Ranking {
	type key struct{ size, conc int }
	var keys []key
	groups := map[key][]*PointResult{}
	for _, p := range points {
		k := key{p.Point.Size, p.Point.Concurrency}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], p)
	}
	var out []Ranking
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		r := Ranking{Size: g[0].Size, Concurrency: g[0].Concurrency}
		r.ByThroughput = append([]*PointResult(nil), g...)
		sort.SliceStable(r.ByThroughput, func(i, j int) bool { return r.ByThroughput[i].RPS.Mean > r.ByThroughput[j].RPS.Mean })
		r.ByDeviation = append([]*PointResult(nil), g...)
		sort.SliceStable(r.ByDeviation, func(i, j int) bool {
			a, b := r.ByDeviation[i], r.ByDeviation[j]
			if (a.LatencyCount > 0) != (b.LatencyCount > 0) {
				return a.LatencyCount > 0
			}
			return a.LatencySDMs < b.LatencySDMs
		})
		out = append(out, r)
	}
	return out
}
