package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"text/tabwriter"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/client"
)

// Results per target (--urls, --targets): the document's "targets" array,
// one entry per distinct method and URL (at most client.MaxTargetRows, then
// one "other" entry), each with its counts, its total time's figures and
// the exact sums and histogram they come from, so that gab merge combines
// shards' entries exactly. ab's report stays the whole run's.

// targetSection is one entry of "targets".
type targetSection struct {
	Method string `json:"method,omitempty"`
	URL    string `json:"url,omitempty"`
	// Other is the entry of every target past the first 1000 distinct ones.
	Other       bool     `json:"other,omitempty"`
	Complete    int64    `json:"complete"`
	Failed      failures `json:"failed"`
	Non2xx      int64    `json:"non_2xx"`
	WriteErrors int64    `json:"write_errors"`
	BodyBytes   int64    `json:"body_bytes"`
	// Total is the total time's figures in ms: mean, p50, p90, p99 and max
	// (percentiles from the histogram, within its bounds).
	Total targetTimes `json:"total_ms"`
	// Sums are the total time's exact sums and its histogram (2 significant
	// digits), for merging.
	Sums exactSums `json:"sums"`

	// hist is the histogram of a run's own entry, encoded into
	// Sums.Histogram only when the document is written (MarshalJSON): a
	// thousand encodings are a thousand zlib writers' garbage that a run
	// without a document need not make. Nil in a document read back.
	hist *hdrhistogram.Histogram
}

// MarshalJSON writes the entry with its histogram encoded.
func (t targetSection) MarshalJSON() ([]byte, error) {
	type plain targetSection
	if t.hist != nil {
		t.Sums.Histogram = histogramOf(t.hist)
	}
	return json.Marshal(plain(t))
}

// histogram is the entry's histogram: its own, or decoded from the document.
func (t *targetSection) histogram() (*hdrhistogram.Histogram, error) {
	if t.hist != nil {
		return t.hist, nil
	}
	return t.Sums.Histogram.decode()
}

// targetTimes are a target's total-time figures in ms.
type targetTimes struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// targetsOf is the "targets" array of a run's results per target.
func targetsOf(rows []client.TargetResult) []targetSection {
	var out []targetSection
	for _, t := range rows {
		h := t.Hist
		if h == nil {
			h = client.NewTargetHist()
		}
		sq := uint128(t.SumSquaresHi, t.SumSquaresLo)
		s := targetSection{Method: t.Method, URL: t.URL, Other: t.Other, Complete: t.Complete,
			Failed: failures{Connect: int(t.Connect), Receive: int(t.Receive), Length: int(t.Length), Exceptions: int(t.Exceptions)},
			Non2xx: t.Non2xx, WriteErrors: t.WriteErrors, BodyBytes: t.BodyBytes,
			Sums: exactSums{Count: t.Count, MinUs: t.MinUs, MaxUs: t.MaxUs, SumUs: uint64(t.SumUs), SumSquaresUs2: sq.String()},
			hist: h,
		}
		s.Total = targetTimesOf(uint64(t.Count), uint64(t.SumUs), t.MinUs, t.MaxUs, h)
		out = append(out, s)
	}
	return out
}

// targetTimesOf computes a target's figures from its sums and histogram.
func targetTimesOf(count, sum uint64, minUs, maxUs int64, h *hdrhistogram.Histogram) targetTimes {
	if count == 0 {
		return targetTimes{}
	}
	at := func(q float64) float64 {
		v := min(max(h.ValueAtQuantile(q), minUs), maxUs)
		return float64(v) / 1000
	}
	return targetTimes{Mean: float64(sum) / float64(count) / 1000, P50: at(50), P90: at(90), P99: at(99), Max: float64(maxUs) / 1000}
}

// key is what makes two documents' entries the same target.
func (t *targetSection) key() string {
	if t.Other {
		return "\x00other"
	}
	return t.Method + " " + t.URL
}

// mergeTargets combines the runs' entries by target: counts added, the
// total time's sums and histograms merged exactly, figures recomputed. Nil
// when no run has entries.
func mergeTargets(runs []*Run) ([]targetSection, error) {
	type acc struct {
		s   targetSection
		col mergedColumn
	}
	var order []*acc
	byKey := map[string]*acc{}
	for _, r := range runs {
		for i := range r.Targets {
			t := &r.Targets[i]
			a := byKey[t.key()]
			if a == nil {
				if len(byKey) >= client.MaxTargetRows+1 {
					return nil, fmt.Errorf("more than %d targets", client.MaxTargetRows+1)
				}
				a = &acc{s: targetSection{Method: t.Method, URL: t.URL, Other: t.Other}, col: mergedColumn{sq: new(big.Int), hist: client.NewTargetHist()}}
				byKey[t.key()] = a
				order = append(order, a)
			}
			s := &a.s
			s.Complete += t.Complete
			s.Failed.add(&t.Failed)
			s.Non2xx += t.Non2xx
			s.WriteErrors += t.WriteErrors
			s.BodyBytes += t.BodyBytes
			if err := a.col.addTarget(t); err != nil {
				return nil, fmt.Errorf("target %s: %v", t.key(), err)
			}
		}
	}
	var out []targetSection
	for _, a := range order {
		c := &a.col
		a.s.Sums = exactSums{Count: int64(c.count), MinUs: c.min, MaxUs: c.max, SumUs: c.sum, SumSquaresUs2: c.sq.String()}
		a.s.hist = c.hist
		a.s.Total = targetTimesOf(c.count, c.sum, c.min, c.max, c.hist)
		out = append(out, a.s)
	}
	return out, nil
}

// addTarget adds a target entry's sums and histogram (its own, or decoded).
func (c *mergedColumn) addTarget(t *targetSection) error { return c.addWith(&t.Sums, t.histogram) }

// writeTargets prints the results per target (--extended, gab merge).
func writeTargets(w io.Writer, r *Run) error {
	if len(r.Targets) == 0 {
		return nil
	}
	if _, err := io.WriteString(w, "\nPer target (times in ms):\n"); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "complete\tconnect\treceive\tlength\texceptions\tnon-2xx\tbytes\tmean\tp50\tp90\tp99\tmax\t  target\n")
	for _, t := range r.Targets {
		name := "other"
		if !t.Other {
			name = terminalSafe(t.Method + " " + t.URL)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t  %s\n", t.Complete,
			t.Failed.Connect, t.Failed.Receive, t.Failed.Length, t.Failed.Exceptions, t.Non2xx, t.BodyBytes,
			t.Total.Mean, t.Total.P50, t.Total.P90, t.Total.P99, t.Total.Max, name)
	}
	return tw.Flush()
}

// targetRows is the HTML report's table of the results per target (the
// template escapes every cell).
func targetRows(d *Run) [][]string {
	if len(d.Targets) == 0 {
		return nil
	}
	rows := [][]string{{"target", "complete", "connect", "receive", "length", "exceptions", "non-2xx", "body bytes", "mean", "p50", "p90", "p99", "max"}}
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, t := range d.Targets {
		name := "other"
		if !t.Other {
			name = t.Method + " " + t.URL
		}
		rows = append(rows, []string{name, n(t.Complete), strconv.Itoa(t.Failed.Connect), strconv.Itoa(t.Failed.Receive),
			strconv.Itoa(t.Failed.Length), strconv.Itoa(t.Failed.Exceptions), n(t.Non2xx), n(t.BodyBytes),
			ms(t.Total.Mean), ms(t.Total.P50), ms(t.Total.P90), ms(t.Total.P99), ms(t.Total.Max)})
	}
	return rows
}

// TargetComparison is one target in gab compare: its complete requests,
// failures (ab's Failed requests and Non-2xx), mean and p99 total time (ms)
// on each side.
type TargetComparison struct {
	Target    string  `json:"target"` // method and URL, or "other"
	AComplete int64   `json:"a_complete"`
	BComplete int64   `json:"b_complete"`
	AFailed   int64   `json:"a_failed"`
	BFailed   int64   `json:"b_failed"`
	AMeanMs   float64 `json:"a_mean_ms"`
	BMeanMs   float64 `json:"b_mean_ms"`
	AP99Ms    float64 `json:"a_p99_ms"`
	BP99Ms    float64 `json:"b_p99_ms"`
}

// compareTargets compares the targets both sides have, in A's order (each
// side's runs merged, as gab merge merges them); nil when a side has none.
func compareTargets(a, b []*Run) []TargetComparison {
	ta, errA := mergeTargets(a)
	tb, errB := mergeTargets(b)
	if errA != nil || errB != nil || len(ta) == 0 || len(tb) == 0 {
		return nil
	}
	byKey := map[string]*targetSection{}
	for i := range tb {
		byKey[tb[i].key()] = &tb[i]
	}
	failed := func(t *targetSection) int64 {
		return int64(t.Failed.Connect+t.Failed.Receive+t.Failed.Length+t.Failed.Exceptions) + t.Non2xx
	}
	var out []TargetComparison
	for i := range ta {
		x := &ta[i]
		y := byKey[x.key()]
		if y == nil {
			continue
		}
		name := "other"
		if !x.Other {
			name = x.Method + " " + x.URL
		}
		out = append(out, TargetComparison{Target: name, AComplete: x.Complete, BComplete: y.Complete,
			AFailed: failed(x), BFailed: failed(y), AMeanMs: x.Total.Mean, BMeanMs: y.Total.Mean, AP99Ms: x.Total.P99, BP99Ms: y.Total.P99})
	}
	return out
}

// writeTargetComparison prints gab compare's table per target.
func writeTargetComparison(b *strings.Builder, ts []TargetComparison) {
	if len(ts) == 0 {
		return
	}
	change := func(a, b float64) string {
		if a == 0 {
			return "–"
		}
		return fmt.Sprintf("%+.1f %%", (b-a)/a*100)
	}
	b.WriteString("\nPer target (total time, ms; p99 within 1 %):\n")
	fmt.Fprintf(b, "%10s %10s %9s %10s %10s %9s %8s %8s  %s\n", "A mean", "B mean", "change", "A p99", "B p99", "change", "A fail", "B fail", "target")
	for _, t := range ts {
		fmt.Fprintf(b, "%10.3f %10.3f %9s %10.3f %10.3f %9s %8d %8d  %s\n", t.AMeanMs, t.BMeanMs, change(t.AMeanMs, t.BMeanMs),
			t.AP99Ms, t.BP99Ms, change(t.AP99Ms, t.BP99Ms), t.AFailed, t.BFailed, terminalSafe(t.Target))
	}
}

// terminalSafe is s with every byte outside printable ASCII escaped (\xNN).
func terminalSafe(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			q := strconv.QuoteToASCII(s)
			return q[1 : len(q)-1]
		}
	}
	return s
}
