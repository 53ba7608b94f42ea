package hoststat

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/stat's times (USER_HZ, 100 on every Linux
// architecture Go supports).
const userHZ = 100

// maxFile bounds what is read of one file.
const maxFile = 1 << 20

// Read takes a reading of every file; a file it cannot read or parse is
// named in Missing and its figures stay zero.
func Read() *Snapshot {
	s := &Snapshot{Time: time.Now()}
	s.readStat(readFile(FileStat))
	s.readLoad(readFile(FileLoadavg))
	if !s.readPairs(readFile(FileNetstat), "TcpExt:", map[string]*uint64{
		"ListenOverflows": &s.TCP.ListenOverflows, "ListenDrops": &s.TCP.ListenDrops, "TCPSynRetrans": &s.TCP.SynRetrans,
	}) {
		s.Missing = append(s.Missing, FileNetstat)
	}
	if !s.readPairs(readFile(FileSNMP), "Tcp:", map[string]*uint64{
		"RetransSegs": &s.TCP.RetransSegs, "OutRsts": &s.TCP.OutRsts, "EstabResets": &s.TCP.EstabResets,
		"AttemptFails": &s.TCP.AttemptFails, "ActiveOpens": &s.TCP.ActiveOpens,
	}) {
		s.Missing = append(s.Missing, FileSNMP)
	}
	if b := readFile("/proc/sys/net/core/somaxconn"); b != nil {
		s.Somaxconn, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	s.readStatus(readFile(FileStatus))
	s.readSchedule()
	return s
}

func readFile(name string) []byte {
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFile))
	if err != nil {
		return nil
	}
	return b
}

// readStat reads the "cpu" line (all cores) and counts the "cpuN" lines.
func (s *Snapshot) readStat(b []byte) {
	ok := false
	for line := range bytes.Lines(b) {
		f := strings.Fields(string(line))
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if len(f) < 9 {
			if f[0] == "cpu" {
				break
			}
			s.Cores++
			continue
		}
		var v [8]time.Duration
		for i := range v {
			n, err := strconv.ParseUint(f[i+1], 10, 63)
			if err != nil {
				s.Missing = append(s.Missing, FileStat)
				return
			}
			v[i] = time.Duration(n) * (time.Second / userHZ)
		}
		t := CPUTimes{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}
		if f[0] != "cpu" {
			s.Cores++
			if n, err := strconv.Atoi(f[0][3:]); err == nil && n >= 0 && n < maxCPU {
				if s.PerCore == nil {
					s.PerCore = map[int]CPUTimes{}
				}
				s.PerCore[n] = t
			}
			continue
		}
		s.CPU = t
		ok = true
	}
	if !ok {
		s.Missing = append(s.Missing, FileStat)
	}
}

func (s *Snapshot) readLoad(b []byte) {
	if l, ok := parseLoad(b); ok {
		s.Load = l
	} else {
		s.Missing = append(s.Missing, FileLoadavg)
	}
}

// LoadAverage is /proc/loadavg's three figures (nil where unknown).
func LoadAverage() []float64 {
	if l, ok := parseLoad(readFile(FileLoadavg)); ok {
		return l[:]
	}
	return nil
}

// parseLoad reads /proc/loadavg's first three fields.
func parseLoad(b []byte) (l [3]float64, ok bool) {
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return l, false
	}
	for i := range l {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return l, false
		}
		l[i] = v
	}
	return l, true
}

// readPairs reads /proc/net/netstat's and /proc/net/snmp's format: a line of
// names after prefix, then a line of values after the same prefix. It
// reports whether every wanted name was found.
func (s *Snapshot) readPairs(b []byte, prefix string, want map[string]*uint64) bool {
	var names []string
	found := 0
	for line := range bytes.Lines(b) {
		f := strings.Fields(string(line))
		if len(f) == 0 || f[0] != prefix {
			continue
		}
		if names == nil {
			names = f[1:]
			continue
		}
		for i, v := range f[1:] {
			if i >= len(names) {
				break
			}
			if p, ok := want[names[i]]; ok {
				n, err := strconv.ParseInt(v, 10, 64) // MaxConn is -1
				if err != nil {
					return false
				}
				*p = uint64(n)
				found++
			}
		}
		names = nil
	}
	return found == len(want)
}

// readStatus reads the CPUs of Cpus_allowed_list ("0-3,6").
func (s *Snapshot) readStatus(b []byte) {
	l, ok := allowedList(b)
	if !ok {
		s.Missing = append(s.Missing, FileStatus)
		return
	}
	s.AllowedCPUs, s.Allowed = l, len(l)
}

// Affinity is the CPUs process pid may run on (its Cpus_allowed_list; nil
// when unreadable).
func Affinity(pid int) []int {
	l, _ := allowedList(readFile("/proc/" + strconv.Itoa(pid) + "/status"))
	return l
}

// maxThreads bounds the threads whose schedstat is read.
const maxThreads = 4096

// readSchedule sums the run-queue delay (schedstat's second field, ns) over
// this process's threads.
func (s *Snapshot) readSchedule() {
	d, err := os.Open("/proc/self/task")
	if err != nil {
		s.Missing = append(s.Missing, FileSchedule)
		return
	}
	names, err := d.Readdirnames(maxThreads)
	d.Close()
	if err != nil && len(names) == 0 {
		s.Missing = append(s.Missing, FileSchedule)
		return
	}
	var sum time.Duration
	read := 0
	for _, tid := range names {
		f := strings.Fields(string(readFile("/proc/self/task/" + tid + "/schedstat")))
		if len(f) < 2 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		sum += time.Duration(n)
		read++
	}
	if read == 0 {
		s.Missing = append(s.Missing, FileSchedule)
		return
	}
	s.RunDelay = sum
}

// CPUQuota is the CPU quota of the process's own cgroup (v2's cpu.max) in
// cores; 0: none or unreadable.
func CPUQuota() float64 {
	path := ""
	for line := range strings.SplitSeq(string(readFile("/proc/self/cgroup")), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	if path == "" || strings.Contains(path, "..") {
		return 0
	}
	return parseCPUMax(string(readFile("/sys/fs/cgroup" + strings.TrimSuffix(path, "/") + "/cpu.max")))
}
