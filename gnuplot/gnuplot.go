// Package gnuplot writes ab's -g file: one tab-separated row per request,
// sorted by total time, for plotting with gnuplot.
package gnuplot

import (
	"gab/internal/samples"

	"bufio"
	"io"
	"strconv"
	"time"

	"gab/client"
)

// Header is the file's first line.
const Header = "starttime\tseconds\tctime\tdtime\tttime\twait\n"

// ctimeLayout is C's ctime() with the day of the month zero-padded, as
// apr_ctime prints it ("Mon Nov 02 15:04:05 2026").
const ctimeLayout = "Mon Jan 02 15:04:05 2006"

// Write writes ab's -g file for res, with start times in loc: a
// row for every exactly stored sample and, when the run kept them
// (client.Config.KeepAllRows), for every sample past the exact limit, merged
// from the temporary file. Rows are in ab's order, samples.CompareByTotal: by
// total time, ties as ab's chained stable sorts leave them. Write sorts
// res.Samples.Exact() in place (report.Summarize leaves it in that order
// already) and allocates nothing per sample. With no samples it writes
// nothing (ab then creates no file). A failure of the temporary file is
// returned before anything is written.
func Write(w io.Writer, res *client.Result, loc *time.Location) error {
	if res.Samples == nil || res.Samples.Rows() == 0 {
		return nil
	}
	bw := bufio.NewWriter(w)
	headerDone := false
	baseMs := res.Start.UnixMilli()
	var line [96]byte
	err := res.Samples.EachByTotal(func(smp samples.Sample) error {
		if !headerDone {
			// Written with the first row, so that a failed temporary file
			// leaves the output empty.
			headerDone = true
			if _, err := bw.WriteString(Header); err != nil {
				return err
			}
		}
		_, err := bw.Write(appendRow(line[:0], baseMs+int64(smp.Start), smp, loc))
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// appendRow formats one row: ctime-style start, start in whole epoch seconds,
// then connect, processing, total and wait rounded to ms as ab rounds.
func appendRow(b []byte, startMs int64, smp samples.Sample, loc *time.Location) []byte {
	b = time.UnixMilli(startMs).In(loc).AppendFormat(b, ctimeLayout)
	b = append(b, '\t')
	b = strconv.AppendInt(b, startMs/1000, 10) // apr_time_sec truncates
	for _, us := range [...]uint32{smp.Connect, smp.Processing(), smp.Total, smp.Wait} {
		b = append(b, '\t')
		b = strconv.AppendUint(b, (uint64(us)+500)/1000, 10)
	}
	return append(b, '\n')
}
