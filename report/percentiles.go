package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gab/client"
	"gab/internal/samples"
)

// ParsePercentiles reads --percentiles' list, e.g. "50,90,99,99.9,99.99%":
// comma-separated numbers from 0 (the minimum) to 100 (the maximum), each
// optionally followed by a '%' sign, spaces around entries ignored; order and
// duplicates are kept as given. It is the one rule for a percentile list.
func ParsePercentiles(list string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		p, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(f, "%")), 64)
		if err != nil || math.IsNaN(p) || p < 0 || p > 100 {
			return nil, fmt.Errorf("percentile %q is not a number from 0 to 100", f)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, errors.New("empty percentile list")
	}
	return out, nil
}

// percentLabel prints p as typed, shortest form: 50, 99.9, 99.99.
func percentLabel(p float64) string { return decimal(p) + "%" }

// percentileColumns are the --percentiles table's columns, in this order.
var percentileColumns = [...]struct {
	title string
	col   column
}{
	{"Connect", connectColumn},
	{"Waiting (TTFB)", waitingColumn},
	{"Total", totalColumn},
}

// percentileRows computes the --percentiles values: for each p the value of
// the nearest rank (samples.NearestRank, HdrHistogram's rule) in each column
// sorted on its own (exact µs; past the exact store from the HDR histograms,
// 3 significant digits, or 1 ms buckets when the client kept none).
func (t *tables) percentileRows(ps []float64) []percentileRow {
	rows := make([]percentileRow, len(ps))
	for i, p := range ps {
		rows[i] = percentileRow{
			Percent:   p,
			ConnectUs: t.finePercentile(connectColumn, p),
			WaitingUs: t.finePercentile(waitingColumn, p),
			TotalUs:   t.finePercentile(totalColumn, p),
		}
	}
	return rows
}

// hdrColumns are the HDR histograms (3 significant digits) of ab's Connect,
// Waiting and Total columns over every recorded request.
type hdrColumns struct{ connect, waiting, total *samples.Dist }

// useHDRPast makes the finer percentiles come from the client's HDR
// histograms once the exact store overflowed, if the client kept them for
// exactly the requests the tables count.
func (t *tables) useHDRPast(r *Run, res *client.Result) {
	x := res.Extra
	if !r.Report.StatisticsFromHistogram || x == nil {
		return
	}
	h := &hdrColumns{connect: &x.Connect, waiting: &x.Phases[client.PhaseWait], total: &x.Phases[client.PhaseTotal]}
	n := int64(t.n)
	if h.connect.Count != n || h.waiting.Count != n || h.total.Count != n {
		return
	}
	t.hdr, r.local.hdrPercentiles = h, true
}

// finePercentile is the column's value in µs at percent p for the tables
// beyond ab's (--percentiles, the run's percentile curve): the nearest
// rank's value
// (samples.NearestRank) among the exact samples, or past the exact store the
// highest value of the HDR bucket (3 significant digits) holding that rank,
// within the exact min and max, as HdrHistogram's ValueAtQuantile reads it.
func (t *tables) finePercentile(c column, p float64) int64 {
	if t.hdr == nil || t.n == 0 {
		return t.percentile(c, p)
	}
	d := t.hdr.total
	switch c {
	case connectColumn:
		d = t.hdr.connect
	case waitingColumn:
		d = t.hdr.waiting
	}
	return d.Percentile(p)
}

// percentileTitle says the unit, the rank rule and where the values come
// from.
func percentileTitle(r *Run) string {
	rp := r.Report
	if r.local.precision != "" {
		return "Percentage of the requests served within a certain time (µs, nearest rank; from merged histograms)"
	}
	if r.local.hdrPercentiles {
		return fmt.Sprintf("Percentage of the requests served within a certain time (µs, nearest rank; past the first %d requests, from HDR histograms of all %d: 3 significant digits, bucket tops)", rp.ExactSamples, r.local.count)
	}
	if rp.StatisticsFromHistogram {
		return fmt.Sprintf("Percentage of the requests served within a certain time (µs, nearest rank; exact for the first %d requests, then 1 ms buckets)", rp.ExactSamples)
	}
	return "Percentage of the requests served within a certain time (µs, nearest rank, exact)"
}

// writePercentiles writes the --percentiles table after ab's report, in ab's
// layout: a blank line, the title, then one row per percentile with the
// Connect, Waiting (TTFB) and Total values in whole µs. Nothing is written
// without the option or when fewer than two requests were recorded (as ab's
// own table).
func writePercentiles(w io.Writer, r *Run) error {
	rows := r.Percentiles
	if r.local.count < 2 || len(rows) == 0 {
		return nil
	}
	labelWidth := 5 // ab's "  50%" and " 100%"
	for _, r := range rows {
		if l := len(percentLabel(r.Percent)) + 1; l > labelWidth {
			labelWidth = l
		}
	}
	e := newErrWriter(w)
	e.printf("\n%s\n", percentileTitle(r))
	e.printf("%*s", labelWidth, "")
	widths := make([]int, len(percentileColumns))
	for i, c := range percentileColumns {
		widths[i] = max(len(c.title), 8)
		e.printf("  %*s", widths[i], c.title)
	}
	e.printf("\n")
	for _, r := range rows {
		e.printf("%*s", labelWidth, percentLabel(r.Percent))
		for i, v := range [...]int64{r.ConnectUs, r.WaitingUs, r.TotalUs} {
			e.printf("  %*d", widths[i], v)
		}
		e.printf("\n")
	}
	return e.flush()
}
