package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gab/report"
)

// runShards runs -n n -c c as shards 0..count-1 of run id against url and
// returns the documents' paths.
func runShards(t *testing.T, dir, url, runID string, n, c, count int) []string {
	t.Helper()
	var files []string
	for i := 0; i < count; i++ {
		f := filepath.Join(dir, fmt.Sprintf("%s-%d.json", runID, i))
		status, _, stderr := runArgs(t, t.Context(), "gab", "-k", "-n", fmt.Sprint(n), "-c", fmt.Sprint(c),
			"--shard", fmt.Sprintf("%d/%d", i, count), "--run-id", runID, "--json", f, url+"/")
		if status != 0 {
			t.Fatalf("shard %d: status %d: %s", i, status, stderr)
		}
		files = append(files, f)
	}
	return files
}

func TestMergeShards(t *testing.T) {
	url, hits := startDocServer(t)
	dir := t.TempDir()
	files := runShards(t, dir, url, "r1", 25, 4, 3)
	if hits.Load() != 25 {
		t.Fatalf("the shards sent %d requests, want 25", hits.Load())
	}
	status, stdout, stderr := runArgs(t, t.Context(), append([]string{"gab", "merge"}, files...)...)
	if status != 0 {
		t.Fatalf("merge: %d %s", status, stderr)
	}
	for _, want := range []string{
		"Server Software:        test/1.0\n", "Document Length:        100 bytes\n",
		"Concurrency Level:      4\n", "Complete requests:      25\n", "Failed requests:        0\n",
		"Keep-Alive requests:    25\n", "HTML transferred:       2500 bytes\n",
		"Connection Times (ms)\n", "100%", "medians and percentiles from the merged histograms (3 significant digits, within 0.1%)",
		"Merged:                 3 shards of run r1\n", "Status codes:           200: 25\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("merged report lacks %q:\n%s", want, stdout)
		}
	}
	status, dirOut, stderr := runArgs(t, t.Context(), "gab", "merge", dir) // a directory: its *.json files
	if status != 0 || dirOut != stdout {
		t.Errorf("merge DIR: %d %s\n%s", status, stderr, dirOut)
	}
	status, stdout, stderr = runArgs(t, t.Context(), append([]string{"gab", "merge", "--format", "json"}, files...)...)
	var d report.Document
	if status != 0 || json.Unmarshal([]byte(stdout), &d) != nil {
		t.Fatalf("merge --format json: %d %s\n%s", status, stderr, stdout)
	}
	if d.Report.CompleteRequests != 25 || d.Shard == nil || len(d.Shard.Merged) != 3 || d.Sums.Total.Count != 25 ||
		d.Extended == nil || d.Extended.StatusCounts["200"] != 25 || d.Run.Requests != 25 || d.Run.Concurrency != 4 {
		t.Errorf("merged document: %+v", d)
	}
}

// TestMergeBadInput: each a clear message and a non-zero exit, never a partial merge.
func TestMergeBadInput(t *testing.T) {
	url, _ := startDocServer(t)
	dir := t.TempDir()
	a := runShards(t, dir, url, "a", 6, 2, 2)
	b := runShards(t, dir, url, "b", 6, 2, 2)
	raw, err := os.ReadFile(a[1])
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.json")
	os.WriteFile(truncated, raw[:len(raw)/2], 0o644)
	newer := filepath.Join(dir, "newer.json")
	os.WriteFile(newer, []byte(strings.Replace(string(raw), `"schema_version": `+fmt.Sprint(report.SchemaVersion), `"schema_version": 99`, 1)), 0o644)
	missing := filepath.Join(dir, "a-7.json")
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{a[0]}, "shard(s) 1 of 2 missing (run id \"a\")"},
		{[]string{a[0], missing}, "a-7.json: no such file (a shard that failed or never ran?)"},
		{[]string{a[0], truncated}, "truncated.json: not a complete JSON document (truncated"},
		{[]string{a[0], b[1]}, "documents from different runs"},
		{[]string{a[0], a[1], a[1]}, "shard 1/2 appears 2 times"},
		{[]string{a[0], newer}, "schema_version 99 is newer"},
		{nil, "no FILE given"},
		{[]string{t.TempDir()}, "a directory without *.json files"},
	} {
		status, stdout, stderr := runArgs(t, t.Context(), append([]string{"gab", "merge"}, c.files...)...)
		if status == 0 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("merge %v: status %d, stdout %q, stderr %q; want %q", c.files, status, stdout, stderr, c.want)
		}
	}
	status, stdout, stderr := runArgs(t, t.Context(), "gab", "merge", "--force", a[0], b[1])
	if status != 0 || !strings.Contains(stdout, "--force: merged although documents from different runs") ||
		!strings.Contains(stdout, "Complete requests:      6\n") {
		t.Errorf("--force: %d %s %s", status, stdout, stderr)
	}
}
