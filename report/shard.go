package report

import (
	"math/big"
	"math/bits"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/internal/samples"
)

// This file is what every JSON document carries so that documents can be
// merged exactly (`gab merge`): the run's options ("run"), the shard's place in
// a sharded run ("shard"), and per timing column the exact sums ab's
// arithmetic needs plus an HDR histogram ("sums").

// RunInfo is the command line's part that decides whether two documents
// measured the same thing (report.Options has the rest: -k, -p, -l, -d, -S).
type RunInfo struct {
	URL           string
	Method        string
	RequestSHA256 string // of the request bytes and body as sent
	Protocol      string // "http1.0", "http1.1", "http2", "cgi"
	// This process's -n, -c and --rate (a shard's shares).
	Requests, Concurrency int
	RatePerS              float64
	TimeLimit             time.Duration
	TLS                   bool
	Shard                 *ShardInfo // nil when the run is not a shard
}

// ShardInfo is a shard's place in its run.
type ShardInfo struct {
	Index, Count int
	RunID        string
	StartAt      time.Time // zero without --start-at
	// The whole run's -n, -c and --rate.
	Requests, Concurrency int
	RatePerS              float64
}

// JSONRun is the document's "run" section.
type JSONRun struct {
	URL           string `json:"url"`
	Method        string `json:"method"`
	RequestSHA256 string `json:"request_sha256"`
	Protocol      string `json:"protocol"`
	// Requests, Concurrency and RatePerS are this process's (a shard's shares).
	Requests       int     `json:"requests"`
	Concurrency    int     `json:"concurrency"`
	RatePerS       float64 `json:"rate_per_s"`
	TimeLimitS     float64 `json:"time_limit_s"`
	KeepAlive      bool    `json:"keep_alive"`
	BodySent       bool    `json:"body_sent"`
	VariableLength bool    `json:"variable_length"`
	NoPercentiles  bool    `json:"no_percentiles"`
	NoConfidence   bool    `json:"no_confidence"`
	TLS            bool    `json:"tls"`
}

// JSONShard is the "shard" section: set by --shard, and in merged documents.
type JSONShard struct {
	// Index counts from 0; Count is the number of shards of the run.
	Index int    `json:"index"`
	Count int    `json:"count"`
	RunID string `json:"run_id"`
	// StartAt is --start-at (RFC 3339, UTC); StartDelayUs is how long after it
	// this shard's run started (its scheduling delay and clock offset).
	StartAt      string `json:"start_at,omitempty"`
	StartDelayUs *int64 `json:"start_delay_us,omitempty"`
	// The whole run's -n, -c and --rate (the shards ran shares of them).
	TotalRequests    int     `json:"total_requests"`
	TotalConcurrency int     `json:"total_concurrency"`
	TotalRatePerS    float64 `json:"total_rate_per_s"`
	// Merged is set in a merged document: the shards' indexes it combines and
	// each one's start delay; Forced says gab merge --force combined
	// documents it would otherwise have refused.
	Merged []JSONMergedShard `json:"merged,omitempty"`
	Forced bool              `json:"forced,omitempty"`
}

// JSONMergedShard is one input of a merged document.
type JSONMergedShard struct {
	Index        int    `json:"index"`
	File         string `json:"file"`
	StartTime    string `json:"start_time"`
	StartDelayUs *int64 `json:"start_delay_us,omitempty"`
}

// JSONColumnSums are one timing column's exact sums over every recorded
// request, and its histogram.
type JSONColumnSums struct {
	Count int64  `json:"count"`
	MinUs int64  `json:"min_us"`
	MaxUs int64  `json:"max_us"`
	SumUs uint64 `json:"sum_us"`
	// SumSquaresUs2 is Σx² in µs², a decimal integer in a string (it can pass
	// 2^64, and JSON readers often hold numbers as doubles).
	SumSquaresUs2 string        `json:"sum_squares_us2"`
	Histogram     JSONHistogram `json:"histogram"`
}

// JSONSums is the "sums" section.
type JSONSums struct {
	Connect    JSONColumnSums `json:"connect"`
	Processing JSONColumnSums `json:"processing"`
	Waiting    JSONColumnSums `json:"waiting"`
	Total      JSONColumnSums `json:"total"`
	// HistogramPrecision says how the histograms were filled: "3 significant
	// digits" from the exact samples, or "1 ms" from the 1 ms buckets a run
	// keeps past --sample-limit.
	HistogramPrecision string `json:"histogram_precision"`
}

// Histogram precisions of JSONSums.
const (
	PrecisionHDR = "3 significant digits"
	PrecisionMs  = "1 ms"
)

func jsonRun(s *Summary) *JSONRun {
	r := s.Run
	return &JSONRun{
		URL: r.URL, Method: r.Method, RequestSHA256: r.RequestSHA256, Protocol: r.Protocol,
		Requests: r.Requests, Concurrency: r.Concurrency, RatePerS: r.RatePerS,
		TimeLimitS: r.TimeLimit.Seconds(), KeepAlive: s.KeepAlive, BodySent: s.BodySent,
		VariableLength: s.VariableLength, NoPercentiles: s.NoPercentiles,
		NoConfidence: s.NoConfidence, TLS: r.TLS,
	}
}

func jsonShard(sh *ShardInfo, start time.Time) *JSONShard {
	j := &JSONShard{Index: sh.Index, Count: sh.Count, RunID: sh.RunID,
		TotalRequests: sh.Requests, TotalConcurrency: sh.Concurrency, TotalRatePerS: sh.RatePerS}
	if !sh.StartAt.IsZero() {
		j.StartAt = sh.StartAt.UTC().Format(time.RFC3339Nano)
		d := start.Sub(sh.StartAt).Microseconds()
		j.StartDelayUs = &d
	}
	return j
}

// ColumnSums are the timing columns' exact sums and histograms over every
// recorded request (the JSON document's "sums"), in Column order.
type ColumnSums struct {
	Columns [4]ColumnSum
	// Precision is PrecisionHDR (histograms filled from the exact samples) or
	// PrecisionMs (from the 1 ms buckets kept past --sample-limit).
	Precision string
}

// ColumnSum is one column's exact figures and histogram.
type ColumnSum struct {
	Count, Sum uint64
	Min, Max   int64
	SumSquares *big.Int
	Hist       *hdrhistogram.Histogram
}

// columnAcc accumulates one column exactly.
type columnAcc struct {
	count, sum, sqHi, sqLo uint64
	min, max               uint32
	hist                   *hdrhistogram.Histogram
}

func (c *columnAcc) add(v uint32) {
	if c.count == 0 || v < c.min {
		c.min = v
	}
	if v > c.max {
		c.max = v
	}
	c.count++
	c.sum += uint64(v)
	hi, lo := bits.Mul64(uint64(v), uint64(v))
	var carry uint64
	c.sqLo, carry = bits.Add64(c.sqLo, lo, 0)
	c.sqHi += hi + carry
	_ = c.hist.RecordValue(int64(v)) // cannot fail: a uint32 µs is below the histogram's highest value
}

func (c *columnAcc) figures() ColumnSum {
	return ColumnSum{Count: c.count, Sum: c.sum, Min: int64(c.min), Max: int64(c.max),
		SumSquares: uint128(c.sqHi, c.sqLo), Hist: c.hist}
}

func uint128(hi, lo uint64) *big.Int {
	x := new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64)
	return x.Add(x, new(big.Int).SetUint64(lo))
}

// columnSums computes the columns' sums and histograms from the sample store.
func columnSums(store *samples.Store) *ColumnSums {
	s := &ColumnSums{Precision: PrecisionHDR}
	if h := store.Histograms(); h != nil {
		s.Precision = PrecisionMs
		for c := range s.Columns {
			s.Columns[c] = bucketSums(h.Field(Column(c)))
		}
		return s
	}
	var acc [4]columnAcc
	for c := range acc {
		acc[c].hist = samples.NewHist()
	}
	for _, smp := range store.Exact() {
		for c := range acc {
			acc[c].add(smp.Value(Column(c)))
		}
	}
	for c := range acc {
		s.Columns[c] = acc[c].figures()
	}
	return s
}

// bucketSums is a column kept in 1 ms buckets: its sums are exact, its
// histogram holds each bucket's count at the bucket's value.
func bucketSums(col *samples.Column) ColumnSum {
	h := samples.NewHist()
	for k := range col.Buckets {
		if n := col.Buckets[k].Load(); n > 0 {
			v := min(max(int64(k)*1000, int64(col.Min())), int64(col.Max()))
			_ = h.RecordValues(v, int64(n))
		}
	}
	if n := col.Over.Load(); n > 0 {
		_ = h.RecordValues(int64(col.Max()), int64(n))
	}
	hi, lo := col.SumSquares()
	return ColumnSum{Count: col.Count.Load(), Sum: col.Sum.Load(), Min: int64(col.Min()), Max: int64(col.Max()),
		SumSquares: uint128(hi, lo), Hist: h}
}

func jsonSums(cs *ColumnSums) *JSONSums {
	s := &JSONSums{HistogramPrecision: cs.Precision}
	for c, out := range [4]*JSONColumnSums{&s.Connect, &s.Processing, &s.Waiting, &s.Total} {
		x := &cs.Columns[c]
		*out = JSONColumnSums{Count: int64(x.Count), MinUs: x.Min, MaxUs: x.Max, SumUs: x.Sum,
			SumSquaresUs2: x.SumSquares.String(), Histogram: jsonHistogram(x.Hist)}
	}
	return s
}

// Dist is the distribution the column's sums describe: its histogram with
// the exact count, min and max (percentiles as samples.Dist reads them).
func (s *JSONColumnSums) Dist() (samples.Dist, error) {
	h, err := decodeHistogram(&s.Histogram)
	if err != nil {
		return samples.Dist{}, err
	}
	return samples.DistOf(s.Count, s.MinUs, s.MaxUs, int64(s.SumUs), 0, h), nil
}
