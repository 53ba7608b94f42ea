package sweep

import (
	"math"

	"gab/report"
)

// CIMethod names how RPS.CI95 is computed.
const CIMethod = "student-t, two-sided 95 %, df = repeats - 1"

// RPS is a point's requests per second across its repetitions (each
// repetition's figure is ab's "Requests per second").
type RPS struct {
	N        int
	Mean     float64
	SD       float64 // sample sd (n - 1); 0 for one repetition
	Min, Max float64
	// CI95 is the half-width of the 95 % confidence interval of the mean,
	// t(0.975, N-1)·SD/√N; 0 (not measured) for one repetition.
	CI95 float64
	// CV is SD/Mean (0 when Mean is 0 or N is 1).
	CV float64
	// Unstable is CV above the threshold: the repetitions disagree too much
	// for the mean to be trusted.
	Unstable bool
}

// SummarizeRPS computes the statistics of req/s across repetitions: the
// spread (report.SpreadOf, which gab compare uses for every figure), the
// confidence interval and the coefficient of variation; maxCV is the
// threshold of the warning (a fraction: 0.05 is 5 %).
func SummarizeRPS(values []float64, maxCV float64) RPS {
	sp := report.SpreadOf(values)
	r := RPS{N: len(values), Mean: sp.Mean, SD: sp.SD, Min: sp.Min, Max: sp.Max}
	if r.N > 1 {
		r.CI95 = report.TQuantile975(r.N-1) * r.SD / math.Sqrt(float64(r.N))
		if r.Mean > 0 {
			r.CV = r.SD / r.Mean
		}
	}
	r.Unstable = r.CV > maxCV
	return r
}

// The statistics across runs live in report (interval.go there); these
// names stay for sweep's callers.
type (
	Interval = report.Interval
	Ratio    = report.Ratio
	Place    = report.Place
)

// TieRule is report.TieRule, the rule the rankings print.
const TieRule = report.TieRule

// IntervalOf is report.IntervalOf.
func IntervalOf(values []float64) Interval { return report.IntervalOf(values) }

// Apart is report.Apart.
func Apart(a, b Interval) bool { return report.Apart(a, b) }

// RankIntervals is report.RankIntervals.
func RankIntervals(ivs []Interval, higher bool) []Place { return report.RankIntervals(ivs, higher) }

// RankText is report.RankText.
func RankText(rank, hi int, tied bool) string { return report.RankText(rank, hi, tied) }

// LooseMark is report.LooseMark.
func LooseMark(loose bool) string { return report.LooseMark(loose) }
