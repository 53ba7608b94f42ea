package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gab/internal/testtool"
	"gab/report"
)

// These tests hand gab's live series to Debian's real Prometheus: one
// scrapes --metrics every second, the other receives --remote-write; each
// then holds the report's counts.

// startPrometheus runs Debian's prometheus with config on a loopback port
// and a storage directory of the test's, stopped by its PID when the test
// ends; it returns the address of its HTTP API.
func startPrometheus(t *testing.T, config string, extra ...string) string {
	t.Helper()
	bin := testtool.Need(t, "prometheus", "prometheus")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(testtool.FreePort(t))
	cmd := exec.Command(bin, append([]string{"--config.file=" + cfg, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr, "--log.level=warn"}, extra...)...)
	log, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("prometheus's log:\n%s", b)
		}
	})
	ready := waitFor(60*time.Second, func() bool {
		select {
		case <-exited:
			return true
		default:
		}
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	select {
	case <-exited:
		b, _ := os.ReadFile(log.Name())
		t.Fatalf("prometheus exited:\n%s", b)
	default:
	}
	if !ready {
		t.Fatal("prometheus not ready within 60 s")
	}
	return addr
}

// promQuery evaluates an instant query and returns its single value (ok
// false when the result is empty).
func promQuery(t *testing.T, addr, query string) (float64, bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.Status != "success" {
		t.Fatalf("query %s: %s", query, r.Error)
	}
	if len(r.Data.Result) != 1 {
		return 0, false
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("query %s: value %q", query, s)
	}
	return v, true
}

// liveMixedServer answers 100-byte documents, every 7th request a 404 and every
// 10th with a body of 101 bytes (ab counts those as Length failures).
func liveMixedServer(t *testing.T) string {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		body := strings.Repeat("m", 100)
		if i%10 == 0 {
			body += "m"
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if i%7 == 0 {
			w.WriteHeader(http.StatusNotFound)
		}
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// wantPrometheusHolds polls addr until each query equals its value (the
// report's), failing after a minute.
func wantPrometheusHolds(t *testing.T, addr string, want map[string]float64) {
	t.Helper()
	got := map[string]float64{}
	ok := waitFor(60*time.Second, func() bool {
		all := true
		for q, w := range want {
			v, ok := promQuery(t, addr, q)
			got[q] = v
			all = all && ok && v == w
		}
		if !all {
			time.Sleep(200 * time.Millisecond)
		}
		return all
	})
	if !ok {
		t.Errorf("Prometheus holds %v, want the report's %v", got, want)
	}
}

// reportWants are the queries whose values must equal the report's.
func reportWants(d *report.Run) map[string]float64 {
	r := d.Report
	return map[string]float64{
		"sum(gab_requests_total)":                             float64(r.CompleteRequests + r.FailedRequests),
		"sum(gab_request_duration_seconds_count)":             float64(r.CompleteRequests),
		`sum(gab_failures_total{class="length"})`:             float64(r.Failures.Length),
		`sum(gab_requests_total{result="4xx"})`:               float64(r.Non2xxResponses),
		`sum(gab_request_duration_seconds_bucket{le="+Inf"})`: float64(r.CompleteRequests),
		"sum(gab_received_bytes_total)":                       float64(r.TotalTransferredBytes),
		"sum(gab_sent_bytes_total)":                           float64(r.TotalBodySentBytes),
	}
}

// TestPrometheusScrapesMetrics: Prometheus scraping --metrics every second
// holds, after the run, sum(gab_requests_total) equal to the report's
// complete plus failed requests and the histogram's count equal to the
// complete ones (gab lingers until the test has seen it; an interrupt then
// ends the linger).
func TestPrometheusScrapesMetrics(t *testing.T) {
	target := liveMixedServer(t)
	mport := testtool.FreePort(t)
	prom := startPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gab
    static_configs:
      - targets: ['127.0.0.1:%d']
`, mport))
	doc := filepath.Join(t.TempDir(), "run.json")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		s, _, stderr := runArgs(t, ctx, "gab", "-q", "-k", "-n", "900", "-c", "4", "--rate", "300", "--interval", "500ms",
			"--metrics", "127.0.0.1:"+strconv.Itoa(mport), "--metrics-linger", "5m", "--json", doc, target)
		if s != 0 {
			t.Errorf("status %d: %s", s, stderr)
		}
		done <- s
	}()
	// The JSON document is written before the linger starts.
	if !waitFor(60*time.Second, func() bool {
		select {
		case <-done:
			return true
		default:
		}
		_, err := os.Stat(doc)
		return err == nil
	}) {
		t.Fatal("no JSON document within 60 s")
	}
	time.Sleep(100 * time.Millisecond) // the rename is atomic; its directory entry may still be settling under -race
	d := readRun(t, doc)
	if d.Report.FailedRequests == 0 || d.Report.Non2xxResponses == 0 {
		t.Fatalf("the run has %d failed and %d non-2xx responses: the test wants both", d.Report.FailedRequests, d.Report.Non2xxResponses)
	}
	wantPrometheusHolds(t, prom, reportWants(d))
	if v, ok := promQuery(t, prom, `histogram_quantile(0.99, sum by (le) (gab_request_duration_seconds_bucket))`); !ok || v <= 0 {
		t.Errorf("histogram_quantile of the buckets: %v, %v", v, ok)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("gab did not end its linger on the interrupt")
	}
}

// TestPrometheusRemoteWrite: Prometheus receiving --remote-write holds,
// after the run, the report's counts.
func TestPrometheusRemoteWrite(t *testing.T) {
	target := liveMixedServer(t)
	prom := startPrometheus(t, "global:\n  scrape_interval: 1m\n", "--web.enable-remote-write-receiver")
	doc := filepath.Join(t.TempDir(), "run.json")
	status, _, stderr := runGab(t, "gab", "-q", "-k", "-n", "600", "-c", "4", "--rate", "300", "--interval", "500ms",
		"--remote-write", "http://"+prom+"/api/v1/write", "--json", doc, target)
	if status != 0 || strings.Contains(stderr, "--remote-write") {
		t.Fatalf("status %d: %s", status, stderr)
	}
	d := readRun(t, doc)
	if d.Report.FailedRequests == 0 {
		t.Fatal("the run has no failed requests: the test wants some")
	}
	wantPrometheusHolds(t, prom, reportWants(d))
}
