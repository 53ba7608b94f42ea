package main

import (
	"path/filepath"
	"strings"
	"testing"

	"gab/internal/hdrjs"
)

// TestHlogReadBackByHdrHistogramJS runs gab in rate mode with --hlog and
// --json and reads the interval log with hdr-histogram-js (node): every
// interval's count and p99, of both the latencies and the corrected ones,
// equal the JSON timeline's, whose counts sum to Complete requests.
func TestHlogReadBackByHdrHistogramJS(t *testing.T) {
	dir := t.TempDir()
	hlog, doc := filepath.Join(dir, "run.hlog"), filepath.Join(dir, "run.json")
	status, _, stderr := runGab(t, "gab", "-q", "-k", "-n", "1200", "-c", "4", "--rate", "2000",
		"--interval", "100ms", "--hlog", hlog, "--json", doc, extServer(t)+"/")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	d := readRun(t, doc)
	tl := d.Timeline
	if tl == nil || !tl.Corrected || tl.IntervalUs != 100_000 || len(tl.Intervals) < 5 {
		t.Fatalf("JSON timeline %+v", tl)
	}
	var sum int64
	for _, iv := range tl.Intervals {
		sum += iv.Requests
	}
	if sum != int64(d.Report.CompleteRequests) {
		t.Errorf("intervals sum to %d requests, complete_requests is %d", sum, d.Report.CompleteRequests)
	}
	got := hdrjs.ReadLog(t, hlog)
	if len(got) != 2*len(tl.Intervals) {
		t.Fatalf("hdr-histogram-js read %d histograms for %d intervals", len(got), len(tl.Intervals))
	}
	for i, iv := range tl.Intervals {
		for j, p99 := range []int64{iv.P99Us, iv.Corrected.P99Us} {
			g := got[2*i+j]
			if g.Count != iv.Requests || g.P99 != p99 {
				t.Errorf("interval %d, histogram %d (%s): hdr-histogram-js reads %d values, p99 %d µs; gab says %d, %d µs",
					i, j, g.Tag, g.Count, g.P99, iv.Requests, p99)
			}
		}
	}
}

func TestIntervalOptions(t *testing.T) {
	url := extServer(t) + "/"
	for _, c := range []struct {
		argv   []string
		status int
		stderr string
	}{
		{[]string{"--interval", "50ms", "--extended"}, exitUsage, "--interval must be at least 100ms"},
		{[]string{"--interval", "1s"}, exitUsage, "--interval needs --hlog"},
		{[]string{"--hlog", filepath.Join(t.TempDir(), "no", "such", "dir.hlog")}, exitError, "gab: --hlog: open "},
	} {
		status, stdout, stderr := runGab(t, append(append([]string{"gab", "-n", "3"}, c.argv...), url)...)
		if status != c.status || !strings.Contains(stderr, c.stderr) || strings.Contains(stdout, "Complete requests") {
			t.Errorf("%v: status %d, stderr %q, stdout %q", c.argv, status, stderr, stdout)
		}
	}
}

// TestExtendedTimelineTable: --extended ends with the per-interval table, or
// a note for a run shorter than two intervals. (report's tests check that
// long runs merge intervals into at most 60 rows.)
func TestExtendedTimelineTable(t *testing.T) {
	url := extServer(t) + "/slow"
	status, stdout, stderr := runGab(t, "gab", "-k", "-n", "12", "-c", "2", "--extended", "--interval", "100ms", url)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	_, table, ok := strings.Cut(stdout, "\nLatency over time (100ms intervals")
	if !ok {
		t.Fatalf("no timeline table:\n%s", stdout)
	}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	rows := 0
	for _, l := range lines {
		if f := strings.Fields(l); len(f) == 10 && f[0] != "start(s)" {
			rows++
		}
	}
	if rows < 2 || rows > 60 { // about 4 rows; more on a busy machine
		t.Errorf("%d rows in the timeline table:\n%s", rows, table)
	}
	status, stdout, _ = runGab(t, "gab", "-n", "3", "--extended", url)
	if status != 0 || !strings.Contains(stdout, "(the run was shorter than two intervals") {
		t.Errorf("short run: status %d\n%s", status, stdout)
	}
}
