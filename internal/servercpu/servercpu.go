// Package servercpu measures the CPU time of other processes over a run
// (gab's --server-pid): the processes named, all their threads, and all their
// descendants, live or already waited for. Linux only (from /proc); elsewhere
// New returns ErrUnsupported.
package servercpu

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Resolution is the precision of the figures: /proc/PID/stat counts CPU time
// in clock ticks of 1/100 s (USER_HZ, 100 on every Linux architecture).
const Resolution = 10 * time.Millisecond

// ErrUnsupported is New's error where /proc is not available.
var ErrUnsupported = errors.New("--server-pid needs Linux (/proc)")

// ParsePIDs reads a comma-separated list of process IDs.
func ParsePIDs(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		pid, err := strconv.Atoi(f)
		if err != nil || pid < 1 {
			return nil, fmt.Errorf("--server-pid: %q is not a process ID (in %q)", f, s)
		}
		out = append(out, pid)
	}
	return out, nil
}

// Meter measures a set of processes.
type Meter struct {
	pids []int
}

// New returns a meter for pids; each must exist now.
func New(pids []int) (*Meter, error) {
	if err := supported(); err != nil {
		return nil, err
	}
	for _, pid := range pids {
		if !exists(pid) {
			return nil, fmt.Errorf("--server-pid: no process with PID %d", pid)
		}
	}
	return &Meter{pids: append([]int(nil), pids...)}, nil
}

// PIDs are the processes measured.
func (m *Meter) PIDs() []int { return m.pids }

// Read returns the CPU time (user + system) used so far by the processes,
// their threads and descendants: each live process's own time plus that of
// its children it has waited for, so every process counts once. A process
// that ended and was waited for moves from the first sum to the second, so
// the difference of two readings is the CPU used between them. The error is
// set when none of the processes is left.
func (m *Meter) Read() (time.Duration, error) {
	return read(m.pids)
}

// procStat is what read needs from /proc/PID/stat.
type procStat struct {
	ppid  int
	ticks int64 // utime + stime + cutime + cstime
}

// parseStat reads /proc/PID/stat's text. The command name is in parentheses
// and may itself hold spaces and parentheses, so the fields are counted from
// the last ')'.
func parseStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("no command name")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): ppid is field 4, utime..cstime fields 14..17.
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("%d fields", len(f)+2)
	}
	var st procStat
	var err error
	if st.ppid, err = strconv.Atoi(f[1]); err != nil {
		return st, err
	}
	for _, k := range []int{11, 12, 13, 14} {
		v, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil {
			return st, err
		}
		st.ticks += v
	}
	return st, nil
}
