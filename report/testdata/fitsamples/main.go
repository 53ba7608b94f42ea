// Command fitsamples finds per-request µs times whose statistics, computed by
// a naive, independent transcription of ab.c's output_results (not gab's
// report package), print the figures of an ab golden file: the Connection
// Times rows, the percentiles, the HTML rows and, when given, the -g and -e
// files. It anneals the samples until every printed figure matches, then
// writes them with an elapsed time reproducing "Time taken" and the rate.
//
//	go run ./report/testdata/fitsamples -txt GOLDEN.txt [-tsv F.tsv] [-csv F.csv] -out CASE.samples [-seed N]
//
// It exits 3 when no exact fit was found (try another seed).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

var needStable bool

type data struct{ start, wait, ctime, time int64 }

func rms(x int64) int64 { return (x + 500) / 1000 }

type figs struct {
	rows [4][5]float64 // min mean sd median max (sd in tenths)
	perc [9]int64
	html [3][3]int64
	tsv  [][4]int64 // sorted rows c d t w
	csv  []int64    // µs of rows 0..100
}

func eval(st []data) figs {
	n := len(st)
	s := make([]data, n)
	copy(s, st)
	var f figs
	var mincon, mintot, mind, minwait int64 = 1 << 62, 1 << 62, 1 << 62, 1 << 62
	var maxcon, maxtot, maxd, maxwait int64
	var totalcon, total, totald, totalwait int64
	for _, x := range s {
		mincon = min(mincon, x.ctime)
		mintot = min(mintot, x.time)
		mind = min(mind, x.time-x.ctime)
		minwait = min(minwait, x.waittime())
		maxcon = max(maxcon, x.ctime)
		maxtot = max(maxtot, x.time)
		maxd = max(maxd, x.time-x.ctime)
		maxwait = max(maxwait, x.waittime())
		totalcon += x.ctime
		total += x.time
		totald += x.time - x.ctime
		totalwait += x.waittime()
	}
	N := int64(n)
	meancon, meantot, meand, meanwait := totalcon/N, total/N, totald/N, totalwait/N
	var sdtot, sdcon, sdd, sdwait float64
	for _, x := range s {
		a := float64(x.time) - float64(meantot)
		sdtot += a * a
		a = float64(x.ctime) - float64(meancon)
		sdcon += a * a
		a = float64(x.time) - float64(x.ctime) - float64(meand)
		sdd += a * a
		a = float64(x.waittime()) - float64(meanwait)
		sdwait += a * a
	}
	sq := func(v float64) float64 {
		if n > 1 {
			return math.Sqrt(v / float64(n-1))
		}
		return 0
	}
	sdtot, sdcon, sdd, sdwait = sq(sdtot), sq(sdcon), sq(sdd), sq(sdwait)
	colMed := func(get func(data) int64) int64 {
		v := make([]int64, n)
		for i, x := range s {
			v[i] = get(x)
		}
		slices.Sort(v)
		if n > 1 && n%2 == 1 {
			return (v[n/2] + v[n/2+1]) / 2
		}
		return v[n/2]
	}
	mediancon := colMed(func(d data) int64 { return d.ctime })
	mediand := colMed(func(d data) int64 { return d.time - d.ctime })
	medianwait := colMed(func(d data) int64 { return d.waittime() })
	if needStable {
		sort.SliceStable(s, func(i, j int) bool { return s[i].ctime < s[j].ctime })
		sort.SliceStable(s, func(i, j int) bool { return s[i].time-s[i].ctime < s[j].time-s[j].ctime })
		sort.SliceStable(s, func(i, j int) bool { return s[i].waittime() < s[j].waittime() })
		sort.SliceStable(s, func(i, j int) bool { return s[i].time < s[j].time })
	} else {
		slices.SortFunc(s, func(a, b data) int { return int(a.time - b.time) })
	}
	mediantot := colMed(func(d data) int64 { return d.time })
	tenth := func(sd float64) float64 {
		return math.Round(sd / 100)
	}
	f.rows[0] = [5]float64{float64(rms(mincon)), float64(rms(meancon)), tenth(sdcon), float64(rms(mediancon)), float64(rms(maxcon))}
	f.rows[1] = [5]float64{float64(rms(mind)), float64(rms(meand)), tenth(sdd), float64(rms(mediand)), float64(rms(maxd))}
	f.rows[2] = [5]float64{float64(rms(minwait)), float64(rms(meanwait)), tenth(sdwait), float64(rms(medianwait)), float64(rms(maxwait))}
	f.rows[3] = [5]float64{float64(rms(mintot)), float64(rms(meantot)), tenth(sdtot), float64(rms(mediantot)), float64(rms(maxtot))}
	percs := []int64{50, 66, 75, 80, 90, 95, 98, 99, 100}
	for i, p := range percs {
		if p == 100 {
			f.perc[i] = rms(s[n-1].time)
		} else {
			f.perc[i] = rms(s[N*p/100].time)
		}
	}
	// html
	hc := [3]int64{rms(mincon), rms(totalcon) / N, rms(maxcon)}
	ht := [3]int64{rms(mintot), rms(total) / N, rms(maxtot)}
	f.html[0] = hc
	f.html[1] = [3]int64{ht[0] - hc[0], ht[1] - hc[1], ht[2] - hc[2]}
	f.html[2] = ht
	for _, x := range s {
		f.tsv = append(f.tsv, [4]int64{rms(x.ctime), rms(x.time - x.ctime), rms(x.time), rms(x.waittime())})
	}
	for i := 0; i <= 100; i++ {
		var idx int
		switch i {
		case 0:
			idx = 0
		case 100:
			idx = n - 1
		default:
			idx = int(0.5 + float64(n)*float64(i)/100)
		}
		if idx >= n {
			f.csv = append(f.csv, -1)
		} else {
			f.csv = append(f.csv, s[idx].time)
		}
	}
	return f
}

func (d data) waittime() int64 { return d.wait }

type target struct {
	rows    [4][5]float64
	hasRows bool
	sOnly   bool // -S: min mean max only
	perc    []int64
	html    *[3][3]int64
	tsv     [][4]int64
	csv     []int64
}

func cost(f figs, t *target) float64 {
	c := 0.0
	if t.hasRows {
		for r := 0; r < 4; r++ {
			for k := 0; k < 5; k++ {
				if t.sOnly && (k == 2 || k == 3) {
					continue
				}
				c += math.Abs(f.rows[r][k] - t.rows[r][k])
			}
		}
	}
	for i, p := range t.perc {
		c += math.Abs(float64(f.perc[i] - p))
	}
	if t.html != nil {
		for r := 0; r < 3; r++ {
			for k := 0; k < 3; k++ {
				c += math.Abs(float64(f.html[r][k] - t.html[r][k]))
			}
		}
	}
	for i, row := range t.tsv {
		for k := 0; k < 4; k++ {
			c += math.Abs(float64(f.tsv[i][k] - row[k]))
		}
	}
	for i, v := range t.csv {
		if v < 0 {
			continue
		}
		c += math.Abs(float64(f.csv[i]-v)) / 10
	}
	return c
}

var cellRe = regexp.MustCompile(`>([^<]*)</td></tr>$`)

var num = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?`)

func nums(s string) []float64 {
	var out []float64
	for _, m := range num.FindAllString(s, -1) {
		v, _ := strconv.ParseFloat(m, 64)
		out = append(out, v)
	}
	return out
}

func main() {
	txt := flag.String("txt", "", "golden txt")
	tsv := flag.String("tsv", "", "golden tsv")
	csv := flag.String("csv", "", "golden csv")
	out := flag.String("out", "", "output samples")
	iters := flag.Int("iters", 2000000, "")
	seed := flag.Int64("seed", 1, "")
	flag.Parse()
	b, _ := os.ReadFile(*txt)
	lines := strings.Split(string(b), "\n")
	var t target
	n, conc := 0, 0
	var taken float64
	var rps float64 = -1
	rowNames := []string{"Connect:", "Processing:", "Waiting:", "Total:"}
	htmlNames := []string{"Connect:", "Processing:", "Total:"}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "Complete requests:"):
			n = int(nums(l)[0])
		case strings.HasPrefix(l, "Concurrency Level:"):
			conc = int(nums(l)[0])
		case strings.HasPrefix(l, "Time taken for tests:"):
			taken = nums(l)[0]
		case strings.HasPrefix(l, "Requests per second:"):
			rps = nums(l)[0]
		case strings.Contains(l, "min   avg   max") && !strings.Contains(l, "<"):
			t.sOnly = true
		case strings.HasPrefix(l, "<tr") && strings.Contains(l, "Complete requests:"):
			n = int(nums(cellRe.FindStringSubmatch(l)[1])[0])
		case strings.HasPrefix(l, "<tr") && strings.Contains(l, "Concurrency Level:"):
			conc = int(nums(cellRe.FindStringSubmatch(l)[1])[0])
		case strings.HasPrefix(l, "<tr") && strings.Contains(l, "Time taken for tests:"):
			taken = nums(cellRe.FindStringSubmatch(l)[1])[0]
		case strings.HasPrefix(l, "<tr") && strings.Contains(l, "Requests per second:"):
			rps = nums(cellRe.FindStringSubmatch(l)[1])[0]
		}
		for r, name := range rowNames {
			if strings.HasPrefix(l, name) {
				v := nums(l[len(name):])
				t.hasRows = true
				if len(v) == 3 {
					t.rows[r] = [5]float64{v[0], v[1], 0, 0, v[2]}
				} else {
					t.rows[r] = [5]float64{v[0], v[1], math.Round(v[2] * 10), v[3], v[4]}
				}
			}
		}
		if strings.HasPrefix(l, "  ") && strings.Contains(l, "%  ") || strings.HasPrefix(l, " 100%") {
			v := nums(l)
			t.perc = append(t.perc, int64(v[1]))
		}
		for r, name := range htmlNames {
			if strings.HasPrefix(l, "<tr") && strings.Contains(l, ">"+name+"</th><td") {
				if t.html == nil {
					t.html = new([3][3]int64)
				}
				parts := strings.Split(l, "</th>")[1]
				// cells are "<td ATTR>%5d</td>": take the text after the tag
				cells := strings.Split(parts, "</td>")
				for k := 0; k < 3; k++ {
					c := cells[k]
					c = c[strings.LastIndex(c, ">")+1:]
					x, _ := strconv.ParseInt(strings.TrimSpace(c), 10, 64)
					t.html[r][k] = x
				}
			}
		}
	}
	if *tsv != "" {
		b, _ := os.ReadFile(*tsv)
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
			f := strings.Split(l, "\t")
			var row [4]int64
			for k := 0; k < 4; k++ {
				row[k], _ = strconv.ParseInt(f[2+k], 10, 64)
			}
			t.tsv = append(t.tsv, row)
		}
	}
	if *csv != "" {
		b, _ := os.ReadFile(*csv)
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
			f := strings.Split(l, ",")
			v, _ := strconv.ParseFloat(f[1], 64)
			t.csv = append(t.csv, int64(math.Round(v*1000)))
		}
		// rows whose index is past the data are ab's garbage
		for i := range t.csv {
			if i > 0 && i < 100 && int(0.5+float64(n)*float64(i)/100) >= n {
				t.csv[i] = -1
			}
		}
	}
	needStable = len(t.tsv) > 0
	fmt.Fprintf(os.Stderr, "n=%d c=%d taken=%.3f rps=%.2f target=%+v\n", n, conc, taken, rps, t)
	rng := rand.New(rand.NewSource(*seed))
	st := make([]data, n)
	// init: totals from percentiles
	percs := []int{50, 66, 75, 80, 90, 95, 98, 99, 100}
	for i := range st {
		tot := int64(0)
		if len(t.perc) == 9 {
			for j, p := range percs {
				idx := n * p / 100
				if p == 100 {
					idx = n - 1
				}
				if i <= idx {
					tot = t.perc[j] * 1000
					break
				}
			}
		} else if t.hasRows {
			tot = int64(t.rows[3][1]) * 1000
		}
		if i == n-1 && t.hasRows {
			tot = int64(t.rows[3][4]) * 1000
		}
		tot += int64(rng.Intn(600)) - 300
		if tot < 0 {
			tot = 0
		}
		con := int64(t.rows[0][1]) * 1000
		if con > tot {
			con = tot
		}
		st[i] = data{ctime: con, time: tot, wait: (tot - con) * 9 / 10}
	}
	cur := cost(eval(st), &t)
	temp := 2.0
	for it := 0; it < *iters && cur > 0; it++ {
		i := rng.Intn(n)
		old := st[i]
		x := &st[i]
		scale := []int64{50, 300, 1000, 5000}[rng.Intn(4)]
		d := int64(rng.NormFloat64() * float64(scale))
		switch rng.Intn(4) {
		case 0:
			x.ctime += d
		case 1:
			x.wait += d
		case 2:
			x.time += d
		case 3:
			j := rng.Intn(n)
			x.ctime, x.wait, x.time = st[j].ctime, st[j].wait, st[j].time
		}
		if x.ctime < 0 {
			x.ctime = 0
		}
		if x.time < x.ctime {
			x.time = x.ctime
		}
		if x.wait < 0 {
			x.wait = 0
		}
		if x.wait > x.time-x.ctime {
			x.wait = x.time - x.ctime
		}
		nc := cost(eval(st), &t)
		if nc <= cur || rng.Float64() < math.Exp((cur-nc)/temp) {
			cur = nc
		} else {
			st[i] = old
		}
		temp = math.Max(0.05, temp*0.99999)
		if it%100000 == 0 {
			fmt.Fprintf(os.Stderr, "it %d cost %.2f\n", it, cur)
		}
	}
	fmt.Fprintf(os.Stderr, "final cost %.2f\n", cur)
	// elapsed µs reproducing "Time taken" and the rps line
	elapsed := int64(-1)
	base := int64(math.Round(taken * 1e6))
	for e := base - 500; e <= base+500; e++ {
		T := float64(e) / 1e6
		if e <= 0 || fmt.Sprintf("%.3f", T) != fmt.Sprintf("%.3f", taken) {
			continue
		}
		if rps >= 0 && fmt.Sprintf("%.2f", float64(n)/T) != fmt.Sprintf("%.2f", rps) {
			continue
		}
		elapsed = e
		break
	}
	w, _ := os.Create(*out)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# fitted by hand-run search to reproduce %s\n", strings.TrimPrefix(*txt, "/work/shared/ab-golden/"))
	fmt.Fprintf(bw, "# elapsed_us %d\n# start connect wait total (µs), recording order\n", elapsed)
	var start int64
	perm := rng.Perm(n)
	for _, k := range perm {
		x := st[k]
		fmt.Fprintf(bw, "%d %d %d %d\n", start, x.ctime, x.wait, x.time)
		start += x.time / int64(max(conc, 1))
	}
	bw.Flush()
	w.Close()
	if cur > 0 {
		os.Exit(3)
	}
}
