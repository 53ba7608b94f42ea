package sweep

import (
	"math"

	"github.com/montanaflynn/stats"

	"gab/internal/samples"
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

// SummarizeRPS computes the statistics of values across repetitions (req/s
// here; gab compare uses it for every figure); maxCV is the threshold of
// the warning (a fraction: 0.05 is 5 %).
func SummarizeRPS(values []float64, maxCV float64) RPS {
	r := RPS{N: len(values)}
	if r.N == 0 {
		return r
	}
	data := stats.Float64Data(values)
	r.Mean, _ = stats.Mean(data) // the errors are for empty input only
	r.Min, _ = stats.Min(data)
	r.Max, _ = stats.Max(data)
	if r.N > 1 {
		r.SD, _ = stats.StandardDeviationSample(data)
		r.CI95 = TQuantile975(r.N-1) * r.SD / math.Sqrt(float64(r.N))
		if r.Mean > 0 {
			r.CV = r.SD / r.Mean
		}
	}
	r.Unstable = r.CV > maxCV
	return r
}

// tTable holds Student's t 0.975 quantiles for 1 to 30 degrees of freedom.
var tTable = [...]float64{
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
}

// tTail continues the table: degrees of freedom and quantiles, then the
// normal limit.
var tTail = [...]struct{ df, t float64 }{{30, 2.042}, {40, 2.021}, {60, 2.000}, {120, 1.980}, {math.Inf(1), 1.960}}

// TQuantile975 is Student's t 0.975 quantile for df degrees of freedom (the
// factor of a two-sided 95 % interval): exact to 3 decimals up to 30, then
// interpolated in 1/df between 40, 60, 120 and the normal 1.960.
func TQuantile975(df int) float64 {
	if df < 1 {
		return math.NaN()
	}
	if df <= len(tTable) {
		return tTable[df-1]
	}
	x := 1 / float64(df)
	for i := 1; i < len(tTail); i++ {
		lo, hi := tTail[i-1], tTail[i]
		if float64(df) <= hi.df {
			xl, xh := 1/lo.df, 1/hi.df // xh is 0 for the normal limit
			return hi.t + (lo.t-hi.t)*(x-xh)/(xl-xh)
		}
	}
	return 1.960
}

// Moments are one run's latency count, mean and sample sd (µs).
type Moments struct {
	Count    int64
	Mean, SD float64
}

// Pool combines several runs' moments into those of all their samples
// together, exactly (samples.MergeMoments: within-run and between-run sums of
// squares).
func Pool(parts []Moments) Moments {
	var out Moments
	var m2 float64
	for _, p := range parts {
		if p.Count == 0 {
			continue
		}
		out.Mean, m2 = samples.MergeMoments(out.Count, out.Mean, m2, p.Count, p.Mean, float64(p.Count-1)*p.SD*p.SD)
		out.Count += p.Count
	}
	if out.Count > 1 {
		out.SD = math.Sqrt(m2 / float64(out.Count-1))
	}
	return out
}
