// Package gnuplot writes ab's -g file: one tab-separated row per request,
// sorted by total time, for plotting with gnuplot.
package gnuplot

import (
	"bufio"
	"cmp"
	"io"
	"slices"
	"strconv"
	"time"

	"gab/client"
)

// Header is the file's first line.
const Header = "starttime\tseconds\tctime\tdtime\tttime\twait\n"

// ctimeLayout is C's ctime() with the day of the month zero-padded, as
// apr_ctime prints it ("Mon Nov 02 15:04:05 2026").
const ctimeLayout = "Mon Jan 02 15:04:05 2006"

// Write writes the -g file for the exactly stored samples of res (ref §13.2),
// with start times in loc. Rows are sorted by total time. ab's rows come from
// four chained glibc sorts (connect, processing, wait, total), which are
// stable merge sorts there, so ties on total keep the wait order, then
// processing, then connect, then recording order; Write orders ties the same
// way. The samples themselves are not reordered. With no samples it writes
// nothing (ab then creates no file).
func Write(w io.Writer, res *client.Result, loc *time.Location) error {
	if res.Samples == nil {
		return nil
	}
	samples := res.Samples.Exact()
	if len(samples) == 0 {
		return nil
	}
	// Offsets undo the 32-bit wrap of Sample.Start and need recording order.
	offsets := client.StartOffsets(samples)
	order := make([]int32, len(samples))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		x, y := samples[a], samples[b]
		if c := cmp.Compare(x.Total, y.Total); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Wait, y.Wait); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Processing(), y.Processing()); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Connect, y.Connect); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})

	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString(Header); err != nil {
		return err
	}
	base := res.Start.UnixMicro()
	line := make([]byte, 0, 96)
	for _, i := range order {
		smp := samples[i]
		startUs := base + int64(offsets[i])
		line = appendRow(line[:0], startUs, smp, loc)
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendRow formats one row: ctime-style start, start in whole epoch seconds,
// then connect, processing, total and wait rounded to ms as ab rounds.
func appendRow(b []byte, startUs int64, smp client.Sample, loc *time.Location) []byte {
	b = time.UnixMicro(startUs).In(loc).AppendFormat(b, ctimeLayout)
	b = append(b, '\t')
	b = strconv.AppendInt(b, startUs/1_000_000, 10) // apr_time_sec truncates
	for _, us := range [...]uint32{smp.Connect, smp.Processing(), smp.Total, smp.Wait} {
		b = append(b, '\t')
		b = strconv.AppendUint(b, (uint64(us)+500)/1000, 10)
	}
	return append(b, '\n')
}
