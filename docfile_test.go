package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gab/internal/docfile"
	"gab/report"
)

// gab merge, compare and plot refuse a document over the bound before
// reading it, and say the bound: a file one byte over 64 MiB (sparse: it
// costs no disk) is refused at once, without the 64 MiB read.
func TestDocumentFileOverTheBound(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(report.MaxDocumentBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ok := writeJSONTo(t, dir, "ok.json", syntheticDoc(1000, 2000, 0))
	runDoc := ": larger than 64 MiB, the most gab reads of a run document\n"
	other := ": larger than 64 MiB, the most gab reads of a document other than a sweep's\n"
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"gab", "merge", big, ok}, "gab merge: " + big + runDoc},
		{[]string{"gab", "compare", big, ok}, "gab compare: " + big + other},
		{[]string{"gab", "compare", ok, big}, big + other},
		{[]string{"gab", "plot", "-o", filepath.Join(dir, "p.html"), big}, big + other},
	} {
		status, stdout, stderr := runGab(t, c.argv...)
		if status == 0 || stdout != "" || !strings.HasSuffix(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want one line ending %q", c.argv[1:], status, stdout, stderr, c.want)
		}
	}
}

// A sweep document (its "schema" first, as gab writes it) may be larger
// than a run document, up to report.MaxSweepBytes; gab merge reads no
// sweep and holds it to a run document's bound.
func TestReadDocumentFileSweepBound(t *testing.T) {
	dir := t.TempDir()
	sparse := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(`{"schema": "gab-sweep", "schema_version": 1, "tool": "gab", "points": [`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
		return p
	}
	over64 := sparse("over64.json", report.MaxDocumentBytes+10)
	if raw, err := docfile.Read(over64, true); err != nil || len(raw) != report.MaxDocumentBytes+10 {
		t.Errorf("a sweep document over 64 MiB: %d bytes, %v", len(raw), err)
	}
	if _, err := docfile.Read(over64, false); err == nil || !strings.HasSuffix(err.Error(), "larger than 64 MiB, the most gab reads of a run document") {
		t.Errorf("the same for gab merge: %v", err)
	}
	over256 := sparse("over256.json", report.MaxSweepBytes+1)
	if _, err := docfile.Read(over256, true); err == nil || err.Error() != over256+": larger than 256 MiB, the most gab reads of a sweep document" {
		t.Errorf("a sweep document over 256 MiB: %v", err)
	}
}
