package hoststat

import (
	"math"
	"strconv"
	"strings"
)

// parseCPUMax reads cgroup v2's cpu.max ("QUOTA PERIOD") as cores; 0 for
// "max" or anything else.
func parseCPUMax(s string) float64 {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0
	}
	q, err1 := strconv.ParseFloat(f[0], 64)
	p, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 || math.IsInf(q, 0) {
		return 0
	}
	return q / p
}
