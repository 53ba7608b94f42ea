package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// histogramBucket is one row of the terminal latency histogram: the requests
// whose total time is in [LowUs, HighUs) (the last bucket includes HighUs).
type histogramBucket struct {
	LowUs, HighUs int64
	Count         int
}

// histogramRows is the number of buckets --histogram prints.
const histogramRows = 10

// latencyHistogram splits [min, max] of the total times into n equal buckets
// (fewer when the range has fewer µs than n) and counts the requests in each.
// In histogram mode the counts come from the 1 ms buckets past the exact
// store, so a request is counted in the bucket of its millisecond's highest
// value.
func (t *tables) latencyHistogram(total *columnStats, n int) []histogramBucket {
	if t.n == 0 || n <= 0 {
		return nil
	}
	lo, hi := total.MinUs, total.MaxUs
	span := hi - lo + 1
	if int64(n) > span {
		n = int(span)
	}
	width := (span + int64(n) - 1) / int64(n)
	// below(v) is the number of requests faster than v µs: the first rank
	// whose value reaches v (ranks are in ascending order).
	below := func(v int64) int {
		return sort.Search(t.n, func(i int) bool { return t.valueAt(totalColumn, i) >= v })
	}
	out := make([]histogramBucket, 0, n)
	prev := 0
	for i := 0; i < n; i++ {
		b := histogramBucket{LowUs: lo + int64(i)*width, HighUs: lo + int64(i+1)*width}
		upto := t.n
		if i < n-1 {
			upto = below(b.HighUs)
		} else {
			b.HighUs = hi
		}
		b.Count = upto - prev
		prev = upto
		out = append(out, b)
		if b.HighUs >= hi {
			break
		}
	}
	return out
}

// WriteHistogram prints --histogram's latency histogram (computed when
// Options.Histogram asks for it): about ten rows of bars, each with its
// bucket's bounds in ms and its count, as hey prints.
func WriteHistogram(w io.Writer, r *Run) error {
	rows := r.local.histogram
	if len(rows) == 0 {
		_, err := io.WriteString(w, "\nLatency histogram: no request was recorded.\n")
		return err
	}
	var b strings.Builder
	b.WriteString("\nLatency histogram (total time in ms, bucket [from, to); bar and count of requests):\n")
	if r.Report.StatisticsFromHistogram {
		b.WriteString("  (past the exact store, requests are counted by their 1 ms bucket)\n")
	}
	most := 0
	for _, r := range rows {
		most = max(most, r.Count)
	}
	const barWidth = 40
	for i, r := range rows {
		closing := ")"
		if i == len(rows)-1 {
			closing = "]"
		}
		bar := 0
		if most > 0 {
			bar = (r.Count*barWidth + most - 1) / most
		}
		fmt.Fprintf(&b, "  [%9.3f, %9.3f%s %-*s %d\n", float64(r.LowUs)/1000, float64(r.HighUs)/1000, closing,
			barWidth, strings.Repeat("#", bar), r.Count)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
