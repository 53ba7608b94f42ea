package capacity

import (
	"context"
	"errors"
	"fmt"
	"io"

	"gab/internal/outfile"
	"gab/internal/printable"
	"gab/internal/runcmd"
	"gab/report"
)

// WritePictures draws the knee into plot (gnuplot) and writes the HTML
// report into html, each when named.
func WritePictures(ctx context.Context, plot, html string, d *report.CapacityDocument) error {
	if plot != "" {
		if err := runcmd.DrawPlot(context.WithoutCancel(ctx), plot, Figure(d)); err != nil {
			return runcmd.PictureError("--plot: ", err)
		}
	}
	if html == "" {
		return nil
	}
	return outfile.WriteAtomic(html, func(w io.Writer) error { return report.WriteHTMLPage(w, Page(d)) })
}

// Plot is gab plot of capacity documents: their knee (several documents'
// targets as LABEL:target) into out, an HTML page when isHTML. docs holds
// each input's capacity document (nil: a run or a sweep), labels and paths
// its label and file; done is false when no input is one.
func Plot(ctx context.Context, out string, isHTML bool, docs []*report.CapacityDocument, labels, paths []string) (done bool, err error) {
	var caps []*report.CapacityDocument
	for _, d := range docs {
		if d != nil {
			caps = append(caps, d)
		}
	}
	switch {
	case len(caps) == 0:
		return false, nil
	case len(caps) < len(docs):
		return true, errors.New("a capacity document is drawn with other capacity documents, not with runs or sweeps")
	}
	d := Combine(caps, labels, paths)
	if isHTML {
		return true, WritePictures(ctx, "", out, d)
	}
	return true, WritePictures(ctx, out, "", d)
}

// CompareFiles is gab compare of capacity documents: every document after
// the first (names[0], whose bytes are raw) against the first, target by
// target (by label). read reads a document and its schema.
func CompareFiles(names []string, raw []byte, read func(name string) ([]byte, string, error)) ([][]Change, error) {
	a, err := decodeFile(names[0], raw)
	if err != nil {
		return nil, err
	}
	var all [][]Change
	for _, name := range names[1:] {
		raw, schema, err := read(name)
		if err != nil || schema != Schema {
			return nil, fmt.Errorf("%s: not a capacity document (a capacity document compares with capacity documents)", printable.String(name))
		}
		b, err := decodeFile(name, raw)
		if err != nil {
			return nil, err
		}
		rows := Compare(a, b)
		if len(rows) == 0 {
			return nil, fmt.Errorf("%s and %s have no target in common", printable.String(names[0]), printable.String(name))
		}
		all = append(all, rows)
	}
	return all, nil
}

// decodeFile decodes and checks the document name; errors start with its
// name.
func decodeFile(name string, raw []byte) (*report.CapacityDocument, error) {
	d, err := Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", printable.String(name), err)
	}
	return d, nil
}
