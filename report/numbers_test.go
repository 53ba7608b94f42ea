package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/internal/samples"
	"gab/internal/threshold"
)

// With HTTP/2 the requests in flight are connections × streams: they drive
// ab's Concurrency Level and first Time per request, and the Protocol line
// says how they are carried.
func TestHTTP2ConcurrencyFigures(t *testing.T) {
	res := histogramResult(0) // 9 requests in 60 ms
	res.Protocol = "h2c"
	o := histogramOptions
	o.Concurrency, o.Connections, o.Streams = 20, 2, 10
	s := Summarize(res, o)
	var b bytes.Buffer
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Protocol:               HTTP/2 (h2c), 2 connections × 10 streams\n",
		"Concurrency Level:      20\n",
		"Time per request:       133.333 [ms] (mean)\n", // 20 × 60 ms / 9
		"Time per request:       6.667 [ms] (mean, across all concurrent requests)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
	d := s
	if d.Report.ConcurrencyLevel != 20 || d.Report.Connections != 2 || d.Report.StreamsPerConnection != 10 {
		t.Errorf("JSON: concurrency %d, connections %d, streams %d", d.Report.ConcurrencyLevel, d.Report.Connections, d.Report.StreamsPerConnection)
	}
	o.Concurrency, o.Connections, o.Streams = 1, 1, 1
	res = histogramResult(0)
	res.Protocol = "h2"
	b.Reset()
	_ = WriteText(&b, Summarize(res, o))
	if !strings.Contains(b.String(), "Protocol:               HTTP/2 (h2), 1 connection × 1 stream\n") {
		t.Errorf("singular Protocol line:\n%s", b.String())
	}
}

// In rate mode the first Time per request is the measured mean, not c·T/done
// (which there is the connections' share of the run).
func TestRateModeTimePerRequestIsMeasuredMean(t *testing.T) {
	_, s := extFixture() // --rate 4, c 2, 10 requests in 2.5 s
	var b bytes.Buffer
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "Time per request:       5.504 [ms] (mean)\n" // the Total column's mean, 5504 µs
	if s.Report.ConnectionTimes.Total.MeanUs != 5504 || !strings.Contains(b.String(), want) {
		t.Errorf("mean %d µs; want %q in\n%s", s.Report.ConnectionTimes.Total.MeanUs, want, b.String())
	}
	res, _ := extFixture()
	res.Extra.Rate = nil
	if s := Summarize(res, Options{Concurrency: 2}); s.Report.TimePerRequestMs != 500 { // 2 × 2500 ms / 10
		t.Errorf("outside rate mode Time per request = %v, want ab's 500", s.Report.TimePerRequestMs)
	}
}

// pastStore is a run of 1000 requests with totals 63…1062 µs (connect 10 +
// i%7, waiting total−20), of which the store keeps limit exactly, and the
// client's HDR histograms of all of them.
func pastStore(limit int) *client.Result {
	st := samples.New(1000, limit)
	x := &client.ExtraResult{Connect: samples.NewDist()}
	for p := range x.Phases {
		x.Phases[p] = samples.NewDist()
	}
	for i := 0; i < 1000; i++ {
		tot := uint32(1062 - i) // recorded in descending order
		smp := samples.Sample{Start: uint32(i), Connect: 10 + uint32(i%7), Wait: tot - 20, Total: tot}
		st.Put(i, smp, nil)
		x.Connect.Add(int64(smp.Connect))
		x.Phases[client.PhaseWait].Add(int64(smp.Wait))
		x.Phases[client.PhaseTotal].Add(int64(smp.Total))
	}
	return &client.Result{Complete: 1000, Elapsed: time.Second, Samples: st, Extra: x,
		StatusCounts: map[int]int{}, FirstError: map[string]string{}}
}

// Past the exact store the --percentiles table comes from the HDR histograms
// (3 significant digits), never from 1 ms buckets that put every sub-ms
// value at the minimum.
func TestPercentilesPastTheStore(t *testing.T) {
	ps := []float64{10, 50, 90, 99}
	exact := Summarize(pastStore(0), Options{Concurrency: 1, Percentiles: ps})
	past := Summarize(pastStore(100), Options{Concurrency: 1, Percentiles: ps})
	if exact.Report.StatisticsFromHistogram || !past.Report.StatisticsFromHistogram || !past.local.hdrPercentiles || exact.local.hdrPercentiles {
		t.Fatalf("modes: exact %v/%v, past %v/%v", exact.Report.StatisticsFromHistogram, exact.local.hdrPercentiles, past.Report.StatisticsFromHistogram, past.local.hdrPercentiles)
	}
	for i, p := range ps {
		e, h := exact.Percentiles[i], past.Percentiles[i]
		for _, c := range [][2]int64{{e.ConnectUs, h.ConnectUs}, {e.WaitingUs, h.WaitingUs}, {e.TotalUs, h.TotalUs}} {
			// 3 significant digits: within 0.1 % (bucket tops, never below).
			if c[1] < c[0] || float64(c[1]-c[0]) > 0.001*float64(c[0]) {
				t.Errorf("p%v: HDR %d µs, exact %d µs", p, c[1], c[0])
			}
		}
		if h.TotalUs == past.Report.ConnectionTimes.Total.MinUs {
			t.Errorf("p%v is the minimum (%d µs)", p, h.TotalUs)
		}
	}
	if got := past.Percentiles[0].TotalUs; got != 162 { // nearest rank 100 (1-based) of 63…1062
		t.Errorf("p10 = %d µs, want 162", got)
	}
	var b bytes.Buffer
	if err := writePercentiles(&b, past); err != nil || !strings.Contains(b.String(), "from HDR histograms of all 1000: 3 significant digits") {
		t.Errorf("title does not state the precision:\n%s", b.String())
	}
	if d := past; d.PercentilesSource != "hdr_histogram" || d.Percentiles[0].TotalUs != 162 {
		t.Errorf("JSON: source %q, p10 %d", d.PercentilesSource, d.Percentiles[0].TotalUs)
	}
	if d := exact; d.PercentilesSource != "exact" {
		t.Errorf("JSON: source %q", d.PercentilesSource)
	}
	// Without the client's histograms: 1 ms buckets, and the title says so.
	res := pastStore(100)
	res.Extra = nil
	old := Summarize(res, Options{Concurrency: 1, Percentiles: ps})
	if old.local.hdrPercentiles || old.PercentilesSource != "1ms_buckets" {
		t.Errorf("no HDR histograms: %v", old.local.hdrPercentiles)
	}
	// --fail-if reads the same percentiles.
	th, _ := ParseThreshold("p10<163us")
	if s := Summarize(pastStore(100), Options{Concurrency: 1, FailIf: []threshold.Threshold{th}}); s.ThresholdsFailed() || s.local.verdicts[0].Actual != 162 {
		t.Errorf("threshold on p10: %+v", s.local.verdicts)
	}
}

// The CGI table's figures are in the JSON document, valid against the schema.
func TestCGIInJSON(t *testing.T) {
	res := &client.Result{CGI: &client.CGITimes{
		Spawn: []uint32{3000, 1000, 2000}, FirstByte: []uint32{400, 600, 1499}, Output: []uint32{10_000, 10_000, 10_000},
		Reap: []uint32{0, 0, 1}, ChildCPU: []uint32{123_456, 0, 1_000_000},
	}, Samples: samples.New(3, 0), StatusCounts: map[int]int{}, FirstError: map[string]string{}}
	d := Summarize(res, Options{Concurrency: 1})
	if d.CGI == nil || d.CGI.Count != 3 || d.CGI.Spawn.MedianMs != 3 || d.CGI.ChildCPU.MeanUs != 374485 || d.CGI.ChildCPU.MaxMs != 1000 {
		t.Fatalf("CGI in JSON: %+v", d.CGI)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, d); err != nil {
		t.Fatal(err)
	}
	matchesSchema(t, b.Bytes())
	if d := Summarize(histogramResult(0), histogramOptions); d.CGI != nil {
		t.Errorf("a CGI section outside --cgi")
	}
}

// A run under minCPUShareRun states the client's CPU times but no share of a
// core (a 20-request run showed "145.2% of one core").
func TestShortRunHasNoCPUShare(t *testing.T) {
	res, _ := extFixture()
	res.Elapsed = 20 * time.Millisecond
	s := Summarize(res, Options{Concurrency: 2, CPU: fixtureCPU()})
	var b bytes.Buffer
	if err := writeExtended(&b, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Client CPU:             1.500 [s] user, 0.500 [s] sys (no share of a core: the run took under 1s)\n") ||
		strings.Contains(b.String(), "of one core,") {
		t.Errorf("short run:\n%s", b.String())
	}
	d := s
	if c := d.Extended.ClientCPU; c == nil || c.PercentOfOneCore != nil || c.CoresBusy != nil || c.UserMs != 1500 {
		t.Errorf("JSON client CPU %+v", c)
	}
}
