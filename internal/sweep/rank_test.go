package sweep

import (
	"math"
	"strings"
	"testing"
)

// pointWith is a point whose runs measured these req/s and latency sds.
func pointWith(label string, rps []float64, sds []float64) *PointResult {
	p := &PointResult{Point: Point{Size: -1, Param: -1}, Label: label, LatencyCount: 100}
	for _, v := range rps {
		p.Runs = append(p.Runs, &RunResult{RPS: v})
	}
	p.RunSDsMs = sds
	p.DeviationMs = IntervalOf(sds).Mean
	p.RPS = SummarizeRPS(rps, 1)
	return p
}

// TestRankTies: targets whose 95 % intervals overlap share a rank (=1 =1 3),
// a group is measured against its first member, and with one run the
// order is the means'.
func TestRankTies(t *testing.T) {
	a := pointWith("a", []float64{100, 102, 98, 101}, []float64{1, 1.1, 0.9})
	b := pointWith("b", []float64{99, 103, 100, 97}, []float64{1, 1.2, 0.95})
	c := pointWith("c", []float64{50, 51, 49, 50}, []float64{3, 3.2, 2.9})
	rs := Rankings([]*PointResult{c, b, a})
	if len(rs) != 1 {
		t.Fatalf("%d rankings", len(rs))
	}
	var got []string
	for _, r := range rs[0].ByThroughput {
		got = append(got, RankText(r.Rank, r.Tied)+" "+r.Label)
	}
	if s := strings.Join(got, ", "); s != "=1 a, =1 b, 3 c" {
		t.Errorf("by req/s: %s", s)
	}
	got = got[:0]
	for _, r := range rs[0].ByDeviation {
		got = append(got, RankText(r.Rank, r.Tied)+" "+r.Label)
	}
	if s := strings.Join(got, ", "); s != "=1 a, =1 b, 3 c" {
		t.Errorf("by deviation: %s", s)
	}
	// One run each: no interval, the means' order.
	one := Rankings([]*PointResult{pointWith("x", []float64{10}, nil), pointWith("y", []float64{11}, nil)})
	if r := one[0].ByThroughput; r[0].Label != "y" || r[0].Rank != 1 || r[1].Rank != 2 || r[0].Tied {
		t.Errorf("one run: %+v", r)
	}
}

// TestRatioOf: the ratio of two means with its log-scale delta-method
// interval, positive and around the ratio; a ratio of equal figures holds 1.
func TestRatioOf(t *testing.T) {
	a, b := IntervalOf([]float64{200, 210, 190}), IntervalOf([]float64{100, 105, 95})
	r := RatioOf(a, b)
	if !r.Known || math.Abs(r.Value-2) > 1e-12 || !(0 < r.Lo && r.Lo < 2 && 2 < r.Hi) {
		t.Errorf("%+v", r)
	}
	// sd 10 and 5, n 3: squared relative standard errors va = 100/3/200²
	// and vb = 25/3/100², equal, so Welch–Satterthwaite's df is 4.
	v := 100.0/3/40000 + 25.0/3/10000
	want := 2 * math.Exp(TQuantile975(4)*math.Sqrt(v))
	if math.Abs(r.Hi-want) > 1e-9 || math.Abs(r.Lo*r.Hi-4) > 1e-9 {
		t.Errorf("interval [%v, %v], want hi %v and lo·hi = 4", r.Lo, r.Hi, want)
	}
	if r := RatioOf(IntervalOf([]float64{5}), IntervalOf([]float64{10})); r.Value != 0.5 || r.Lo != 0.5 || r.Hi != 0.5 {
		t.Errorf("one run: %+v", r)
	}
	if r := RatioOf(a, Interval{}); r.Known {
		t.Errorf("unknown base: %+v", r)
	}
}

// TestRatioOfFractionalDF: Welch–Satterthwaite's degrees of freedom are
// used as they are (54/11 here), not rounded down to 4, which would widen
// the interval; the bounds are the ones computed with 40-digit arithmetic
// (mpmath: the t quantile at df 54/11 as the root of the incomplete beta
// function's tail).
func TestRatioOfFractionalDF(t *testing.T) {
	r := RatioOf(IntervalOf([]float64{200, 210, 190}), IntervalOf([]float64{90, 100, 110, 100}))
	if !near(r.Hi, 2.2759453008122231336, 1e-12) || !near(r.Lo, 1.7575114826232899869, 1e-12) {
		t.Errorf("interval [%.16g, %.16g], want [1.757511482623290, 2.275945300812223] (df 4 would give hi 2.29784)", r.Lo, r.Hi)
	}
}

// TestDeviationEstimator: mean-of-runs is the runs' own sds averaged,
// pooled the sd of every request; the table names the one in use.
func TestDeviationEstimator(t *testing.T) {
	p := pointWith("a", []float64{1, 2}, []float64{1, 3})
	p.LatencySDMs = 5
	p.DeviationMs = p.LatencySDMs
	if iv := p.Deviation(); iv.Mean != 5 || iv.Lo >= 5 || iv.Hi <= 5 {
		t.Errorf("pooled deviation %+v", iv)
	}
	if s := deviationText(DeviationMeanOfRuns); !strings.Contains(s, "mean-of-runs") || !strings.Contains(s, "JMeter") {
		t.Errorf("%q", s)
	}
}

func TestParseParam(t *testing.T) {
	p, err := ParseParam("delay=0,50us,1ms")
	if err != nil || p.Name != "delay" || strings.Join(p.Values, " ") != "0 50us 1ms" || p.Placeholder() != "{delay}" {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{"x", "=1", "a b=1", "size=1", "d=1,1", "d=1,", "d=a;b", "d=$(x)", "d=" + strings.Repeat("1", 257), "d=a\\nb"} {
		if _, err := ParseParam(bad); err == nil || !strings.Contains(err.Error(), "--param") {
			t.Errorf("ParseParam(%q) = %v", bad, err)
		}
	}
}
