package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gab/internal/testtool"
)

// BenchmarkLiveCost is the CPU live results cost: gab (in this process)
// against nginx (another process), keep-alive, 100 B, -c 8, without live
// outputs and with --live FILE and --metrics (1 s intervals, scraped every
// second, as Prometheus would). It reports the process's CPU (user + sys,
// getrusage) per request, and allocs/op is per request too: the run's setup
// and each interval's work spread over its requests.
//
//	go test -run '^$' -bench BenchmarkLiveCost -benchtime 400000x -count 5 .
func BenchmarkLiveCost(b *testing.B) {
	n := testtool.StartNginx(b, map[string][]byte{"f100.txt": []byte(strings.Repeat("a", 100))}, 1,
		`    access_log off;
    server { listen 127.0.0.1:%[2]d; root %[1]s/www; }`)
	url := "http://127.0.0.1:" + strconv.Itoa(n.Ports[0]) + "/f100.txt"
	for _, mode := range []string{"off", "live+metrics"} {
		b.Run(mode, func(b *testing.B) {
			argv := []string{"gab", "-q", "-k", "-n", strconv.Itoa(max(b.N, 100)), "-c", "8"}
			stop := make(chan struct{})
			scraped := make(chan struct{})
			if mode != "off" {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				addr := ln.Addr().String()
				ln.Close()
				argv = append(argv, "--live", filepath.Join(b.TempDir(), "live.ndjson"), "--metrics", addr)
				go func() {
					defer close(scraped)
					c := http.Client{Timeout: time.Second}
					tk := time.NewTicker(time.Second)
					defer tk.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tk.C:
						}
						if resp, err := c.Get("http://" + addr + "/metrics"); err == nil {
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}
				}()
			} else {
				close(scraped)
			}
			argv = append(argv, url)
			var before, after syscall.Rusage
			b.ReportAllocs()
			b.ResetTimer()
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			var out, errb bytes.Buffer
			status := run(b.Context(), argv, &out, &errb)
			stdout, stderr := out.String(), errb.String()
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			b.StopTimer()
			close(stop)
			<-scraped
			if status != 0 || !strings.Contains(stdout, "Failed requests:        0") {
				b.Fatalf("status %d: %s\n%s", status, stderr, stdout)
			}
			cpu := time.Duration(after.Utime.Nano() - before.Utime.Nano() + after.Stime.Nano() - before.Stime.Nano())
			b.ReportMetric(float64(cpu.Microseconds())/float64(max(b.N, 100)), "cpu-µs/req")
		})
	}
}
