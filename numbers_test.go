package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"gab/internal/outfile"
	"gab/internal/runcmd"
	"gab/internal/threshold"
)

// --warmup: the server sees the warm-up requests, the report counts only -n
// and says how many were left out.
func TestWarmupReport(t *testing.T) {
	url, seen := startDocServer(t)
	status, stdout, stderr := runGab(t, "ab", "--warmup", "25", "-n", "40", "-c", "4", url+"/")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	if got := seen.Load(); got != 65 {
		t.Errorf("server saw %d requests, want 25 + 40", got)
	}
	if !strings.Contains(stdout, "Complete requests:      40\n") {
		t.Errorf("the report counts more than -n:\n%s", stdout)
	}
	if !regexp.MustCompile(`\nWarm-up requests:       25 \(0 failed\) in \d+\.\d{3} seconds, sent before the run and left out of every figure\n`).MatchString(stdout) {
		t.Errorf("no warm-up line:\n%s", stdout)
	}
	status, stdout, _ = runGab(t, "ab", "--format", "json", "--warmup", "10", "-n", "5", url+"/")
	doc := decodeOne(t, stdout)
	if status != 0 || fmt.Sprint(field(doc, "warmup.requests")) != "10" || fmt.Sprint(field(doc, "report.complete_requests")) != "5" {
		t.Errorf("JSON: status %d, warm-up %v, complete %v", status, field(doc, "warmup"), field(doc, "report.complete_requests"))
	}
}

// --fail-if: one verdict line per threshold after the report, exit 3 when
// any fails, the verdicts in the JSON document.
func TestFailIf(t *testing.T) {
	url, _ := startDocServer(t)
	status, stdout, stderr := runGab(t, "ab", "--fail-if", "p99<1s", "--fail-if", "failed=0", "--fail-if", "non2xx<1%", "-n", "20", "-c", "2", url+"/")
	if status != 0 {
		t.Fatalf("passing thresholds: status %d, stderr %q", status, stderr)
	}
	lines := regexp.MustCompile(`(?m)^--fail-if .*$`).FindAllString(stdout, -1)
	if len(lines) != 3 || !regexp.MustCompile(`^--fail-if p99<1s: passed \(p99 = \d+\.\d{3} ms\)$`).MatchString(lines[0]) ||
		lines[1] != "--fail-if failed=0: passed (failed = 0)" || lines[2] != "--fail-if non2xx<1%: passed (non2xx = 0.00 %)" {
		t.Errorf("verdicts %q in:\n%s", lines, stdout)
	}
	if !strings.Contains(stdout, "Percentage of the requests served") || strings.Index(stdout, "--fail-if") < strings.Index(stdout, "longest request") {
		t.Errorf("the verdicts must follow the report:\n%s", stdout)
	}

	status, stdout, _ = runGab(t, "ab", "--fail-if", "rps>100000000", "--fail-if", "failed=0", "-n", "10", url+"/")
	if status != threshold.ExitStatus || !strings.Contains(stdout, "--fail-if rps>100000000: FAILED (rps = ") || !strings.Contains(stdout, "--fail-if failed=0: passed") {
		t.Errorf("failing threshold: status %d\n%s", status, stdout)
	}

	status, stdout, stderr = runGab(t, "ab", "--format", "json", "--fail-if", "mean<1us", "-n", "10", url+"/")
	doc := decodeOne(t, stdout)
	if status != threshold.ExitStatus || field(doc, "thresholds.passed") != false || fmt.Sprint(field(doc, "thresholds.exit_code")) != "3" {
		t.Errorf("JSON: status %d, thresholds %v", status, field(doc, "thresholds"))
	}
	checks, _ := field(doc, "thresholds.checks").([]any)
	if len(checks) != 1 || fmt.Sprint(checks[0].(map[string]any)["unit"]) != "us" || fmt.Sprint(checks[0].(map[string]any)["bound"]) != "1" {
		t.Errorf("JSON checks %v", checks)
	}
	if !strings.Contains(stderr, "--fail-if mean<1us: FAILED (mean = ") {
		t.Errorf("with --format json the verdicts go to stderr: %q", stderr)
	}
}

// The summary's concurrency is the requests in flight: -c, or -c × --streams with HTTP/2.
func TestInFlight(t *testing.T) {
	o, _, done, _, stderr := parse(t, "ab", "--http2", "--streams", "10", "-c", "2", "-n", "20", testURL)
	if done {
		t.Fatal(stderr)
	}
	if got := runcmd.InFlight(&o.Config); got != 20 || runcmd.H2Only(&o.Config, o.Config.Concurrency) != 2 {
		t.Errorf("HTTP/2 2 × 10: in flight %d, connections %d", got, runcmd.H2Only(&o.Config, o.Config.Concurrency))
	}
	o, _, _, _, _ = parse(t, "ab", "-c", "3", "-n", "20", testURL)
	if got := runcmd.InFlight(&o.Config); got != 3 || runcmd.H2Only(&o.Config, 3) != 0 {
		t.Errorf("HTTP/1 -c 3: in flight %d", got)
	}
}

// gab's own output paths are checked before the first request.
func TestJSONPathCheckedBeforeTheRun(t *testing.T) {
	url, seen := startDocServer(t)
	status, stdout, stderr := runGab(t, "ab", "--json", "/nonexistent/dir/r.json", "-n", "50", url+"/")
	if status != 1 || seen.Load() != 0 || stdout != "" ||
		stderr != "gab: --json /nonexistent/dir/r.json: cannot write there: no such file or directory\n" {
		t.Errorf("status %d, %d requests sent, stdout %q, stderr %q", status, seen.Load(), stdout, stderr)
	}
	status, stdout, _ = runGab(t, "ab", "--format", "json", "--json", "/nonexistent/dir/r.json", "-n", "50", url+"/")
	doc := decodeOne(t, stdout)
	if status != 1 || seen.Load() != 0 || field(doc, "ending") != "not_started" || fmt.Sprint(field(doc, "error.exit_code")) != "1" {
		t.Errorf("JSON: status %d, %d requests sent:\n%s", status, seen.Load(), stdout)
	}
	// A writable path is left as it was: the check creates nothing.
	dir := t.TempDir()
	if err := outfile.CheckWritable(dir + "/r.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/r.json"); !os.IsNotExist(err) {
		t.Errorf("the check left a file behind: %v", err)
	}
}

// The JSON document states every error that sets the exit status: here the
// -g file that cannot be opened after the run.
func TestJSONStatesFileErrors(t *testing.T) {
	url, _ := startDocServer(t)
	status, stdout, stderr := runGab(t, "ab", "--format", "json", "-g", "/nonexistent/x.tsv", "-n", "5", url+"/")
	doc := decodeOne(t, stdout)
	msg, _ := field(doc, "error.message").(string)
	if status != 1 || fmt.Sprint(field(doc, "error.exit_code")) != "1" || !strings.HasPrefix(msg, "Cannot open gnuplot output file: ") ||
		field(doc, "report.complete_requests") == nil || !strings.Contains(stderr, "Cannot open gnuplot output file") {
		t.Errorf("status %d, stderr %q, document:\n%s", status, stderr, stdout)
	}
}
