package client

import (
	"math"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"gab/internal/samples"
)

func TestRecordStoresStartInMilliseconds(t *testing.T) {
	step := int64(1_234_567) // ns between request starts
	res := runScript(t, Config{Requests: 20, Concurrency: 1}, func(r *run, k int64, sent int64) outcome {
		start := k * step
		return outcome{Start: start, TCPDone: start, Connect: start, WriteEnd: start, FirstByte: start + 1000,
			End: start + 2000, Status: 200}
	})
	base := res.Start.UnixMicro()
	for i, smp := range res.Samples.Exact() {
		wallMs := (base + int64(i)*step/1000) / 1000
		if want := uint32(wallMs - base/1000); smp.Start != want {
			t.Errorf("sample %d: Start %d ms, want %d", i, smp.Start, want)
		}
		if got := res.Start.UnixMilli() + int64(smp.Start); got != wallMs {
			t.Errorf("sample %d: Result.Start.UnixMilli()+Start = %d, want the start's epoch ms %d", i, got, wallMs)
		}
	}
}

// TestSpillThroughRunner: a run with KeepAllRows past its limit keeps every
// request's sample, including those still in the workers' batches at the end
// (the store's own tests, in internal/samples, cover runs on disk and merges).
func TestSpillThroughRunner(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	const n = 400
	us := int64(time.Microsecond)
	outcomeOf := func(k int64) outcome {
		start := k * 37 * us
		total := (k*7919%23 + 1) * 100 * us
		return outcome{Start: start, TCPDone: start, Connect: start + total/4, WriteEnd: start + total/4,
			FirstByte: start + total/2, End: start + total, Status: 200}
	}
	res := runScript(t, Config{Requests: n, Concurrency: 4, SampleLimit: 50, KeepAllRows: true},
		func(r *run, k int64, sent int64) outcome { return outcomeOf(k) })
	defer res.Samples.Close()
	if res.Complete != n || res.Samples.Rows() != n {
		t.Fatalf("Complete %d, Rows %d, want %d", res.Complete, res.Samples.Rows(), n)
	}
	base := res.Start.UnixMicro()
	all := make([]samples.Sample, n)
	for k := range all {
		o := outcomeOf(int64(k))
		all[k] = samples.Sample{Start: samples.StartMs(base, o.Start), Connect: usec(o.Connect - o.Start),
			Wait: usec(o.FirstByte - o.WriteEnd), Total: usec(o.End - o.Start)}
	}
	if got := rowsByTotal(t, res.Samples); !slices.Equal(got, sortedByTotal(all)) {
		t.Errorf("the run's rows differ from the sort of every request's sample")
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("after the run: %s holds %d entries (%v), want none", dir, len(entries), err)
	}
}

// rowsByTotal returns what EachByTotal yields.
func rowsByTotal(t *testing.T, s *samples.Store) []samples.Sample {
	t.Helper()
	var got []samples.Sample
	if err := s.EachByTotal(func(smp samples.Sample) error { got = append(got, smp); return nil }); err != nil {
		t.Fatalf("EachByTotal: %v", err)
	}
	return got
}

func sortedByTotal(all []samples.Sample) []samples.Sample {
	want := slices.Clone(all)
	slices.SortFunc(want, samples.CompareByTotal)
	return want
}

// TestTimeLimitedRunStoreFollowsItsRequests: the request count of a -t run
// is only a cap (2^31−1 with --no-cap, in a capacity step or a calibration),
// so its sample store grows with what the run sends instead of setting
// aside its 10,000,000-sample limit (160 MB) at the start: a few hundred
// requests keep a few MB in use.
func TestTimeLimitedRunStoreFollowsItsRequests(t *testing.T) {
	const most = 16 << 20
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := runScript(t, Config{Requests: math.MaxInt32, Concurrency: 2, TimeLimit: 300 * time.Millisecond, Rate: 2000},
		func(r *run, k int64, sent int64) outcome { return scriptedOutcome(sent, sent+int64(time.Microsecond)) })
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if exact := len(res.Samples.Exact()); res.Complete == 0 || exact != res.Complete {
		t.Fatalf("%d requests complete, %d samples stored", res.Complete, exact)
	}
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > most {
		t.Errorf("a run of %d requests holds %.1f MB of heap, want at most %d MB", res.Complete, float64(grew)/1e6, most>>20)
	}
	runtime.KeepAlive(res)
}
