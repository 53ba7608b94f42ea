package sweep

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gab/report"
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

// TestRankTies: targets the ratio's test cannot tell apart share a rank
// (=1 =1 3), and with one run the order is the means'.
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
		got = append(got, RankText(r.Rank, r.RankHi, r.Tied)+" "+r.Label)
	}
	if s := strings.Join(got, ", "); s != "=1 a, =1 b, 3 c" {
		t.Errorf("by req/s: %s", s)
	}
	got = got[:0]
	for _, r := range rs[0].ByDeviation {
		got = append(got, RankText(r.Rank, r.RankHi, r.Tied)+" "+r.Label)
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

// TestDeviationEstimator: mean-of-runs is the runs' own sds averaged,
// pooled the sd of every request; the table names the one in use.
func TestDeviationEstimator(t *testing.T) {
	p := pointWith("a", []float64{1, 2}, []float64{1, 3})
	p.DeviationMs = 5 // the pooled sd
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

// pairsAgree checks a ranking against the pairwise test the ratio tables
// print (each target as --baseline, BaselineRatios): two targets share a
// letter exactly when the ratio's 95 % interval holds 1; tied targets'
// rank ranges overlap, and a target that the test tells apart from another
// and whose figure is better has the lower rank. It returns the problems.
func pairsAgree(points []*PointResult, ranked []Ranked, ratio func(Comparison) Ratio, better func(a, b *PointResult) bool, loose *[]string) []string {
	var bad []string
	place := map[string]Ranked{}
	for _, r := range ranked {
		place[r.Label] = r
	}
	for _, base := range points {
		for _, c := range BaselineRatios(points, base.Label) {
			a, b := place[c.Point.Label], place[base.Label]
			r := ratio(c)
			if !r.Known {
				continue
			}
			tied := r.Lo <= 1 && 1 <= r.Hi
			share := strings.ContainsFunc(a.Group, func(l rune) bool { return strings.ContainsRune(b.Group, l) })
			overlap := a.Rank <= b.RankHi && b.Rank <= a.RankHi
			switch {
			case share != tied:
				bad = append(bad, fmt.Sprintf("%s (%s) and %s (%s): ratio %v, groups disagree", a.Label, a.Group, b.Label, b.Group, ratioText(r)))
			case tied && !overlap:
				bad = append(bad, fmt.Sprintf("%s %d–%d and %s %d–%d: ratio %v holds 1, ranges apart", a.Label, a.Rank, a.RankHi, b.Label, b.Rank, b.RankHi, ratioText(r)))
			}
			// Told apart: ranges apart in the means' order, or both marked
			// loose.
			kept := b.RankHi < a.Rank
			if better(a.PointResult, b.PointResult) {
				kept = a.RankHi < b.Rank
			}
			if !tied && !kept && (!a.Loose || !b.Loose) {
				bad = append(bad, fmt.Sprintf("%s %d–%d and %s %d–%d: ratio %v excludes 1, ranges overlap or run against the means, not marked loose",
					a.Label, a.Rank, a.RankHi, b.Label, b.Rank, b.RankHi, ratioText(r)))
			}
			if !tied && !kept {
				*loose = append(*loose, a.Label+" "+b.Label)
			}
		}
	}
	return bad
}

func moreRPS(a, b *PointResult) bool       { return a.Throughput().Mean > b.Throughput().Mean }
func lessDeviation(a, b *PointResult) bool { return a.DeviationMs < b.DeviationMs }

// TestRankFollowsTheRatios: the ranking keeps the rule the ratio tables
// print, also where ties do not chain. a (100 ± 1) and c (90 ± 1) are apart;
// b (95, sd 10) ties both: a =1 (a), b 1–2 (ab), c =2 (b). Before, a tie
// group was measured against its first member: a's interval overlapped both
// and all three ranked =1, though c/a was significant. And the other way: a
// target whose interval overlaps the leader's but whose ratio to it
// excludes 1 (the delta method's test is stricter than overlap) does not
// share the leader's rank.
func TestRankFollowsTheRatios(t *testing.T) {
	a := pointWith("a", []float64{100, 101, 99}, []float64{1, 1.1, 0.9})
	b := pointWith("b", []float64{85, 95, 105}, []float64{2, 3, 4})
	c := pointWith("c", []float64{90, 91, 89}, []float64{5, 5.1, 4.9})
	points := []*PointResult{c, b, a}
	rs := Rankings(points)
	var got []string
	for _, r := range rs[0].ByThroughput {
		got = append(got, RankText(r.Rank, r.RankHi, r.Tied)+" ("+r.Group+") "+r.Label)
	}
	if s := strings.Join(got, ", "); s != "=1 (a) a, 1–2 (ab) b, =2 (b) c" {
		t.Errorf("by req/s: %s", s)
	}
	var loose []string
	for _, p := range pairsAgree(points, rs[0].ByThroughput, func(c Comparison) Ratio { return c.Throughput }, moreRPS, &loose) {
		t.Error(p)
	}
	for _, p := range pairsAgree(points, rs[0].ByDeviation, func(c Comparison) Ratio { return c.Deviation }, lessDeviation, &loose) {
		t.Error(p)
	}
	if len(loose) > 0 {
		t.Errorf("ranges that do not keep the test: %v", loose)
	}
	// The CSV and the JSON say the same.
	var buf bytes.Buffer
	if err := WriteCSV(&buf, points); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, row := range rows[1:] {
		got := row[col["label"]] + " " + row[col["rank_rps"]] + "-" + row[col["rank_rps_hi"]] + " " + row[col["rank_rps_group"]]
		if want := map[string]string{"a": "a 1-1 a", "b": "b 1-2 ab", "c": "c 2-2 b"}[row[col["label"]]]; got != want {
			t.Errorf("CSV %q, want %q", got, want)
		}
	}
	d := NewDocument(&Settings{}, points, Meta{})
	for _, r := range d.Rankings[0].ByThroughput {
		if r.Label == "b" && (!slices.Equal(r.RankRange, []int{1, 2}) || r.Group != "ab" || r.RankText() != "1–2") {
			t.Errorf("JSON %+v", r)
		}
	}
	// Intervals that overlap, a ratio whose interval excludes 1: x 100 ± 4
	// (n 4, sd 2.5) and y 93 ± 4.
	x := pointWith("x", []float64{100, 103, 97, 100}, nil)
	y := pointWith("y", []float64{93, 96, 90, 93}, nil)
	if ix, iy := x.Throughput(), y.Throughput(); !(iy.Hi > ix.Lo) {
		t.Fatalf("intervals %+v and %+v do not overlap: the case tests nothing", ix, iy)
	}
	if r := report.RatioOf(y.Throughput(), x.Throughput()); !(r.Hi < 1) {
		t.Fatalf("ratio %+v holds 1: the case tests nothing", r)
	}
	r := Rankings([]*PointResult{x, y})[0].ByThroughput
	if r[0].Label != "x" || r[0].Rank != 1 || r[1].Rank != 2 || r[0].Tied || r[1].Tied || r[0].Group == r[1].Group {
		t.Errorf("overlapping intervals, significant ratio: %+v %+v", r[0], r[1])
	}
}

// TestRankPropertyRandom: over random targets (2 to 7, 1 to 5 repetitions
// each, means and spreads from close to far apart), every ranking agrees
// with the ratios pair by pair (pairsAgree), ranks start at 1 and run in
// the order of the means, and a rank range's top is the highest rank of the
// targets it ties.
func TestRankPropertyRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	chained, looseRankings := 0, 0
	for trial := range 400 {
		n := 2 + rng.IntN(6)
		var points []*PointResult
		for i := range n {
			reps := 1 + rng.IntN(5)
			mean, sd := 100*math.Exp(rng.NormFloat64()*0.1), rng.Float64()*10
			var rps, sds []float64
			for range reps {
				rps = append(rps, max(0.1, mean+sd*rng.NormFloat64()))
				sds = append(sds, max(0.01, 1+0.3*rng.NormFloat64()))
			}
			points = append(points, pointWith(fmt.Sprintf("t%d", i), rps, sds))
		}
		rs := Rankings(points)
		if len(rs) != 1 {
			t.Fatalf("trial %d: %d rankings", trial, len(rs))
		}
		for _, by := range []struct {
			ranked []Ranked
			ratio  func(Comparison) Ratio
			mean   func(*PointResult) float64
			higher bool
		}{
			{rs[0].ByThroughput, func(c Comparison) Ratio { return c.Throughput }, func(p *PointResult) float64 { return p.Throughput().Mean }, true},
			{rs[0].ByDeviation, func(c Comparison) Ratio { return c.Deviation }, func(p *PointResult) float64 { return p.DeviationMs }, false},
		} {
			better := moreRPS
			if !by.higher {
				better = lessDeviation
			}
			var loose []string
			for _, p := range pairsAgree(points, by.ranked, by.ratio, better, &loose) {
				t.Fatalf("trial %d: %s", trial, p)
			}
			// Loose marks only targets of such a pair.
			for _, r := range by.ranked {
				if r.Loose && !strings.Contains(" "+strings.Join(loose, " ")+" ", " "+r.Label+" ") {
					t.Fatalf("trial %d: %s marked loose, its ranges keep the test with every target (%v)", trial, r.Label, loose)
				}
			}
			if len(loose) > 0 {
				looseRankings++
			}
			for i, r := range by.ranked {
				if i == 0 && r.Rank != 1 || r.Rank > i+1 || r.RankHi < r.Rank || r.RankHi > n {
					t.Fatalf("trial %d: place %d ranked %d–%d", trial, i, r.Rank, r.RankHi)
				}
				if i > 0 {
					prev := by.ranked[i-1]
					if by.higher && by.mean(prev.PointResult) < by.mean(r.PointResult) || !by.higher && by.mean(prev.PointResult) > by.mean(r.PointResult) {
						t.Fatalf("trial %d: %s before %s, out of the means' order", trial, prev.Label, r.Label)
					}
				}
				if r.RankHi > r.Rank && len(r.Group) > 1 {
					chained++
				}
			}
		}
	}
	if chained == 0 {
		t.Error("no random case had ties that do not chain: the property test misses them")
	}
	t.Logf("%d places with a rank range; %d of 800 rankings with loose ranges", chained, looseRankings)
}

// TestRankingSaysWhenDisturbed: a ranking whose targets carry flags of a
// disturbed measure (busy machine, client-bound, kernel drops, a wide
// interval) says it cannot be trusted, naming them with their flags; flags
// that do not disturb the comparison (too short) and unflagged rankings add
// nothing.
func TestRankingSaysWhenDisturbed(t *testing.T) {
	s := &Settings{Deviation: DeviationPooled}
	a := pointWith("a", []float64{100, 102, 98, 101}, []float64{1, 1.1, 0.9})
	b := pointWith("b", []float64{99, 103, 100, 97}, []float64{1, 1.2, 0.95})
	var quiet bytes.Buffer
	if err := writeRankings(&quiet, s, []*PointResult{a, b}); err != nil {
		t.Fatal(err)
	}
	b.Verdicts = []string{"too_short"}
	var short bytes.Buffer
	if err := writeRankings(&short, s, []*PointResult{a, b}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(quiet.String(), "Not trustworthy") || quiet.String() != short.String() {
		t.Errorf("a ranking of undisturbed points says more:\n%s\n%s", quiet.String(), short.String())
	}
	a.Verdicts = []string{"busy_machine", "too_short", VerdictWideInterval}
	b.Verdicts = []string{"kernel_drops"}
	var busy bytes.Buffer
	if err := writeRankings(&busy, s, []*PointResult{a, b}); err != nil {
		t.Fatal(err)
	}
	want := "Not trustworthy at c=0: a BW, b D carry flags of a disturbed measure; a rank or tie there may not hold on a quiet machine\n"
	if !strings.HasSuffix(busy.String(), want) {
		t.Errorf("no %q at the end of\n%s", want, busy.String())
	}
}
