package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/internal/samples"
	"gab/report"
)

// runShards runs -n n -c c as shards 0..count-1 of run id against url, with
// the options more, and returns the documents' paths.
func runShards(t *testing.T, dir, url, runID string, n, c, count int, more ...string) []string {
	t.Helper()
	var files []string
	for i := 0; i < count; i++ {
		f := filepath.Join(dir, fmt.Sprintf("%s-%d.json", runID, i))
		args := append([]string{"gab", "-k", "-n", fmt.Sprint(n), "-c", fmt.Sprint(c)}, more...)
		status, _, stderr := runArgs(t, t.Context(), append(args,
			"--shard", fmt.Sprintf("%d/%d", i, count), "--run-id", runID, "--json", f, url+"/")...)
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
	var d report.Run
	if status != 0 || json.Unmarshal([]byte(stdout), &d) != nil {
		t.Fatalf("merge --format json: %d %s\n%s", status, stderr, stdout)
	}
	if d.Report.CompleteRequests != 25 || d.Shard == nil || len(d.Shard.Merged) != 3 || d.Sums.Total.Count != 25 ||
		d.Extended == nil || d.Extended.StatusCounts["200"] != 25 || d.Run.Requests != 25 || d.Run.Concurrency != 4 {
		t.Errorf("merged document: %+v", d)
	}
}

// TestMergeApdexOfShards: shards run with --apdex merge into the APDEX of
// one run over their requests: the counts of every request, the score
// (satisfied + tolerating/2) / requests, exact (no request failed), in the
// document, its figures and the text.
func TestMergeApdexOfShards(t *testing.T) {
	url, _ := startDocServer(t)
	files := runShards(t, t.TempDir(), url, "ap", 25, 4, 2, "--apdex", "300us,2ms")
	var sat, tol, fru int
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := report.DecodeDocument(f, raw)
		if err != nil || d.Apdex == nil {
			t.Fatalf("%s: %v, apdex %v", f, err, d.Apdex)
		}
		sat, tol, fru = sat+d.Apdex.Satisfied, tol+d.Apdex.Tolerating, fru+d.Apdex.Frustrated
	}
	status, stdout, stderr := runArgs(t, t.Context(), append([]string{"gab", "merge", "--format", "json"}, files...)...)
	if status != 0 {
		t.Fatalf("merge: %d %s", status, stderr)
	}
	d, err := report.DecodeDocument("merged", []byte(stdout))
	if err != nil {
		t.Fatal(err)
	}
	a := d.Apdex
	score := (float64(sat) + float64(tol)/2) / 25
	if a == nil || a.Requests != 25 || a.Satisfied != sat || a.Tolerating != tol || a.Frustrated != fru || a.Failed != 0 ||
		a.Score != score || a.Bound != "exact" || a.Source != "exact" || a.SatisfiedUs != 300 || a.ToleratedUs != 2000 {
		t.Fatalf("merged apdex %+v; want %d, %d, %d of 25, score %v", a, sat, tol, fru, score)
	}
	if !slices.Contains(d.Figures, report.FigureValue{Key: "apdex", Value: score}) {
		t.Errorf("figures %v lack apdex %v", d.Figures, score)
	}
	status, stdout, stderr = runArgs(t, t.Context(), append([]string{"gab", "merge"}, files...)...)
	want := fmt.Sprintf("APDEX (T 300µs, F 2ms): %.3f\n  satisfied %d, tolerating %d, frustrated %d of 25 requests (0 failed)\n", score, sat, tol, fru)
	if status != 0 || !strings.Contains(stdout, want) {
		t.Errorf("merge: %d %s; the text lacks %q:\n%s", status, stderr, want, stdout)
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

// hostileHistogram is a 52-byte HDR histogram whose header claims 1..2^62 at
// 5 significant digits (a 49 MB counts array, decoded unchecked).
const hostileHistogram = "HISTFAAAAB14nJJpmSzMgACsUJrRAcqw/wChAQEAAP//PksCvA=="

// mutateDocuments rewrites the documents files through mutate (i counts
// the files).
func mutateDocuments(t *testing.T, files []string, mutate func(i int, d *report.Run)) {
	t.Helper()
	for i, f := range files {
		d := readRun(t, f)
		mutate(i, d)
		writeJSONTo(t, filepath.Dir(f), filepath.Base(f), d)
	}
}

// mergeAllocated runs gab merge on files and says what it allocated.
func mergeAllocated(t *testing.T, files []string) (status int, stdout, stderr string, bytes uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	status, stdout, stderr = runArgs(t, t.Context(), append([]string{"gab", "merge"}, files...)...)
	runtime.ReadMemStats(&after)
	return status, stdout, stderr, after.TotalAlloc - before.TotalAlloc
}

// TestMergeHostileDocuments: small documents that claim what no gab run
// writes are refused in one line naming the field, exit 1, in about the
// memory a valid merge takes.
func TestMergeHostileDocuments(t *testing.T) {
	url, _ := startDocServer(t)
	dir := t.TempDir()
	valid := runShards(t, dir, url, "v", 6, 2, 2, "--apdex", "50ms", "--extended")
	_, _, _, validCost := mergeAllocated(t, valid)
	for _, c := range []struct {
		name   string
		mutate func(i int, d *report.Run)
		want   string
	}{
		{"2^31 shards", func(i int, d *report.Run) { d.Shard.Count = 1 << 31 }, "shard.count: 2147483648 is not a number of shards (1 to 200000)"},
		{"years 1 and 9999", func(i int, d *report.Run) {
			d.StartTime = []string{"0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"}[i]
		}, "cannot merge: start_time: "},
		{"a histogram header of 1..2^62 at 5 digits", func(i int, d *report.Run) { d.Sums.Total.Histogram.Data = hostileHistogram },
			"sums.total.histogram: claims 1..4611686018427387904 at 5 significant digits, beyond gab's 1..86400000000 at 3"},
		{"failed -50", func(i int, d *report.Run) { d.Report.FailedRequests = -50 }, "report.failed_requests: -50 is negative"},
		{"complete 10^9", func(i int, d *report.Run) { d.Report.CompleteRequests = 1e9 }, "report.complete_requests: 1000000000, but the sums count 3 requests"},
		{"complete -2^63", func(i int, d *report.Run) { d.Report.CompleteRequests = math.MinInt64 }, "report.complete_requests: -9223372036854775808 is negative"},
		{"min above max", func(i int, d *report.Run) { d.Sums.Waiting.MinUs = d.Sums.Waiting.MaxUs + 1 }, "sums.waiting.min_us: "},
		{"2^60 values", func(i int, d *report.Run) {
			h := samples.NewHist()
			_ = h.RecordValues(5, 1<<60)
			b, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
			d.Sums.Connect.Histogram.Data = string(b)
		}, "sums.connect.histogram: holds 1152921504606846976 values for a count of 3"},
		{"time taken past a Duration", func(i int, d *report.Run) { d.Report.TimeTakenUs = math.MaxInt64 / 100 },
			"report.time_taken_us: 92233720368547758 is beyond what a gab document holds (2^53)"},
		{"a mean of 6e13 µs", func(i int, d *report.Run) { d.Sums.Total.SumUs = 18e13 }, "sums.total.sum_us: 180000000000000 is not within count × [min_us, max_us]"},
		{"an APDEX of 2", func(i int, d *report.Run) { d.Apdex.Score = 2 }, "apdex.score: 2 is not within 0..1"},
		{"-3 satisfied", func(i int, d *report.Run) { d.Apdex.Satisfied = -3 }, "apdex.satisfied: -3 is negative"},
		{"T of 0", func(i int, d *report.Run) { d.Apdex.SatisfiedUs = 0 }, "apdex.satisfied_us: 0: T must be above 0"},
		{"APDEX of 2^30 requests", func(i int, d *report.Run) { d.Apdex.Requests, d.Apdex.Satisfied = 1<<30, 1<<30 },
			"apdex.requests: 1073741824, but report.complete_requests is 3"},
		{"a first error a day after the run", func(i int, d *report.Run) {
			f, day := d.Extended.FailuresByClass["receive"], 86400.0
			f.FirstAtS = &day
			d.Extended.FailuresByClass["receive"] = f
		}, "extended.failures_by_class.receive.first_at_s: 86400 s, after the run's end"},
	} {
		sub := t.TempDir()
		var files []string
		for _, f := range valid {
			raw, _ := os.ReadFile(f)
			files = append(files, filepath.Join(sub, filepath.Base(f)))
			os.WriteFile(files[len(files)-1], raw, 0o644)
		}
		mutateDocuments(t, files, c.mutate)
		status, stdout, stderr, cost := mergeAllocated(t, files)
		if status != exitError || stdout != "" || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != strings.Count(stderr, "gab merge: ") {
			t.Errorf("%s: status %d, stdout %q, stderr %q; want one line per refusal with %q", c.name, status, stdout, stderr, c.want)
		}
		if cost > validCost {
			t.Errorf("%s: refusing allocated %d bytes, merging the valid documents %d", c.name, cost, validCost)
		}
	}
}

// TestMergeEscapesDocumentStrings: a document's server_software and run_id
// reach the report with ESC, OSC 52 and newlines written as \xNN.
func TestMergeEscapesDocumentStrings(t *testing.T) {
	url, _ := startDocServer(t)
	dir := t.TempDir()
	files := runShards(t, dir, url, "e", 6, 2, 2)
	mutateDocuments(t, files, func(i int, d *report.Run) {
		d.Report.ServerSoftware = "evil\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\nComplete requests:      999"
		d.Shard.RunID = "r\x1b]0;pwned\x07\n"
	})
	status, stdout, stderr := runArgs(t, t.Context(), append([]string{"gab", "merge"}, files...)...)
	if status != 0 {
		t.Fatalf("merge: %d %s", status, stderr)
	}
	for _, want := range []string{
		`Server Software:        evil\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\x0aComplete requests:      999` + "\n",
		`Merged:                 2 shards of run r\x1b]0;pwned\x07\x0a` + "\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if strings.ContainsAny(stdout, "\x1b\x07") || strings.Contains(stdout, "\nComplete requests:      999") {
		t.Errorf("a document's bytes reach the terminal raw:\n%q", stdout)
	}
	status, _, stderr = runArgs(t, t.Context(), "gab", "merge", files[0])
	if status == 0 || strings.ContainsAny(stderr, "\x1b\x07") || !strings.Contains(stderr, `(run id "r\\x1b]0;pwned\\x07\\x0a")`) {
		t.Errorf("refusal: %d %q", status, stderr)
	}
}

// TestMergeTextStartsWithTheReport: ab's report follows ab's banner after two
// blank lines; a merge has no banner, so its text starts with the report.
func TestMergeTextStartsWithTheReport(t *testing.T) {
	url, _ := startDocServer(t)
	files := runShards(t, t.TempDir(), url, "s", 4, 2, 2)
	status, stdout, stderr := runArgs(t, t.Context(), append([]string{"gab", "merge"}, files...)...)
	if status != 0 || !strings.HasPrefix(stdout, "Server Software:        test/1.0\n") {
		t.Errorf("merge: %d %s\n%q", status, stderr, stdout)
	}
}

// TestEveryReaderValidates: gab plot and gab compare refuse an inconsistent
// document with the same one line, naming the field, as gab merge.
func TestEveryReaderValidates(t *testing.T) {
	url, _ := startDocServer(t)
	dir := t.TempDir()
	files := runShards(t, dir, url, "v", 6, 2, 2)
	good := files[1]
	mutateDocuments(t, files[:1], func(i int, d *report.Run) { d.Report.FailedRequests = -50 })
	want := files[0] + ": report.failed_requests: -50 is negative\n"
	for _, args := range [][]string{
		{"gab", "merge", files[0], good},
		{"gab", "plot", "-o", filepath.Join(dir, "x.svg"), files[0]},
		{"gab", "compare", files[0], good},
	} {
		status, stdout, stderr := runArgs(t, t.Context(), args...)
		if status != exitError || stdout != "" || stderr != "gab "+args[1]+": "+want {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want exit 1 and %q", args[1:2], status, stdout, stderr, "gab "+args[1]+": "+want)
		}
	}
}
