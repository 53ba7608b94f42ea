// Command h3peer is the straightforward HTTP/3 load loop a Go tool would write
// with quic-go's own client: per connection an http3.Transport (its own UDP
// socket and QUIC connection) behind an http.Client, and per connection
// -streams goroutines that each GET the URL, read the body to the end and
// close it, until -n requests are done. bench/bench.py runs it beside
// gab --http3 as the peer whose CPU per request gab is compared with.
//
//	go run ./bench/h3peer -n 100000 -c 10 -streams 10 https://localhost:8443/
//
// It prints one line: requests, failures, seconds, requests per second and
// its own CPU (user+sys) per request in µs.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quic-go/quic-go/http3"
)

func main() {
	n := flag.Int("n", 10000, "requests")
	c := flag.Int("c", 10, "QUIC connections")
	streams := flag.Int("streams", 10, "concurrent requests per connection")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the run to `FILE`")
	flag.Parse()
	if flag.NArg() != 1 || *n < 1 || *c < 1 || *streams < 1 {
		fmt.Fprintln(os.Stderr, "usage: h3peer [-n N] [-c C] [-streams S] https://host:port/path")
		os.Exit(2)
	}
	url := flag.Arg(0)
	var left, failed atomic.Int64
	left.Store(int64(*n))
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "h3peer:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	cpu0 := cpuTime()
	start := time.Now()
	var wg sync.WaitGroup
	var transports []*http3.Transport
	for range *c {
		tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
		transports = append(transports, tr)
		client := &http.Client{Transport: tr}
		for range *streams {
			wg.Go(func() {
				for left.Add(-1) >= 0 {
					resp, err := client.Get(url)
					if err != nil {
						failed.Add(1)
						continue
					}
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != http.StatusOK {
						failed.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	for _, tr := range transports {
		tr.Close()
	}
	fmt.Printf("requests %d failed %d seconds %.3f rps %.0f cpu_us_per_request %.2f\n",
		*n, failed.Load(), elapsed.Seconds(), float64(*n)/elapsed.Seconds(),
		float64(cpu.Microseconds())/float64(*n))
}

// cpuTime is this process's user+sys CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
