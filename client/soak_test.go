//go:build soak

package client

import (
	"bufio"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// TestSoak is a long -t run without ab's 50,000-request cap (as with
// --no-cap) against an in-process keep-alive server. Once the exact sample
// store is full, the statistics go to histograms and memory must stay flat.
// Not in CI's default run: go test -tags soak -run TestSoak -v ./client
// (GAB_SOAK=10m sets the duration; default 2m).
func TestSoak(t *testing.T) {
	duration := 2 * time.Minute
	if s := os.Getenv("GAB_SOAK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("GAB_SOAK: %v", err)
		}
		duration = d
	}
	const sampleLimit = 200_000 // reached in seconds, so most of the run is past it
	srv := newFaultServer(t, answerEach(respond100(true)))
	cfg := h1Config(srv.port(), math.MaxInt32, 8, true)
	cfg.TimeLimit = duration
	cfg.SampleLimit = sampleLimit
	rn, err := newRunner(t, cfg)
	if err != nil {
		t.Fatal(err)
	}

	type point struct {
		at        time.Duration
		completed int
		rss       int64
	}
	var points []point
	began := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := rn.Run(t.Context())
		if err != nil {
			t.Errorf("run: %v", err)
			return
		}
		if res.Ending != EndTimeLimit || res.Failed.Total != 0 || res.Complete <= sampleLimit {
			t.Errorf("ending %v complete %d failed %+v", res.Ending, res.Complete, res.Failed)
		}
		if res.Samples.Len() != res.Complete {
			t.Errorf("samples %d, complete %d", res.Samples.Len(), res.Complete)
		}
		t.Logf("complete %d in %v (%.0f/s)", res.Complete, res.Elapsed, float64(res.Complete)/res.Elapsed.Seconds())
	}()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
loop:
	for {
		select {
		case <-done:
			break loop
		case <-tick.C:
			runtime.GC()
			p := point{time.Since(began), rn.completed(), rssBytes(t)}
			points = append(points, p)
			t.Logf("%6.0fs %10d requests  RSS %6.1f MiB", p.at.Seconds(), p.completed, float64(p.rss)/(1<<20))
		}
	}
	// RSS once the exact store is full (plus a sample for warm-up) against the last.
	var base *point
	for i := range points {
		if points[i].completed > sampleLimit && i+1 < len(points) {
			base = &points[i+1]
			break
		}
	}
	if base == nil || len(points) < 4 {
		t.Fatalf("the run did not get past the sample limit long enough: %+v", points)
	}
	last := points[len(points)-1]
	if growth := last.rss - base.rss; growth > 8<<20 {
		t.Errorf("RSS grew by %.1f MiB after the sample store was full (%.1f → %.1f MiB over %d more requests)",
			float64(growth)/(1<<20), float64(base.rss)/(1<<20), float64(last.rss)/(1<<20), last.completed-base.completed)
	}
}

// rssBytes reads VmRSS from /proc/self/status.
func rssBytes(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS line")
	return 0
}

// soakProgress hands each progress event (every n/10 requests) to the test.
type soakProgress struct {
	nopEvents
	at chan int
}

func (p *soakProgress) Completed(done int) {
	select {
	case p.at <- done:
	default: // the test is still measuring the last one
	}
}

// TestSoakH2 runs 1,000,000 h2c requests (c=10, --streams 10) on the event
// loop against Go's h2c server and samples the live heap at every progress
// event: once the run is going, it may grow by no more than the exact sample
// store (preallocated, so in practice not at all) and a few MiB.
// go test -tags soak -run H2 -v ./client
func TestSoakH2(t *testing.T) {
	const n = 1_000_000
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "2")
		_, _ = w.Write([]byte("ok"))
	}))
	ts.Config.Protocols = new(http.Protocols)
	ts.Config.Protocols.SetUnencryptedHTTP2(true)
	ts.Start()
	defer ts.Close()
	cfg := urlConfig(t, ts.URL+"/", n, 10, HTTP2)
	cfg.Streams = 10
	progress := &soakProgress{at: make(chan int, 1)}
	cfg.Events = progress
	rn, err := newRunner(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	loopsBefore := h2EpollLoopsStarted.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	type point struct {
		done int
		heap uint64
	}
	var points []point
	var res *Result
	finished := make(chan error, 1)
	began := time.Now()
	go func() {
		var err error
		res, err = rn.Run(ctx)
		finished <- err
	}()
	for running := true; running; {
		select {
		case done := <-progress.at:
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			points = append(points, point{done, ms.HeapAlloc})
			t.Logf("%7d requests  %5.1fs  live heap %6.1f MiB", done, time.Since(began).Seconds(), float64(ms.HeapAlloc)/(1<<20))
		case err := <-finished:
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			running = false
		}
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("end: %d requests in %v (%.0f/s), live heap %.1f MiB", res.Complete, res.Elapsed,
		float64(res.Complete)/res.Elapsed.Seconds(), float64(ms.HeapAlloc)/(1<<20))
	if epollExpected() && h2EpollLoopsStarted.Load() == loopsBefore {
		t.Errorf("the h2c event loop did not run")
	}
	if res.Ending != EndCompleted || res.Complete != n || res.Failed.Total != 0 || res.Samples.Len() != n {
		t.Fatalf("ending %v complete %d failed %+v samples %d", res.Ending, res.Complete, res.Failed, res.Samples.Len())
	}
	var base *point
	for i := range points {
		if points[i].done >= 200_000 {
			base = &points[i]
			break
		}
	}
	if base == nil || len(points) < 5 {
		t.Fatalf("too few heap samples: %+v", points)
	}
	store := uint64(n) * uint64(unsafe.Sizeof(Sample{}))
	const slack = 4 << 20
	if ms.HeapAlloc > base.heap+store+slack {
		t.Errorf("live heap %.1f MiB after %d requests, %.1f MiB at %d: grew by more than the sample store (%.1f MiB) + %d MiB",
			float64(ms.HeapAlloc)/(1<<20), n, float64(base.heap)/(1<<20), base.done, float64(store)/(1<<20), slack>>20)
	}
}
