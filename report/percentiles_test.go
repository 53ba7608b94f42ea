package report

import (
	"gab/internal/samples"

	"bytes"
	"testing"

	"gab/client"
)

// tenSamples is a run of ten requests with known columns (µs): Connect 0, 100,
// … 900; Waiting 500, 510, … 590; Total 1000, 2001, … 10009 (recorded in
// reverse, so the report must sort).
func tenSamples() *client.Result {
	smp := samples.New(10, 0)
	for i := 9; i >= 0; i-- {
		smp.Put(smp.Len(), samples.Sample{
			Start:   uint32(i * 1000),
			Connect: uint32(100 * i),
			Wait:    uint32(500 + 10*i),
			Total:   uint32(1000*(i+1) + i),
		}, nil)
	}
	return &client.Result{Complete: 10, Samples: smp, StatusCounts: map[int]int{}, FirstError: map[string]string{}}
}

func TestParsePercentiles(t *testing.T) {
	got, err := ParsePercentiles("50, 90,99.9%,99.99 %,100, 0")
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{50, 90, 99.9, 99.99, 100, 0}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	for _, bad := range []string{"", "100.001", "101", "50,,90", "abc", "-1", "-0.5", "NaN", "50%%", "%", "1e400", "Inf"} {
		if _, err := ParsePercentiles(bad); err == nil {
			t.Errorf("ParsePercentiles(%q) accepted", bad)
		}
	}
}

func TestPercentileRowsUseNearestRank(t *testing.T) {
	// done = 10, rank 10·p/100 rounded half up (1-based): p50 → 5, p90 → 9,
	// p94.9 → 9, p95 → 10, p99.9 → 10, p10 → 1, p14.99 → 1, p15 → 2, p20 → 2;
	// p0 is the min.
	cases := []struct {
		p                    float64
		connect, wait, total int64
	}{
		{50, 400, 540, 5004},
		{90, 800, 580, 9008},
		{94.9, 800, 580, 9008},
		{95, 900, 590, 10009},
		{99.9, 900, 590, 10009},
		{10, 0, 500, 1000},
		{14.99, 0, 500, 1000},
		{15, 100, 510, 2001},
		{20, 100, 510, 2001},
		{100, 900, 590, 10009},
		{0, 0, 500, 1000},
	}
	ps := make([]float64, len(cases))
	for i, c := range cases {
		ps[i] = c.p
	}
	s := Summarize(tenSamples(), Options{Concurrency: 1, Percentiles: ps})
	for i, r := range s.PercentileTable {
		c := cases[i]
		if r.ConnectUs != c.connect || r.WaitingUs != c.wait || r.TotalUs != c.total {
			t.Errorf("p%v = %d/%d/%d, want %d/%d/%d", c.p, r.ConnectUs, r.WaitingUs, r.TotalUs, c.connect, c.wait, c.total)
		}
	}
}

func TestWritePercentilesLayout(t *testing.T) {
	s := Summarize(tenSamples(), Options{Concurrency: 1, Percentiles: []float64{50, 90, 99.9}})
	var b bytes.Buffer
	if err := WritePercentiles(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "\nPercentage of the requests served within a certain time (µs, nearest rank, exact)\n" +
		"         Connect  Waiting (TTFB)     Total\n" +
		"   50%       400             540      5004\n" +
		"   90%       800             580      9008\n" +
		" 99.9%       900             590     10009\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	// ab's own widths when every label is short.
	b.Reset()
	_ = WritePercentiles(&b, Summarize(tenSamples(), Options{Concurrency: 1, Percentiles: []float64{50, 100}}))
	if want := "\nPercentage of the requests served within a certain time (µs, nearest rank, exact)\n" +
		"        Connect  Waiting (TTFB)     Total\n" +
		"  50%       400             540      5004\n" +
		" 100%       900             590     10009\n"; b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWritePercentilesNeedsTwoRequests(t *testing.T) {
	smp := samples.New(1, 0)
	smp.Put(smp.Len(), samples.Sample{Total: 5}, nil)
	s := Summarize(&client.Result{Complete: 1, Samples: smp}, Options{Concurrency: 1, Percentiles: []float64{50}})
	var b bytes.Buffer
	if err := WritePercentiles(&b, s); err != nil || b.Len() != 0 {
		t.Fatalf("wrote %q (err %v) for a single request; ab prints no table then", b.String(), err)
	}
}

func TestWritePercentilesFromHistograms(t *testing.T) {
	// A sample limit of 4 for 10 requests: the values come from 1 ms buckets
	// and the title says so.
	smp := samples.New(10, 4)
	for i := 0; i < 10; i++ {
		smp.Put(smp.Len(), samples.Sample{Connect: 0, Wait: uint32(1000 * i), Total: uint32(1000*i + 400)}, nil)
	}
	s := Summarize(&client.Result{Complete: 10, Samples: smp}, Options{Concurrency: 1, Percentiles: []float64{50}})
	var b bytes.Buffer
	if err := WritePercentiles(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "\nPercentage of the requests served within a certain time (µs, nearest rank; exact for the first 4 requests, then 1 ms buckets)\n" +
		"        Connect  Waiting (TTFB)     Total\n" +
		"  50%         0            4000      4000\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
