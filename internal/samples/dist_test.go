package samples

import (
	"math"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func TestDistStatistics(t *testing.T) {
	d := NewDist()
	vals := []int64{5, 1, 4, 2, 3, 1000, 7, 6, 9, 8}
	for _, v := range vals {
		d.Add(v)
	}
	if d.Count != 10 || d.Min != 1 || d.Max != 1000 || d.Sum != 1045 {
		t.Fatalf("count %d min %d max %d sum %d", d.Count, d.Min, d.Max, d.Sum)
	}
	// Sample sd of the ten values, computed by hand from the mean 104.5.
	var ss float64
	for _, v := range vals {
		ss += (float64(v) - 104.5) * (float64(v) - 104.5)
	}
	if want := math.Sqrt(ss / 9); math.Abs(d.SD()-want) > 1e-9 {
		t.Errorf("sd %v, want %v", d.SD(), want)
	}
	// The nearest rank, 10·p/100 rounded half up (1-based), of the sorted
	// values 1..9, 1000: p50 → 5, p89.9 → 9, p90 → 9, p94 → 9, p95 → 10
	// (1000); p0 is the min, p100 the max.
	for _, c := range []struct {
		p    float64
		want int64
	}{{0, 1}, {50, 5}, {89.9, 9}, {90, 9}, {94, 9}, {95, 1000}, {99.99, 1000}, {100, 1000}} {
		if got := d.Percentile(c.p); got != c.want {
			t.Errorf("p%v = %d, want %d", c.p, got, c.want)
		}
	}
	// Merging keeps exact figures and the histogram.
	e := NewDist()
	e.Add(0)
	e.Merge(&d)
	if e.Count != 11 || e.Min != 0 || e.Max != 1000 || e.Hist.TotalCount() != 11 {
		t.Errorf("merged: count %d min %d max %d hist %d", e.Count, e.Min, e.Max, e.Hist.TotalCount())
	}
	// Large values land in 3-significant-digit buckets: reported as the bucket's
	// top, within 0.1 %, and never above the exact maximum.
	f := NewDist()
	f.Add(40_000_123)
	f.Add(40_000_000)
	if got := f.Percentile(0); got < 40_000_000 || got > 40_040_000 {
		t.Errorf("p0 of ~40 s = %d µs, not within 0.1 %%", got)
	}
	if got := f.Percentile(100); got != 40_000_123 {
		t.Errorf("p100 = %d, want the exact max 40000123", got)
	}
	if empty := NewDist(); empty.Percentile(50) != 0 || empty.SD() != 0 || empty.Mean() != 0 {
		t.Error("empty distribution gives nonzero figures")
	}
}

// An independent reader of the histogram (the Go library's ValueAtQuantile
// on the decoded encoding) finds Percentile's values, capped by the exact max,
// at every p tried, in sparse tails too; and the test would catch ab's index
// rule, which differs at many of them.
func TestPercentileIsValueAtQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ps := []float64{0.1, 1, 10, 25, 33.3, 50, 66.6, 75, 90, 95, 97.5, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100}
	abDiffers := 0
	for _, n := range []int{2, 3, 7, 10, 99, 101, 999, 1000, 1234, 4321, 10_007} {
		d := NewDist()
		for range n {
			v := int64(300 + rng.ExpFloat64()*2000)
			if rng.IntN(200) == 0 {
				v += 1_000_000 + rng.Int64N(5_000_000) // a sparse tail
			}
			d.Add(v)
		}
		enc, err := d.Hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		h, err := hdrhistogram.Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			want := min(h.ValueAtQuantile(p), d.Max)
			if got := d.Percentile(p); got != want {
				t.Errorf("n %d p%v: %d µs, the reader finds %d", n, p, got, want)
			}
			if d.AtIndex(int64(math.Floor(float64(n)*p/100+1e-9))) != want {
				abDiffers++
			}
		}
	}
	if abDiffers < 20 {
		t.Errorf("ab's index rule differs at only %d of the points: the test does not tell the rules apart", abDiffers)
	}
}

// HistAtIndex agrees with a walk over the histogram's buckets at every rank.
func TestHistAtIndexMatchesBucketWalk(t *testing.T) {
	h := NewHist()
	for i := int64(0); i < 3000; i++ {
		_ = h.RecordValue((i * i * 7919) % 5_000_000)
	}
	bars := h.Distribution()
	var seen int64
	for _, bar := range bars {
		for k := int64(0); k < bar.Count; k++ {
			if got := HistAtIndex(h, seen+k); got != bar.To {
				t.Fatalf("rank %d: %d, want its bucket's top %d", seen+k, got, bar.To)
			}
		}
		seen += bar.Count
	}
	if got := HistAtIndex(h, seen+10); got != h.Max() {
		t.Fatalf("past the end: %d, want the max %d", got, h.Max())
	}
}

// The sd stays exact when it is tiny beside the mean, and merging shards gives
// the sd of the whole.
func TestDistSDMergesExactly(t *testing.T) {
	a, b, whole := NewDist(), NewDist(), NewDist()
	for i := int64(0); i < 1000; i++ {
		v := 3_600_000_000 + i%3 // one hour, ± 1 µs
		whole.Add(v)
		if i%2 == 0 {
			a.Add(v)
		} else {
			b.Add(v)
		}
	}
	// Values 0, 1, 2 repeating (334, 333, 333 times) around the hour.
	var ss float64
	mean := float64(333+2*333) / 1000
	for i := 0; i < 1000; i++ {
		d := float64(i%3) - mean
		ss += d * d
	}
	want := math.Sqrt(ss / 999)
	a.Merge(&b)
	for name, d := range map[string]*Dist{"whole": &whole, "merged": &a} {
		if math.Abs(d.SD()-want) > 1e-6 || d.Count != 1000 {
			t.Errorf("%s: sd %v over %d values, want %v", name, d.SD(), d.Count, want)
		}
	}
}
