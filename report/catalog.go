package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"

	"gab/internal/samples"
)

// This file is the catalog: the list of a run's headline figures, each with
// its key, title, unit, CSV name, better direction, precision and how to read
// it from a run. Every output that lists figures reads it: --extended's
// figure block, the JSON document's "figures", the HTML report's figures and
// comparison, gab merge's report, gab compare, gab sweep's CSV columns and
// points' "figures", and --fail-if's metric names; gab sweep's table columns
// and chart panels are the entries whose Sweep says so. A figure derived
// from what a run already records is one entry here.

// Better says which direction of a figure is the better one.
type Better int

const (
	neither Better = iota // neither: more is not better or worse in itself
	higher
	lower
)

// String is "higher", "lower" or "".
func (b Better) String() string {
	switch b {
	case higher:
		return "higher"
	case lower:
		return "lower"
	}
	return ""
}

// MarshalText is String (gab compare's JSON rows).
func (b Better) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText reads String's names back.
func (b *Better) UnmarshalText(text []byte) error {
	for _, v := range []Better{neither, higher, lower} {
		if v.String() == string(text) {
			*b = v
			return nil
		}
	}
	return fmt.Errorf("better: %q is not higher, lower or empty", text)
}

// Figure is one entry of the catalog.
type Figure struct {
	// Key names the figure in --fail-if, the JSON documents' "figures" and
	// the --extended block: "rps", "p99", "server_cpu_us_per_request".
	Key string
	// Title and Unit are as gab compare and the HTML report print them
	// ("Received", "Mbit/s"); Unit is "" for a count of requests.
	Title, Unit string
	// CSV is gab sweep's --csv column.
	CSV    string
	Better Better
	// Decimals are the digits printed after the point (text and CSV).
	Decimals int
	// Pool is how the figure of several runs follows from theirs.
	Pool Pool
	// Needs is what the run must measure beyond ab's counts and timing
	// tables for the figure to exist: --fail-if on the figure turns it on
	// where one option can (NeedsExtended), and is a usage error without
	// the option that gives it a setting (--apdex T, --server-pid).
	Needs Needs
	// Of reads the figure from a run's document; ok is false where the run
	// does not have it (not measured, or nothing recorded).
	Of func(d *Run) (v float64, ok bool)
	// Sweep is where gab sweep's table and charts show the figure (its CSV
	// and points' JSON show every figure).
	Sweep SweepUse
}

// SweepUse is how gab sweep's readable table and charts show a figure.
type SweepUse struct {
	// Head is the table's column head ("p99 ms"); "" for no column. A
	// figure in ms is a latency: "-" at a point that recorded no request.
	Head string
	// Decimals are the column's digits after the point.
	Decimals int
	// Place orders the table's columns (the point's own among them).
	Place int
	// Shown says when the column is in the table.
	Shown Shown
	// Panel: the charts draw the figure in a panel of its own against
	// what the sweep varied (concurrency, size, --param's values), a line
	// per series, where some point has it.
	Panel bool
}

// Shown says when a figure's column is in gab sweep's table.
type Shown int

const (
	ShownAlways      Shown = iota
	ShownIfMeasured        // when some point has the figure
	ShownIfPostSizes       // in a sweep of request body sizes (--post-sizes)
)

// Pool is how a figure of a group of runs (a sweep's point, a side of gab
// compare) follows from the runs'.
type Pool int

const (
	// Pooled: the figure of the runs' requests together, read from their
	// records merged (a latency percentile, the mean, the CPU per request).
	Pooled     Pool = iota
	MeanOfRuns      // the mean of the runs' own (a rate, a share of a core)
	SumOfRuns       // the sum of the runs' own (a count of requests)
	MinOfRuns       // the least of the runs' own
	MaxOfRuns       // the greatest of the runs' own
)

// Needs is what a figure needs measured beyond ab's counts and timing
// tables.
type Needs int

const (
	NeedsNothing Needs = iota
	// NeedsExtended: the engine's extended measurements (the phases'
	// histograms, the client's CPU time), as --extended gathers them.
	NeedsExtended
	NeedsApdex     // --apdex T: the APDEX target time
	NeedsServerCPU // --server-pid: the server's processes
)

// Catalog is the list of figures, in the order the outputs show them. Tests
// may replace it with a longer copy.
var Catalog = []Figure{
	{"rps", "Requests per second", "#/s", "rps_mean", higher, 2, MeanOfRuns, NeedsNothing, func(d *Run) (float64, bool) {
		return d.Report.RequestsPerSecond, true
	}, SweepUse{}},
	{"mean", "Mean", "ms", "latency_mean_ms", lower, 3, Pooled, NeedsExtended, meanMs, SweepUse{Head: "lat ms", Decimals: 3, Place: 10}},
	{"sd", "sd", "ms", "latency_sd_ms", lower, 3, Pooled, NeedsExtended, sdMs, SweepUse{}},
	{"min", "min", "ms", "latency_min_ms", lower, 3, MinOfRuns, NeedsNothing, func(d *Run) (float64, bool) { return extremeMs(d, false) }, SweepUse{Head: "min ms", Decimals: 3, Place: 30}},
	{"p50", "p50", "ms", "p50_ms", lower, 3, Pooled, NeedsExtended, percentileMs(50), SweepUse{Head: "p50 ms", Decimals: 3, Place: 40}},
	{"p90", "p90", "ms", "p90_ms", lower, 3, Pooled, NeedsExtended, percentileMs(90), SweepUse{}},
	{"p99", "p99", "ms", "p99_ms", lower, 3, Pooled, NeedsExtended, percentileMs(99), SweepUse{Head: "p99 ms", Decimals: 3, Place: 50}},
	{"p99.9", "p99.9", "ms", "p99_9_ms", lower, 3, Pooled, NeedsExtended, percentileMs(99.9), SweepUse{}},
	{"max", "max", "ms", "latency_max_ms", lower, 3, MaxOfRuns, NeedsNothing, func(d *Run) (float64, bool) { return extremeMs(d, true) }, SweepUse{}},
	{"complete", "Complete requests", "", "complete", neither, 0, SumOfRuns, NeedsNothing, func(d *Run) (float64, bool) {
		return float64(d.Report.CompleteRequests), true
	}, SweepUse{}},
	{"failed", "Failed requests", "", "failed", lower, 0, SumOfRuns, NeedsNothing, func(d *Run) (float64, bool) {
		return float64(int64(d.Report.FailedRequests) + d.outstandingFailed()), true
	}, SweepUse{Head: "failed", Place: 60}},
	{"non2xx", "Non-2xx responses", "", "non2xx", lower, 0, SumOfRuns, NeedsNothing, func(d *Run) (float64, bool) {
		return float64(d.Report.Non2xxResponses), d.local.unmeasured&unmeasuredStatus == 0
	}, SweepUse{}},
	{"received_mbit_per_s", "Received", "Mbit/s", "mbit_s", neither, 3, MeanOfRuns, NeedsNothing, func(d *Run) (float64, bool) {
		return mbitOf(d, d.Report.TotalTransferredBytes)
	}, SweepUse{Head: "rx Mbit/s", Decimals: 2, Place: 80}},
	{"sent_mbit_per_s", "Sent", "Mbit/s", "sent_mbit_s", neither, 3, MeanOfRuns, NeedsNothing, func(d *Run) (float64, bool) {
		if d.local.unmeasured&unmeasuredSent != 0 {
			return 0, false
		}
		return mbitOf(d, d.Report.TotalBodySentBytes)
	}, SweepUse{Head: "tx Mbit/s", Decimals: 2, Place: 90, Shown: ShownIfPostSizes}},
	{"client_cpu_percent", "Client CPU", "% of a core", "client_cpu_pct", neither, 1, MeanOfRuns, NeedsExtended, func(d *Run) (float64, bool) {
		if d.Extended == nil || d.Extended.ClientCPU == nil || d.Extended.ClientCPU.PercentOfOneCore == nil {
			return 0, false // not measured, or a run too short for a share of a core
		}
		return *d.Extended.ClientCPU.PercentOfOneCore, true
	}, SweepUse{Head: "cli cpu%", Decimals: 1, Place: 110}},
	{"client_cpu_us_per_request", "Client CPU per request", "µs", "client_cpu_us_per_req", lower, 1, Pooled, NeedsExtended, func(d *Run) (float64, bool) {
		if d.Extended == nil || d.Extended.ClientCPU == nil || d.Report.CompleteRequests == 0 {
			return 0, false
		}
		c := d.Extended.ClientCPU
		return (c.UserMs + c.SysMs) * 1000 / float64(d.Report.CompleteRequests), true
	}, SweepUse{Head: "cli us/req", Decimals: 1, Place: 100}},
	{"apdex", "APDEX", "", "apdex", higher, 3, Pooled, NeedsApdex, func(d *Run) (float64, bool) {
		if d.Apdex == nil || d.Apdex.Requests == 0 {
			return 0, false
		}
		return d.Apdex.Score, true
	}, SweepUse{}},
	{"server_cpu_percent", "Server CPU", "% of a core", "server_cpu_pct", neither, 1, MeanOfRuns, NeedsServerCPU, func(d *Run) (float64, bool) {
		if d.ServerCPU == nil {
			return 0, false
		}
		return d.ServerCPU.PercentOfOneCore, true
	}, SweepUse{Head: "srv cpu%", Decimals: 1, Place: 130, Shown: ShownIfMeasured}},
	{"server_cpu_us_per_request", "Server CPU per request", "µs", "server_cpu_us_per_req", lower, 1, Pooled, NeedsServerCPU, func(d *Run) (float64, bool) {
		if d.ServerCPU == nil {
			return 0, false
		}
		return d.ServerCPU.UsPerRequest, true
	}, SweepUse{Head: "srv us/req", Decimals: 1, Place: 120, Shown: ShownIfMeasured}},
}

// FigureByKey finds the catalog's figure of that key.
func FigureByKey(key string) (Figure, bool) {
	for _, f := range Catalog {
		if f.Key == key {
			return f, true
		}
	}
	return Figure{}, false
}

// Value is the figure of a run: f.Of where the run has a report and the
// value is a finite number.
func (f *Figure) Value(d *Run) (float64, bool) {
	if d == nil || d.Report == nil {
		return 0, false
	}
	v, ok := f.Of(d)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// Format prints a value with the figure's decimals.
func (f *Figure) Format(v float64) string {
	return strconv.FormatFloat(v, 'f', f.Decimals, 64)
}

// Label is the title with its unit: "Received [Mbit/s]".
func (f *Figure) Label() string { return unitLabel(f.Title, f.Unit) }

// unitLabel is a title with its unit in brackets (none for unit "").
func unitLabel(title, unit string) string {
	if unit == "" {
		return title
	}
	return title + " [" + unit + "]"
}

// meanMs is the exact mean total time: from the sums or the extended total
// phase where the document has them, else (a document of neither) ab's
// truncated µs mean. With requests in flight at the stop, their ages count
// too (latencyWithOutstanding), as in every latency figure below.
func meanMs(d *Run) (float64, bool) {
	if all, ok := latencyWithOutstanding(d); ok {
		return all.Mean() / 1000, true
	}
	if s := d.Sums; s != nil && s.Total.Count > 0 {
		return float64(s.Total.SumUs) / float64(s.Total.Count) / 1000, true
	}
	if x := d.Extended; x != nil && x.Phases.Total.Count > 0 {
		return x.Phases.Total.MeanUs / 1000, true
	}
	if ct := d.Report.ConnectionTimes; ct != nil {
		return float64(ct.Total.MeanUs) / 1000, true
	}
	return 0, false
}

// sdMs is the total time's sample sd (n−1): exact from the sums, else the
// extended total phase's, else ab's; with the outstanding requests' ages
// when there are some.
func sdMs(d *Run) (float64, bool) {
	if all, ok := latencyWithOutstanding(d); ok {
		return all.SD() / 1000, true
	}
	return sdCompleted(d)
}

// sdCompleted is sdMs of the completed requests alone.
func sdCompleted(d *Run) (float64, bool) {
	if s := d.Sums; s != nil && s.Total.Count > 0 {
		if sq, ok := new(big.Int).SetString(s.Total.SumSquaresUs2, 10); ok {
			return sdOfSums(s.Total.Count, s.Total.SumUs, sq) / 1000, true
		}
	}
	if x := d.Extended; x != nil && x.Phases.Total.Count > 0 {
		return x.Phases.Total.SDUs / 1000, true
	}
	if ct := d.Report.ConnectionTimes; ct != nil {
		return ct.Total.SDUs / 1000, true
	}
	return 0, false
}

// sdOfSums is the sample sd of n values of sum s and sum of squares sq:
// √((n·sq − s²) / (n(n−1))), the numerator exact.
func sdOfSums(n int64, s uint64, sq *big.Int) float64 {
	if n < 2 {
		return 0
	}
	bn := big.NewInt(n)
	num := new(big.Int).Mul(bn, sq)
	bs := new(big.Int).SetUint64(s)
	num.Sub(num, bs.Mul(bs, bs))
	if num.Sign() <= 0 {
		return 0
	}
	v, _ := new(big.Float).Quo(new(big.Float).SetInt(num), new(big.Float).SetInt(new(big.Int).Mul(bn, big.NewInt(n-1)))).Float64()
	return math.Sqrt(v)
}

// extremeMs is the total time's min (or max): exact from the sums, the
// extended total phase or ab's table.
func extremeMs(d *Run, max bool) (float64, bool) {
	pick := func(lo, hi int64) (float64, bool) {
		if max {
			return float64(hi) / 1000, true
		}
		return float64(lo) / 1000, true
	}
	if all, ok := latencyWithOutstanding(d); ok {
		return pick(all.Min, all.Max)
	}
	if s := d.Sums; s != nil && s.Total.Count > 0 {
		return pick(s.Total.MinUs, s.Total.MaxUs)
	}
	if x := d.Extended; x != nil && x.Phases.Total.Count > 0 {
		return pick(x.Phases.Total.MinUs, x.Phases.Total.MaxUs)
	}
	if ct := d.Report.ConnectionTimes; ct != nil {
		return pick(ct.Total.MinUs, ct.Total.MaxUs)
	}
	return 0, false
}

// percentileMs reads a total-time percentile by the catalog's one rule, so
// that a run, its document and --fail-if give the same number: the nearest
// rank in an HDR histogram of every recorded request (3 significant
// digits, the bucket's highest value within the exact min and max;
// totalDist), with the ages of requests in flight at the stop where there
// were some; else the extended total phase's stated percentiles.
func percentileMs(p float64) func(d *Run) (float64, bool) {
	return func(d *Run) (float64, bool) {
		if all, ok := latencyWithOutstanding(d); ok {
			return float64(all.Percentile(p)) / 1000, true
		}
		if dist, ok := totalDist(d); ok {
			return float64(dist.Percentile(p)) / 1000, true
		}
		if x := d.Extended; x != nil && x.Phases.Total.Count > 0 {
			t := &x.Phases.Total
			switch p {
			case 50:
				return float64(t.MedianUs) / 1000, true
			case 90:
				return float64(t.P90Us) / 1000, true
			case 99:
				return float64(t.P99Us) / 1000, true
			case 99.9:
				return float64(t.P999Us) / 1000, true
			}
		}
		return 0, false
	}
}

// totalDist is the completed requests' total times as the catalog reads
// their percentiles: the engine's HDR histogram of every request (the
// extended total phase; 3 significant digits, within the exact min and
// max), else the sums' histogram (of the exact samples to 3 significant
// digits, or merged from such; past the exact store, 1 ms buckets). ok is
// false without a request or a histogram.
func totalDist(d *Run) (samples.Dist, bool) {
	s, x := d.Sums, d.Extended
	if x != nil && x.Phases.Total.Count > 0 && (s == nil || x.Phases.Total.Count == s.Total.Count) {
		if dist := x.Phases.Total.decoded(); dist != nil {
			return *dist, true
		}
	}
	if s != nil && s.Total.Count > 0 && s.Total.Histogram.Data != "" {
		if dist, err := s.Total.dist(); err == nil {
			return dist, true
		}
	}
	return samples.Dist{}, false
}

// mbitOf is bytes over the time taken in 10^6 bits per second (absent when
// the time taken is 0).
func mbitOf(d *Run, bytes int64) (float64, bool) {
	if d.Report.TimeTakenS <= 0 {
		return 0, false
	}
	return MbitPerSecond(bytes, d.Report.TimeTakenS), true
}

// FigureValue is one figure of a run.
type FigureValue struct {
	Key   string
	Value float64
}

// FigureValues are a run's figures in catalog order, those it has: the JSON
// documents' "figures" object (key → value in the figure's unit).
type FigureValues []FigureValue

// figuresOf reads every catalog figure the run has.
func figuresOf(d *Run) FigureValues {
	out := make(FigureValues, 0, len(Catalog))
	for i := range Catalog {
		if v, ok := Catalog[i].Value(d); ok {
			out = append(out, FigureValue{Catalog[i].Key, v})
		}
	}
	return out
}

// MarshalJSON writes the figures as one object, in their order.
func (fv FigureValues) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, v := range fv {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(v.Key)
		if err != nil {
			return nil, err
		}
		n, err := json.Marshal(v.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(n)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object back, in its order.
func (fv *FigureValues) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return errors.New("figures: not an object")
	}
	*fv = (*fv)[:0]
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var v *float64
		if err := dec.Decode(&v); err != nil || v == nil {
			return fmt.Errorf("figures: %q is not a number", t)
		}
		*fv = append(*fv, FigureValue{t.(string), *v})
	}
	_, err := dec.Token()
	return err
}

// writeFigureBlock writes the figure block of a run's text report (gab
// merge's): each catalog figure the run has, with its key and unit.
func writeFigureBlock(w io.Writer, d *Run) error {
	e := newErrWriter(w)
	writeFigures(e, d)
	return e.flush()
}

// writeFigures writes the figure block (--extended's last, gab merge's);
// nothing when the run has no figure.
func writeFigures(e *errWriter, d *Run) {
	first := true
	for i := range Catalog {
		f := &Catalog[i]
		v, ok := f.Value(d)
		if !ok {
			continue
		}
		if first {
			e.printf("\nFigures (by key, as --fail-if, gab compare and gab sweep name them; latencies: the total time)\n")
			first = false
		}
		unit := ""
		if f.Unit != "" {
			unit = "[" + f.Unit + "]"
		}
		e.printf("  %-28s%14s %-14s%s\n", f.Key+":", f.Format(v), unit, f.Title)
	}
}
