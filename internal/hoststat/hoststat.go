// Package hoststat reads what the machine did while a run took place: the
// host's CPU time by kind (/proc/stat), the load average (/proc/loadavg), the
// kernel's TCP counters (/proc/net/netstat, /proc/net/snmp), and for this
// process the CPUs it may run on and the time its threads waited for a CPU
// (/proc/self/status, /proc/self/task/*/schedstat). Two readings, one before and one after a
// run, give what happened in between (Sub).
//
// Only Linux has these files; elsewhere Read returns a Snapshot whose
// Missing names everything it could not read, and a Delta carries that list
// on, so that a report can say what it could not check.
//
// The TCP counters are the network namespace's: other programs' connections
// in the same namespace count too.
package hoststat

import "time"

// CPUTimes is the host's CPU time by kind, summed over every core.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal time.Duration
}

// Busy is the CPU time spent running something (everything but idle and
// I/O wait; steal is time another guest ran, so it is not counted).
func (c CPUTimes) Busy() time.Duration {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ
}

// Total is every kind together.
func (c CPUTimes) Total() time.Duration {
	return c.Busy() + c.Idle + c.IOWait + c.Steal
}

func (c CPUTimes) sub(o CPUTimes) CPUTimes {
	return CPUTimes{
		User: c.User - o.User, Nice: c.Nice - o.Nice, System: c.System - o.System, Idle: c.Idle - o.Idle,
		IOWait: c.IOWait - o.IOWait, IRQ: c.IRQ - o.IRQ, SoftIRQ: c.SoftIRQ - o.SoftIRQ, Steal: c.Steal - o.Steal,
	}
}

// TCP holds the kernel's TCP counters that explain failed or slow connects
// and lost segments.
type TCP struct {
	ListenOverflows uint64 // TcpExt ListenOverflows: a SYN or ACK found the accept queue full
	ListenDrops     uint64 // TcpExt ListenDrops: connection attempts a listener dropped
	SynRetrans      uint64 // TcpExt TCPSynRetrans: SYNs sent again
	RetransSegs     uint64 // Tcp RetransSegs: segments sent again
	OutRsts         uint64 // Tcp OutRsts: resets sent
	EstabResets     uint64 // Tcp EstabResets: established connections reset
	AttemptFails    uint64 // Tcp AttemptFails: connection attempts that failed
	ActiveOpens     uint64 // Tcp ActiveOpens: connects started
}

func (t TCP) sub(o TCP) TCP {
	return TCP{
		ListenOverflows: t.ListenOverflows - o.ListenOverflows, ListenDrops: t.ListenDrops - o.ListenDrops,
		SynRetrans: t.SynRetrans - o.SynRetrans, RetransSegs: t.RetransSegs - o.RetransSegs,
		OutRsts: t.OutRsts - o.OutRsts, EstabResets: t.EstabResets - o.EstabResets,
		AttemptFails: t.AttemptFails - o.AttemptFails, ActiveOpens: t.ActiveOpens - o.ActiveOpens,
	}
}

// Snapshot is one reading.
type Snapshot struct {
	Time  time.Time
	CPU   CPUTimes
	Cores int        // cores /proc/stat lists
	Load  [3]float64 // 1, 5 and 15 minute load averages
	TCP   TCP
	// Somaxconn is net.core.somaxconn, the cap on every listen backlog (0:
	// unknown).
	Somaxconn int
	// Allowed is the number of CPUs this process may run on (its affinity;
	// 0: unknown).
	Allowed int
	// AllowedCPUs are those CPUs, in order (nil: unknown).
	AllowedCPUs []int
	// PerCore is each core's CPU time by kind, by CPU number (/proc/stat's
	// cpuN lines).
	PerCore map[int]CPUTimes
	// RunDelay is the time this process's threads spent runnable but waiting
	// for a CPU, summed over its threads (0 when unknown).
	RunDelay time.Duration
	// Missing names what could not be read ("/proc/stat", ...).
	Missing []string
}

// Delta is what happened between two snapshots.
type Delta struct {
	Elapsed    time.Duration
	CPU        CPUTimes
	Cores      int
	LoadBefore [3]float64
	LoadAfter  [3]float64
	TCP        TCP
	Somaxconn  int
	Allowed    int
	// AllowedCPUs are the CPUs gab may run on at the end (nil: unknown).
	AllowedCPUs []int
	// PerCore is each core's CPU time over the run, by CPU number (a core
	// missing from either reading is left out).
	PerCore  map[int]CPUTimes
	RunDelay time.Duration
	Missing  []string
}

// Sub is what happened from before to s.
func (s *Snapshot) Sub(before *Snapshot) *Delta {
	d := &Delta{
		Elapsed: s.Time.Sub(before.Time), CPU: s.CPU.sub(before.CPU), Cores: s.Cores,
		LoadBefore: before.Load, LoadAfter: s.Load, TCP: s.TCP.sub(before.TCP),
		Somaxconn: s.Somaxconn, Allowed: s.Allowed, AllowedCPUs: s.AllowedCPUs, RunDelay: s.RunDelay - before.RunDelay,
	}
	for n, t := range s.PerCore {
		if b, ok := before.PerCore[n]; ok {
			if d.PerCore == nil {
				d.PerCore = map[int]CPUTimes{}
			}
			d.PerCore[n] = t.sub(b)
		}
	}
	d.Missing = append(append(d.Missing, before.Missing...), s.Missing...)
	d.Missing = dedupe(d.Missing)
	return d
}

// Checked reports whether the file named was read in both snapshots.
func (d *Delta) Checked(file string) bool {
	for _, m := range d.Missing {
		if m == file {
			return false
		}
	}
	return true
}

func dedupe(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// The files Read reads, as Missing names them.
const (
	FileStat     = "/proc/stat"
	FileLoadavg  = "/proc/loadavg"
	FileNetstat  = "/proc/net/netstat"
	FileSNMP     = "/proc/net/snmp"
	FileStatus   = "/proc/self/status"
	FileSchedule = "/proc/self/task/*/schedstat"
)
