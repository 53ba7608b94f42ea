package sweep

import "gab/internal/hoststat"

// HostCPU is the whole host's CPU over a point's runs (/proc/stat, every
// core): each kind as a percentage of all the cores' time, and the busy
// time (user, nice, system, irq, softirq) per complete request. Softirq is
// where the kernel charges loopback and NIC packet work; steal is time a
// hypervisor gave another guest.
type HostCPU struct {
	Known                                    bool
	UserPct, SystemPct, SoftIRQPct, StealPct float64
	BusyPct                                  float64
	BusyUsPerReq                             float64
}

// hostCPUOf sums the runs' host CPU readings; it is known when every run
// has one and some time passed.
func hostCPUOf(runs []*RunResult, complete int) HostCPU {
	var sum hoststat.CPUTimes
	for _, r := range runs {
		if !r.HostCPUKnown {
			return HostCPU{}
		}
		c := r.HostCPU
		sum.User += c.User + c.Nice
		sum.System += c.System + c.IRQ
		sum.SoftIRQ += c.SoftIRQ
		sum.Steal += c.Steal
		sum.Idle += c.Idle + c.IOWait
	}
	total := sum.Total()
	if len(runs) == 0 || total <= 0 {
		return HostCPU{}
	}
	pct := func(d int64) float64 { return float64(d) / float64(total) * 100 }
	h := HostCPU{Known: true,
		UserPct: pct(int64(sum.User)), SystemPct: pct(int64(sum.System)),
		SoftIRQPct: pct(int64(sum.SoftIRQ)), StealPct: pct(int64(sum.Steal)), BusyPct: pct(int64(sum.Busy()))}
	if complete > 0 {
		h.BusyUsPerReq = float64(sum.Busy().Microseconds()) / float64(complete)
	}
	return h
}

// runSD is a run's own latency sd (ms), from its record's exact moments.
func runSD(r *RunResult) (float64, bool) {
	d := r.Document
	if d == nil || d.Extended == nil || d.Extended.Phases.Total.Count < 2 {
		return 0, false
	}
	return d.Extended.Phases.Total.SDUs / 1000, true
}
