package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gab/internal/headless"
	"gab/internal/testsrv"
	"gab/internal/testsrv/golden"
	"gab/internal/testtool"
)

func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// TestPlotRun: --plot draws the run's charts with gnuplot and keeps the
// script and data beside the image; the report is unchanged.
func TestPlotRun(t *testing.T) {
	needTool(t, "gnuplot", "gnuplot-nox")
	srv, err := testsrv.NewNginx()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	img := filepath.Join(dir, "run.png")
	got := runInProcess([]string{"ab", "-n", "200", "-c", "4", "--plot", img, srv.URL() + "/f100.txt"}, runHooks{})
	if got.Exit != 0 {
		t.Fatalf("exit %d: %s", got.Exit, got.Stderr)
	}
	if l := listDir(t, dir); l != "run.png run.png.dat run.png.gp" {
		t.Fatalf("directory holds %q", l)
	}
	b, _ := os.ReadFile(img)
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Fatalf("run.png: %v", err)
	}
	dat, _ := os.ReadFile(filepath.Join(dir, "run.png.dat"))
	// The scatter's block is every request: 200 rows of start_s and latency_ms in µs.
	var block string
	for _, b := range strings.Split(string(dat), "\n\n\n") {
		if strings.Contains(b, "Latency of each request over time") {
			block = b
		}
	}
	rows := 0
	for _, l := range strings.Split(block, "\n") {
		if l == "" || l[0] == '#' {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("row %q", l)
		}
		if _, err := strconv.ParseFloat(f[1], 64); err != nil {
			t.Fatalf("row %q: %v", l, err)
		}
		rows++
	}
	if rows != 200 {
		t.Errorf("latency block has %d rows, want 200", rows)
	}
	gp, _ := os.ReadFile(filepath.Join(dir, "run.png.gp"))
	if !strings.Contains(string(gp), "all 200 requests") || !strings.Contains(string(gp), "set output 'run.png'") ||
		!strings.Contains(string(gp), "Requests and failures per second per interval") {
		t.Errorf("script:\n%s", gp)
	}
	if strings.Contains(got.Stdout, "histogram") || strings.Contains(got.Stderr, "gab:") {
		t.Errorf("unexpected output:\n%s\n%s", got.Stdout, got.Stderr)
	}
}

// TestPictureBadInput: each mistake is one line, a non-zero exit, before the
// run (the server sees no request), and nothing is left behind.
func TestPictureBadInput(t *testing.T) {
	srv, err := testsrv.NewNginx()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"--plot", filepath.Join(dir, "x.jpg")}, exitUsage, `gab: --plot ` + dir + `/x.jpg: unknown image type ".jpg" (want .png, .svg or .pdf)`},
		{[]string{"--plot", filepath.Join(dir, "none", "x.png")}, exitError, "gab: --plot " + dir + "/none/x.png: cannot write there: no such file or directory"},
		{[]string{"--plot", dir + "/d.png"}, exitError, "gab: --plot " + dir + "/d.png: is a directory"},
		{[]string{"--html", filepath.Join(dir, "none", "r.html")}, exitError, "gab: --html " + dir + "/none/r.html: cannot write there: no such file or directory"},
		{[]string{"--html", dir + "/d.png"}, exitError, "gab: --html " + dir + "/d.png: is a directory"},
		{[]string{"--progress", "sometimes"}, exitUsage, `gab: --progress must be auto, always or never, not "sometimes"`},
	} {
		os.Mkdir(filepath.Join(dir, "d.png"), 0o755)
		before := srv.Requests()
		argv := append(append([]string{"ab", "-n", "5"}, tc.args...), srv.URL()+"/")
		got := runInProcess(argv, runHooks{})
		checkOneLineFailure(t, tc.args, got, tc.exit, tc.want)
		if srv.Requests() != before {
			t.Errorf("%v: the run started", tc.args)
		}
		if l := listDir(t, dir); l != "d.png" {
			t.Errorf("%v: left %q behind", tc.args, l)
		}
	}
}

// TestPlotWithoutGnuplot: one line saying so, script and data kept, exit 1,
// the report printed in full before.
func TestPlotWithoutGnuplot(t *testing.T) {
	srv, err := testsrv.NewNginx()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	img := filepath.Join(dir, "run.svg")
	got := runInProcess([]string{"ab", "-n", "20", "--plot", img, srv.URL() + "/"}, runHooks{})
	want := "gab: --plot: gnuplot is not on PATH: wrote " + dir + "/run.svg.gp and " + dir + "/run.svg.dat; draw " + img +
		" with: cd " + dir + " && gnuplot run.svg.gp\n"
	if got.Exit != exitError || got.Stderr != want {
		t.Errorf("exit %d, stderr %q; want 1, %q", got.Exit, got.Stderr, want)
	}
	if !strings.Contains(got.Stdout, "Percentage of the requests served") {
		t.Errorf("no report:\n%s", got.Stdout)
	}
	if l := listDir(t, dir); l != "run.svg.dat run.svg.gp" {
		t.Errorf("directory holds %q", l)
	}
	// With -w the charts are files of their own: stdout is ab's HTML.
	img = filepath.Join(dir, "w.png")
	got = runInProcess([]string{"ab", "-w", "-n", "20", "--plot", img, srv.URL() + "/"}, runHooks{})
	if got.Exit != exitError || !strings.HasPrefix(got.Stdout, "<p>\n This is ApacheBench") || !strings.Contains(got.Stdout, "</table>") {
		t.Errorf("-w --plot: exit %d, stdout:\n%s", got.Exit, got.Stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "w.png.gp")); err != nil {
		t.Errorf("-w --plot: %v", err)
	}
}

// TestHistogram: --histogram prints about ten rows after the report, with
// the unit, bounds that tile [min, max], and counts that add up to n.
func TestHistogram(t *testing.T) {
	srv, err := testsrv.NewNginx()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	got := runInProcess([]string{"ab", "-n", "300", "-c", "3", "--histogram", srv.URL() + "/f100.txt"}, runHooks{})
	if got.Exit != 0 {
		t.Fatalf("exit %d: %s", got.Exit, got.Stderr)
	}
	i := strings.Index(got.Stdout, "\nLatency histogram (total time in ms, bucket [from, to); bar and count of requests):\n")
	if i < 0 || !strings.Contains(got.Stdout[:i], "(longest request)") {
		t.Fatalf("no histogram after the report:\n%s", got.Stdout)
	}
	row := regexp.MustCompile(`^  \[ *([0-9.]+), *([0-9.]+)([)\]]) (#*) +(\d+)$`)
	lines := strings.Split(strings.TrimRight(got.Stdout[i:], "\n"), "\n")[2:]
	if len(lines) < 2 || len(lines) > 10 {
		t.Fatalf("%d rows:\n%s", len(lines), got.Stdout[i:])
	}
	total, prevHigh := 0, ""
	for k, l := range lines {
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("row %q", l)
		}
		if k > 0 && m[1] != prevHigh {
			t.Errorf("row %q does not start where the last ended (%s)", l, prevHigh)
		}
		if (m[3] == "]") != (k == len(lines)-1) {
			t.Errorf("row %q: only the last bucket is closed", l)
		}
		n, _ := strconv.Atoi(m[5])
		if (n > 0) != (m[4] != "") {
			t.Errorf("row %q: bar and count disagree", l)
		}
		total += n
		prevHigh = m[2]
	}
	if total != 300 {
		t.Errorf("counts add up to %d, want 300", total)
	}
}

// TestHTMLReportInChromium opens --html's page in Debian's headless
// Chromium: no console error or warning, no failed request, no request but
// the page itself, a title, and a screenshot with the charts drawn.
func TestHTMLReportInChromium(t *testing.T) {
	bin := testtool.Need(t, "chromium", "chromium")
	srv, err := testsrv.NewNginx()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	got := runInProcess([]string{"ab", "-n", "300", "-c", "3", "--html", page, srv.URL() + "/f100.txt"}, runHooks{})
	if got.Exit != 0 {
		t.Fatalf("exit %d: %s", got.Exit, got.Stderr)
	}
	testtool.WantInFile(t, page, "Requests per second:", "<svg", "Latency percentile distribution", "99.99%", "Cores")
	rep, err := headless.OpenWith(context.Background(), bin, filepath.Join(dir, "profile"), "file://"+page, headless.Options{Width: 1000, Height: 1400})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) > 0 {
		t.Errorf("problems in Chromium:\n%s", strings.Join(rep.Problems, "\n"))
	}
	if len(rep.Requests) != 1 || rep.Requests[0] != "file://"+page {
		t.Errorf("the page made requests beyond itself: %v", rep.Requests)
	}
	if rep.Title != "gab: 127.0.0.1/f100.txt" {
		t.Errorf("title %q", rep.Title)
	}
	// The top of the page holds the charts: a fair share of it is drawn.
	if blank, ink := headless.Blank(rep.Screenshot); blank || ink < 0.03 {
		t.Errorf("screenshot %v is blank (%.1f%% drawn)", rep.Screenshot.Bounds(), ink*100)
	}
}

// checkOneLineFailure checks a refused command: its exit status, and that
// its message is want, on one line when the status is exitError.
func checkOneLineFailure(t *testing.T, args []string, got golden.Result, exit int, want string) {
	t.Helper()
	first := strings.SplitN(got.Stderr, "\n", 2)[0]
	if got.Exit != exit || first != want {
		t.Errorf("%v: exit %d, stderr %q; want %d, %q", args, got.Exit, got.Stderr, exit, want)
	}
	if exit == exitError && strings.Count(got.Stderr, "\n") != 1 {
		t.Errorf("%v: more than one line: %q", args, got.Stderr)
	}
}

// A run that -s's watchdog ends writes its --html page as its JSON, with
// what it measured and the error (before, the JSON only, and nothing said
// about the page); with nothing measured, the page shows the error alone.
// ab's message and exit status stay ab's.
func TestHTMLOfARunEndedByTheIdleTimeout(t *testing.T) {
	url, _ := startDocServer(t)
	dir := t.TempDir()
	page, doc := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.json")
	status, stdout, stderr := runGab(t, "ab", "-n", "5", "-c", "1", "-s", "1", "--html", page, "--json", doc, url+"/hang-after-2")
	if status != 119 || !strings.HasSuffix(stdout, "Total of 2 requests completed\n") ||
		stderr != "apr_pollset_poll: The timeout specified has expired (70007)\n" {
		t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	for _, f := range []string{doc, page} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "The timeout specified has expired") {
			t.Errorf("%s lacks the error", f)
		}
	}
	page = filepath.Join(dir, "nothing.html")
	status, _, stderr = runGab(t, "ab", "-n", "5", "-c", "1", "-s", "1", "--html", page, url+"/hang")
	if b, err := os.ReadFile(page); status != 119 || err != nil || !strings.Contains(string(b), "The timeout specified has expired") {
		t.Errorf("nothing answered: status %d, stderr %q, page: %v", status, stderr, err)
	}
}
