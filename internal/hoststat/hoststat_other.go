//go:build !linux

package hoststat

import "time"

// Read takes a reading. Outside Linux there is nothing to read: every file
// is missing.
func Read() *Snapshot {
	return &Snapshot{Time: time.Now(), Missing: []string{FileStat, FileLoadavg, FileNetstat, FileSNMP, FileStatus, FileSchedule}}
}

// LoadAverage is /proc/loadavg's three figures: nil outside Linux.
func LoadAverage() []float64 { return nil }

// CPUQuota is the cgroup's CPU quota in cores: 0 (none) outside Linux.
func CPUQuota() float64 { return 0 }

// Affinity is a process's CPUs: nil (unknown) outside Linux.
func Affinity(int) []int { return nil }
