package sweep

import "fmt"

// Point is one cell of the experiment: a target at one size and concurrency.
// Size is -1 when there is no size list.
type Point struct {
	Target, Size, Concurrency int // indexes into the sweep's lists
}

// Run is one measurement: a point and its repetition (0-based).
type Run struct {
	Point
	Rep int
}

// Plan is the order of the runs. Sizes and concurrencies vary slowest (in
// the order given); within one size and concurrency the repetitions are
// interleaved across the targets, A B C A B C ..., so that drift on a noisy
// machine falls on every target alike. nSizes 0 means no size list.
// The caller checks the plan's size with CheckRuns first.
func Plan(nTargets, nSizes, nConcurrency, repeat int) []Run {
	sizes := max(nSizes, 1)
	out := make([]Run, 0, nTargets*sizes*nConcurrency*repeat)
	for s := 0; s < sizes; s++ {
		size := s
		if nSizes == 0 {
			size = -1
		}
		for c := 0; c < nConcurrency; c++ {
			for r := 0; r < repeat; r++ {
				for t := 0; t < nTargets; t++ {
					out = append(out, Run{Point{Target: t, Size: size, Concurrency: c}, r})
				}
			}
		}
	}
	return out
}

// CheckRuns refuses a sweep of more than MaxRuns runs (nSizes 0 means no size
// list). The counts are the parsed lists' lengths and --repeat, each
// positive.
func CheckRuns(nTargets, nSizes, nConcurrency, repeat int) error {
	runs := 1
	for _, n := range []int{nTargets, max(nSizes, 1), nConcurrency, repeat} {
		if n < 1 {
			return fmt.Errorf("a sweep of no runs (%d targets, %d concurrencies, --repeat %d)", nTargets, nConcurrency, repeat)
		}
		if n > MaxRuns || runs*n > MaxRuns {
			return fmt.Errorf("%d targets × %d sizes × %d concurrencies × --repeat %d is more than %d runs",
				nTargets, max(nSizes, 1), nConcurrency, repeat, MaxRuns)
		}
		runs *= n
	}
	return nil
}
