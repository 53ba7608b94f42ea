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

// RunInfo is the document's "run" section: the command line's part that
// decides whether two documents measured the same thing.
type RunInfo struct {
	URL           string `json:"url"`
	Method        string `json:"method"`
	RequestSHA256 string `json:"request_sha256"` // of the request bytes and body as sent
	Protocol      string `json:"protocol"`       // "http1.0", "http1.1", "http2", "http3", "cgi"
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

// Shard is the "shard" section: set by --shard, and in merged documents.
type Shard struct {
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
	Merged []mergedInput `json:"merged,omitempty"`
	Forced bool          `json:"forced,omitempty"`
}

// mergedInput is one input of a merged document.
type mergedInput struct {
	Index        int    `json:"index"`
	File         string `json:"file"`
	StartTime    string `json:"start_time"`
	StartDelayUs *int64 `json:"start_delay_us,omitempty"`
}

// exactSums are one timing column's exact sums over every recorded
// request, and its histogram.
type exactSums struct {
	Count int64  `json:"count"`
	MinUs int64  `json:"min_us"`
	MaxUs int64  `json:"max_us"`
	SumUs uint64 `json:"sum_us"`
	// SumSquaresUs2 is Σx² in µs², a decimal integer in a string (it can pass
	// 2^64, and JSON readers often hold numbers as doubles).
	SumSquaresUs2 string        `json:"sum_squares_us2"`
	Histogram     histogramData `json:"histogram"`
}

// sumsSection is the "sums" section.
type sumsSection struct {
	Connect    exactSums `json:"connect"`
	Processing exactSums `json:"processing"`
	Waiting    exactSums `json:"waiting"`
	Total      exactSums `json:"total"`
	// HistogramPrecision says how the histograms were filled: "3 significant
	// digits" from the exact samples, or "1 ms" from the 1 ms buckets a run
	// keeps past --sample-limit.
	HistogramPrecision string `json:"histogram_precision"`
}

// Histogram precisions of Sums.
const (
	precisionHDR = "3 significant digits"
	precisionMs  = "1 ms"
)

// column is the sums of ab's column c.
func (s *sumsSection) column(c column) *exactSums {
	return [...]*exactSums{&s.Connect, &s.Processing, &s.Waiting, &s.Total}[c]
}

// runSection is the run section of a run with the options o.
func runSection(o Options) *RunInfo {
	r := *o.Run
	r.KeepAlive, r.BodySent, r.VariableLength, r.NoPercentiles, r.NoConfidence =
		o.KeepAlive, o.BodySent, o.VariableLength, o.NoPercentiles, o.NoConfidence
	return &r
}

// shardSection is the shard section of a shard that started at start.
func shardSection(sh *Shard, start time.Time) *Shard {
	out := *sh
	if at, err := time.Parse(time.RFC3339Nano, sh.StartAt); err == nil && sh.StartAt != "" {
		d := start.Sub(at).Microseconds()
		out.StartDelayUs = &d
	}
	return &out
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

func (c *columnAcc) sums() exactSums {
	return columnSumsOf(c.count, c.sum, int64(c.min), int64(c.max), uint128(c.sqHi, c.sqLo), c.hist)
}

func columnSumsOf(count, sum uint64, minUs, maxUs int64, sq *big.Int, h *hdrhistogram.Histogram) exactSums {
	return exactSums{Count: int64(count), MinUs: minUs, MaxUs: maxUs, SumUs: sum,
		SumSquaresUs2: sq.String(), Histogram: histogramOf(h)}
}

func uint128(hi, lo uint64) *big.Int {
	x := new(big.Int).Lsh(new(big.Int).SetUint64(hi), 64)
	return x.Add(x, new(big.Int).SetUint64(lo))
}

// columnSums computes the columns' sums and histograms from the sample store.
func columnSums(store *samples.Store) *sumsSection {
	s := &sumsSection{HistogramPrecision: precisionHDR}
	if h := store.Histograms(); h != nil {
		s.HistogramPrecision = precisionMs
		for c := range 4 {
			*s.column(column(c)) = bucketSums(h.Field(column(c)))
		}
		return s
	}
	var acc [4]columnAcc
	for c := range acc {
		acc[c].hist = samples.NewHist()
	}
	for _, smp := range store.Exact() {
		for c := range acc {
			acc[c].add(smp.Value(column(c)))
		}
	}
	for c := range acc {
		*s.column(column(c)) = acc[c].sums()
	}
	return s
}

// bucketSums is a column kept in 1 ms buckets: its sums are exact, its
// histogram holds each bucket's count at the bucket's value.
func bucketSums(col *samples.Column) exactSums {
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
	return columnSumsOf(col.Count.Load(), col.Sum.Load(), int64(col.Min()), int64(col.Max()), uint128(hi, lo), h)
}

// dist is the distribution the column's sums describe: its histogram with
// the exact count, min and max (percentiles as samples.Dist reads them).
func (s *exactSums) dist() (samples.Dist, error) {
	h, err := s.Histogram.decode()
	if err != nil {
		return samples.Dist{}, err
	}
	return samples.DistOf(s.Count, s.MinUs, s.MaxUs, int64(s.SumUs), 0, h), nil
}
