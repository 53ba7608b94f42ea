package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gab/internal/testtool"
	"gab/report"
)

// decodeOne checks that s is exactly one JSON document and decodes it.
func decodeOne(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, s)
	}
	if rest, _ := io.ReadAll(dec.Buffered()); strings.TrimSpace(string(rest)) != "" || dec.More() {
		t.Fatalf("more than one JSON document on stdout:\n%s", s)
	}
	return doc
}

// field follows a dotted path into a decoded document.
func field(doc map[string]any, path string) any {
	var v any = doc
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func TestDefaultOutputHasNoExtensions(t *testing.T) {
	url := extServer(t)
	status, stdout, _ := runGab(t, "ab", "-n", "5", url+"/")
	if status != 0 {
		t.Fatalf("status %d", status)
	}
	for _, s := range []string{"Extended report", "µs", "Corrected", "{"} {
		if strings.Contains(stdout, s) {
			t.Errorf("ab's default output contains %q:\n%s", s, stdout)
		}
	}
	if !strings.HasSuffix(stdout, " (longest request)\n") {
		t.Errorf("ab's report does not end the output:\n%s", stdout)
	}
}

func TestTextExtensionsAfterABReport(t *testing.T) {
	url := extServer(t)
	status, stdout, stderr := runGab(t, "ab", "--extended", "--percentiles", "50,99,99.9", "-n", "40", "-c", "4", url+"/")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	abEnd := strings.Index(stdout, " (longest request)\n")
	pct := strings.Index(stdout, "\nPercentage of the requests served within a certain time (µs, nearest rank, exact)\n")
	ext := strings.Index(stdout, "\nExtended report (gab)\n")
	if abEnd < 0 || pct < abEnd || ext < pct {
		t.Fatalf("want ab's report, then the µs table, then the extended report:\n%s", stdout)
	}
	if !regexp.MustCompile(`\n 99\.9%\s+\d+\s+\d+\s+\d+\n`).MatchString(stdout) {
		t.Errorf("no 99.9%% row:\n%s", stdout[pct:])
	}
	for _, want := range []string{"  200: 40\n", "DNS resolution:         none (literal address)\n", "Client CPU:  ", "Sample store:           exact (all 40 requests"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("extended report lacks %q:\n%s", want, stdout[ext:])
		}
	}
}

func TestRateModePrintsCorrectedTables(t *testing.T) {
	url := extServer(t)
	status, stdout, stderr := runGab(t, "ab", "--rate", "200", "-n", "40", "-c", "2", "-k", url+"/")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	i := strings.Index(stdout, "\nCorrected for coordinated omission")
	if i < strings.Index(stdout, " (longest request)\n") {
		t.Fatalf("no corrected section after ab's report:\n%s", stdout)
	}
	for _, want := range []string{"Target rate:            200.00 [#/sec]\n", "Achieved rate:          ", "Requests sent:          40, ",
		"\nPercentage of the requests served within a certain time (ms, corrected; nearest rank, bucket tops of an HDR histogram, 3 significant digits)\n"} {
		if !strings.Contains(stdout[i:], want) {
			t.Errorf("corrected section lacks %q:\n%s", want, stdout[i:])
		}
	}
	// 40 requests at 200/s take at least 195 ms.
	m := regexp.MustCompile(`Time taken for tests:   ([0-9.]+) seconds`).FindStringSubmatch(stdout)
	if secs, _ := strconv.ParseFloat(m[1], 64); secs < 0.195 {
		t.Errorf("40 requests at 200/s took %v s", secs)
	}
}

func TestJSONFormatIsOneDocument(t *testing.T) {
	url := extServer(t)
	status, stdout, stderr := runGab(t, "ab", "--format", "json", "--percentiles", "50,99.9", "-n", "30", "-c", "3", url+"/404")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	doc := decodeOne(t, stdout)
	if !strings.HasPrefix(stderr, "This is ApacheBench, Version 2.3") || !strings.Contains(stderr, "..done\n") {
		t.Errorf("the banner and ..done belong on stderr with --format json: %q", stderr)
	}
	checks := map[string]string{
		"schema_version":                  strconv.Itoa(report.SchemaVersion),
		"ending":                          "completed",
		"report.complete_requests":        "30",
		"report.non_2xx_responses":        "30",
		"report.document_length_bytes":    "100",
		"extended.status_counts.404":      "30",
		"extended.phases.total.count":     "30",
		"sums.total.histogram.unit":       "us",
		"extended.latency_histogram.unit": "us", // the total phase's histogram under its old name, written by schema version 4 only
	}
	for path, want := range checks {
		if got := fmt.Sprint(field(doc, path)); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	if rows, _ := field(doc, "percentiles").([]any); len(rows) != 2 {
		t.Errorf("percentiles: %v", field(doc, "percentiles"))
	}
	if argv, _ := field(doc, "command_line").([]any); len(argv) != 10 || argv[0] != "ab" {
		t.Errorf("command_line %v", argv)
	}
}

func TestJSONFatalEndings(t *testing.T) {
	// A refused connection: ab's message on stderr, the document on stdout
	// instead of "Total of N requests completed".
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	status, stdout, stderr := runGab(t, "ab", "--format", "json", "-n", "3", fmt.Sprintf("http://127.0.0.1:%d/", port))
	if status != 111 || !strings.HasSuffix(stderr, "apr_socket_recv: Connection refused (111)\n") {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	doc := decodeOne(t, stdout)
	if field(doc, "ending") != "fatal" || fmt.Sprint(field(doc, "error.exit_code")) != "111" ||
		field(doc, "error.message") != "apr_socket_recv: Connection refused (111)" ||
		fmt.Sprint(field(doc, "report.complete_requests")) != "0" {
		t.Errorf("document:\n%s", stdout)
	}

	// Command-line errors, before anything runs.
	for _, c := range []struct {
		argv   []string
		status int
		msg    string
	}{
		{[]string{"ab", "--format", "json", "-n", "0", "http://127.0.0.1:1/"}, 1, "Invalid number of requests"},
		{[]string{"ab", "--format=json", "http://127.0.0.1:1"}, 22, "ab: invalid URL"},
		{[]string{"ab", "--format", "json", "-w", "http://127.0.0.1:1/"}, 22, "gab: -w (and -x, -y, -z) cannot be used with --format json"},
	} {
		status, stdout, _ := runGab(t, c.argv...)
		doc := decodeOne(t, stdout)
		msg, _ := field(doc, "error.message").(string)
		if status != c.status || field(doc, "ending") != "not_started" || fmt.Sprint(field(doc, "error.exit_code")) != strconv.Itoa(c.status) ||
			!strings.HasPrefix(msg, c.msg) || field(doc, "report") != nil {
			t.Errorf("%v: status %d, document:\n%s", c.argv, status, stdout)
		}
	}
}

// The --json file beside the text report holds the same figures (one run).
func TestJSONFileMatchesText(t *testing.T) {
	url := extServer(t)
	path := filepath.Join(t.TempDir(), "r.json")
	status, stdout, stderr := runGab(t, "ab", "--json", path, "--extended", "--percentiles", "50,99.9", "-n", "50", "-c", "5", url+"/")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := decodeOne(t, string(raw))
	num := func(path string) float64 {
		f, err := strconv.ParseFloat(fmt.Sprint(field(doc, path)), 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return f
	}
	want := []string{
		fmt.Sprintf("Time taken for tests:   %.3f seconds\n", num("report.time_taken_s")),
		fmt.Sprintf("Complete requests:      %d\n", int(num("report.complete_requests"))),
		fmt.Sprintf("Requests per second:    %.2f [#/sec] (mean)\n", num("report.requests_per_second")),
		fmt.Sprintf("Transfer rate:          %.2f [Kbytes/sec] received\n", num("report.transfer_rate_received_kbytes_per_s")),
	}
	for _, col := range []string{"connect", "processing", "waiting", "total"} {
		p := "report.connection_times." + col + "."
		label := strings.ToUpper(col[:1]) + col[1:] + ":"
		want = append(want, fmt.Sprintf("%-12s%5d %4d %5.1f %6d %7d\n", label, int(num(p+"min_ms")), int(num(p+"mean_ms")),
			num(p+"sd_ms"), int(num(p+"median_ms")), int(num(p+"max_ms"))))
	}
	for i, p := range field(doc, "percentiles").([]any) {
		row := p.(map[string]any)
		label := []string{"50%", "99.9%"}[i]
		want = append(want, fmt.Sprintf("%6s  %8s  %14s  %8s\n", label, row["connect_us"], row["waiting_us"], row["total_us"]))
	}
	want = append(want,
		fmt.Sprintf("  200: %s\n", field(doc, "extended.status_counts.200")),
		fmt.Sprintf("Bandwidth:              %.3f [Mbit/s] received, %.3f [Mbit/s] sent", num("extended.bandwidth_received_mbit_per_s"), num("extended.bandwidth_sent_mbit_per_s")),
		fmt.Sprintf("Total:          %10.3f", num("extended.phases.total.min_us")/1000),
	)
	for _, w := range want {
		if !strings.Contains(stdout, w) {
			t.Errorf("text lacks %q", w)
		}
	}
}

// SIGINT (a cancelled context) with --format json: the document of the partial run.
func TestJSONInterrupted(t *testing.T) {
	// The server answers two requests and holds every other one. At -c 2
	// without keep-alive a connection asks again only once its previous
	// request is complete, so the 4th request arriving means the first two
	// are complete: the server interrupts the run then, by that event rather
	// than a timer, and the report must count exactly those two.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var hits atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := hits.Add(1); n > 2 {
			if n == 4 {
				cancel()
			}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, strings.Repeat("b", 100))
	}))
	defer srv.Close()
	defer close(release)
	var out, errb bytes.Buffer
	status := run(ctx, []string{"ab", "--format", "json", "-n", "1000", "-c", "2", srv.URL + "/"}, &out, &errb)
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatalf("the 4th request never came (the server saw %d): status %d, stdout:\n%s", hits.Load(), status, out.String())
	}
	doc := decodeOne(t, out.String())
	complete := fmt.Sprint(field(doc, "report.complete_requests"))
	if status != 1 || field(doc, "ending") != "interrupted" || complete != "2" || field(doc, "error") != nil {
		t.Errorf("status %d, %s requests complete, want 2 (the server saw %d); document:\n%s",
			status, complete, hits.Load(), out.String())
	}
}

func TestJSONCommandLineHidesCredentials(t *testing.T) {
	argv := []string{"gab", "-kA", "user:pass", "-P", "p:q", "-n", "3", "-Aa:b", "--format", "json", "http://h/", "-A", "after:url"}
	got := redactCredentials(argv)
	// Past the URL ab stops reading options (and fails), but a credential there
	// is hidden all the same.
	want := []string{"gab", "-kA", "<redacted>", "-P", "<redacted>", "-n", "3", "-A<redacted>", "--format", "json", "http://h/", "-A", "<redacted>"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("redactCredentials = %q, want %q", got, want)
	}
	if argv[2] != "user:pass" {
		t.Error("redactCredentials changed its argument")
	}
}

// --json's path is written as what it is: a symbolic link is followed to its
// file (the link stays), a FIFO is written through to its reader, a device
// is written through and its write error reported; nothing is left beside
// any of them.
func TestJSONFileNotReplaced(t *testing.T) {
	url := extServer(t)
	gab := func(t *testing.T, path string) (int, string) {
		t.Helper()
		status, _, stderr := runGab(t, "ab", "--json", path, "-n", "5", "-c", "1", url+"/")
		return status, stderr
	}
	complete := func(t *testing.T, s string) {
		t.Helper()
		if n := fmt.Sprint(field(decodeOne(t, s), "report.complete_requests")); n != "5" {
			t.Errorf("complete_requests %s, want 5", n)
		}
	}
	t.Run("symlink", func(t *testing.T) {
		dir := t.TempDir()
		link := filepath.Join(dir, "latest.json")
		if err := os.WriteFile(filepath.Join(dir, "run-42.json"), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("run-42.json", link); err != nil {
			t.Fatal(err)
		}
		if status, stderr := gab(t, link); status != 0 {
			t.Fatalf("status %d, stderr %q", status, stderr)
		}
		if got, err := os.Readlink(link); got != "run-42.json" {
			t.Errorf("latest.json: link to %q (%v), want the link to run-42.json", got, err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "run-42.json"))
		complete(t, string(b))
		wantEntries(t, dir, "latest.json", "run-42.json")
	})
	t.Run("fifo", func(t *testing.T) {
		dir := t.TempDir()
		f := testtool.MakeFIFO(t, dir, "out.json")
		fifo := f.Path
		f.Start()
		status, stderr := gab(t, fifo)
		got := f.Read() // gab never opened it: the reader sees an empty document
		if status != 0 {
			t.Errorf("status %d, stderr %q", status, stderr)
		}
		complete(t, got)
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != os.ModeNamedPipe {
			t.Errorf("out.json is no longer a FIFO (%v)", err)
		}
		wantEntries(t, dir, "out.json")
	})
	t.Run("full", func(t *testing.T) {
		full := testtool.FullDevice(t)
		dir := filepath.Dir(full)
		before, _ := os.ReadDir(dir)
		status, stderr := gab(t, full)
		if status != 1 || !strings.HasPrefix(stderr, "gab: "+full+": ") || !strings.HasSuffix(stderr, ": no space left on device\n") {
			t.Errorf("status %d, stderr %q; want 1 and ENOSPC's message naming %s", status, stderr, full)
		}
		if fi, err := os.Lstat(full); err != nil || fi.Mode().Type() != os.ModeDevice|os.ModeCharDevice {
			t.Errorf("%s is no longer a character device (%v)", full, err)
		}
		if after, _ := os.ReadDir(dir); len(after) != len(before) {
			t.Errorf("%s held %d entries, now %d", dir, len(before), len(after))
		}
	})
}

// wantEntries checks that dir holds exactly the names given (no temporary
// file, nothing replaced by another kind of file).
func wantEntries(t *testing.T, dir string, want ...string) {
	t.Helper()
	if got := listDir(t, dir); got != strings.Join(want, " ") {
		t.Errorf("%s holds %q, want %q", dir, got, want)
	}
}

// --json /dev/stdout adds the document after the report, on stdout whatever
// it is (a pipe, a regular file), and what gab prints after it (the
// histogram) follows it; /dev/stdout stays what it was.
func TestJSONToDevStdout(t *testing.T) {
	before, lerr := os.Readlink("/dev/stdout")
	if _, err := os.Stat("/dev/stdout"); err != nil {
		t.Skipf("no /dev/stdout: %v", err)
	}
	t.Cleanup(func() {
		if lerr != nil {
			return
		}
		if now, err := os.Readlink("/dev/stdout"); err != nil || now != before {
			t.Errorf("/dev/stdout was a link to %s, now %q (%v)", before, now, err)
			if os.Getuid() == 0 { // put the machine's link back
				os.Remove("/dev/stdout")
				os.Symlink(before, "/dev/stdout")
			}
		}
	})
	ab := buildGab(t)
	url := extServer(t)
	for _, kind := range []string{"pipe", "file"} {
		t.Run(kind, func(t *testing.T) {
			cmd := exec.Command(ab, "--json", "/dev/stdout", "--histogram", "-n", "5", "-c", "1", url+"/")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			var f *os.File
			if kind == "file" {
				var err error
				if f, err = os.Create(filepath.Join(t.TempDir(), "stdout")); err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				cmd.Stdout = f
			}
			if err := runWithin(t, cmd, time.Minute); err != nil {
				t.Fatalf("%v, stderr %q", err, stderr.String())
			}
			out := stdout.String()
			if f != nil {
				b, err := os.ReadFile(f.Name())
				if err != nil {
					t.Fatal(err)
				}
				out = string(b)
			}
			i := strings.Index(out, "\n{\n")
			if i < 0 || !strings.Contains(out[:i], "\nComplete requests:      5\n") {
				t.Fatalf("stdout does not start with the report and then the document:\n%s", out)
			}
			dec := json.NewDecoder(strings.NewReader(out[i:]))
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("the document: %v\n%s", err, out[i:])
			}
			if n := fmt.Sprint(field(doc, "report.complete_requests")); n != "5" {
				t.Errorf("complete_requests %s, want 5", n)
			}
			rest := out[i+int(dec.InputOffset()):]
			if !strings.HasPrefix(strings.TrimLeft(rest, "\n"), "Latency histogram") {
				t.Errorf("after the document, %q, want the histogram", rest)
			}
		})
	}
}
