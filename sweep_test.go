package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"gab/report"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"gab/internal/bytesize"
	"gab/internal/sweep"

	"gab/internal/testtool"
)

func TestSplitSweepArgs(t *testing.T) {
	sa, err := splitSweepArgs([]string{"-kc", "1,10", "-n100", "--repeat", "3", "-H", "X: --y", "--http1.1",
		"-v", "2", "a=http://h/", "--csv=f.csv", "http://g/", "--pause", "0.5"})
	if err != nil {
		t.Fatal(err)
	}
	wantAB := []string{"-k", "-n", "100", "-H", "X: --y", "--http1.1", "-v", "2"}
	if !reflect.DeepEqual(sa.AB, wantAB) {
		t.Errorf("ab options %q, want %q", sa.AB, wantAB)
	}
	if sa.Concurrency != "1,10" || !sa.Verbose || sa.Own.Repeat != "3" || sa.Own.CSVFile != "f.csv" ||
		time.Duration(sa.Own.Pause) != 500*time.Millisecond {
		t.Errorf("sweep options %+v", sa)
	}
	if !reflect.DeepEqual(sa.Targets, []string{"a=http://h/", "http://g/"}) {
		t.Errorf("targets %q", sa.Targets)
	}
	// -c attached inside a cluster, and the last -c wins as in ab.
	sa, err = splitSweepArgs([]string{"-c", "5", "-kic10,20", "--", "-odd"})
	if err != nil || sa.Concurrency != "10,20" || !reflect.DeepEqual(sa.AB, []string{"-ki"}) || sa.Targets[0] != "-odd" {
		t.Errorf("cluster: %+v, %v", sa, err)
	}
}

func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	body := filepath.Join(dir, "body")
	os.WriteFile(body, []byte("x"), 0o644)
	u := "http://127.0.0.1:9/x"
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"-c", "10,x", u}, exitUsage, `-c: "x" is not a number (in "10,x")`},
		{[]string{"http://127.0.0.1:9/{size}"}, exitUsage, "holds {size} but neither --sizes nor --post-sizes"},
		{[]string{"--sizes", "1k", u}, exitUsage, "--sizes is given but target \"" + u + "\" holds no {size}"},
		{[]string{"--sizes", "1k,zz", "http://127.0.0.1:9/{size}"}, exitUsage, `--sizes: "zz" is not a size`},
		{[]string{"--post-sizes", "4", "-p", body, u}, exitUsage, "--post-sizes cannot be used with -p"},
		{[]string{"--sizes", "4", "--post-sizes", "4", "http://127.0.0.1:9/{size}"}, exitUsage, "exclude each other"},
		{[]string{"-n", "5", "-c", "1,10", u}, exitUsage, "c=10:\nab: Cannot use concurrency level greater than total number of requests"},
		{[]string{"--server-pid", "nginx=1", "apache=" + u}, exitUsage, `no target is labelled "nginx"`},
		{[]string{"--server-pid", "1073741824", u}, exitUsage, "no process with PID 1073741824"},
		{[]string{"--format", "json", u}, exitUsage, "--format does not apply to gab sweep"},
		{[]string{"-e", "x.csv", u}, exitUsage, "-e does not apply to gab sweep"},
		{[]string{"--demo", u}, exitUsage, "--demo sweeps the built-in server: no TARGET"},
		{nil, exitUsage, "no TARGET"},
		{[]string{"--repeat", "0", u}, exitUsage, "--repeat must be from 1 to 1000, or auto[:MAX], not 0"},
		{[]string{"--repeat", "99999999999", u}, exitUsage, "--repeat must be from 1 to 1000, or auto[:MAX], not 99999999999"},
		{[]string{"--post-sizes", "100g", u}, exitUsage, `--post-sizes: 100g is above the limit of 64m (64 MiB: each body is built in memory) (in "100g")`},
		{[]string{"--post-sizes", "4,65m", u}, exitUsage, "--post-sizes: 65m is above the limit of 64m"},
		{[]string{"--sizes", "1025g", "http://127.0.0.1:9/{size}"}, exitUsage, "--sizes: 1025g is above the limit of 1024g (1 TiB)"},
		{[]string{"-c", strings.Repeat("1,", 100) + "1", u}, exitUsage, "-c: 101 values, at most 100"},
		{[]string{"-c", "1,2,3,4,5,6,7,8,9,10", "--sizes", "1,2,3,4,5,6,7,8,9,10", "--repeat", "101", "http://127.0.0.1:9/{size}"}, exitUsage,
			"1 targets × 10 sizes × 10 concurrencies × --repeat 101 is more than 10000 runs"},
		{[]string{"--pause", "61m", u}, exitUsage, "--pause must be at most 1h0m0s, not 1h1m0s"},
		{[]string{"--max-cv", "inf", u}, exitUsage, "--max-cv must be a percentage from 0 to 1000, not +Inf"},
		{[]string{"--start-at", "2000000000", u}, exitUsage, "--start-at does not apply to gab sweep"},
		{[]string{"--hlog", "x.hlog", u}, exitUsage, "--hlog does not apply to gab sweep"},
		{[]string{"--version", u}, exitUsage, "--version does not apply to gab sweep"},
		{[]string{"a=" + u, "a=" + u}, exitUsage, `two targets are named "a"`},
		{[]string{u, "-n", "3"}, exitUsage, "ab's options go before the targets"},
		{[]string{"--csv", filepath.Join(dir, "no", "such", "dir"), u}, exitError, "no such file or directory"},
		{[]string{"--bogus", u}, exitUsage, "unknown option --bogus"},
	} {
		status, stdout, stderr := runArgs(t, t.Context(), append([]string{"ab", "sweep"}, c.args...)...)
		if status != c.status || !strings.Contains(stderr, c.want) || stdout != "" {
			t.Errorf("sweep %q: status %d, stderr %q, stdout %q; want status %d and %q", c.args, status, stderr, stdout, c.status, c.want)
		}
	}
}

// badSweepValues gives each of gab sweep's own options a value it refuses.
var badSweepValues = map[string][]string{
	"sizes":             {"--sizes", "zz"},
	"post-sizes":        {"--post-sizes", "100g"},
	"repeat":            {"--repeat", "x"},
	"ci":                {"--ci", "0%"},
	"pause":             {"--pause", "2h"},
	"max-cv":            {"--max-cv", "-1"},
	"csv":               {"--csv", ""},
	"json":              {"--json", ""},
	"plot":              {"--plot", "x.txt"},
	"html":              {"--html", ""},
	"demo":              {"--demo=maybe"},
	"server-pid":        {"--server-pid", "x"},
	"help":              {"--help=maybe"},
	"order":             {"--order", "sideways"},
	"requests-per-conn": {"-n", "10", "--requests-per-conn", "3"},
	"param":             {"--param", "x"},
	"before":            {"--before", ""},
	"deviation":         {"--deviation", "median"},
	"baseline":          {"--baseline", "nobody"},
	"ramp":              {"--ramp", "2h"},
	"seed":              {"--seed", "7"},
}

// Every sweep option given a bad value, and every run option that a sweep
// passes on to its runs, is one line that names it, exit 22.
func TestEverySweepOptionErrorIsOneLine(t *testing.T) {
	u := "http://127.0.0.1:9/{size}"
	check := func(name string, bad []string) {
		t.Helper()
		argv := append(append([]string{"ab", "sweep"}, bad...), u)
		if name != "sizes" && name != "post-sizes" { // {size} needs a size list
			argv[len(argv)-1] = "http://127.0.0.1:9/x"
		}
		status, stdout, stderr := runArgs(t, t.Context(), argv...)
		if status != exitUsage || stdout != "" || !oneLineNaming(stderr, "ab sweep: ", "--"+name) {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want one line naming --%s, status 22", argv[1:], status, stdout, stderr, name)
		}
	}
	sweep.NewFlagSet(new(sweep.OwnFlags)).VisitAll(func(f *pflag.Flag) {
		bad, ok := badSweepValues[f.Name]
		if !ok {
			t.Errorf("--%s has no bad value in badSweepValues", f.Name)
			return
		}
		check(f.Name, bad)
	})
	newLongFlagSet(new(longOptions)).VisitAll(func(f *pflag.Flag) {
		if badSweepValues[f.Name] == nil && badLongValues[f.Name] != nil {
			check(f.Name, badLongValues[f.Name])
		}
	})
}

// TestSweepPostBodyHeldOnce: --post-sizes builds each run's body just before
// the run, inside its request, so that one body is alive at a time: the
// server, with the third size in hand, finds less than two bodies' worth of
// live heap in the process (all three held at once would be over 90 MiB), and
// every byte sent is the generated pattern.
func TestSweepPostBodyHeldOnce(t *testing.T) {
	const pattern = "abcdefghijklmnopqrstuvwxyz0123456789\n"
	var maxLive atomic.Uint64
	var badBody atomic.Bool
	bodies := new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies.Add(int64(len(b)))
		for i := 0; i < len(b); i += 4093 { // a sample of the bytes
			if b[i] != pattern[i%len(pattern)] {
				badBody.Store(true)
			}
		}
		b = nil
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > maxLive.Load() {
			maxLive.Store(ms.HeapAlloc)
		}
		w.Header().Set("Content-Length", "2")
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	status, _, stderr := runArgs(t, t.Context(), "ab", "sweep", "-n", "1", "--post-sizes", "32m,31m,30m", srv.URL+"/")
	if status != 0 {
		t.Fatalf("status %d, stderr %s", status, stderr)
	}
	if want := int64(93 << 20); bodies.Load() != want || badBody.Load() {
		t.Errorf("server received %d body bytes (want %d), pattern broken: %v", bodies.Load(), want, badBody.Load())
	}
	if live := maxLive.Load(); live >= 64<<20 {
		t.Errorf("%d MiB live while a 30-32 MiB body was sent: more than one body held", live>>20)
	}
}

// sizeServer serves /fN (N bytes as --sizes reads it) to any method, reading
// the request body, and counts requests and body bytes.
func sizeServer(t *testing.T) (url string, hits, bodyBytes *atomic.Int64) {
	hits, bodyBytes = new(atomic.Int64), new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		n, _ := io.Copy(io.Discard, r.Body)
		bodyBytes.Add(n)
		size, err := bytesize.Parse(strings.TrimPrefix(r.URL.Path, "/f"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.Write(bytes.Repeat([]byte("z"), int(size)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, hits, bodyBytes
}

// closedPort is a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	return "127.0.0.1:" + strconv.Itoa(testtool.ClosedPort(t))
}

// TestSweepTwoTargets sweeps two local servers and a dead one over two sizes
// and two concurrencies, twice each: the dead target fails without stopping
// the others, and the CSV and JSON hold every point.
func TestSweepTwoTargets(t *testing.T) {
	urlA, hitsA, _ := sizeServer(t)
	urlB, hitsB, _ := sizeServer(t)
	dir := t.TempDir()
	csvFile, jsonFile := filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.json")
	status, stdout, stderr := runArgs(t, t.Context(), "ab", "sweep", "-k", "-n", "20", "-c", "1,2", "--sizes", "10,1k", "--repeat", "2",
		"--csv", csvFile, "--json", jsonFile, "A="+urlA+"/f{size}", "B="+urlB+"/f{size}", "dead=http://"+closedPort(t)+"/f{size}")
	if status != exitError || !strings.Contains(stderr, "8 of 24 runs ended with an error") {
		t.Errorf("status %d, want 1 for the dead target; stderr:\n%s", status, stderr)
	}
	if hitsA.Load() != 160 || hitsB.Load() != 160 {
		t.Errorf("requests A %d B %d, want 2 sizes × 2 c × 2 runs × 20", hitsA.Load(), hitsB.Load())
	}
	// Every point's first repetition, then every point's second: each
	// point's line as the first round ends, and again as it finishes in the
	// second.
	if n := strings.Count(stderr, "\n["); n != 23 || !strings.Contains(stderr, "[13/24] A size=10 c=1: ") ||
		!strings.Contains(stderr, "[1/24] round 1 of 2: A size=10 c=1: ") ||
		!strings.Contains(stderr, "[15/24] dead size=10 c=1: 0.0 req/s ±0.0 (95% CI, n=2, cv 0.0%), 0 failed, 2 of 2 runs ended with an error [apr_socket_recv: Connection refused (111)]") {
		t.Errorf("want a line per point on stderr:\n%s", stderr)
	}
	for _, want := range []string{"Ranking", "Runs that ended with an error:", "dead size=1k c=2 repetition 2: apr_socket_recv: Connection refused (111)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	rows, col := readCSV(t, csvFile)
	if len(rows) != 13 {
		t.Fatalf("CSV: %d rows", len(rows))
	}
	for _, r := range rows[1:] {
		label, complete := r[col["label"]], r[col["complete"]]
		if label == "dead" {
			if complete != "0" || r[col["error_runs"]] != "2" || r[col["latency_mean_ms"]] != "" || r[col["rps_mean"]] != "0.00" {
				t.Errorf("dead row %q", r)
			}
			continue
		}
		if complete != "40" || r[col["failed"]] != "0" || r[col["error_runs"]] != "0" || r[col["repeats"]] != "2" || r[col["server_cpu_us_per_req"]] != "" ||
			r[col["latency_mean_ms"]] == "" || r[col["rps_ci95"]] == "" || r[col["client_cpu_us_per_req"]] == "" {
			t.Errorf("row %q", r)
		}
	}
	doc := readSweepDoc(t, jsonFile)
	if !doc.Complete || len(doc.Points) != 12 || len(doc.Rankings) != 4 {
		t.Fatalf("document: complete %v, %d points, %d rankings", doc.Complete, len(doc.Points), len(doc.Rankings))
	}
	// A B dead at every size and concurrency, then again: the repetitions are interleaved.
	p := doc.Points[0]
	if p.Label != "A" || p.Runs[0].Order != 1 || p.Runs[1].Order != 13 || doc.Points[1].Runs[0].Order != 2 {
		t.Errorf("order: %+v", p.Runs)
	}
	if r := p.Runs[0].Document.Report; r == nil || r.CompleteRequests != 20 || r.DocumentLengthBytes != 10 || r.ConcurrencyLevel != 1 {
		t.Errorf("run document report %+v", r)
	}
	if last := doc.Rankings[3]; last.Size.Text != "1k" || last.Concurrency != 2 || last.ByThroughput[2].Label != "dead" {
		t.Errorf("ranking %+v", last)
	}
}

// TestSweepDemoPostSizes: --demo with --post-sizes POSTs a body of each size
// to /bytes/{size}, which answers with as many bytes.
func TestSweepDemoPostSizes(t *testing.T) {
	jsonFile := filepath.Join(t.TempDir(), "s.json")
	status, stdout, stderr := runArgs(t, t.Context(), "ab", "sweep", "--demo", "-n", "10", "-T", "application/octet-stream",
		"--post-sizes", "4,2k", "--json", jsonFile)
	if status != 0 {
		t.Fatalf("status %d, stderr %s", status, stderr)
	}
	if !strings.Contains(stdout, "demo    2k") || !strings.Contains(stdout, "  err  rx Mbit/s  tx Mbit/s  cli us/req  cli cpu%") || strings.Contains(stdout, "Ranking") {
		t.Errorf("stdout:\n%s", stdout)
	}
	raw, _ := os.ReadFile(jsonFile)
	var doc report.SweepDocument
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Points) != 2 {
		t.Fatalf("document: %v", err)
	}
	for i, want := range []int64{4, 2048} {
		r := doc.Points[i].Runs[0].Document.Report
		if r == nil || r.DocumentLengthBytes != want || r.TotalBodySentBytes < 10*want || r.CompleteRequests != 10 || r.FailedRequests != 0 {
			t.Errorf("size %d: report %+v", want, r)
		}
		if !strings.Contains(doc.Points[i].URL, "/bytes/") {
			t.Errorf("url %q", doc.Points[i].URL)
		}
	}
}

// TestSweepInterrupted: SIGINT during the third run (B hangs) ends the
// sweep with what it has, marked incomplete.
func TestSweepInterrupted(t *testing.T) {
	url, hits := startDocServer(t)
	dir := t.TempDir()
	jsonFile, csvFile := filepath.Join(dir, "s.json"), filepath.Join(dir, "s.csv")
	args := []string{"sweep", "-n", "5", "--repeat", "2", "--json", jsonFile, "--csv", csvFile, "A=" + url + "/doc", "B=" + url + "/hang"}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMainProcess$")
	cmd.Env = append(os.Environ(), "GAB_MAIN_ARGS="+strings.Join(args, "\x1f"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for hits.Load() < 6 && time.Now().Before(deadline) { // A's 5, then B's first request hangs
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(errb.String(), "interrupted after 2 of 4 runs") {
		t.Errorf("exit %v, want status 1; stderr %q", err, errb.String())
	}
	if !strings.Contains(out.String(), "INCOMPLETE") {
		t.Errorf("stdout:\n%s", out.String())
	}
	doc := readSweepDoc(t, jsonFile)
	if doc.Complete || len(doc.Points) != 2 || doc.Points[0].Complete || doc.Points[0].Repeats != 1 ||
		doc.Points[1].Runs[0].Ending != "interrupted" {
		t.Errorf("document: complete %v, points %+v", doc.Complete, doc.Points)
	}
	lines := 0
	if f, err := os.Open(csvFile); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines++
		}
		f.Close()
	}
	if lines != 3 {
		t.Errorf("CSV has %d lines, want the header and 2 points", lines)
	}
	_ = syscall.SIGINT
}

// readCSV reads a --csv file: its rows (header first) and the header's
// column indexes.
func readCSV(t *testing.T, name string) (rows [][]string, col map[string]int) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err = csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("%s: %v", name, err)
	}
	col = map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	return rows, col
}

// FuzzSplitSweepArgs: the sweep's command-line splitter never panics, its
// targets are words of the command line, and it makes up no words.
func FuzzSplitSweepArgs(f *testing.F) {
	f.Add("-kc\x1f1,10\x1f-n100\x1f--repeat\x1f3\x1fa=http://h/\x1f--csv=f\x1fhttp://g/")
	f.Add("-c\x1f--\x1f-H\x1f-c 5\x1f--sizes\x1f1k\x1fx")
	f.Add("--\x1f-odd")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x1f")
		sa, err := splitSweepArgs(args)
		if err != nil {
			return
		}
		for _, target := range sa.Targets {
			found := false
			for _, a := range args {
				found = found || a == target
			}
			if !found {
				t.Fatalf("%q: target %q is not one of the words", args, target)
			}
		}
		// An attached value (-n100) becomes two words (-n 100), nothing more.
		if len(sa.AB)+len(sa.Targets) > 2*len(args) {
			t.Fatalf("%q: too many words out (%q, %q)", args, sa.AB, sa.Targets)
		}
	})
}
