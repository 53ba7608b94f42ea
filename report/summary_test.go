package report

import (
	"gab/internal/samples"

	"bytes"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/gnuplot"
)

// histogramTotals are total times (µs) whose 1 ms buckets are 1, 2, 3, 3, 7,
// 7, 8, 10, 50: ab would print the same medians and percentiles from them
// except where the odd-count median averages 7000 and 7499.
var histogramTotals = []uint32{7499, 1200, 10000, 2600, 50000, 3400, 7000, 1800, 7500}

func histogramResult(limit int) *client.Result {
	s := samples.New(len(histogramTotals), limit)
	for i, tot := range histogramTotals {
		s.Put(s.Len(), samples.Sample{Start: uint32(i * 100), Connect: 100 + uint32(i), Wait: tot / 2, Total: tot}, nil)
	}
	return &client.Result{Complete: len(histogramTotals), Elapsed: 60 * time.Millisecond, Samples: s,
		Counters: client.Counters{TotalRead: 9 * 333, BodyRead: 900}, DocLength: 100, ServerSoftware: "nginx/1.22.1"}
}

var histogramOptions = Options{Host: "127.0.0.1", Port: 8080, Path: "/", Concurrency: 1}

func TestHistogramModeMatchesExactWhereExact(t *testing.T) {
	exact := Summarize(histogramResult(0), histogramOptions)
	histRes := histogramResult(4)
	hist := Summarize(histRes, histogramOptions)
	ht := tablesOf(hist, histRes)
	if exact.Report.StatisticsFromHistogram || !hist.Report.StatisticsFromHistogram {
		t.Fatalf("FromHistograms = %v (exact store), %v (limit 4)", exact.Report.StatisticsFromHistogram, hist.Report.StatisticsFromHistogram)
	}
	if hist.Report.ExactSamples != 4 || hist.local.count != 9 || exact.local.count != 9 {
		t.Errorf("ExactSamples = %d, Count = %d/%d; want 4 and 9", hist.Report.ExactSamples, hist.local.count, exact.local.count)
	}
	for _, c := range []column{connectColumn, processingColumn, waitingColumn, totalColumn} {
		e, h := exact.Report.ConnectionTimes.column(c), hist.Report.ConnectionTimes.column(c)
		if e.MinUs != h.MinUs || e.MaxUs != h.MaxUs || e.MeanUs != h.MeanUs {
			t.Errorf("column %d: min/max/mean %d/%d/%d from histograms, %d/%d/%d exact",
				c, h.MinUs, h.MaxUs, h.MeanUs, e.MinUs, e.MaxUs, e.MeanUs)
		}
		if math.Abs(e.SDUs-h.SDUs) > 1e-9*e.SDUs {
			t.Errorf("column %d: sd %v from histograms, %v exact", c, h.SDUs, e.SDUs)
		}
	}
	// The median's two values become bucket values: (7000+7000)/2 instead of
	// (7000+7499)/2; both print 7 ms.
	et, htot := &exact.Report.ConnectionTimes.Total, &hist.Report.ConnectionTimes.Total
	if et.MedianUs != 7249 || htot.MedianUs != 7000 || htot.MedianMs != 7 {
		t.Errorf("total median: exact %d µs, histograms %d µs (%d ms); want 7249, 7000 (7)",
			et.MedianUs, htot.MedianUs, htot.MedianMs)
	}
	wantMs := []int64{7, 7, 8, 10, 50, 50, 50, 50, 50}
	for i, p := range hist.Report.PercentageServed {
		if p.TotalMs != wantMs[i] || exact.Report.PercentageServed[i].TotalMs != wantMs[i] {
			t.Errorf("%v%%: %d ms from histograms, %d exact; want %d", p.Percent, p.TotalMs, exact.Report.PercentageServed[i].TotalMs, wantMs[i])
		}
	}
	// The first and last ranks are the exact min and max; others bucket values.
	if got := ht.percentile(totalColumn, 0); got != 1200 {
		t.Errorf("0th percentile = %d, want the exact min 1200", got)
	}
	if got := ht.percentile(totalColumn, 12); got != 1200 {
		t.Errorf("12th percentile (rank 1 of 9) = %d, want the exact min 1200", got)
	}
	if got := ht.percentile(totalColumn, 20); got != 2000 {
		t.Errorf("20th percentile (rank 2 of 9) = %d, want its bucket 2000", got)
	}
	if got := ht.percentile(totalColumn, 100); got != 50000 {
		t.Errorf("100th percentile = %d, want the exact max 50000", got)
	}
	if hist.local.html != exact.local.html {
		t.Errorf("HTML table %+v from histograms, %+v exact", hist.local.html, exact.local.html)
	}

	var out bytes.Buffer
	if err := WriteText(&out, hist); err != nil {
		t.Fatal(err)
	}
	checkGab(t, "histograms.txt", out.Bytes())
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := "Statistics from 1 ms histograms past the first 4 requests (medians and percentiles to the nearest ms)."
	if lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}
	out.Reset()
	if err := WriteText(&out, exact); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "histograms") {
		t.Error("the exact report mentions histograms")
	}
}

// tablesOf is the rank queries over a summarized run's requests (its store
// sorted by Summarize already).
func tablesOf(r *Run, res *client.Result) *tables {
	return &tables{ranks: res.Samples.Ranks(), n: r.local.count}
}

func TestSummarizeSortsSamplesByTotalInPlace(t *testing.T) {
	res := histogramResult(0)
	s := Summarize(res, histogramOptions)
	got := res.Samples.Exact()
	if !slices.IsSortedFunc(got, samples.CompareByTotal) {
		t.Errorf("samples after Summarize are not in ab's order: %v", got)
	}
	want := slices.Clone(histogramTotals)
	slices.Sort(want)
	for i, smp := range got {
		if smp.Total != want[i] || tablesOf(s, res).valueAt(totalColumn, i) != int64(want[i]) {
			t.Errorf("rank %d: sample total %d, valueAt %d; want %d", i, smp.Total, tablesOf(s, res).valueAt(totalColumn, i), want[i])
		}
	}
}

func TestPercentileFractional(t *testing.T) {
	res := &client.Result{Complete: 1000, Elapsed: time.Second, Samples: samples.New(1000, 0)}
	for i := range 1000 {
		// Recorded in descending order, so the sort matters.
		res.Samples.Put(res.Samples.Len(), samples.Sample{Connect: uint32(1000 - i), Wait: uint32(2 * (1000 - i)), Total: uint32(10 * (1000 - i))}, nil)
	}
	s := Summarize(res, histogramOptions)
	for _, tc := range []struct {
		c    column
		p    float64
		want int64
	}{
		// The nearest rank, 1000·p/100 rounded half up, of 10, 20, …, 10000.
		{totalColumn, 50, 5000},     // rank 500
		{totalColumn, 99.9, 9990},   // rank 999
		{totalColumn, 99.95, 10000}, // 999.5: rank 1000
		{totalColumn, 99.99, 10000},
		{totalColumn, 12.25, 1230}, // 122.5: rank 123
		{totalColumn, 12.24, 1220}, // 122.4: rank 122 (ab's rule would take 123)
		{totalColumn, 0, 10},
		{totalColumn, 100, 10000},
		{connectColumn, 90, 900},
		{waitingColumn, 90, 1800},
		{processingColumn, 50, 4500}, // 9·(1000−i): rank 500 is 9·500
	} {
		if got := tablesOf(s, res).percentile(tc.c, tc.p); got != tc.want {
			t.Errorf("Percentile(%d, %v) = %d, want %d", tc.c, tc.p, got, tc.want)
		}
	}
	if got := (&tables{}).percentile(totalColumn, 50); got != 0 {
		t.Errorf("Percentile without samples = %d, want 0", got)
	}
}

func TestTextWithoutCompletedRequests(t *testing.T) {
	res := &client.Result{Elapsed: 5 * time.Millisecond, Samples: samples.New(10, 0)}
	s := Summarize(res, Options{Host: "127.0.0.1", Port: 18081, Path: "/hang", Concurrency: 1})
	var out bytes.Buffer
	if err := WriteText(&out, s); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "HTML transferred:       0 bytes\n") {
		t.Errorf("the report must stop after HTML transferred when done = 0:\n%s", out.String())
	}
	out.Reset()
	s.local.htmlAttrs = HTMLAttrs{Cell: "bgcolor=white"}
	if err := WriteHTML(&out, s); err != nil {
		t.Fatal(err)
	}
	// HTML prints the rates whenever time passed, and no Connection Times.
	want := "<tr ><th colspan=2 bgcolor=white>Requests per second:</th><td colspan=2 bgcolor=white>0.00</td></tr>\n" +
		"<tr ><th colspan=2 bgcolor=white>Transfer rate:</th><td colspan=2 bgcolor=white>0.00 kb/s received</td></tr>\n" +
		"</table>\n"
	if !strings.HasSuffix(out.String(), want) {
		t.Errorf("HTML without requests: got\n%s\nwant it to end with\n%s", out.String(), want)
	}
	out.Reset()
	if err := WriteCSV(&out, s); err != nil || out.Len() != 0 {
		t.Errorf("WriteCSV without samples wrote %q (err %v); want nothing", out.String(), err)
	}
}

func TestTextHTTP2AndTLSLines(t *testing.T) {
	res := histogramResult(0)
	res.TLS = &client.TLSInfo{Protocol: "TLSv1.3", Cipher: "TLS_AES_128_GCM_SHA256", PeerKeyBits: 2048,
		CipherBits: 128, TempKey: "X25519 253 bits", ServerName: "localhost"}
	o := histogramOptions
	o.Host, o.Port, o.TLS = "localhost", 8443, true
	res.Protocol = "h2"
	var out bytes.Buffer
	if err := WriteText(&out, Summarize(res, o)); err != nil {
		t.Fatal(err)
	}
	want := "Server Port:            8443\n" +
		"Protocol:               HTTP/2 (h2)\n" +
		"SSL/TLS Protocol:       TLSv1.3,TLS_AES_128_GCM_SHA256,2048,128\n" +
		"Server Temp Key:        X25519 253 bits\n" +
		"TLS Server Name:        localhost\n" +
		"\nDocument Path:"
	if !strings.Contains(out.String(), want) {
		t.Errorf("got\n%s\nwant it to contain\n%s", out.String(), want)
	}

	// Every handshake failed: no protocol, but ab still names the SNI it sent.
	res.TLS = &client.TLSInfo{ServerName: "localhost"}
	res.Protocol = "h2c"
	out.Reset()
	if err := WriteText(&out, Summarize(res, o)); err != nil {
		t.Fatal(err)
	}
	want = "Server Port:            8443\nProtocol:               HTTP/2 (h2c)\nTLS Server Name:        localhost\n\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("got\n%s\nwant it to contain\n%s", out.String(), want)
	}

	// Plain HTTP ignores Result.TLS.
	o.TLS = false
	out.Reset()
	if err := WriteText(&out, Summarize(res, o)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "TLS") {
		t.Errorf("TLS lines without https:\n%s", out.String())
	}
}

func TestTextWriteErrorsAndPortWrap(t *testing.T) {
	res := histogramResult(0)
	res.WriteErrors = 3
	o := histogramOptions
	o.Port = 65536 + 80 // %hu prints the low 16 bits
	var out bytes.Buffer
	if err := WriteText(&out, Summarize(res, o)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Server Port:            80\n", "Failed requests:        0\nWrite errors:           3\nTotal transferred:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
}

type closedWriter struct{}

func (closedWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWritersReturnErrors(t *testing.T) {
	s := Summarize(histogramResult(0), histogramOptions)
	if err := WriteText(closedWriter{}, s); err == nil {
		t.Error("WriteText: want the writer's error")
	}
	if err := WriteHTML(closedWriter{}, s); err == nil {
		t.Error("WriteHTML: want the writer's error")
	}
	if err := WriteCSV(closedWriter{}, s); err == nil {
		t.Error("WriteCSV: want the writer's error")
	}
}

func manySamples(n int) *client.Result {
	s := samples.New(n, 0)
	for i := range n {
		s.Put(s.Len(), samples.Sample{Start: uint32(i * 10), Connect: uint32(i % 700), Wait: uint32(i % 900), Total: uint32(i*7919) % 50_000}, nil)
	}
	return &client.Result{Complete: n, Elapsed: time.Second, Samples: s}
}

// TestSummarizeAllocationsIndependentOfSampleCount: Summarize allocates a
// handful of times (the record's sections), the same for 10^3 samples as for
// 10^5, so nothing per sample. A radix pass or a map may grow once more at
// the larger size; a per-sample allocation would add 10^5.
func TestSummarizeAllocationsIndependentOfSampleCount(t *testing.T) {
	allocs := func(n int) float64 {
		res := manySamples(n)
		return testing.AllocsPerRun(5, func() { Summarize(res, histogramOptions) })
	}
	small, large := allocs(1000), allocs(100_000)
	if large > small+3 || large > 16 {
		t.Errorf("Summarize made %v allocations for 1e5 samples and %v for 1e3; want a handful, the same for both", large, small)
	}
}

// TestReportFilesOfAMillionSamplesAllocateUnderOneMB checks the bounded-memory
// promise end to end: the report, the -e file and the -g file of 10^6 samples
// (16 MB in the store) allocate less than 1 MB between them.
func TestReportFilesOfAMillionSamplesAllocateUnderOneMB(t *testing.T) {
	res := manySamples(1_000_000)
	res.Start = time.Unix(1795996874, 0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := Summarize(res, histogramOptions)
	var text, csv countingWriter
	if err := WriteText(&text, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&csv, s); err != nil {
		t.Fatal(err)
	}
	var plot countingWriter
	if err := gnuplot.Write(&plot, res, time.UTC); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if plot.n < 1_000_000*30 || csv.n == 0 || text.n == 0 {
		t.Fatalf("wrote %d, %d and %d bytes; want the whole report and files", text.n, csv.n, plot.n)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got >= 1<<20 {
		t.Errorf("Summarize, WriteText, WriteCSV and gnuplot.Write allocated %d bytes for 1e6 samples; want < 1 MB", got)
	}
}

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}

// BenchmarkSummarize1e6 summarizes 10^6 samples in recording order, the sort
// included (each iteration restores the order, off the clock).
func BenchmarkSummarize1e6(b *testing.B) {
	res := manySamples(1_000_000)
	recorded := slices.Clone(res.Samples.Exact())
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		copy(res.Samples.Exact(), recorded)
		b.StartTimer()
		Summarize(res, histogramOptions)
	}
}

func ExampleWriteText() {
	store := samples.New(3, 0)
	for _, smp := range []samples.Sample{
		{Start: 0, Connect: 161, Wait: 369, Total: 4011},
		{Start: 4011, Connect: 406, Wait: 22462, Total: 23021},
		{Start: 27032, Connect: 462, Wait: 78, Total: 742},
	} {
		store.Put(store.Len(), smp, nil)
	}
	res := &client.Result{
		Elapsed: 28192 * time.Microsecond, Complete: 3, Samples: store,
		ServerSoftware: "pysrv/1.0", DocLength: 100, Counters: client.Counters{TotalRead: 555, BodyRead: 300},
	}
	s := Summarize(res, Options{Host: "127.0.0.1", Port: 18081, Path: "/us/0/20000/3", Concurrency: 1})
	_ = WriteText(os.Stdout, s)
	// Output:
	// Server Software:        pysrv/1.0
	// Server Hostname:        127.0.0.1
	// Server Port:            18081
	//
	// Document Path:          /us/0/20000/3
	// Document Length:        100 bytes
	//
	// Concurrency Level:      1
	// Time taken for tests:   0.028 seconds
	// Complete requests:      3
	// Failed requests:        0
	// Total transferred:      555 bytes
	// HTML transferred:       300 bytes
	// Requests per second:    106.41 [#/sec] (mean)
	// Time per request:       9.397 [ms] (mean)
	// Time per request:       9.397 [ms] (mean, across all concurrent requests)
	// Transfer rate:          19.23 [Kbytes/sec] received
	//
	// Connection Times (ms)
	//               min  mean[+/-sd] median   max
	// Connect:        0    0   0.2      0       0
	// Processing:     0    9  12.0     13      23
	// Waiting:        0    8  12.8     11      22
	// Total:          1    9  12.0     14      23
	//
	// Percentage of the requests served within a certain time (ms)
	//   50%      4
	//   66%      4
	//   75%     23
	//   80%     23
	//   90%     23
	//   95%     23
	//   98%     23
	//   99%     23
	//  100%     23 (longest request)
}

// TestFilesAgreeWithPercentileTable checks that the -g file, the -e file and
// the percentile table read the same order: ab's table row p is the -g file's
// row at ab's index, and each -e row is a -g row's total.
func TestFilesAgreeWithPercentileTable(t *testing.T) {
	res := manySamples(1001)
	res.Start = time.Unix(1795996874, 0)
	s := Summarize(res, histogramOptions)
	var plot bytes.Buffer
	if err := gnuplot.Write(&plot, res, time.UTC); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(plot.String(), "\n"), "\n")[1:]
	if len(rows) != 1001 {
		t.Fatalf("-g file has %d rows, want 1001", len(rows))
	}
	ttime := func(i int) string { return strings.Split(rows[i], "\t")[4] }
	for _, p := range s.Report.PercentageServed {
		if got, want := ttime(percentileIndex(s.local.count, int(p.Percent))), strconv.FormatInt(p.TotalMs, 10); got != want {
			t.Errorf("%v%%: -g row has ttime %s, the table says %s", p.Percent, got, want)
		}
	}
	for i := 0; i <= 100; i++ {
		if got, want := ttime(csvIndex(s.local.count, i)), strconv.FormatInt(roundMs(s.local.csv[i]), 10); got != want {
			t.Errorf("-e row %d: -g row has ttime %s, the -e value rounds to %s", i, got, want)
		}
	}
}
