package report

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"strings"
	"time"

	"gab/internal/hoststat"
)

// This file is the one rule that tells whether gab, not the server, limited
// a run: its CPU at the cores it may use, an open-model schedule it fell
// behind while connections were free, connections it opened more slowly than
// asked. Capacity steps and the run's verdicts read it.

// ClientLoad is what a run tells about the client's own limits. Zero fields
// are unknown and take no part in the rule.
type ClientLoad struct {
	// CPU is gab's CPU time (user + system) over Wall, the run's time.
	CPU, Wall time.Duration
	// Waited is the time gab's threads were ready to run but waited for a
	// CPU (the run queue's delay; 0: unknown): on a busy machine gab may
	// want every core it may use and get less.
	Waited time.Duration
	// Cores is how many cores gab may use (Cores()); 0: unknown.
	Cores float64

	// Sent is how many requests the rate schedule dispatched, Behind how many
	// were due by the run's end and never sent, LateShare the share of the
	// sent ones dispatched later than the schedule's tolerance (0 to 1).
	Sent, Behind int64
	LateShare    float64
	// LagP95 is the 95th percentile of how late the schedule sent requests.
	LagP95 time.Duration
	// Busy is the connections' occupancy during the run (BusyShare): the
	// time they had a request in flight, the requests still unanswered at
	// the end included, over connections × the run's time. A schedule that
	// falls behind while Busy is well below 1 had connections free to send
	// on: the client, not the server, was late. A server that holds the
	// connections makes them busy: its doing, not the client's.
	Busy float64

	// SchedP99 is the 99th percentile of how long gab's goroutines waited
	// for a CPU once runnable (SchedReading), SchedBound the wait that
	// counts as the client lacking CPU (0: ClientSchedBound): gab's own
	// saturation at the cores it may use, or a host that gives it less.
	SchedP99, SchedBound time.Duration

	// RPS is the run's rate and Ceiling this machine's calibrated req/s per
	// core for the run's kind of requests (gab calibrate; 0: none): a rate
	// at ClientCPUBound of Ceiling × Cores is what gab can drive here.
	RPS, Ceiling float64

	// ConnsAsked is how many connections the run asked for, ConnsOpened how
	// many were open in time, within ConnsWindow of the asking
	// (client.ConnOpening's rule).
	ConnsAsked, ConnsOpened int
	ConnsWindow             time.Duration

	// Shared is the cores gab and the server may both run on, and how busy
	// they were (SharedCores; nil: the server's cores are unknown or none
	// is shared).
	Shared *SharedCores

	// InProcessServer: the server runs inside gab (--demo), on the same
	// cores, so every request's work on both sides is gab's CPU: the run
	// cannot tell the server's limit from the client's.
	InProcessServer bool
}

// Thresholds of the rule.
const (
	// ClientCPUBound is the share of the cores gab may use above which its
	// CPU limited the run.
	ClientCPUBound = 0.90
	// ClientLateBound is the share of requests sent late (or left unsent),
	// with connections free, above which the schedule was the client's limit.
	clientLateBound = 0.05
	// ClientLagBound is the schedule's p95 send lag above which, with
	// connections free, the client fell behind.
	clientLagBound = 10 * time.Millisecond
	// ClientSchedBound is SchedBound's default.
	ClientSchedBound = 5 * time.Millisecond
	// ClientBusyFree is the connections' occupancy below which a late
	// schedule is the client's doing (the connections were not all busy).
	ClientBusyFree = 0.80
)

// ClientBoundVerdict says whether the client limited a run, and why.
type ClientBoundVerdict struct {
	Bound   bool     `json:"bound"`
	Reasons []string `json:"reasons,omitempty"`
}

// String is the verdict in one line.
func (v ClientBoundVerdict) String() string {
	if !v.Bound {
		return "not client-bound"
	}
	return "client-bound: " + strings.Join(v.Reasons, "; ")
}

// BusyShare is the connections' occupancy: inFlight, the time requests
// spent on them (each from its send to its end, or to the run's end for
// one still unanswered), over conns × wall; 0 when either is unknown.
func BusyShare(inFlight time.Duration, conns int, wall time.Duration) float64 {
	if conns <= 0 || wall <= 0 {
		return 0
	}
	return inFlight.Seconds() / wall.Seconds() / float64(conns)
}

// ClientBound applies the rule to l.
func ClientBound(l ClientLoad) ClientBoundVerdict {
	var v ClientBoundVerdict
	if l.Cores > 0 && l.Wall > 0 && l.CPU > 0 {
		share := l.CPU.Seconds() / l.Wall.Seconds() / l.Cores
		wanted := (l.CPU + l.Waited).Seconds() / l.Wall.Seconds() / l.Cores
		switch {
		case share >= ClientCPUBound:
			v.Reasons = append(v.Reasons, fmt.Sprintf("gab used %.0f %% of the %s core(s) it may use", 100*share, decimal(l.Cores)))
		case wanted >= ClientCPUBound:
			v.Reasons = append(v.Reasons, fmt.Sprintf("gab used %.0f %% of the %s core(s) it may use and waited %.2f s for a CPU: it wanted %.0f %%", 100*share, decimal(l.Cores), l.Waited.Seconds(), 100*wanted))
		}
	}
	if l.Sent > 0 {
		late := l.LateShare
		if l.Behind > 0 {
			late = math.Max(late, float64(l.Behind)/float64(l.Sent+l.Behind))
		}
		switch {
		case l.Busy >= ClientBusyFree:
		case late > clientLateBound:
			v.Reasons = append(v.Reasons, fmt.Sprintf("the schedule fell behind (%.0f %% late or unsent) with connections free (%.0f %% busy)", 100*late, 100*l.Busy))
		case l.LagP95 > clientLagBound:
			v.Reasons = append(v.Reasons, fmt.Sprintf("the schedule's send lag grew (p95 %v) with connections free (%.0f %% busy)", l.LagP95.Round(time.Millisecond), 100*l.Busy))
		}
	}
	if bound := cmp.Or(l.SchedBound, ClientSchedBound); l.SchedP99 > bound {
		v.Reasons = append(v.Reasons, fmt.Sprintf("gab's goroutines waited %v (p99) for a CPU, above %v", l.SchedP99.Round(100*time.Microsecond), bound))
	}
	if l.Ceiling > 0 && l.Cores > 0 && l.RPS >= ClientCPUBound*l.Ceiling*l.Cores {
		v.Reasons = append(v.Reasons, fmt.Sprintf("%.0f req/s is %.0f %% of what gab drives on %s core(s) here (gab calibrate: %.0f req/s per core)",
			l.RPS, 100*l.RPS/(l.Ceiling*l.Cores), decimal(l.Cores), l.Ceiling))
	}
	if l.ConnsAsked > 0 && l.ConnsOpened < l.ConnsAsked {
		v.Reasons = append(v.Reasons, fmt.Sprintf("%d of %d connections opened in time (within %v of asking)", l.ConnsOpened, l.ConnsAsked, l.ConnsWindow.Round(time.Millisecond)))
	}
	if c := l.Shared; c.contended() {
		v.Reasons = append(v.Reasons, c.reason())
	}
	if l.InProcessServer {
		v.Reasons = append(v.Reasons, fmt.Sprintf("the server runs inside gab (--demo) on the same %s core(s)", decimal(l.Cores)))
	}
	v.Bound = len(v.Reasons) > 0
	return v
}

// SharedCores are the cores that gab and a server on the same machine may
// both run on, and what happened on them during a run.
type SharedCores struct {
	CPUs []int // the shared cores, in order
	// GabCPUs and ServerCPUs are the cores each may run on.
	GabCPUs, ServerCPUs []int
	// Busy is the share of the shared cores' time spent running anything
	// (0 to 1, from the host's per-core times).
	Busy float64
	// Gab and Server are the shares of the shared cores' time that gab and
	// the server used: each one's CPU over the run, the part of it on the
	// shared cores taken in proportion to the cores it may use.
	Gab, Server float64
}

// SharedCoreShare is the share of the shared cores' time that gab and the
// server must each have used, with the cores busy (ClientCPUBound), for
// their sharing to be what limited the run.
const SharedCoreShare = 0.10

// NewSharedCores relates gab's and the server's affinities (gabCPUs,
// serverCPUs) to what the host's cores did over a run of wall: their per-core
// times (perCore) and each one's CPU. Nil when a figure is unknown, no core
// is shared, or the two may together use every one of the machine's cores
// (cores): unpinned, the scheduler keeps them apart while it can, and a
// machine they fill is gab's CPU rule's or busy_machine's to judge.
func NewSharedCores(gabCPUs, serverCPUs []int, perCore map[int]hoststat.CPUTimes, cores int, wall, gabCPU, serverCPU time.Duration) *SharedCores {
	shared := hoststat.Intersect(gabCPUs, serverCPUs)
	if len(shared) == 0 || wall <= 0 || len(hoststat.Union(gabCPUs, serverCPUs)) >= cores {
		return nil
	}
	var busy, total time.Duration
	for _, c := range shared {
		t, ok := perCore[c]
		if !ok {
			return nil
		}
		busy += t.Busy()
		total += t.Total()
	}
	if total <= 0 {
		return nil
	}
	capacity := wall.Seconds() * float64(len(shared))
	part := func(cpu time.Duration, cpus []int) float64 {
		return cpu.Seconds() * float64(len(shared)) / float64(len(cpus)) / capacity
	}
	return &SharedCores{CPUs: shared, GabCPUs: gabCPUs, ServerCPUs: serverCPUs,
		Busy: busy.Seconds() / total.Seconds(), Gab: part(gabCPU, gabCPUs), Server: part(serverCPU, serverCPUs)}
}

// contended reports whether the shared cores were busy and both gab and the
// server worked on them: the server had only the CPU that gab (and other
// processes, which busy_machine counts) left it.
func (c *SharedCores) contended() bool {
	return c != nil && c.Busy >= ClientCPUBound && c.Gab >= SharedCoreShare && c.Server >= SharedCoreShare
}

func (c *SharedCores) reason() string {
	what := "core " + hoststat.FormatCPUList(c.CPUs)
	if len(c.CPUs) > 1 {
		what = "cores " + hoststat.FormatCPUList(c.CPUs)
	}
	return fmt.Sprintf("gab (CPUs %s) and the server (CPUs %s) share %s, busy %.0f %% of the run, gab using %.0f %% of it and the server %.0f %%: the server had only the CPU gab left it",
		hoststat.FormatCPUList(c.GabCPUs), hoststat.FormatCPUList(c.ServerCPUs), what, 100*c.Busy, 100*c.Gab, 100*c.Server)
}

// Cores is how many cores this process may use: GOMAXPROCS (which --cpus
// sets), the CPUs of its affinity mask (runtime.NumCPU, read at start), and
// on Linux the cgroup's CPU quota (cpu.max), the least of them.
func Cores() float64 {
	c := float64(min(runtime.GOMAXPROCS(0), runtime.NumCPU()))
	if q := hoststat.CPUQuota(); q > 0 && q < c {
		c = q
	}
	return c
}

// SchedReading is a reading of the Go scheduler since the process started:
// how long runnable goroutines waited before running.
type SchedReading struct {
	counts  []uint64
	buckets []float64 // seconds; len(counts)+1 boundaries
}

// ReadSched reads the scheduler.
func ReadSched() SchedReading {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return SchedReading{}
	}
	h := s[0].Value.Float64Histogram()
	return SchedReading{counts: append([]uint64(nil), h.Counts...), buckets: h.Buckets}
}

// P99Since is the 99th percentile of the waits since an earlier reading (the
// upper bound of its bucket); 0 without waits or a reading.
func (r SchedReading) P99Since(before SchedReading) time.Duration {
	if len(r.counts) == 0 || len(before.counts) != len(r.counts) {
		return 0
	}
	var total uint64
	for i, c := range r.counts {
		total += c - before.counts[i]
	}
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(0.99 * float64(total)))
	var seen uint64
	for i, c := range r.counts {
		seen += c - before.counts[i]
		if seen >= rank {
			hi := r.buckets[i+1]
			if math.IsInf(hi, 1) {
				hi = r.buckets[i]
			}
			return time.Duration(hi * 1e9)
		}
	}
	return 0
}
