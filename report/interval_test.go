package report

import (
	"math"
	"strings"
	"testing"
)

func nearTol(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

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
	if !nearTol(r.Hi, 2.2759453008122231336, 1e-12) || !nearTol(r.Lo, 1.7575114826232899869, 1e-12) {
		t.Errorf("interval [%.16g, %.16g], want [1.757511482623290, 2.275945300812223] (df 4 would give hi 2.29784)", r.Lo, r.Hi)
	}
}

// TQuantile975 is Student's t 0.975 quantile within 1e-12 of references
// computed with 40-digit arithmetic (mpmath: the root of the incomplete beta
// function's upper tail), and to 6 decimals of the published tables' values;
// it falls with df to the normal quantile, also across the switch to Hill's
// expansion.
func TestTQuantile(t *testing.T) {
	for df, want := range map[int]float64{
		1: 12.706204736174704646, 2: 4.3026527297494638523, 3: 3.1824463052837095927,
		4: 2.7764451051977943578, 5: 2.5705818356363155147, 9: 2.2621571627982055426,
		10: 2.2281388519862747484, 30: 2.04227245630123831, 100: 1.9839715185235522866,
		1000: 1.962339080826408485, 10_000: 1.9602012398906262578, 100_000: 1.9599877075346096386,
		1_000_000: 1.9599663568141070353, 1_000_000_000: 1.9599639869123254686,
	} {
		if got := TQuantile975(df); !nearTol(got, want, 1e-12) {
			t.Errorf("t(%d) = %.16g, want %.16g", df, got, want)
		}
	}
	for df, want := range map[int]float64{1: 12.706205, 2: 4.302653, 4: 2.776445, 30: 2.042272, 1000: 1.962339} {
		if got := math.Round(TQuantile975(df)*1e6) / 1e6; got != want {
			t.Errorf("t(%d) to 6 decimals = %v, want %v", df, got, want)
		}
	}
	prev := math.Inf(1)
	for df := 1; df <= 3*tHillFrom; df++ {
		got := TQuantile975(df)
		if !(got < prev) || got <= z975 {
			t.Fatalf("t(%d) = %.16g after t(%d) = %.16g: not falling towards %v", df, got, df-1, prev, z975)
		}
		prev = got
	}
	if got := TQuantile975(math.MaxInt); !nearTol(got, 1.959963984540054, 1e-15) {
		t.Errorf("t(MaxInt) = %.16g, want the normal 1.959964", got)
	}
	if !math.IsNaN(TQuantile975(0)) || !math.IsNaN(TQuantile975(-3)) {
		t.Error("t(0) is undefined")
	}
}

// TQuantile975Frac is Student's t 0.975 quantile for degrees of freedom
// that are not whole (Welch–Satterthwaite's), within 1e-12 of references
// computed with 40-digit arithmetic (mpmath), on both sides of the switch
// to Hill's expansion, and equal to TQuantile975 at whole ones.
func TestTQuantileFrac(t *testing.T) {
	for df, want := range map[float64]float64{
		1.5: 6.016663104427931921859, 2.5: 3.574654842003683218452, 3.7: 2.867520707191189463716,
		4.2: 2.725072722592375036016, 7.3: 2.345066736547703632999, 12.9: 2.162072279634474085852,
		1000.5: 1.962337892459348484569, 2500.25: 1.960913249823850693911,
	} {
		if got := TQuantile975Frac(df); !nearTol(got, want, 1e-12) {
			t.Errorf("t(%v) = %.16g, want %.16g", df, got, want)
		}
	}
	for _, df := range []int{1, 4, 30, 1000, 1001} {
		if TQuantile975Frac(float64(df)) != TQuantile975(df) {
			t.Errorf("t(%d) differs between the whole and the fractional form", df)
		}
	}
	if !math.IsNaN(TQuantile975Frac(0.99)) || !math.IsNaN(TQuantile975Frac(math.NaN())) {
		t.Error("t below 1 degree of freedom is undefined here")
	}
}

// TestRankIntervalsChains: ties that do not chain (a ~ b, b ~ c, a ≠ c)
// give rank ranges and lettered groups; an unknown interval ranks last,
// apart; lower-is-better orders by the lowest mean.
func TestRankIntervalsChains(t *testing.T) {
	a := IntervalOf([]float64{100, 101, 99})
	b := IntervalOf([]float64{85, 95, 105})
	c := IntervalOf([]float64{90, 91, 89})
	if Apart(a, b) || Apart(b, c) || !Apart(a, c) {
		t.Fatalf("the case needs a ~ b, b ~ c, a ≠ c: %v %v %v", Apart(a, b), Apart(b, c), Apart(a, c))
	}
	var got []string
	for _, p := range RankIntervals([]Interval{c, {}, b, a}, true) {
		got = append(got, strings.Join([]string{"cxba"[p.Index : p.Index+1], RankText(p.Rank, p.RankHi, p.Tied) + LooseMark(p.Loose), p.Group}, " "))
	}
	if s := strings.Join(got, ", "); s != "a =1 a, b 1–2 ab, c =2 b, x 4 " {
		t.Errorf("higher first: %s", s)
	}
	got = got[:0]
	for _, p := range RankIntervals([]Interval{a, c}, false) {
		got = append(got, "ac"[p.Index:p.Index+1]+" "+RankText(p.Rank, p.RankHi, p.Tied))
	}
	if s := strings.Join(got, ", "); s != "c 1, a 2" {
		t.Errorf("lower first: %s", s)
	}
	if GroupLetter(0) != "a" || GroupLetter(26) != "A" || GroupLetter(52) != "{53}" {
		t.Error("group letters")
	}
}
