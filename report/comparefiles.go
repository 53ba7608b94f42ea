package report

import (
	"encoding/json"
	"fmt"
	"io"

	"gab/internal/printable"
)

// This file is gab compare of run documents and sweeps: each document read
// into CompareGroups (a run, or a sweep's points), every document after the
// first compared with the first (Compare), and the comparisons written.

// CompareSide decodes raw, the document name of the schema, as a run
// document or a sweep (a group per point that has a finished run).
func CompareSide(name string, raw []byte, schema string) ([]CompareGroup, error) {
	if schema == "gab-sweep" {
		sw, err := DecodeSweep(name, raw)
		if err != nil {
			return nil, err
		}
		var groups []CompareGroup
		for _, p := range sw.Points {
			g := CompareGroup{Key: fmt.Sprintf("%s -c %d", p.Label, p.Concurrency), Pooled: true}
			if p.Size != nil {
				g.Key = fmt.Sprintf("%s size %s -c %d", p.Label, p.Size.Text, p.Concurrency)
			}
			for _, r := range p.Runs {
				if r.Document != nil && r.Document.Report != nil {
					g.Runs = append(g.Runs, r.Document)
				}
			}
			if len(g.Runs) > 0 {
				groups = append(groups, g)
			}
		}
		if len(groups) == 0 {
			return nil, fmt.Errorf("%s: a sweep without a finished run", printable.String(name))
		}
		return groups, nil
	}
	d, err := DecodeDocument(name, raw)
	if err != nil {
		return nil, err
	}
	if d.Report == nil {
		return nil, fmt.Errorf("%s: has no report (ending %s)", printable.String(name), d.Ending)
	}
	return []CompareGroup{{Runs: []*Run{d}}}, nil
}

// CompareFiles compares every document after the first (names[0], whose
// bytes are raw, of the schema) with the first; read reads a document and
// its schema, commandSettings a command line's settings (Compare).
func CompareFiles(names []string, raw []byte, schema string, read func(name string) ([]byte, string, error),
	commandSettings func(argv []string) map[string]string) ([]*Comparison, error) {
	ga, err := CompareSide(names[0], raw, schema)
	if err != nil {
		return nil, err
	}
	var docs []*Comparison
	for _, nameB := range names[1:] {
		rawB, schemaB, err := read(nameB)
		if err != nil {
			return nil, err
		}
		gb, err := CompareSide(nameB, rawB, schemaB)
		if err != nil {
			return nil, err
		}
		doc, err := Compare(names[0], nameB, ga, gb, commandSettings)
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

// WriteComparisons writes docs: JSON (format "json": one comparison, or an
// array of them) or text (each after an empty line but the first).
func WriteComparisons(w io.Writer, format string, docs []*Comparison) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if len(docs) == 1 {
			return enc.Encode(docs[0])
		}
		return enc.Encode(docs)
	}
	for i, doc := range docs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := doc.WriteText(w); err != nil {
			return err
		}
	}
	return nil
}
