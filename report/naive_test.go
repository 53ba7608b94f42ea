package report

import (
	"gab/internal/samples"

	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"gab/client"
)

// naiveFigures is ab's output_results transcribed line by line, as slowly
// and literally as possible (int64 µs, stable sorts of the whole records,
// medians read from the array after each sort), to cross-check Summarize.
type naiveFigures struct {
	min, mean, median, max [4]int64 // ms, in ab's row order
	sd                     [4]float64
	percentiles            [9]int64
	csv                    [101]float64
}

func naiveAB(samples []samples.Sample) naiveFigures {
	type data struct{ ctime, time, waittime int64 }
	stats := make([]data, len(samples))
	for i, s := range samples {
		stats[i] = data{int64(s.Connect), int64(s.Total), int64(s.Wait)}
	}
	count := int64(len(stats))
	var totalcon, total, totald, totalwait int64
	mincon, mintot, mind, minwait := int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64), int64(math.MaxInt64)
	var maxcon, maxtot, maxd, maxwait int64
	for _, s := range stats {
		mincon, mintot = min(mincon, s.ctime), min(mintot, s.time)
		mind, minwait = min(mind, s.time-s.ctime), min(minwait, s.waittime)
		maxcon, maxtot = max(maxcon, s.ctime), max(maxtot, s.time)
		maxd, maxwait = max(maxd, s.time-s.ctime), max(maxwait, s.waittime)
		totalcon += s.ctime
		total += s.time
		totald += s.time - s.ctime
		totalwait += s.waittime
	}
	meancon, meantot, meand, meanwait := totalcon/count, total/count, totald/count, totalwait/count
	var sdtot, sdcon, sdd, sdwait float64
	for _, s := range stats {
		a := float64(s.time) - float64(meantot)
		sdtot += a * a
		a = float64(s.ctime) - float64(meancon)
		sdcon += a * a
		a = float64(s.time) - float64(s.ctime) - float64(meand)
		sdd += a * a
		a = float64(s.waittime) - float64(meanwait)
		sdwait += a * a
	}
	root := func(v float64) float64 {
		if count > 1 {
			return math.Sqrt(v / float64(count-1))
		}
		return 0
	}
	sdtot, sdcon, sdd, sdwait = root(sdtot), root(sdcon), root(sdd), root(sdwait)
	median := func(v func(d data) int64) int64 {
		if count > 1 && count%2 == 1 {
			return (v(stats[count/2]) + v(stats[count/2+1])) / 2
		}
		return v(stats[count/2])
	}
	sort.SliceStable(stats, func(i, j int) bool { return stats[i].ctime < stats[j].ctime })
	mediancon := median(func(d data) int64 { return d.ctime })
	sort.SliceStable(stats, func(i, j int) bool { return stats[i].time-stats[i].ctime < stats[j].time-stats[j].ctime })
	mediand := median(func(d data) int64 { return d.time - d.ctime })
	sort.SliceStable(stats, func(i, j int) bool { return stats[i].waittime < stats[j].waittime })
	medianwait := median(func(d data) int64 { return d.waittime })
	sort.SliceStable(stats, func(i, j int) bool { return stats[i].time < stats[j].time })
	mediantot := median(func(d data) int64 { return d.time })

	r := func(x int64) int64 { return (x + 500) / 1000 }
	var f naiveFigures
	f.min = [4]int64{r(mincon), r(mind), r(minwait), r(mintot)}
	f.mean = [4]int64{r(meancon), r(meand), r(meanwait), r(meantot)}
	f.median = [4]int64{r(mediancon), r(mediand), r(medianwait), r(mediantot)}
	f.max = [4]int64{r(maxcon), r(maxd), r(maxwait), r(maxtot)}
	f.sd = [4]float64{sdcon / 1000, sdd / 1000, sdwait / 1000, sdtot / 1000}
	for i, p := range []int64{50, 66, 75, 80, 90, 95, 98, 99, 100} {
		if p == 100 {
			f.percentiles[i] = r(stats[count-1].time)
		} else {
			f.percentiles[i] = r(stats[count*p/100].time)
		}
	}
	for i := range 101 {
		idx := int64(0.5 + float64(count)*float64(i)/100)
		switch {
		case i == 0:
			idx = 0
		case i == 100, idx >= count: // gab's fix where ab reads past the data
			idx = count - 1
		}
		f.csv[i] = float64(stats[idx].time) / 1000
	}
	return f
}

func TestSummarizeMatchesNaiveTranscription(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 400 {
		n := 1 + rng.IntN(60)
		if trial%10 == 0 {
			n = 1 + rng.IntN(3)
		}
		scale := []uint32{600, 3000, 50_000, 2_000_000}[rng.IntN(4)]
		s := samples.New(n, 0)
		for range n {
			connect := rng.Uint32N(scale / 3)
			total := connect + rng.Uint32N(scale)
			wait := rng.Uint32N(total - connect + 1)
			s.Put(s.Len(), samples.Sample{Connect: connect, Wait: wait, Total: total}, nil)
		}
		want := naiveAB(s.Exact())
		got := Summarize(&client.Result{Complete: n, Elapsed: time.Second, Samples: s}, Options{Concurrency: 1})
		ct := got.Report.ConnectionTimes
		for c, cs := range []columnStats{ct.Connect, ct.Processing, ct.Waiting, ct.Total} {
			if cs.MinMs != want.min[c] || cs.MeanMs != want.mean[c] || cs.MedianMs != want.median[c] || cs.MaxMs != want.max[c] ||
				cs.SDMs != want.sd[c] {
				t.Fatalf("trial %d (n=%d) column %d: got %d %d %v %d %d, ab's arithmetic gives %d %d %v %d %d",
					trial, n, c, cs.MinMs, cs.MeanMs, cs.SDMs, cs.MedianMs, cs.MaxMs,
					want.min[c], want.mean[c], want.sd[c], want.median[c], want.max[c])
			}
			if wantConf := confidenceOf(want.mean[c], want.median[c], want.sd[c]); cs.Confidence != wantConf {
				t.Fatalf("trial %d column %d: confidence %v, want %v", trial, c, cs.Confidence, wantConf)
			}
		}
		for i, p := range got.Report.PercentageServed {
			if p.TotalMs != want.percentiles[i] {
				t.Fatalf("trial %d (n=%d): %v%% = %d, want %d", trial, n, p.Percent, p.TotalMs, want.percentiles[i])
			}
		}
		for i := range 101 {
			if v := float64(got.local.csv[i]) / 1000; v != want.csv[i] {
				t.Fatalf("trial %d (n=%d): csv row %d = %v, want %v", trial, n, i, v, want.csv[i])
			}
		}
	}
}
