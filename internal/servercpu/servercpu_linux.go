package servercpu

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func supported() error {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return ErrUnsupported
	}
	return nil
}

func exists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil
}

// readAll reads every process's stat; processes that vanish meanwhile are
// skipped.
func readAll() map[int]procStat {
	out := map[int]procStat{}
	d, err := os.Open("/proc")
	if err != nil {
		return out
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		if st, err := parseStat(string(b)); err == nil {
			out[pid] = st
		}
	}
	return out
}

func read(pids []int) (time.Duration, error) {
	all := readAll()
	children := map[int][]int{}
	for pid, st := range all {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	seen := map[int]bool{}
	var ticks int64
	var walk func(int)
	walk = func(pid int) {
		if seen[pid] {
			return
		}
		seen[pid] = true
		ticks += all[pid].ticks
		for _, c := range children[pid] {
			walk(c)
		}
	}
	alive := 0
	for _, pid := range pids {
		if _, ok := all[pid]; ok {
			alive++
			walk(pid)
		}
	}
	if alive == 0 {
		return 0, fmt.Errorf("--server-pid: none of the processes %v is running any more", pids)
	}
	return time.Duration(ticks) * Resolution, nil
}
