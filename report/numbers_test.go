package report

import (
	"bytes"
	"strings"
	"testing"
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
	d := NewDocument(s)
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
	if s.Total.MeanUs != 5504 || !strings.Contains(b.String(), want) {
		t.Errorf("mean %d µs; want %q in\n%s", s.Total.MeanUs, want, b.String())
	}
	res, _ := extFixture()
	res.Extra.Rate = nil
	if s := Summarize(res, Options{Concurrency: 2}); s.Rates.TimePerRequest != 500 { // 2 × 2500 ms / 10
		t.Errorf("outside rate mode Time per request = %v, want ab's 500", s.Rates.TimePerRequest)
	}
}
