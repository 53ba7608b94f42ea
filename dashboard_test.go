package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gab/internal/chart"
	"gab/internal/dashboard"
	"gab/internal/headless"
	"gab/internal/testtool"
)

// gatedServer answers HTTP/1.1 on loopback with a 5-byte body, but only
// while the requests it answered are fewer than its allowance: past it an
// answer waits until the test raises the allowance (or 20 s, within gab's
// 30 s -s). It counts each answer before writing it.
type gatedServer struct {
	url      string
	mu       sync.Mutex
	cond     *sync.Cond
	allowed  int64
	answered int64
	closed   bool
}

func newGatedServer(t *testing.T, allowed int64) *gatedServer {
	t.Helper()
	g := &gatedServer{allowed: allowed}
	g.cond = sync.NewCond(&g.mu)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		stop := time.AfterFunc(20*time.Second, func() { g.mu.Lock(); g.closed = true; g.cond.Broadcast(); g.mu.Unlock() })
		for g.answered >= g.allowed && !g.closed {
			g.cond.Wait()
		}
		stop.Stop()
		g.answered++
		g.mu.Unlock()
		w.Header().Set("Content-Length", "5")
		io.WriteString(w, "hello")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() {
		g.allow(1 << 62)
		srv.Close()
	})
	g.url = "http://" + ln.Addr().String() + "/"
	return g
}

// allow raises the allowance to n answers.
func (g *gatedServer) allow(n int64) {
	g.mu.Lock()
	g.allowed = max(g.allowed, n)
	g.cond.Broadcast()
	g.mu.Unlock()
}

// urlWriter is stderr for an in-process run: it keeps what is written and
// hands on the dashboard's address when gab prints it.
type urlWriter struct {
	mu   sync.Mutex
	b    bytes.Buffer
	url  chan string
	sent bool
}

var dashboardLine = regexp.MustCompile(`gab: dashboard at (http://\S+/)\n`)

func (w *urlWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if m := dashboardLine.FindSubmatch(w.b.Bytes()); m != nil && !w.sent {
		w.sent = true
		w.url <- string(m[1])
	}
	return len(p), nil
}

func (w *urlWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// dashState reads the dashboard's /state.
func dashState(t *testing.T, url string) dashboard.State {
	t.Helper()
	resp, err := http.Get(url + "state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st dashboard.State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// dashPage reads the dashboard's page.
func dashPage(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var completeCell = regexp.MustCompile(`id="complete">(\d+)<`)

// completeIn is the count in a page's #complete element as served.
func completeIn(t *testing.T, page []byte) int64 {
	t.Helper()
	m := completeCell.FindSubmatch(page)
	if m == nil {
		t.Fatalf("no #complete in the page:\n%.2000s", page)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// dashViews are the charts every page of the dashboard shows.
var dashViews = []string{chart.PanelRate, chart.PanelStatus, chart.PanelLatencyTime, chart.PanelPhases, chart.PanelScatter,
	chart.PanelPercentiles, chart.PanelRanges, chart.PanelKnee}

// dashScript evaluates, in the page, to the #complete count and the ids of
// dashViews present with a drawn chart.
var dashScript = `(function () {
  var c = document.getElementById("complete"), ok = [];
  "` + strings.Join(dashViews, " ") + `".split(" ").forEach(function (id) {
    var e = document.getElementById(id);
    if (e && e.querySelector("svg rect")) ok.push(id);
  });
  return (c ? c.textContent : "none") + " " + ok.join(" ");
})()`

// openDashboard opens url in headless Chromium (script on or off) and
// checks that nothing went wrong and every request went to gab's address;
// it returns the #complete count the page shows.
func openDashboard(t *testing.T, bin, dir, url string, noScript bool) int64 {
	t.Helper()
	rep, err := headless.OpenWith(context.Background(), bin, dir, url, headless.Options{Width: 1000, Height: 1400, NoScript: noScript, Eval: dashScript})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) > 0 {
		t.Errorf("script off %v: problems in Chromium:\n%s", noScript, strings.Join(rep.Problems, "\n"))
	}
	for _, r := range rep.Requests {
		if !strings.HasPrefix(r, url) {
			t.Errorf("script off %v: a request outside gab: %s", noScript, r)
		}
	}
	f := strings.Fields(rep.Eval)
	if len(f) == 0 {
		t.Fatalf("script off %v: nothing evaluated", noScript)
	}
	if got, want := strings.Join(f[1:], " "), strings.Join(dashViews, " "); got != want {
		t.Errorf("script off %v: charts drawn %q, want %q", noScript, got, want)
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		t.Fatalf("script off %v: #complete is %q", noScript, f[0])
	}
	return n
}

// TestDashboardInChromium: a rate-mode run with --dashboard and 100 ms
// intervals against a loopback server that answers in steps the test
// allows. Read twice in headless Chromium during the run (the second time
// with script off: the page as served is complete), the page shows a
// growing #complete count and every chart, with no console error and no
// request outside gab. After the run (--dashboard-linger) the page served is
// byte for byte the --html file of the same run (whose views
// TestHTMLReportViewsInChromium checks in Chromium).
func TestDashboardInChromium(t *testing.T) {
	bin := testtool.Need(t, "chromium", "chromium")
	const n = 120
	srv := newGatedServer(t, 30)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	stderr := &urlWriter{url: make(chan string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	exit := make(chan int, 1)
	go func() {
		exit <- runWith(ctx, []string{"ab", "-n", strconv.Itoa(n), "-c", "4", "--rate", "200", "--interval", "100ms",
			"--dashboard", "127.0.0.1:0", "--dashboard-linger", "60s", "--html", page, srv.url}, &stdout, stderr, runHooks{})
	}()
	var url string
	select {
	case url = <-stderr.url:
	case code := <-exit:
		t.Fatalf("gab ended (%d) before serving the dashboard: %s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("no dashboard address on stderr: %s", stderr.String())
	}
	// The first step's answers are in a finished interval.
	if !waitFor(30*time.Second, func() bool { return dashState(t, url).Complete > 0 }) {
		t.Fatalf("no request complete on the dashboard: %+v", dashState(t, url))
	}
	first := openDashboard(t, bin, filepath.Join(dir, "p1"), url, false)
	if first <= 0 || first > 30 {
		t.Fatalf("first read: #complete %d, want 1 to 30 (the server's first step)", first)
	}
	srv.allow(80)
	if !waitFor(30*time.Second, func() bool { return dashState(t, url).Complete > first }) {
		t.Fatalf("the count stays at %d: %+v", first, dashState(t, url))
	}
	second := openDashboard(t, bin, filepath.Join(dir, "p2"), url, true)
	served := completeIn(t, dashPage(t, url))
	if second <= first || served < second || dashState(t, url).Final {
		t.Fatalf("reads during the run: #complete %d then %d (served %d), want growing before the end", first, second, served)
	}
	srv.allow(1 << 62)
	if !waitFor(60*time.Second, func() bool { return dashState(t, url).Final }) {
		t.Fatalf("the run did not end: %+v\n%s", dashState(t, url), stderr.String())
	}
	if !waitFor(30*time.Second, func() bool { _, err := os.Stat(page); return err == nil }) {
		t.Fatal("no --html file")
	}
	file, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	final := dashPage(t, url)
	if !bytes.Equal(final, file) {
		t.Fatalf("the final page served (%d bytes) is not the --html file (%d bytes)", len(final), len(file))
	}
	if got := completeIn(t, final); got != n {
		t.Errorf("final #complete %d, want %d", got, n)
	}
	cancel() // ends the linger
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("gab did not stop lingering when interrupted")
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("Complete requests:      %d\n", n)) {
		t.Errorf("report:\n%s", stdout.String())
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the dashboard still answers after gab returned")
	}
}

// TestDashboardOptions: a --dashboard address that is not HOST:PORT or
// :PORT, or --dashboard-linger alone, is one line and exit 22; a taken port
// is one line and exit 1 before any request; gab sweep and gab capacity
// refuse --dashboard (it serves one run's report).
func TestDashboardOptions(t *testing.T) {
	url, hits := startDocServer(t)
	url += "/"
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, c := range []struct {
		argv []string
		exit int
		want string
	}{
		{[]string{"ab", "-n", "10", "--dashboard-linger", "5s", url}, exitUsage, "gab: --dashboard-linger needs --dashboard\n"},
		{[]string{"ab", "-n", "10", "--dashboard", "8080", url}, exitUsage, `gab: --dashboard "8080" is not HOST:PORT or :PORT` + "\n"},
		{[]string{"ab", "-n", "10", "--dashboard", taken.Addr().String(), url}, exitError, "gab: --dashboard " + taken.Addr().String() + ": listen tcp "},
		{[]string{"ab", "sweep", "-c", "1", "--dashboard", ":0", url}, exitUsage, "--dashboard does not apply to gab sweep"},
		{[]string{"ab", "capacity", "--dashboard-linger", "1s", url}, exitUsage, "--dashboard-linger does not apply to gab capacity"},
	} {
		got := runInProcess(c.argv, runHooks{})
		if got.Exit != c.exit || !strings.Contains(got.Stderr, c.want) || strings.Count(got.Stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.argv[1:], got.Exit, got.Stderr, c.exit, c.want)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests sent by refused command lines", n)
	}
}
