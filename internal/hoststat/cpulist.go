package hoststat

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxCPU bounds a CPU number read from a list (the kernel's own limit is
// 8192).
const maxCPU = 1 << 13

// ParseCPUList reads the kernel's CPU list format ("0-3,6"), as
// /proc/PID/status's Cpus_allowed_list shows it: the CPUs in order, each
// once.
func ParseCPUList(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for r := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		z := a
		var err2 error
		if isRange {
			z, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || z < a || z >= maxCPU {
			return nil, fmt.Errorf("%q is not a CPU list", s)
		}
		for c := a; c <= z; c++ {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// FormatCPUList writes CPUs (in order, each once) in the kernel's format:
// runs of consecutive CPUs as ranges ("0-3,6").
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Intersect is the CPUs in both lists (each in order).
func Intersect(a, b []int) []int {
	var out []int
	for _, c := range a {
		if _, ok := slices.BinarySearch(b, c); ok {
			out = append(out, c)
		}
	}
	return out
}

// Union is the CPUs in either list (each in order).
func Union(a, b []int) []int {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// allowedList reads Cpus_allowed_list from a /proc/PID/status text.
func allowedList(b []byte) ([]int, bool) {
	for line := range bytes.Lines(b) {
		rest, ok := strings.CutPrefix(string(line), "Cpus_allowed_list:")
		if !ok {
			continue
		}
		l, err := ParseCPUList(rest)
		return l, err == nil
	}
	return nil, false
}
