package sweep

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
func Plan(nTargets, nSizes, nConcurrency, repeat int) []Run {
	sizes := nSizes
	if sizes == 0 {
		sizes = 1
	}
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
