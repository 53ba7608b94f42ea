package report

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/client"
	"gab/internal/samples"
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
	for i, r := range s.Percentiles {
		c := cases[i]
		if r.ConnectUs != c.connect || r.WaitingUs != c.wait || r.TotalUs != c.total {
			t.Errorf("p%v = %d/%d/%d, want %d/%d/%d", c.p, r.ConnectUs, r.WaitingUs, r.TotalUs, c.connect, c.wait, c.total)
		}
	}
}

func TestWritePercentilesLayout(t *testing.T) {
	s := Summarize(tenSamples(), Options{Concurrency: 1, Percentiles: []float64{50, 90, 99.9}})
	var b bytes.Buffer
	if err := writePercentiles(&b, s); err != nil {
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
	_ = writePercentiles(&b, Summarize(tenSamples(), Options{Concurrency: 1, Percentiles: []float64{50, 100}}))
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
	if err := writePercentiles(&b, s); err != nil || b.Len() != 0 {
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
	if err := writePercentiles(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "\nPercentage of the requests served within a certain time (µs, nearest rank; exact for the first 4 requests, then 1 ms buckets)\n" +
		"        Connect  Waiting (TTFB)     Total\n" +
		"  50%         0            4000      4000\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// sparseRun is a run of n requests past an exact store of limit with skewed
// totals and a sparse tail (one in 150 about 1 to 3 s slower), the client's
// HDR histograms of its columns and phases, rate mode's corrected times and
// a timeline of 1-second intervals.
func sparseRun(n, limit int, seed uint64) *client.Result {
	rng := rand.New(rand.NewPCG(seed, 11))
	st := samples.New(n, limit)
	x := &client.ExtraResult{Connect: samples.NewDist()}
	for p := range x.Phases {
		x.Phases[p] = samples.NewDist()
	}
	rr := &client.RateResult{Target: 100, Sent: int64(n), Corrected: samples.NewDist(), Lag: samples.NewDist()}
	tl := &client.Timeline{Interval: time.Second, Corrected: true}
	var lat, cor []int64
	for i := range n {
		tot := uint32(300 + rng.ExpFloat64()*3000)
		if rng.IntN(150) == 0 {
			tot += 1_000_000 + rng.Uint32N(2_000_000)
		}
		smp := samples.Sample{Start: uint32(i), Connect: 10 + uint32(rng.IntN(90)), Total: tot}
		smp.Wait = tot - smp.Connect - 5
		st.Put(i, smp, nil)
		x.Connect.Add(int64(smp.Connect))
		x.Phases[client.PhaseWait].Add(int64(smp.Wait))
		x.Phases[client.PhaseTotal].Add(int64(smp.Total))
		lag := int64(rng.ExpFloat64() * 500)
		rr.Lag.Add(lag)
		rr.Corrected.Add(int64(tot) + lag)
		lat, cor = append(lat, int64(tot)), append(cor, int64(tot)+lag)
		if len(lat) == 97+int(seed%50) || i == n-1 {
			k := len(tl.Intervals)
			tl.Intervals = append(tl.Intervals, client.Interval{Start: time.Duration(k) * time.Second, Length: time.Second,
				Requests: int64(len(lat)), Latency: latencyOfValues(lat), Corrected: latencyOfValues(cor)})
			lat, cor = nil, nil
		}
	}
	x.Rate = rr
	return &client.Result{Complete: n, Elapsed: time.Duration(len(tl.Intervals)) * time.Second, Samples: st, Extra: x,
		Timeline: tl, StatusCounts: map[int]int{}, FirstError: map[string]string{}}
}

// Every percentile of the JSON document (--percentiles past the exact store,
// the phases, rate mode's lag and corrected times, the timeline's intervals)
// is what an independent reader finds: HdrHistogram's Go library decoding
// the document's own histogram, ValueAtQuantile capped by the exact max. The
// document is read as plain JSON, not with gab's types. The runs' sparse
// tails make ab's index rule differ at many of these figures.
func TestJSONPercentilesAreValueAtQuantile(t *testing.T) {
	ps := []float64{1, 10, 25, 33.3, 50, 66.6, 75, 90, 95, 97.5, 99, 99.5, 99.7, 99.9, 99.95, 99.97, 99.99, 100}
	checked, abDiffers := 0, 0
	for seed, n := range []int{1000, 1234, 3007, 999} {
		s := Summarize(sparseRun(n, 100, uint64(seed)), Options{Concurrency: 1, Percentiles: ps})
		if !s.local.hdrPercentiles {
			t.Fatal("the --percentiles table does not come from the HDR histograms")
		}
		var b bytes.Buffer
		if err := WriteJSON(&b, s); err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		// at is the reader's value at p of the distribution object o.
		at := func(o map[string]any, p float64) (int64, *hdrhistogram.Histogram) {
			hist, _ := o["histogram"].(map[string]any)
			data, _ := hist["data"].(string)
			h, err := hdrhistogram.Decode([]byte(data))
			if err != nil {
				t.Fatalf("histogram of %v: %v", o, err)
			}
			return min(h.ValueAtQuantile(p), int64(o["max_us"].(float64))), h
		}
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch v := v.(type) {
			case map[string]any:
				if _, ok := v["histogram"]; ok && v["max_us"] != nil && v["p99_us"] != nil {
					for _, f := range []struct {
						key string
						p   float64
					}{{"median_us", 50}, {"p50_us", 50}, {"p90_us", 90}, {"p99_us", 99}, {"p99_9_us", 99.9}} {
						got, ok := v[f.key].(float64)
						if !ok {
							continue
						}
						want, h := at(v, f.p)
						checked++
						if int64(got) != want {
							t.Errorf("n %d %s.%s = %v, the reader finds %d", n, path, f.key, got, want)
						}
						d := samples.Dist{Hist: h, Count: h.TotalCount(), Max: int64(v["max_us"].(float64))}
						if d.AtIndex(int64(float64(d.Count)*f.p/100+1e-9)) != want {
							abDiffers++
						}
					}
				}
				for k, e := range v {
					walk(path+"."+k, e)
				}
			case []any:
				for i, e := range v {
					walk(path+"["+strconv.Itoa(i)+"]", e)
				}
			}
		}
		walk("", doc)
		phases := doc["extended"].(map[string]any)["phases"].(map[string]any)
		for _, row := range doc["percentiles"].([]any) {
			r := row.(map[string]any)
			p := r["percent"].(float64)
			for _, c := range [...]struct{ phase, key string }{{"total", "total_us"}, {"waiting", "waiting_us"}} {
				want, _ := at(phases[c.phase].(map[string]any), p)
				checked++
				if int64(r[c.key].(float64)) != want {
					t.Errorf("n %d --percentiles p%v %s = %v, the reader finds %d", n, p, c.key, r[c.key], want)
				}
			}
		}
	}
	if checked < 300 || abDiffers < 20 {
		t.Errorf("checked %d figures, ab's rule differs at %d: the runs do not tell the rules apart", checked, abDiffers)
	}
}
