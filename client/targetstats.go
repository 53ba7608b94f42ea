package client

import (
	"hash/maphash"
	"math/bits"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/internal/samples"
)

// Results per target (--urls, --targets): each distinct method and URL of the
// list gets a row of its own, at most MaxTargetRows of them; the URLs past
// them share one row, "other". A row holds counts and exact sums of the
// total time and a histogram with 2 significant digits (about 32 KB, made
// when the row's first request is recorded), so that 1000 rows cost at most
// about 32 MB whatever the list's length.

// MaxTargetRows bounds the rows of distinct targets.
const MaxTargetRows = 1000

// TargetDigits is the significant digits of a target's histogram.
const TargetDigits = 2

// NewTargetHist is an empty histogram with a target row's geometry.
func NewTargetHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(samples.HistLowestUS, samples.HistHighestUS, TargetDigits)
}

// TargetResult is one row of Result.Targets.
type TargetResult struct {
	Method, URL string
	Other       bool // the row of every target past MaxTargetRows (Method and URL empty)

	Complete                             int64 // recorded requests, as ab's Complete requests
	Connect, Receive, Length, Exceptions int64 // Failed requests by ab's classes
	Non2xx, WriteErrors, BodyBytes       int64
	Count, SumUs, MinUs, MaxUs           int64 // total times of the recorded requests, µs
	SumSquaresHi, SumSquaresLo           uint64
	Hist                                 *hdrhistogram.Histogram // total times (nil while empty)
}

// targetRow is a row and the lock its recorders take.
type targetRow struct {
	mu  sync.Mutex
	res TargetResult
}

// targetStats are a run's rows, and each URL's row.
type targetStats struct {
	rowOf []uint16 // by the list's URL index
	rows  []targetRow
}

// newTargetStats gives each distinct method and URL of the list its row.
func newTargetStats(cfg *Config) *targetStats {
	l := cfg.URLs
	ts := &targetStats{rowOf: make([]uint16, l.Len())}
	seed := maphash.MakeSeed()
	index := map[uint64]uint16{}
	other := -1
	for i := range l.Len() {
		method := cfg.Spec.Method
		if l.specs != nil {
			method = l.specs[i].Method
		}
		var h maphash.Hash
		h.SetSeed(seed)
		h.WriteString(method)
		h.WriteByte(0)
		h.WriteByte(byte(l.OriginOf(i)))
		h.WriteByte(byte(l.OriginOf(i) >> 8))
		h.Write(l.RequestTarget(i))
		key := h.Sum64()
		row, ok := index[key]
		if !ok {
			if len(index) < MaxTargetRows {
				row = uint16(len(ts.rows))
				index[key] = row
				o := l.Origins[l.OriginOf(i)].Target
				scheme := "http://"
				if o.TLS {
					scheme = "https://"
				}
				ts.rows = append(ts.rows, targetRow{res: TargetResult{Method: method, URL: scheme + o.HostField() + string(l.RequestTarget(i))}})
			} else {
				if other < 0 {
					other = MaxTargetRows
				}
				row = uint16(other)
			}
		}
		ts.rowOf[i] = row
	}
	if other >= 0 {
		ts.rows = append(ts.rows, targetRow{res: TargetResult{Other: true}})
	}
	return ts
}

// add accounts for o, a request of the list's URL o.entry-1: recorded (a
// total time of totalUs) or not (a connect failure, retried).
func (ts *targetStats) add(o *outcome, recorded bool, totalUs uint32) {
	if ts == nil || o.entry <= 0 || int(o.entry) > len(ts.rowOf) {
		return
	}
	row := &ts.rows[ts.rowOf[o.entry-1]]
	row.mu.Lock()
	defer row.mu.Unlock()
	r := &row.res
	switch o.Class {
	case failConnect, failRefused:
		r.Connect++
	case failHeaderOverflow:
		r.Non2xx++ // ab counts an overflowing head as a non-2xx response
	case failReceive, failReceiveCounted:
		r.Receive++
	case failException:
		r.Exceptions++
	case failWrite:
		r.WriteErrors++
	case classOK:
		if o.Status < 200 || o.Status > 299 {
			r.Non2xx++
		}
		if o.lengthFailed {
			r.Length++
		}
		r.BodyBytes += o.Body
	}
	if !recorded {
		return
	}
	r.Complete++
	us := int64(totalUs)
	if r.Count == 0 || us < r.MinUs {
		r.MinUs = us
	}
	r.MaxUs = max(r.MaxUs, us)
	r.Count++
	r.SumUs += us
	hi, lo := bits.Mul64(uint64(us), uint64(us))
	var carry uint64
	r.SumSquaresLo, carry = bits.Add64(r.SumSquaresLo, lo, 0)
	r.SumSquaresHi += hi + carry
	if r.Hist == nil {
		r.Hist = NewTargetHist()
	}
	_ = r.Hist.RecordValue(min(us, samples.HistHighestUS))
}

// result is the rows that saw a request, in the list's order ("other" last).
func (ts *targetStats) result() []TargetResult {
	var out []TargetResult
	for i := range ts.rows {
		row := &ts.rows[i]
		row.mu.Lock()
		r := row.res
		row.mu.Unlock()
		if r.Complete+r.Connect+r.WriteErrors > 0 {
			out = append(out, r)
		}
	}
	return out
}
