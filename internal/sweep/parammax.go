package sweep

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"gab/report"
)

// ParamRow is one point for ParamMaxima: its configuration (the target and,
// where the sweep varies them, its size and concurrency), its --param value
// and its requests per second (mean over the runs and the 95 % interval's
// half-width).
type ParamRow struct {
	Configuration, Value string
	MeanPerS, CI95PerS   float64
}

// ParamMax is one configuration's highest mean requests per second over
// --param's values, at which value, and the other values whose interval
// reaches the maximum's (the data cannot tell them from it).
type ParamMax struct {
	Configuration string
	MeanPerS      float64
	CI95PerS      float64
	At            string
	Within        []string
}

// ParamMaxima is the maximum of each configuration, in the order the
// configurations first appear in rows (a message-size study's table of
// the best setting per server).
func ParamMaxima(rows []ParamRow) []ParamMax {
	var out []ParamMax
	idx := map[string]int{}
	for _, r := range rows {
		i, ok := idx[r.Configuration]
		if !ok {
			i = len(out)
			idx[r.Configuration] = i
			out = append(out, ParamMax{Configuration: r.Configuration, MeanPerS: r.MeanPerS, CI95PerS: r.CI95PerS, At: r.Value})
			continue
		}
		if r.MeanPerS > out[i].MeanPerS {
			out[i].MeanPerS, out[i].CI95PerS, out[i].At = r.MeanPerS, r.CI95PerS, r.Value
		}
	}
	for _, r := range rows {
		m := &out[idx[r.Configuration]]
		if r.Value != m.At && r.MeanPerS+r.CI95PerS >= m.MeanPerS-m.CI95PerS {
			m.Within = append(m.Within, r.Value)
		}
	}
	return out
}

// configurationName names a point's configuration for ParamMaxima: its
// label, and its size and concurrency where the sweep varies them.
// writeParamMaxima writes each configuration's maximum over --param's
// values (nothing unless the sweep has several).
func writeParamMaxima(w io.Writer, s *Settings, points []*PointResult) error {
	if s.Param == nil || len(s.Param.Values) < 2 {
		return nil
	}
	var rows []ParamRow
	for _, p := range points {
		if len(p.Runs) == 0 {
			continue
		}
		rows = append(rows, ParamRow{Configuration: report.SweepConfigurationName(p.Label, sizeText(p.Size), p.Concurrency, len(s.Sizes) > 1, len(s.Concurrency) > 1),
			Value: p.ParamValue, MeanPerS: p.RPS.Mean, CI95PerS: p.RPS.CI95})
	}
	fmt.Fprintf(w, "\nMaximum req/s per configuration over %s (mean over the runs; within: the values whose 95 %% interval reaches the maximum's):\n", s.Param.Name)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "configuration\tmax req/s\t±95%%\tat %s\twithin\t\n", s.Param.Name)
	for _, m := range ParamMaxima(rows) {
		within := strings.Join(m.Within, ",")
		if within == "" {
			within = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", m.Configuration, RPSCell(m.MeanPerS, true), RPSCell(m.CI95PerS, true), m.At, within)
	}
	return tw.Flush()
}
