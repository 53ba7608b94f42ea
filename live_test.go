package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gab/internal/samples"
	"gab/report"
)

// heldServer serves 100-byte documents and holds its last (n-th) request
// until release is closed (or 30 s pass), so that a run of n requests
// cannot end before the test has seen what it waits for.
func heldServer(t *testing.T, n int64) (url string, release chan struct{}) {
	t.Helper()
	release = make(chan struct{})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == n {
			select {
			case <-release:
			case <-time.After(30 * time.Second):
				t.Error("the test never released the last request")
			}
		}
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, strings.Repeat("h", 100))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, release
}

// liveLine is what the tests read of a --live line.
type liveLine struct {
	Final         bool             `json:"final"`
	RunID         string           `json:"run_id"`
	Target        string           `json:"target"`
	Interval      int              `json:"interval"`
	StartUs       int64            `json:"start_us"`
	Requests      int64            `json:"requests"`
	Failures      int64            `json:"failures"`
	Status        map[string]int64 `json:"status_classes"`
	Bytes         int64            `json:"bytes"`
	SentBytes     int64            `json:"sent_bytes"`
	P99Us         *int64           `json:"p99_us"`
	Histogram     string           `json:"histogram"`
	TargetPerS    float64          `json:"target_per_s"`
	Complete      int64            `json:"complete"`
	Failed        int64            `json:"failed"`
	Dropped       int64            `json:"dropped"`
	RequestsPerS  float64          `json:"requests_per_second"`
	TimeTakenS    float64          `json:"time_taken_s"`
	FailuresClass map[string]int64 `json:"failures_by_class"`
}

func readLiveLines(t *testing.T, b []byte) []liveLine {
	t.Helper()
	var out []liveLine
	for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var ll liveLine
		if err := json.Unmarshal(l, &ll); err != nil {
			t.Fatalf("a --live line is not JSON (%v): %s", err, l)
		}
		out = append(out, ll)
	}
	return out
}

// checkFinal compares the stream's lines with the run's document: the last
// line is final with the report's totals, the intervals come in order, and
// their requests never exceed the report's.
func checkFinal(t *testing.T, lines []liveLine, d *report.Run) {
	t.Helper()
	if len(lines) < 2 {
		t.Fatalf("%d lines", len(lines))
	}
	f := lines[len(lines)-1]
	r := d.Report
	if !f.Final || f.Complete != int64(r.CompleteRequests) || f.Failed != int64(r.FailedRequests) || f.Bytes != r.TotalTransferredBytes ||
		f.SentBytes != r.TotalBodySentBytes || f.RequestsPerS != r.RequestsPerSecond || f.TimeTakenS != r.TimeTakenS ||
		f.FailuresClass["receive"] != int64(r.Failures.Receive) {
		t.Errorf("final line %+v, the report: complete %d, failed %d, bytes %d, sent %d, rps %v, time %v",
			f, r.CompleteRequests, r.FailedRequests, r.TotalTransferredBytes, r.TotalBodySentBytes, r.RequestsPerSecond, r.TimeTakenS)
	}
	if f.Status["2xx"] != int64(r.CompleteRequests) {
		t.Errorf("final status classes %v for %d complete 200s", f.Status, r.CompleteRequests)
	}
	var sum int64
	for i, l := range lines[:len(lines)-1] {
		if l.Final || l.Interval != i || l.RunID != f.RunID || l.P99Us == nil {
			t.Errorf("line %d: %+v", i, l)
		}
		// The interval's histogram holds its requests (an empty one, or
		// none, for an interval without).
		if l.Histogram != "" {
			h, err := samples.DecodeHist(l.Histogram)
			if err != nil || h.TotalCount() != l.Requests {
				t.Errorf("line %d: its histogram (%v) does not count its %d requests", i, err, l.Requests)
			}
		} else if l.Requests > 0 {
			t.Errorf("line %d: %d requests and no histogram", i, l.Requests)
		}
		sum += l.Requests
		if l.Complete != sum {
			t.Errorf("line %d: complete %d, the lines so far sum to %d", i, l.Complete, sum)
		}
	}
	if sum > int64(r.CompleteRequests) {
		t.Errorf("interval lines sum to %d requests, the report has %d", sum, r.CompleteRequests)
	}
}

// TestLiveNDJSONDuringRun: the --live file has lines while the run goes
// (the server holds the run's last request until the test has read one),
// and its last line is final with the report's totals.
func TestLiveNDJSONDuringRun(t *testing.T) {
	const n = 200
	url, release := heldServer(t, n)
	dir := t.TempDir()
	file, doc := filepath.Join(dir, "live.ndjson"), filepath.Join(dir, "run.json")
	type result struct {
		status         int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		s, o, e := runGab(t, "gab", "-q", "-k", "-n", "200", "-c", "2", "--rate", "400", "--interval", "100ms",
			"--live", file, "--json", doc, url+"/")
		done <- result{s, o, e}
	}()
	var during []byte
	seen := waitFor(30*time.Second, func() bool {
		b, _ := os.ReadFile(file)
		if i := bytes.IndexByte(b, '\n'); i > 0 {
			during = b[:i+1]
			return true
		}
		return false
	})
	close(release)
	res := <-done
	if !seen {
		t.Fatal("no --live line while the run's last request was held")
	}
	if res.status != 0 {
		t.Fatalf("status %d: %s", res.status, res.stderr)
	}
	if l := readLiveLines(t, during); l[0].Final || l[0].Interval != 0 || l[0].TargetPerS != 400 {
		t.Errorf("the line read during the run: %s", during)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, during) {
		t.Errorf("the file's first line changed after the run")
	}
	checkFinal(t, readLiveLines(t, b), readRun(t, doc))
	if !strings.Contains(res.stdout, "Complete requests:      200") {
		t.Errorf("no report on stdout:\n%s", res.stdout)
	}
}

// TestLiveStdout: --live - puts the stream alone on stdout and the report
// on stderr; with --format json it is a usage error (stdout is the
// document's).
func TestLiveStdout(t *testing.T) {
	url := extServer(t) + "/"
	status, stdout, stderr := runGab(t, "gab", "-k", "-n", "50", "-c", "2", "--live", "-", url)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	lines := readLiveLines(t, []byte(stdout))
	if f := lines[len(lines)-1]; !f.Final || f.Complete != 50 {
		t.Errorf("last stdout line %+v", f)
	}
	if !strings.Contains(stderr, "Complete requests:      50") || !strings.Contains(stderr, "This is ApacheBench") {
		t.Errorf("the report is not on stderr:\n%s", stderr)
	}
	status, stdout, stderr = runGab(t, "gab", "-n", "5", "--format", "json", "--live", "-", url)
	if status != exitUsage || !strings.Contains(stderr, "--live - needs stdout") {
		t.Errorf("--live - --format json: status %d, stderr %q", status, stderr)
	}
	var d report.Run
	if err := json.Unmarshal([]byte(stdout), &d); err != nil || d.Ending != "not_started" {
		t.Errorf("--format json's document on a usage error: %v %q", err, stdout)
	}
}

// TestLiveOptionErrors: bad live options end gab before any request.
func TestLiveOptionErrors(t *testing.T) {
	url, hits := startDocServer(t)
	dir := t.TempDir()
	for _, c := range []struct {
		argv   []string
		status int
		stderr string
	}{
		{[]string{"--metrics-linger", "1s"}, exitUsage, "--metrics-linger needs --metrics"},
		{[]string{"--metrics", ":x"}, exitUsage, "--metrics :x: the port must be a number"},
		{[]string{"--metrics", ":9100", "--metrics-linger", "0"}, exitUsage, "--metrics-linger must be a positive duration"},
		{[]string{"--remote-write", "ftp://127.0.0.1/"}, exitUsage, "--remote-write: the URL must be http:// or https://"},
		{[]string{"--live", dir}, exitError, "gab: --live " + dir + ": is a directory"},
		{[]string{"--live", filepath.Join(dir, "no", "such")}, exitError, "gab: --live "},
	} {
		status, stdout, stderr := runGab(t, append(append([]string{"gab", "-n", "3"}, c.argv...), url+"/")...)
		if status != c.status || !strings.Contains(stderr, c.stderr) || strings.Contains(stdout, "Complete requests") {
			t.Errorf("%v: status %d, stderr %q", c.argv, status, stderr)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests sent", hits.Load())
	}
}

// TestMetricsSlowScraper: scrapers that connect and send nothing, or send a
// request and never read, do not hold the run or gab's exit.
func TestMetricsSlowScraper(t *testing.T) {
	url := extServer(t) + "/"
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errR, errW := io.Pipe()
	var out bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"gab", "-q", "-k", "-n", "400", "-c", "2", "--rate", "800", "--metrics", "127.0.0.1:0", "--metrics-linger", "30s", url}, &out, errW)
		errW.Close()
	}()
	line := make([]byte, 200)
	n, _ := io.ReadAtLeast(errR, line, len("gab: --metrics serves http://127.0.0.1:1/metrics\n"))
	go io.Copy(io.Discard, errR)
	addr, ok := strings.CutPrefix(strings.TrimSpace(string(line[:n])), "gab: --metrics serves http://")
	addr, _, _ = strings.Cut(addr, "/")
	if !ok {
		t.Fatalf("stderr %q", line[:n])
	}
	var conns []net.Conn
	for i := range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
		}
		conns = append(conns, c)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// The run ends (its report is written before the linger), and an
	// interrupt during the linger ends gab.
	if !waitFor(60*time.Second, func() bool {
		select {
		case s := <-done:
			t.Fatalf("gab exited with %d before the linger", s)
		default:
		}
		return metricsFinished(addr)
	}) {
		t.Fatal("the run did not finish with scrapers stuck")
	}
	cancel()
	select {
	case s := <-done:
		if s != 0 {
			t.Errorf("status %d", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("gab did not end its linger on the interrupt")
	}
}

// metricsFinished scrapes addr and reports whether gab_run_finished is 1.
func metricsFinished(addr string) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "gab_run_finished{") && strings.HasSuffix(l, " 1") {
			return true
		}
	}
	return false
}

// TestLiveSubcommandSteps: gab sweep and gab capacity stream each run they
// make, named by its point or step, each ending in a final line with that
// run's counts (as the sweep's and the capacity search's documents have
// them); --live - is refused (their table is stdout's).
func TestLiveSubcommandSteps(t *testing.T) {
	dir := t.TempDir()
	finals := func(file string) []liveLine {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var out []liveLine
		for _, l := range readLiveLines(t, b) {
			if l.Final {
				out = append(out, l)
			}
		}
		return out
	}
	stepOf := func(file string) []string {
		b, _ := os.ReadFile(file)
		var out []string
		for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var s struct {
				Step  string `json:"step"`
				Final bool   `json:"final"`
			}
			if json.Unmarshal(l, &s) == nil && s.Final {
				out = append(out, s.Step)
			}
		}
		return out
	}

	sw, swDoc := filepath.Join(dir, "sweep.ndjson"), filepath.Join(dir, "sweep.json")
	status, _, stderr := runGab(t, "gab", "sweep", "--demo", "-c", "1,2", "-n", "200", "--json", swDoc, "--live", sw)
	if status != 0 {
		t.Fatalf("sweep: status %d: %s", status, stderr)
	}
	d := readSweepDoc(t, swDoc)
	f := finals(sw)
	if got := stepOf(sw); len(f) != 2 || len(got) != 2 || got[0] != "demo c=1 rep=1" || got[1] != "demo c=2 rep=1" {
		t.Errorf("sweep finals %v", got)
	}
	for i, l := range f {
		if i < len(d.Points) && l.Complete != int64(d.Points[i].RequestsComplete) {
			t.Errorf("sweep point %d: final line complete %d, the document %d", i, l.Complete, d.Points[i].RequestsComplete)
		}
	}

	cp, cpDoc := filepath.Join(dir, "cap.ndjson"), filepath.Join(dir, "cap.json")
	status, _, stderr = runGab(t, "gab", "capacity", "--noise", "0", "--demo", "--slo", "p99<200ms", "--step", "0.5s", "--settle", "0",
		"--max-rate", "200", "--json", cpDoc, "--live", cp)
	if status != 0 {
		t.Fatalf("capacity: status %d: %s", status, stderr)
	}
	raw, err := os.ReadFile(cpDoc)
	if err != nil {
		t.Fatal(err)
	}
	var cd struct {
		Targets []struct {
			Searches []struct {
				Steps []struct {
					TargetPerS float64 `json:"target_per_s"`
					Complete   int64   `json:"complete"`
				} `json:"steps"`
			} `json:"searches"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(raw, &cd); err != nil || len(cd.Targets) != 1 || len(cd.Targets[0].Searches) != 1 {
		t.Fatalf("capacity document: %v %s", err, raw)
	}
	steps := cd.Targets[0].Searches[0].Steps
	f, names := finals(cp), stepOf(cp)
	if len(f) != len(steps) || len(steps) < 2 {
		t.Fatalf("%d final lines for %d steps: %v", len(f), len(steps), names)
	}
	for i, st := range steps {
		want := strconv.Itoa(i+1) + ": demo " + strconv.FormatFloat(st.TargetPerS, 'f', -1, 64) + "/s"
		if names[i] != want || f[i].Complete != st.Complete {
			t.Errorf("step %d: final line %q with %d complete, the document's step %q has %d", i, names[i], f[i].Complete, want, st.Complete)
		}
	}
	for _, cmd := range [][]string{{"sweep", "-n", "5"}, {"capacity", "--slo", "p99<1s"}} {
		status, _, stderr = runGab(t, append(append([]string{"gab"}, cmd...), "--demo", "--live", "-")...)
		if status != exitUsage || !strings.Contains(stderr, "--live - needs stdout") {
			t.Errorf("%s --live -: status %d, %q", cmd[0], status, stderr)
		}
	}
}
