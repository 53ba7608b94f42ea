package gnuplot

import (
	"gab/internal/samples"

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
// chosen to round to ab's printed values (start offsets from the run start,
// turned into Sample.Start as the client does).
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
			start := time.Unix(tc.start, 0)
			res := &client.Result{Start: start, Samples: readSamples(t, "testdata/"+tc.name+".samples", start)}
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
	s := samples.New(5, 0)
	for _, smp := range []samples.Sample{
		{Start: 0, Connect: 0, Wait: 3000, Total: 9000},
		{Start: 1, Connect: 2000, Wait: 1000, Total: 5000},
		{Start: 2, Connect: 1000, Wait: 1000, Total: 5000}, // same total and wait, more processing
		{Start: 3, Connect: 0, Wait: 500, Total: 5000},     // same total, less wait: first of the three
		{Start: 4, Connect: 0, Wait: 0, Total: 1000},
	} {
		s.Put(s.Len(), smp, nil)
	}
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
	// Write sorts the store in place, into the order it printed.
	wantStarts := []uint32{4, 3, 1, 2, 0}
	for i, smp := range s.Exact() {
		if smp.Start != wantStarts[i] {
			t.Errorf("sample %d after Write has Start %d, want %d (rows' order)", i, smp.Start, wantStarts[i])
		}
	}
}

// TestStartSecondsAreABs checks the start columns against ab's
// apr_time_sec(start µs) and ctime, for a run that starts 300 µs before a
// whole second: a request 400 µs into the run belongs to the next second, one
// 200 µs in to the run's. Sample.Start comes from samples.StartMs as the client
// records it, and spans weeks without wrapping.
func TestStartSecondsAreABs(t *testing.T) {
	runStart := time.Date(2026, time.November, 2, 7, 4, 5, 999_700_000, time.UTC)
	base := runStart.UnixMicro()
	offsetsUs := []int64{400, 200, 3_600_000_000, 40 * 24 * 3_600_000_000} // +1 h, +40 days
	s := samples.New(len(offsetsUs), 0)
	for i, us := range offsetsUs {
		s.Put(s.Len(), samples.Sample{Start: samples.StartMs(base, us*1000), Total: uint32(i+1) * 1000}, nil)
	}
	tokyo := time.FixedZone("JST", 9*3600)
	var out bytes.Buffer
	if err := Write(&out, &client.Result{Start: runStart, Samples: s}, tokyo); err != nil {
		t.Fatal(err)
	}
	want := Header
	for i, us := range offsetsUs {
		abSec := (base + us) / 1_000_000 // apr_time_sec of ab's start
		want += fmt.Sprintf("%s\t%d\t0\t%d\t%d\t0\n", time.Unix(abSec, 0).In(tokyo).Format("Mon Jan 02 15:04:05 2006"),
			abSec, i+1, i+1)
	}
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
	for _, line := range []string{
		"Mon Nov 02 16:04:06 2026\t1793603046\t", // 400 µs in: the next second
		"Mon Nov 02 16:04:05 2026\t1793603045\t", // 200 µs in: zero-padded day, in JST
		"Sat Dec 12 16:04:05 2026\t1797059045\t", // 40 days later
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("missing %q in:\n%s", line, out.String())
		}
	}
}

func TestNoSamplesWritesNothing(t *testing.T) {
	var out bytes.Buffer
	if err := Write(&out, &client.Result{Samples: samples.New(10, 0)}, time.UTC); err != nil {
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
	s := samples.New(1, 0)
	s.Put(s.Len(), samples.Sample{Total: 1}, nil)
	if err := Write(failingWriter{}, &client.Result{Samples: s}, time.UTC); err == nil {
		t.Error("want the writer's error")
	}
}

func TestAllocationsIndependentOfSampleCount(t *testing.T) {
	s := samples.New(100_000, 0)
	for i := range 100_000 {
		s.Put(s.Len(), samples.Sample{Start: uint32(i * 10), Connect: uint32(i % 700), Wait: uint32(i % 900), Total: uint32(i*7919) % 50_000}, nil)
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
	s := samples.New(1_000_000, 0)
	for i := range 1_000_000 {
		s.Put(s.Len(), samples.Sample{Start: uint32(i * 10), Connect: uint32(i % 700), Wait: uint32(i % 900), Total: uint32(i*7919) % 50_000}, nil)
	}
	res := &client.Result{Start: time.Unix(1795996874, 0), Samples: s}
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(discard{}, res, time.UTC); err != nil {
			b.Fatal(err)
		}
	}
}

// readSamples reads "start connect wait total" lines (µs, recording order;
// start from runStart).
func readSamples(t *testing.T, path string, runStart time.Time) *samples.Store {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []samples.Sample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			var r samples.Sample
			var startUs int64
			if _, err := fmt.Sscan(line, &startUs, &r.Connect, &r.Wait, &r.Total); err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
			r.Start = samples.StartMs(runStart.UnixMicro(), startUs*1000)
			rows = append(rows, r)
		}
	}
	s := samples.New(len(rows), 0)
	for _, r := range rows {
		s.Put(s.Len(), r, nil)
	}
	return s
}

// TestOrderMatchesChainedStableSorts checks the rows against ab's four qsort
// calls (connect, processing, wait, total) done as stable sorts, as glibc's
// merge sort does, on samples with many ties, recorded in start order with
// several requests per millisecond.
func TestOrderMatchesChainedStableSorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 50 {
		n := 1 + rng.IntN(200)
		s := samples.New(n, 0)
		for i := range n {
			c := rng.Uint32N(3) * 700
			tot := c + rng.Uint32N(4)*600
			s.Put(s.Len(), samples.Sample{Start: uint32(i/3) * 1003, Connect: c, Wait: rng.Uint32N(tot - c + 1), Total: tot}, nil)
		}
		recorded := slices.Clone(s.Exact())
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		key := func(f func(samples.Sample) uint32) {
			sort.SliceStable(idx, func(a, b int) bool { return f(recorded[idx[a]]) < f(recorded[idx[b]]) })
		}
		key(func(x samples.Sample) uint32 { return x.Connect })
		key(func(x samples.Sample) uint32 { return x.Total - x.Connect })
		key(func(x samples.Sample) uint32 { return x.Wait })
		key(func(x samples.Sample) uint32 { return x.Total })
		start := time.Unix(1795996874, 0)
		var want strings.Builder
		want.WriteString(Header)
		for _, i := range idx {
			x := recorded[i]
			at := start.Add(time.Duration(x.Start) * time.Millisecond)
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

// TestSpilledRowsMatchRowsInRAM: a result whose samples past the exact limit
// were kept in a temporary file (client.Config.KeepAllRows) writes the same
// bytes as one holding every sample in RAM. 700,000 samples with a limit of
// 100,000 put a sorted run on disk and leave a tail in memory; 130 samples
// with a limit of 30 spill only to memory.
func TestSpilledRowsMatchRowsInRAM(t *testing.T) {
	for _, tc := range []struct{ n, limit int }{{130, 30}, {700_000, 100_000}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			dir := t.TempDir()
			rng := rand.New(rand.NewPCG(uint64(tc.n), 3))
			inRAM := samples.New(tc.n, tc.n)
			spilled := samples.New(tc.n, tc.limit)
			spilled.SpillPastLimit(dir)
			defer spilled.Close()
			for i := range tc.n {
				c := rng.Uint32N(5) * 400
				tot := c + rng.Uint32N(2000)*10
				smp := samples.Sample{Start: uint32(i / 7), Connect: c, Wait: rng.Uint32N(tot - c + 1), Total: tot}
				inRAM.Put(inRAM.Len(), smp, nil)
				spilled.Put(spilled.Len(), smp, nil)
			}
			if !spilled.Overflowed() || inRAM.Overflowed() {
				t.Fatal("the spilled store must have overflowed, the other not")
			}
			start := time.Unix(1795996874, 0)
			var want, got bytes.Buffer
			if err := Write(&want, &client.Result{Start: start, Samples: inRAM}, time.UTC); err != nil {
				t.Fatal(err)
			}
			if err := Write(&got, &client.Result{Start: start, Samples: spilled}, time.UTC); err != nil {
				t.Fatal(err)
			}
			if lines := bytes.Count(got.Bytes(), []byte("\n")); lines != tc.n+1 {
				t.Errorf("%d lines, want header + %d rows", lines, tc.n)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("the spilled result's file differs from the in-RAM one (%d vs %d bytes)", got.Len(), want.Len())
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("the temporary directory holds %d files", len(entries))
			}
		})
	}
}

// TestUnavailableSpilledRowsWriteNothing: spilled rows that cannot be read
// (here released by Close; a failed temporary file is the same error path)
// are an error of Write, before any byte of the file.
func TestUnavailableSpilledRowsWriteNothing(t *testing.T) {
	s := samples.New(10, 2)
	s.SpillPastLimit(t.TempDir())
	for i := range 10 {
		s.Put(s.Len(), samples.Sample{Total: uint32(i)}, nil)
	}
	if err := s.Close(); err != nil { // released: the rows past the limit are gone
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, &client.Result{Samples: s}, time.UTC); err == nil {
		t.Error("Write succeeded without the spilled rows")
	}
	if out.Len() != 0 {
		t.Errorf("wrote %q before failing", out.String())
	}
}
