package report

import (
	"io"
	"slices"

	"gab/client"
)

// cgiTable is the "CGI times (ms)" table that gab prints after ab's report in CGI
// mode (--cgi), computed with ab's arithmetic: each phase in ab's layout, ms
// as printed and µs intermediates.
type cgiTable struct {
	Count     int         `json:"count"`
	Spawn     columnStats `json:"spawn"`
	FirstByte columnStats `json:"first_byte"`
	Output    columnStats `json:"output"`
	Reap      columnStats `json:"reap"`
	ChildCPU  columnStats `json:"child_cpu"`
}

// summarizeCGI computes the CGI table from the per-request phases; nil when
// there are none.
func summarizeCGI(t *client.CGITimes) *cgiTable {
	if t == nil || len(t.Spawn) == 0 {
		return nil
	}
	return &cgiTable{
		Count:     len(t.Spawn),
		Spawn:     phaseStats(t.Spawn),
		FirstByte: phaseStats(t.FirstByte),
		Output:    phaseStats(t.Output),
		Reap:      phaseStats(t.Reap),
		ChildCPU:  phaseStats(t.ChildCPU),
	}
}

// phaseStats is one row in ab's way: truncated integer mean, n−1 sd around
// it summed in recording order, ab's median rule on a sorted copy.
func phaseStats(values []uint32) columnStats {
	n := len(values)
	var sum uint64
	for _, v := range values {
		sum += uint64(v)
	}
	mean := truncatedMean(sum, n)
	var devSq float64
	for _, v := range values {
		d := float64(v) - float64(mean)
		devSq += d * d
	}
	sorted := slices.Clone(values) // the Result's slices stay in recording order
	slices.Sort(sorted)
	return newColumnStats(int64(sorted[0]), int64(sorted[n-1]), mean, abMedian(sorted), sampleSD(devSq, n))
}

// writeCGI prints the "CGI times (ms)" table in the layout of ab's
// "Connection Times (ms)" table. It prints nothing outside CGI mode.
func writeCGI(w io.Writer, r *Run) error {
	s := r.CGI
	if s == nil {
		return nil
	}
	e := newErrWriter(w)
	e.printf("\nCGI times (ms)\n")
	e.printf("              min  mean[+/-sd] median   max\n")
	for _, r := range []struct {
		label string
		c     *columnStats
	}{
		{"Spawn:      ", &s.Spawn},
		{"First byte: ", &s.FirstByte},
		{"Output:     ", &s.Output},
		{"Reap:       ", &s.Reap},
		{"Child CPU:  ", &s.ChildCPU},
	} {
		e.printf("%s%5d %4d %5.1f %6d %7d\n", r.label, r.c.MinMs, r.c.MeanMs, r.c.SDMs, r.c.MedianMs, r.c.MaxMs)
	}
	return e.flush()
}
