package report

import (
	"io"
	"slices"

	"gab/client"
)

// CGIStats are the rows of the "CGI times (ms)" table that gab prints after
// ab's report in CGI mode (--cgi), computed with ab's arithmetic.
type CGIStats struct {
	Count                                    int
	Spawn, FirstByte, Output, Reap, ChildCPU ColumnStats
}

// SummarizeCGI computes the CGI table from the per-request phases; nil when
// there are none.
func SummarizeCGI(t *client.CGITimes) *CGIStats {
	if t == nil || len(t.Spawn) == 0 {
		return nil
	}
	return &CGIStats{
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
func phaseStats(values []uint32) ColumnStats {
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

// WriteCGI prints the "CGI times (ms)" table in the layout of ab's
// "Connection Times (ms)" table. It prints nothing outside CGI mode.
func WriteCGI(w io.Writer, sum *Summary) error {
	s := sum.CGI
	if s == nil {
		return nil
	}
	e := newErrWriter(w)
	e.printf("\nCGI times (ms)\n")
	e.printf("              min  mean[+/-sd] median   max\n")
	for _, r := range []struct {
		label string
		c     *ColumnStats
	}{
		{"Spawn:      ", &s.Spawn},
		{"First byte: ", &s.FirstByte},
		{"Output:     ", &s.Output},
		{"Reap:       ", &s.Reap},
		{"Child CPU:  ", &s.ChildCPU},
	} {
		e.printf("%s%5d %4d %5.1f %6d %7d\n", r.label, r.c.Min, r.c.Mean, r.c.SD, r.c.Median, r.c.Max)
	}
	return e.flush()
}

// JSONCGI is the CGI table (--cgi): each phase in ab's layout, ms as printed
// and µs intermediates (confidence is always "reliable": no verdict is made).
type JSONCGI struct {
	Count     int        `json:"count"`
	Spawn     JSONColumn `json:"spawn"`
	FirstByte JSONColumn `json:"first_byte"`
	Output    JSONColumn `json:"output"`
	Reap      JSONColumn `json:"reap"`
	ChildCPU  JSONColumn `json:"child_cpu"`
}

func jsonCGI(s *CGIStats) *JSONCGI {
	if s == nil {
		return nil
	}
	return &JSONCGI{Count: s.Count, Spawn: jsonColumn(&s.Spawn), FirstByte: jsonColumn(&s.FirstByte),
		Output: jsonColumn(&s.Output), Reap: jsonColumn(&s.Reap), ChildCPU: jsonColumn(&s.ChildCPU)}
}
