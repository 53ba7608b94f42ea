package sweep

import (
	"fmt"
	"math/rand/v2"
)

// Point is one cell of the experiment: a target at one size, one value of
// --param and one concurrency. Size is -1 when there is no size list, Param
// -1 when there is no --param.
type Point struct {
	Target, Size, Concurrency int // indexes into the sweep's lists
	Param                     int
}

// Run is one measurement: a point and its repetition (0-based).
type Run struct {
	Point
	Rep int
}

// Dims are the lengths of the sweep's lists: Sizes and Params 0 when there
// is no such list.
type Dims struct {
	Targets, Sizes, Params, Concurrency, Repeat int
}

// Dims are the lengths of the sweep's lists.
func (s *Settings) Dims() Dims {
	d := Dims{Targets: len(s.Targets), Sizes: len(s.Sizes), Concurrency: len(s.Concurrency), Repeat: s.Repeat}
	if s.Param != nil {
		d.Params = len(s.Param.Values)
	}
	return d
}

// The values of --order.
const (
	// OrderInterleaved runs every point's first repetition, then every
	// point's second, ...; within a round sizes vary slowest, then --param's
	// values, then concurrencies, the targets innermost (A B C A B C ...).
	OrderInterleaved = "interleaved"
	// OrderRandom runs the rounds of OrderInterleaved, each round's points
	// in a random order (a block-randomized design: every point once per
	// round).
	OrderRandom = "random"
)

// Points are the sweep's points once each, in OrderInterleaved's order.
func Points(d Dims) []Point {
	var out []Point
	for s := range max(d.Sizes, 1) {
		for q := range max(d.Params, 1) {
			for c := range d.Concurrency {
				for t := range d.Targets {
					out = append(out, Point{Target: t, Size: index(s, d.Sizes), Concurrency: c, Param: index(q, d.Params)})
				}
			}
		}
	}
	return out
}

// index is i, or -1 when its list is absent (n 0).
func index(i, n int) int {
	if n == 0 {
		return -1
	}
	return i
}

// Plan is the order of the runs: --repeat rounds of every point, so that
// drift on a noisy machine falls on every point alike rather than on the
// points measured last. order is OrderInterleaved or OrderRandom (rng
// shuffles each round; unused otherwise). The caller checks the plan's size
// with CheckRuns first.
func Plan(d Dims, order string, rng *rand.Rand) []Run {
	points := Points(d)
	out := make([]Run, 0, len(points)*d.Repeat)
	for r := range d.Repeat {
		round := points
		if order == OrderRandom {
			round = append([]Point(nil), points...)
			rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		for _, p := range round {
			out = append(out, Run{p, r})
		}
	}
	return out
}

// CheckRuns refuses a sweep of more than MaxRuns runs. The counts are the
// parsed lists' lengths and --repeat, each positive (Sizes and Params 0
// when absent).
func CheckRuns(d Dims) error {
	runs := 1
	for _, n := range []int{d.Targets, max(d.Sizes, 1), max(d.Params, 1), d.Concurrency, d.Repeat} {
		if n < 1 {
			return fmt.Errorf("a sweep of no runs (%d targets, %d concurrencies, --repeat %d)", d.Targets, d.Concurrency, d.Repeat)
		}
		if n > MaxRuns || runs*n > MaxRuns {
			params := ""
			if d.Params > 0 {
				params = fmt.Sprintf(" × %d --param values", d.Params)
			}
			return fmt.Errorf("%d targets × %d sizes%s × %d concurrencies × --repeat %d is more than %d runs",
				d.Targets, max(d.Sizes, 1), params, d.Concurrency, d.Repeat, MaxRuns)
		}
		runs *= n
	}
	return nil
}
