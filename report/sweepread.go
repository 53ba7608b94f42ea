package report

import (
	"encoding/json"
	"fmt"

	"gab/internal/printable"
)

// MaxSweepBytes is the largest sweep document gab reads: MaxRuns runs'
// documents (about 10 KiB each in a sweep: no timeline) with room to spare.
const MaxSweepBytes = 256 << 20

// DecodeSweep decodes a sweep document (gab sweep --json) read from the
// file name, as DecodeDocument decodes a run's: its strings made safe
// to print, every number checked (CheckNumbers), each run's document
// checked (ValidateDocument), and each point's figures against its
// runs'. Errors start with name and name the field.
func DecodeSweep(name string, raw []byte) (*SweepDocument, error) {
	name = printable.String(name)
	if len(raw) > MaxSweepBytes {
		return nil, DocumentTooLarge(name, "sweep document", MaxSweepBytes)
	}
	var d SweepDocument
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, JSONError(name, "gab sweep document", err)
	}
	switch {
	case d.Tool != "gab" || d.Schema != "gab-sweep":
		return nil, fmt.Errorf("%s: not a gab sweep document (no \"schema\": \"gab-sweep\")", name)
	case d.SchemaVersion > SweepSchemaVersion:
		return nil, fmt.Errorf("%s: sweep schema_version %d is newer than this gab's %d: use the gab that wrote it", name, d.SchemaVersion, SweepSchemaVersion)
	}
	EscapeStrings(&d)
	if err := ValidateSweep(&d); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return &d, nil
}

// ValidateSweep checks a decoded sweep document; the error names the
// first field found wrong.
func ValidateSweep(d *SweepDocument) error {
	if err := CheckNumbers(d); err != nil {
		return err
	}
	for i := range d.Points {
		if err := validateSweepPoint(fmt.Sprintf("points[%d]", i), &d.Points[i]); err != nil {
			return err
		}
	}
	return nil
}

func validateSweepPoint(field string, p *SweepPoint) error {
	bad := func(f, format string, args ...any) error {
		return &FieldError{Field: field + f, Problem: fmt.Sprintf(format, args...)}
	}
	fixed := func(obj FixedFields, name string) float64 { v, _ := obj.Float(name); return v }
	lo, mean, hi := fixed(p.RPS, "min_per_s"), fixed(p.RPS, "mean_per_s"), fixed(p.RPS, "max_per_s")
	p50, p99 := fixed(p.Latency, "p50_ms"), fixed(p.Latency, "p99_ms")
	if f, ok := checkFixed(p); !ok {
		return bad(f, "not of its type")
	}
	switch {
	case p.Concurrency < 1 || p.Concurrency > MaxConcurrency:
		return bad(".concurrency", "%d is not a concurrency (1 to %d)", p.Concurrency, MaxConcurrency)
	case p.Repeats != len(p.Runs):
		return bad(".repeats", "%d, but the point has %d runs", p.Repeats, len(p.Runs))
	case p.RunsWithError > len(p.Runs):
		return bad(".runs_with_error", "%d, more than the %d runs", p.RunsWithError, len(p.Runs))
	case lo > hi || mean < lo || mean > hi:
		return bad(".requests_per_second", "min_per_s, mean_per_s and max_per_s (%g, %g, %g) are out of order", lo, mean, hi)
	case p50 > p99:
		return bad(".latency.p50_ms", "%g is above p99_ms %g", p50, p99)
	}
	var complete, failed, counted int64
	for j := range p.Runs {
		run := &p.Runs[j]
		f := fmt.Sprintf("%s.runs[%d]", field, j)
		if run.RequestsPerSecond < lo || run.RequestsPerSecond > hi {
			return &FieldError{Field: f + ".requests_per_second",
				Problem: fmt.Sprintf("%g is outside the point's min_per_s..max_per_s (%g..%g)", run.RequestsPerSecond, lo, hi)}
		}
		doc := run.Document
		if doc == nil {
			continue
		}
		if err := ValidateDocument(doc); err != nil {
			return fmt.Errorf("%s.document.%w", f, err)
		}
		if rep := doc.Report; rep != nil {
			complete += int64(rep.CompleteRequests)
			failed += int64(rep.FailedRequests)
		}
		if x := doc.Extended; x != nil {
			counted += x.Phases.Total.Count
		}
	}
	switch {
	case int64(p.RequestsComplete) != complete:
		return bad(".requests_complete", "%d, but its runs' documents count %d", p.RequestsComplete, complete)
	case int64(p.RequestsFailed) != failed:
		return bad(".requests_failed", "%d, but its runs' documents count %d", p.RequestsFailed, failed)
	case fixed(p.Latency, "count") != float64(counted):
		return bad(".latency.count", "%g, but its runs' documents count %d", fixed(p.Latency, "count"), counted)
	}
	return nil
}
