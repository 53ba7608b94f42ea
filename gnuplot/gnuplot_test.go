package gnuplot

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"gab/client"
)

// TestGoldenFiles rebuilds the real ab's -g files. testdata/<case>.tsv is ab's
// file (captured in UTC); testdata/<case>.samples holds per-request µs times
// chosen to round to ab's printed values (start offsets from the run start).
func TestGoldenFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start int64 // epoch seconds of the run start, from ab's file
	}{
		{"median-odd", 1795996874},
		{"median-even", 1795996874},
		{"gnuplot-csv", 1795996866},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &client.Result{Start: time.Unix(tc.start, 0), Samples: readSamples(t, "testdata/"+tc.name+".samples")}
			var out bytes.Buffer
			if err := Write(&out, res, time.UTC); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile("testdata/" + tc.name + ".tsv")
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
			}
		})
	}
}

func TestRowsSortedByTotalWithABTieOrder(t *testing.T) {
	s := client.NewSamples(5, 0)
	for _, smp := range []client.Sample{
		{Start: 0, Connect: 0, Wait: 3000, Total: 9000},
		{Start: 1, Connect: 2000, Wait: 1000, Total: 5000},
		{Start: 2, Connect: 1000, Wait: 1000, Total: 5000}, // same total and wait, more processing
		{Start: 3, Connect: 0, Wait: 500, Total: 5000},     // same total, less wait: first of the three
		{Start: 4, Connect: 0, Wait: 0, Total: 1000},
	} {
		s.Append(smp)
	}
	before := slices.Clone(s.Exact())
	var out bytes.Buffer
	if err := Write(&out, &client.Result{Start: time.Unix(1795996874, 0), Samples: s}, time.UTC); err != nil {
		t.Fatal(err)
	}
	want := Header +
		"Mon Nov 30 00:01:14 2026\t1795996874\t0\t1\t1\t0\n" +
		"Mon Nov 30 00:01:14 2026\t1795996874\t0\t5\t5\t1\n" +
		"Mon Nov 30 00:01:14 2026\t1795996874\t2\t3\t5\t1\n" +
		"Mon Nov 30 00:01:14 2026\t1795996874\t1\t4\t5\t1\n" +
		"Mon Nov 30 00:01:14 2026\t1795996874\t0\t9\t9\t3\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	if !slices.Equal(s.Exact(), before) {
		t.Error("Write reordered the samples")
	}
}

func TestStartTimesLocalZeroPaddedAndUnwrapped(t *testing.T) {
	s := client.NewSamples(3, 0)
	// Recording order: the second start wraps the 32-bit µs offset
	// (2^32 µs ≈ 71.6 minutes after the first).
	s.Append(client.Sample{Start: 4_294_000_000, Total: 2000})
	s.Append(client.Sample{Start: 1_000_000, Total: 1000}) // 2^32 + 1e6 µs
	s.Append(client.Sample{Start: 0, Total: 3000})         // started just before the second, recorded after it
	runStart := time.Date(2026, time.November, 2, 7, 4, 5, 0, time.UTC)
	tokyo := time.FixedZone("JST", 9*3600)
	var out bytes.Buffer
	if err := Write(&out, &client.Result{Start: runStart, Samples: s}, tokyo); err != nil {
		t.Fatal(err)
	}
	epoch := runStart.Unix()
	wrap := int64(1) << 32
	row := func(offsetUs int64, totalMs int) string {
		at := runStart.Add(time.Duration(offsetUs) * time.Microsecond).In(tokyo)
		return fmt.Sprintf("%s\t%d\t0\t%d\t%d\t0\n", at.Format("Mon Jan 02 15:04:05 2006"),
			epoch+offsetUs/1_000_000, totalMs, totalMs)
	}
	want := Header + row(wrap+1_000_000, 1) + row(4_294_000_000, 2) + row(wrap, 3)
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	if !strings.Contains(out.String(), "Mon Nov 02 17:15:") {
		t.Errorf("want a zero-padded day in JST (Mon Nov 02 17:15:…), got:\n%s", out.String())
	}
}

func TestNoSamplesWritesNothing(t *testing.T) {
	var out bytes.Buffer
	if err := Write(&out, &client.Result{Samples: client.NewSamples(10, 0)}, time.UTC); err != nil {
		t.Fatal(err)
	}
	if err := Write(&out, &client.Result{}, time.UTC); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Errorf("wrote %q for a run without samples", out.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

func TestWriteError(t *testing.T) {
	s := client.NewSamples(1, 0)
	s.Append(client.Sample{Total: 1})
	if err := Write(failingWriter{}, &client.Result{Samples: s}, time.UTC); err == nil {
		t.Error("want the writer's error")
	}
}

func TestAllocationsIndependentOfSampleCount(t *testing.T) {
	s := client.NewSamples(100_000, 0)
	for i := range 100_000 {
		s.Append(client.Sample{Start: uint32(i * 10), Connect: uint32(i % 700), Wait: uint32(i % 900), Total: uint32(i*7919) % 50_000})
	}
	res := &client.Result{Start: time.Unix(1795996874, 0), Samples: s}
	allocs := testing.AllocsPerRun(2, func() {
		if err := Write(discard{}, res, time.UTC); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 20 {
		t.Errorf("Write made %v allocations for 1e5 samples; want a handful, none per sample", allocs)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func BenchmarkWrite1e6(b *testing.B) {
	s := client.NewSamples(1_000_000, 0)
	for i := range 1_000_000 {
		s.Append(client.Sample{Start: uint32(i * 10), Connect: uint32(i % 700), Wait: uint32(i % 900), Total: uint32(i*7919) % 50_000})
	}
	res := &client.Result{Start: time.Unix(1795996874, 0), Samples: s}
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(discard{}, res, time.UTC); err != nil {
			b.Fatal(err)
		}
	}
}

// readSamples reads "start connect wait total" lines (µs, recording order).
func readSamples(t *testing.T, path string) *client.Samples {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []client.Sample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			var r client.Sample
			if _, err := fmt.Sscan(line, &r.Start, &r.Connect, &r.Wait, &r.Total); err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
			rows = append(rows, r)
		}
	}
	s := client.NewSamples(len(rows), 0)
	for _, r := range rows {
		s.Append(r)
	}
	return s
}

// TestOrderMatchesChainedStableSorts checks the row order against ab's four
// qsort calls (connect, processing, wait, total) done as stable sorts, as
// glibc's merge sort does, on samples with many ties.
func TestOrderMatchesChainedStableSorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 50 {
		n := 1 + rng.IntN(200)
		s := client.NewSamples(n, 0)
		for i := range n {
			c := rng.Uint32N(3) * 700
			tot := c + rng.Uint32N(4)*600
			s.Append(client.Sample{Start: uint32(i) * 1_000_003, Connect: c, Wait: rng.Uint32N(tot - c + 1), Total: tot})
		}
		samples := slices.Clone(s.Exact())
		offsets := client.StartOffsets(samples)
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		key := func(f func(client.Sample) uint32) {
			sort.SliceStable(idx, func(a, b int) bool { return f(samples[idx[a]]) < f(samples[idx[b]]) })
		}
		key(func(x client.Sample) uint32 { return x.Connect })
		key(func(x client.Sample) uint32 { return x.Total - x.Connect })
		key(func(x client.Sample) uint32 { return x.Wait })
		key(func(x client.Sample) uint32 { return x.Total })
		start := time.Unix(1795996874, 0)
		var want strings.Builder
		want.WriteString(Header)
		for _, i := range idx {
			x := samples[i]
			at := start.Add(time.Duration(offsets[i]) * time.Microsecond)
			fmt.Fprintf(&want, "%s\t%d\t%d\t%d\t%d\t%d\n", at.UTC().Format("Mon Jan 02 15:04:05 2006"), at.Unix(),
				(x.Connect+500)/1000, (x.Total-x.Connect+500)/1000, (x.Total+500)/1000, (x.Wait+500)/1000)
		}
		var out bytes.Buffer
		if err := Write(&out, &client.Result{Start: start, Samples: s}, time.UTC); err != nil {
			t.Fatal(err)
		}
		if out.String() != want.String() {
			t.Fatalf("trial %d (n=%d): got\n%s\nwant\n%s", trial, n, out.String(), want.String())
		}
	}
}
