package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/client"
	"gab/internal/samples"
)

// This file is the record's one distribution type, distFigures, and its
// histogram, histogramData: each knows its unit (µs or bytes), writes its
// field names with it (min_us, min_bytes), reads itself back, merges through
// samples.Dist (mergeDists) and checks itself (check). A run document holds
// one encoded histogram per distribution: where a phase's histogram is the
// same as a sums column's (or a timeline interval's, of every request, is the
// total's), the phase or interval names that column (histogram_same_as)
// instead of a second copy, and reading the document puts the histogram back
// (Run.MarshalJSON, Run.UnmarshalJSON). Documents of schema versions 1 to 3
// kept copies under extended.latency_histogram and rate.corrected_histogram:
// they are read into their distributions, and version 4 still writes them
// (legacyNames), for one version.

// distUnit is what a distribution's values count.
type distUnit string

const (
	unitUs    distUnit = "us"    // microseconds
	unitBytes distUnit = "bytes" // bytes
)

// known reports whether u is one of gab's units.
func (u distUnit) known() bool { return u == unitUs || u == unitBytes }

// distFigures describes a distribution in its unit (µs unless Unit says
// otherwise: the fields are named for µs, the unit of every distribution
// so far; the document's names carry the unit, min_us or min_bytes): count,
// min, mean, sd (n−1) and max exact; median and percentiles by the nearest
// rank (samples.NearestRank) from an HDR histogram with 3 significant digits
// (the bucket's highest value).
type distFigures struct {
	// Unit is absent (µs) or "bytes".
	Unit     distUnit `json:"unit,omitempty"`
	Count    int64    `json:"count"`
	MinUs    int64    `json:"min_us"`
	MeanUs   float64  `json:"mean_us"`
	SDUs     float64  `json:"sd_us"`
	MedianUs int64    `json:"median_us"`
	P90Us    int64    `json:"p90_us"`
	P99Us    int64    `json:"p99_us"`
	P999Us   int64    `json:"p99_9_us"`
	MaxUs    int64    `json:"max_us"`
	// SumUs and Histogram are what gab merge combines (the histogram is
	// absent only in a merged document whose parts had none, or in the
	// document where HistogramSameAs names the sums column that holds it).
	SumUs     int64          `json:"sum_us"`
	Histogram *histogramData `json:"histogram,omitempty"`
	// HistogramSameAs is set in a document only: the sums column
	// ("sums.total") whose histogram is this distribution's.
	HistogramSameAs string `json:"histogram_same_as,omitempty"`
}

// unit is d's unit (µs when absent).
func (d *distFigures) unit() distUnit {
	if d.Unit == "" {
		return unitUs
	}
	return d.Unit
}

// distOf is d's figures in µs, its histogram encoded.
func distOf(d *samples.Dist) distFigures { return distIn(d, unitUs) }

// distIn is d's figures in unit u, its histogram encoded.
func distIn(d *samples.Dist, u distUnit) distFigures {
	out := distFigures{
		Count: d.Count, MinUs: d.Min, MeanUs: d.Mean(), SDUs: d.SD(),
		MedianUs: d.Percentile(50), P90Us: d.Percentile(90), P99Us: d.Percentile(99), P999Us: d.Percentile(99.9),
		MaxUs: d.Max, SumUs: d.Sum,
	}
	if u != unitUs {
		out.Unit = u
	}
	if d.Hist != nil {
		h := histogramIn(d.Hist, u)
		out.Histogram = &h
	}
	return out
}

// decoded is the distribution the figures describe (nil when there is no
// histogram that decodes).
func (d *distFigures) decoded() *samples.Dist {
	if d.Count == 0 || d.Histogram == nil {
		return nil
	}
	h, err := d.Histogram.decode()
	if err != nil {
		return nil
	}
	x := samples.DistOf(d.Count, d.MinUs, d.MaxUs, d.SumUs, d.SDUs, h)
	return &x
}

// fields are the document's names of d's figures, in their order, with d's
// unit, and where each is kept.
func (d *distFigures) fields() []docField {
	u := string(d.unit())
	return []docField{{"count", &d.Count}, {"min_" + u, &d.MinUs}, {"mean_" + u, &d.MeanUs}, {"sd_" + u, &d.SDUs},
		{"median_" + u, &d.MedianUs}, {"p90_" + u, &d.P90Us}, {"p99_" + u, &d.P99Us}, {"p99_9_" + u, &d.P999Us},
		{"max_" + u, &d.MaxUs}, {"sum_" + u, &d.SumUs}}
}

// MarshalJSON writes the figures with names in d's unit.
func (d distFigures) MarshalJSON() ([]byte, error) {
	fs := d.fields()
	if d.Unit != "" {
		fs = append([]docField{{"unit", &d.Unit}}, fs...)
	}
	if d.Histogram != nil {
		fs = append(fs, docField{"histogram", d.Histogram})
	}
	if d.HistogramSameAs != "" {
		fs = append(fs, docField{"histogram_same_as", &d.HistogramSameAs})
	}
	return marshalFields(fs)
}

// UnmarshalJSON reads figures written in their unit (µs when "unit" is
// absent, as in every document before units).
func (d *distFigures) UnmarshalJSON(b []byte) error {
	*d = distFigures{}
	m, err := unmarshalField(b, "unit", &d.Unit)
	if err != nil || m == nil {
		return err
	}
	fs := append(d.fields(), docField{"histogram", &d.Histogram}, docField{"histogram_same_as", &d.HistogramSameAs})
	return readFields(m, fs)
}

// check checks a distribution in unit u: min ≤ percentiles ≤ max in order,
// the sum within count × [min, max], the mean its quotient, the sd within
// what max − min allows, and its histogram (if any) of count values in u.
// An empty one is all zeros.
func (d *distFigures) check(c *checker, field string, limit int64, u distUnit) {
	c.count(field+".count", d.Count, limit)
	if d.unit() != u {
		c.fail(field+".unit", "%q, but this distribution is in %s", d.Unit, u)
		return
	}
	if d.HistogramSameAs != "" {
		c.fail(field+".histogram_same_as", "%q is not a sums column of the document", d.HistogramSameAs)
		return
	}
	if d.Count == 0 {
		if d.MinUs != 0 || d.MaxUs != 0 || d.SumUs != 0 || d.MeanUs != 0 || d.SDUs != 0 ||
			d.MedianUs != 0 || d.P90Us != 0 || d.P99Us != 0 || d.P999Us != 0 {
			c.fail(field, "figures set with count 0")
		}
		if d.Histogram != nil {
			d.Histogram.check(c, field+".histogram", 0, u)
		}
		return
	}
	s := "_" + string(u)
	lo, hi, ok := countRange(uint64(d.Count), d.MinUs, d.MaxUs)
	switch {
	case d.MinUs > d.MaxUs:
		c.fail(field+".min"+s, "%d is above max%s %d", d.MinUs, s, d.MaxUs)
	case d.MedianUs < d.MinUs || d.P90Us < d.MedianUs || d.P99Us < d.P90Us || d.P999Us < d.P99Us || d.MaxUs < d.P999Us:
		c.fail(field, "min%[7]s, median%[7]s, p90%[7]s, p99%[7]s, p99_9%[7]s and max%[7]s (%[1]d, %[2]d, %[3]d, %[4]d, %[5]d, %[6]d) are out of order",
			d.MinUs, d.MedianUs, d.P90Us, d.P99Us, d.P999Us, d.MaxUs, s)
	case !ok || uint64(d.SumUs) < lo || uint64(d.SumUs) > hi:
		c.fail(field+".sum"+s, "%d is not within count × [min%s, max%s] (%d × [%d, %d])", d.SumUs, s, s, d.Count, d.MinUs, d.MaxUs)
	case !near(d.MeanUs, float64(d.SumUs)/float64(d.Count)):
		c.fail(field+".mean"+s, "%g, but sum%s / count is %g", d.MeanUs, s, float64(d.SumUs)/float64(d.Count))
	case d.SDUs > float64(d.MaxUs-d.MinUs)+1:
		c.fail(field+".sd"+s, "%g is more than max%s − min%s (%d) allows", d.SDUs, s, s, d.MaxUs-d.MinUs)
	case d.Histogram != nil:
		d.Histogram.check(c, field+".histogram", d.Count, u)
	}
}

// histogramData is an HDR histogram in its standard, mergeable encoding: V2
// compressed, base64 (decode with any HdrHistogram library, e.g. Go's
// hdrhistogram.Decode or Java's Histogram.fromString), with its unit.
type histogramData struct {
	Unit              distUnit `json:"unit"` // "us" or "bytes"
	LowestUs          int64    `json:"lowest_us"`
	HighestUs         int64    `json:"highest_us"`
	SignificantDigits int      `json:"significant_digits"`
	Encoding          string   `json:"encoding"` // always "hdrhistogram-v2-compressed-base64"
	Data              string   `json:"data"`
}

const histogramEncoding = "hdrhistogram-v2-compressed-base64"

// histogramOf encodes h, of µs.
func histogramOf(h *hdrhistogram.Histogram) histogramData { return histogramIn(h, unitUs) }

// histogramIn encodes h, of values in unit u.
func histogramIn(h *hdrhistogram.Histogram, u distUnit) histogramData {
	out := histogramData{
		Unit:              u,
		LowestUs:          h.LowestTrackableValue(),
		HighestUs:         h.HighestTrackableValue(),
		SignificantDigits: int(h.SignificantFigures()),
		Encoding:          histogramEncoding,
	}
	if b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		out.Data = string(b)
	}
	return out
}

// fields are the document's names of the histogram's fields, with its unit.
func (j *histogramData) fields() []docField {
	u := string(j.Unit)
	if u == "" {
		u = string(unitUs)
	}
	return []docField{{"unit", &j.Unit}, {"lowest_" + u, &j.LowestUs}, {"highest_" + u, &j.HighestUs},
		{"significant_digits", &j.SignificantDigits}, {"encoding", &j.Encoding}, {"data", &j.Data}}
}

// MarshalJSON writes the histogram with its bounds named in its unit.
func (j histogramData) MarshalJSON() ([]byte, error) { return marshalFields(j.fields()) }

// UnmarshalJSON reads a histogram whose bounds are named in its unit.
func (j *histogramData) UnmarshalJSON(b []byte) error {
	*j = histogramData{}
	m, err := unmarshalField(b, "unit", &j.Unit)
	if err != nil || m == nil {
		return err
	}
	return readFields(m, j.fields()[1:])
}

// decode decodes the histogram (samples.DecodeHist, which bounds what its
// header may claim).
func (j *histogramData) decode() (*hdrhistogram.Histogram, error) {
	if j.Encoding != histogramEncoding {
		return nil, fmt.Errorf("histogram encoding %q unknown", j.Encoding)
	}
	h, err := samples.DecodeHist(j.Data)
	if err != nil {
		return nil, fmt.Errorf("histogram: %v", err)
	}
	return h, nil
}

// check checks the histogram's unit (u) and encoding, that its header
// claims no more than gab's histograms hold, and that it holds count values.
func (j *histogramData) check(c *checker, field string, count int64, u distUnit) {
	if j.Unit != u {
		c.fail(field+".unit", "%q is not %s", j.Unit, u)
		return
	}
	if count == 0 { // an empty part is never read: its header is enough
		if err := samples.CheckHist(j.Data); err != nil && j.Data != "" {
			c.fail(field, "%v", err)
		}
		return
	}
	if j.Encoding != histogramEncoding {
		c.fail(field+".encoding", "%q unknown", j.Encoding)
		return
	}
	h, err := samples.DecodeHist(j.Data)
	if err != nil {
		c.fail(field, "%v", err)
		return
	}
	if h.TotalCount() != count {
		c.fail(field, "holds %d values for a count of %d", h.TotalCount(), count)
	}
}

// docField is one field of a section whose names depend on its unit: its
// name in the document and the Go value that holds it.
type docField struct {
	name string
	v    any
}

// marshalFields writes fs as a JSON object, in their order, strings as
// WriteJSON writes them (no HTML escaping).
func marshalFields(fs []docField) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(f.name); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		if err := enc.Encode(f.v); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// unmarshalField reads a JSON object's fields, and the one named name into
// v (left as it is when absent); the map is nil for JSON's null.
func unmarshalField(b []byte, name string, v any) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if raw, ok := m[name]; ok {
		if err := json.Unmarshal(raw, v); err != nil {
			return nil, fieldError(name, err)
		}
	}
	return m, nil
}

// fieldError is err, of reading the field name, naming the field: a type
// error gets name in its path (encoding/json puts the path of the section
// before it), another error says name.
func fieldError(name string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			name += "." + te.Field
		}
		te.Field = name
		return te
	}
	return fmt.Errorf("%s: %w", name, err)
}

// readFields reads the fields fs from m, leaving those absent as they are.
func readFields(m map[string]json.RawMessage, fs []docField) error {
	for _, f := range fs {
		if raw, ok := m[f.name]; ok {
			if err := json.Unmarshal(raw, f.v); err != nil {
				return fieldError(f.name, err)
			}
		}
	}
	return nil
}

// runDocument is a Run as encoding/json sees it without its own methods.
type runDocument Run

// MarshalJSON writes the run's document with one encoded histogram per
// distribution: an extended phase whose histogram is a sums column's (the
// total time's, the waiting time's, the connect time's of ab's columns when
// they hold the same requests), and a timeline interval that holds every
// request of the run, name that column in histogram_same_as instead. The
// run itself is not changed.
func (r *Run) MarshalJSON() ([]byte, error) {
	out := *(*runDocument)(r)
	if v := out.SchemaVersion; v >= 1 && v < SchemaVersion {
		out.SchemaVersion = SchemaVersion // a document read back is written in this version's form
	}
	if x, s := r.Extended, r.Sums; x != nil && s != nil {
		xs := *x
		phases := xs.Phases.list()
		for _, p := range phases {
			p.HistogramSameAs = ""
			if col := sameHistogram(p, s); col != "" {
				p.Histogram, p.HistogramSameAs = nil, col
			}
		}
		out.Extended = &xs
	}
	legacyNames(&out, r)
	if tl, s := r.Timeline, r.Sums; tl != nil && s != nil {
		for i := range tl.Intervals {
			if iv := &tl.Intervals[i]; iv.Requests > 0 && iv.Requests == s.Total.Count && iv.Histogram == s.Total.Histogram {
				t := *tl
				t.Intervals = slices.Clone(tl.Intervals)
				t.Intervals[i].Histogram, t.Intervals[i].HistogramSameAs = histogramData{}, "sums.total"
				out.Timeline = &t
				break // one interval holds every request
			}
		}
	}
	return marshalIndentless(&out)
}

// legacyNames writes, for schema version 4 only, the copies that versions
// 1 to 3 kept under their old names (extended.latency_histogram, the total
// phase's histogram; rate.corrected_histogram, the corrected distribution's),
// so that readers of those names keep working for one version; they are the
// only histograms a version 4 document stores twice, and version 5 drops
// them. gab reads them for good (UnmarshalJSON).
func legacyNames(out *runDocument, r *Run) {
	if x := r.Extended; x != nil && x.Phases.Total.Histogram != nil {
		xs := *out.Extended
		xs.LatencyHistogram = x.Phases.Total.Histogram
		out.Extended = &xs
	}
	if rr := r.Rate; rr != nil && rr.Corrected.Histogram != nil {
		rs := *rr
		rs.CorrectedHistogram = rr.Corrected.Histogram
		out.Rate = &rs
	}
}

// sameHistogram is "sums.<column>" for the first sums column whose
// histogram is p's, byte for byte, over as many requests ("" if none).
func sameHistogram(p *distFigures, s *sumsSection) string {
	if p.Histogram == nil || p.Count == 0 {
		return ""
	}
	for c := range column(4) {
		if col := s.column(c); col.Count == p.Count && col.Histogram == *p.Histogram {
			return "sums." + columnName(c)
		}
	}
	return ""
}

// UnmarshalJSON reads a run's document and puts each distribution's
// histogram where the run keeps it: from the sums column a phase or an
// interval names (histogram_same_as), and in documents of schema versions 1 to 3 from
// extended.latency_histogram and rate.corrected_histogram (the copies they
// kept) when the distribution has none of its own.
func (r *Run) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*runDocument)(r)); err != nil {
		return err
	}
	if x := r.Extended; x != nil {
		if h := x.LatencyHistogram; h != nil && x.Phases.Total.Histogram == nil && h.Data != "" {
			x.Phases.Total.Histogram = h
		}
		x.LatencyHistogram = nil
		for _, p := range x.Phases.list() {
			if p.HistogramSameAs == "" || r.Sums == nil {
				continue
			}
			for c := range column(4) {
				if col := r.Sums.column(c); p.HistogramSameAs == "sums."+columnName(c) && col.Count == p.Count {
					h := col.Histogram
					p.Histogram, p.HistogramSameAs = &h, ""
				}
			}
		}
	}
	if tl, s := r.Timeline, r.Sums; tl != nil && s != nil {
		for i := range tl.Intervals {
			if iv := &tl.Intervals[i]; iv.HistogramSameAs == "sums.total" && iv.Requests == s.Total.Count {
				iv.Histogram, iv.HistogramSameAs = s.Total.Histogram, ""
			}
		}
	}
	if rr := r.Rate; rr != nil {
		if h := rr.CorrectedHistogram; h != nil && rr.Corrected.Histogram == nil && h.Data != "" {
			rr.Corrected.Histogram = h
		}
		rr.CorrectedHistogram = nil
	}
	return nil
}

// marshalIndentless is json.Marshal without HTML escaping (WriteJSON's
// encoder indents what it is given).
func marshalIndentless(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// measuredDist is a distribution the engine measures beyond ab's columns and
// the extended phases: its name in the document's "distributions", its
// unit, and where the engine's extended result keeps it. A new measured
// distribution is an entry of measuredDists (the engine records it; a
// catalog entry reads its figures with distributionOf): Summarize fills it,
// the document writes, reads and checks it, MergeRuns merges it.
type measuredDist struct {
	name string
	unit distUnit
	of   func(x *client.ExtraResult) *samples.Dist
}

// measuredDists are the measured distributions, in the order the engine
// lists them.
var measuredDists = []measuredDist{}

// measuredOf is the measured distributions of a run's extended result (nil
// without one, or without any).
func measuredOf(x *client.ExtraResult) map[string]*distFigures {
	if x == nil || len(measuredDists) == 0 {
		return nil
	}
	out := make(map[string]*distFigures, len(measuredDists))
	for _, m := range measuredDists {
		d := distIn(m.of(x), m.unit)
		out[m.name] = &d
	}
	return out
}

// distributionOf is the run's measured distribution name, nil if it has
// none (a catalog entry reads its figures from it).
func distributionOf(r *Run, name string) *distFigures {
	return r.Distributions[name]
}

// distributions merges the runs' measured distributions (mergeDists), in
// their start order: each that every run has (as a section some run lacks
// is absent from a merge).
func (mg *merging) distributions() map[string]*distFigures {
	var out map[string]*distFigures
	for name, first := range mg.first().Distributions {
		ds := make([]*distFigures, 0, len(mg.order))
		for _, i := range mg.order {
			if d := mg.runs[i].Distributions[name]; d != nil && d.unit() == first.unit() {
				ds = append(ds, d)
			}
		}
		if len(ds) < len(mg.order) {
			continue
		}
		m, _ := mergeDists(ds)
		if first.Unit != "" {
			m.Unit = first.Unit
			if m.Histogram != nil {
				m.Histogram.Unit = first.Unit
			}
		}
		if out == nil {
			out = map[string]*distFigures{}
		}
		out[name] = &m
	}
	return out
}

// distributions checks the measured distributions: each in the unit its
// entry of measuredDists says (one this gab does not know in a unit it
// knows), of no more values than the document's requests.
func (c *checker) distributions(ds map[string]*distFigures, limit int64) {
	for name, d := range ds {
		if d == nil {
			continue
		}
		u := d.unit()
		for _, m := range measuredDists {
			if m.name == name {
				u = m.unit
			}
		}
		if !u.known() {
			c.fail("distributions."+name+".unit", "%q is not us or bytes", d.Unit)
			return
		}
		d.check(c, "distributions."+name, limit, u)
	}
}
