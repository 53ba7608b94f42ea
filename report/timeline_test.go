package report

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/client"
	"gab/internal/hdrjs"
	"gab/internal/samples"
)

// randomTimeline is a rate-mode timeline of n intervals of d with skewed
// random latencies (a few slow ones) and an empty interval 2; it returns the
// values of each interval too.
// rawTimeline is a timeline as the engine gives it, with its run's start.
type rawTimeline struct {
	Start     time.Time
	Interval  time.Duration
	Corrected bool
	Intervals []client.Interval
}

// record is the run record's timeline.
func (tl *rawTimeline) record() *timelineSection {
	return timelineOf(&client.Result{Start: tl.Start,
		Timeline: &client.Timeline{Interval: tl.Interval, Corrected: tl.Corrected, Intervals: tl.Intervals}})
}

func randomTimeline(n int, d time.Duration, seed uint64) (*rawTimeline, [][]int64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	tl := &rawTimeline{Start: time.Date(2026, 12, 1, 1, 2, 3, 456_000_000, time.UTC), Interval: d, Corrected: true}
	var all [][]int64
	for k := range n {
		count := 0
		if k != 2 {
			count = 50 + rng.IntN(400)
		}
		var vals, cor []int64
		for range count {
			v := int64(200 + rng.ExpFloat64()*800)
			if rng.IntN(100) == 0 {
				v += 2_000_000 + rng.Int64N(500_000)
			}
			vals = append(vals, v)
			cor = append(cor, v+rng.Int64N(10_000))
		}
		all = append(all, vals)
		tl.Intervals = append(tl.Intervals, client.Interval{
			Start: time.Duration(k) * d, Length: d, Requests: int64(count), Bytes: int64(count) * 150, Sent: int64(count)*80 + int64(k),
			Latency: latencyOfValues(vals), Corrected: latencyOfValues(cor),
		})
	}
	return tl, all
}

func latencyOfValues(values []int64) client.IntervalLatency {
	h := samples.NewHist()
	lo, hi := int64(0), int64(0)
	for j, v := range values {
		_ = h.RecordValue(v)
		if j == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return client.LatencyOf(h, int64(len(values)), lo, hi)
}

// TestHlogReadByHdrHistogramJS: the --hlog file read by an independent
// implementation (hdr-histogram-js's HistogramLogReader under node) gives
// every interval's start, length, count and p50, p90, p99 and p99.9 as gab
// has them.
func TestHlogReadByHdrHistogramJS(t *testing.T) {
	tl, _ := randomTimeline(12, 250*time.Millisecond, 1)
	path := filepath.Join(t.TempDir(), "run.hlog")
	var b bytes.Buffer
	if err := WriteHlog(&b, &Run{Timeline: tl.record()}, time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	checkHlogWithJS(t, path, tl)
}

// rankFractions are hdrjs.Percents as fractions num/den, so that the
// fraction of count·p/100 is computed exactly.
var rankFractions = [len(hdrjs.Percents)][2]int64{{1, 2}, {9, 10}, {99, 100}, {999, 1000}}

// checkHlogWithJS compares what hdr-histogram-js reads from path with tl:
// the value at gab's rank (NearestRank) at every percentile, and its own
// getValueAtPercentile wherever its rank rule (count·p/100 rounded up) and
// gab's (rounded half up) name the same rank.
func checkHlogWithJS(t *testing.T, path string, tl *rawTimeline) {
	t.Helper()
	got := hdrjs.ReadLog(t, path)
	per := 1
	if tl.Corrected {
		per = 2
	}
	if len(got) != per*len(tl.Intervals) {
		t.Fatalf("hdr-histogram-js read %d histograms, want %d", len(got), per*len(tl.Intervals))
	}
	startMs := float64(tl.Start.UnixMilli())
	own := 0
	for i, iv := range tl.Intervals {
		for j, want := range []client.IntervalLatency{iv.Latency, iv.Corrected}[:per] {
			g := got[per*i+j]
			tag := "NO TAG"
			if j == 1 {
				tag = "corrected"
			}
			wantStart := startMs + float64(iv.Start.Milliseconds())
			wantEnd := wantStart + float64(iv.Length.Milliseconds())
			gab := [...]int64{want.P50Us, want.P90Us, want.P99Us, want.P999Us}
			if g.Tag != tag || g.Count != iv.Requests || [4]int64(g.AtRank) != gab ||
				abs(g.StartMs-wantStart) > 1 || abs(g.EndMs-wantEnd) > 1 {
				t.Errorf("interval %d (%s): hdr-histogram-js read %+v; gab has %d requests, p50/p90/p99/p99.9 %v µs, %.0f–%.0f ms",
					i, tag, g, iv.Requests, gab, wantStart, wantEnd)
			}
			for k, f := range rankFractions {
				if rest := iv.Requests * f[0] % f[1]; rest == 0 || 2*rest >= f[1] {
					own++
					if g.Own[k] != gab[k] {
						t.Errorf("interval %d (%s) p%v: hdr-histogram-js's getValueAtPercentile %d, gab %d",
							i, tag, hdrjs.Percents[k], g.Own[k], gab[k])
					}
				}
			}
		}
	}
	if own == 0 {
		t.Error("no percentile where hdr-histogram-js's rank rule and gab's agree")
	}
}

func abs(f float64) float64 { return max(f, -f) }

// The Go library's log reader reads the file too, its histograms are gab's
// (the same encoding), and its ValueAtQuantile, capped by the exact max, is
// every interval's p50, p90, p99 and p99.9 as gab states them; the intervals
// hold sparse tails where ab's index rule would take the next rank.
func TestHlogReadByGoLibrary(t *testing.T) {
	tl, _ := randomTimeline(40, time.Second, 2)
	var b bytes.Buffer
	if err := WriteHlog(&b, &Run{Timeline: tl.record()}, time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"#[Histogram log format version 1.3]\n", "#[StartTime: 1796086923.456 (seconds since epoch), 2026-12-01T01:02:03.456Z]\n",
		"#[BaseTime: 1796086923.456 (seconds since epoch)]\n", "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
		"\n1.000,1.000,", "\nTag=corrected,3.000,1.000,"} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
	r := hdrhistogram.NewHistogramLogReader(&b)
	abDiffers := 0
	for i := 0; ; i++ {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			if i != 2*len(tl.Intervals) {
				t.Errorf("read %d histograms, want %d", i, 2*len(tl.Intervals))
			}
			break
		}
		iv := tl.Intervals[i/2]
		l := []client.IntervalLatency{iv.Latency, iv.Corrected}[i%2]
		if h.TotalCount() != iv.Requests {
			t.Errorf("histogram %d: %d values, want %d", i, h.TotalCount(), iv.Requests)
		}
		if iv.Requests == 0 {
			continue
		}
		d := samples.Dist{Hist: h, Count: iv.Requests, Min: l.MinUs, Max: l.MaxUs}
		for _, c := range []struct {
			p   float64
			gab int64
		}{{50, l.P50Us}, {90, l.P90Us}, {99, l.P99Us}, {99.9, l.P999Us}} {
			if want := min(h.ValueAtQuantile(c.p), l.MaxUs); c.gab != want {
				t.Errorf("histogram %d (%d values) p%v: gab %d µs, ValueAtQuantile %d", i, iv.Requests, c.p, c.gab, want)
			}
			if d.AtIndex(int64(float64(iv.Requests)*c.p/100+1e-9)) != c.gab {
				abDiffers++
			}
		}
	}
	if abDiffers < 10 {
		t.Errorf("ab's index rule differs from the nearest rank at only %d of the figures: too few sparse tails", abDiffers)
	}
}

// TestMergeTimelines merges two documents whose runs started 1.2 s apart
// with 1 s intervals: each second interval goes into the merged interval
// holding its midpoint, counts add up (the TLS handshakes and their time
// too, through the JSON document), and the merged percentiles are those of
// all the values together.
func TestMergeTimelines(t *testing.T) {
	a, av := randomTimeline(4, time.Second, 3)
	b, bv := randomTimeline(3, time.Second, 4)
	b.Start = a.Start.Add(1200 * time.Millisecond)
	b.Intervals[2].Length = 300 * time.Millisecond
	for _, ivs := range [][]client.Interval{a.Intervals, b.Intervals} {
		for k := range ivs {
			ivs[k].TLSHandshakes, ivs[k].TLSUs = ivs[k].Requests/10, ivs[k].Requests/10*(700+int64(k))
		}
	}
	docA := &Run{StartTime: a.Start.Format(time.RFC3339Nano), Timeline: a.record()}
	docB := &Run{StartTime: b.Start.Format(time.RFC3339Nano), Timeline: b.record()}
	for _, doc := range []**Run{&docA, &docB} {
		js, err := json.Marshal(*doc)
		if err != nil {
			t.Fatal(err)
		}
		*doc = &Run{}
		if err := json.Unmarshal(js, *doc); err != nil {
			t.Fatal(err)
		}
	}
	wantTLS := [][2]int64{{0, 0}, {0, 0}, {0, 0}, {0, 0}}
	for k, iv := range a.Intervals {
		wantTLS[k][0], wantTLS[k][1] = iv.TLSHandshakes, iv.TLSUs
	}
	for k, iv := range b.Intervals {
		wantTLS[k+1][0] += iv.TLSHandshakes
		wantTLS[k+1][1] += iv.TLSUs
	}
	m, start, err := mergeTimelines([]*Run{docB, docA}, []time.Time{b.Start, a.Start})
	if err != nil {
		t.Fatal(err)
	}
	if !start.Equal(a.Start) || m.IntervalUs != 1_000_000 || !m.Corrected {
		t.Fatalf("merged start %v, interval %d µs, corrected %v", start, m.IntervalUs, m.Corrected)
	}
	// b's interval k starts at 1.2+k s, its midpoint in merged interval k+1;
	// b's last (1.3 s long from 3.2 s) has its midpoint at 3.35 s.
	want := [][]int64{av[0], append(append([]int64(nil), av[1]...), bv[0]...), append(append([]int64(nil), av[2]...), bv[1]...),
		append(append([]int64(nil), av[3]...), bv[2]...)}
	if len(m.Intervals) != len(want) {
		t.Fatalf("%d merged intervals, want %d", len(m.Intervals), len(want))
	}
	for k, iv := range m.Intervals {
		exp := intervalLatency(latencyOfValues(want[k]))
		if iv.Requests != int64(len(want[k])) || iv.StartUs != int64(k)*1_000_000 || iv.LengthUs != 1_000_000 ||
			iv.P50Us != exp.P50Us || iv.P99Us != exp.P99Us || iv.P999Us != exp.P999Us || iv.MinUs != exp.MinUs || iv.MaxUs != exp.MaxUs {
			t.Errorf("merged interval %d: %+v\nwant %d requests, %+v", k, iv, len(want[k]), exp)
		}
		if iv.Bytes != 150*iv.Requests || iv.Corrected == nil {
			t.Errorf("merged interval %d: %d bytes for %d requests, corrected %v", k, iv.Bytes, iv.Requests, iv.Corrected)
		}
		if got := [2]int64{iv.TLSHandshakes, iv.TLSHandshakeUs}; got != wantTLS[k] || k != 2 && got[0] == 0 {
			t.Errorf("merged interval %d: TLS handshakes and µs %v, want %v", k, got, wantTLS[k])
		}
	}
	docB.Timeline.IntervalUs = 500_000
	if _, _, err := mergeTimelines([]*Run{docA, docB}, []time.Time{a.Start, b.Start}); err == nil {
		t.Error("merged timelines of different intervals")
	}
}

// A long run's table merges consecutive intervals: 150 intervals make 50
// rows of 3, whose counts add up and whose percentiles are the merged ones.
func TestTimelineTableCompacts(t *testing.T) {
	tl, vals := randomTimeline(150, time.Second, 5)
	var b bytes.Buffer
	p := newErrWriter(&b)
	writeTimelineTable(p, tl.record())
	if err := p.flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "(150 intervals, 3 to a row)") {
		t.Fatalf("no compaction note:\n%s", b.String())
	}
	rows := 0
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "Corrected latency over time") {
			break // the corrected table's rows are checked elsewhere
		}
		f := strings.Fields(l)
		if len(f) != 10 || f[0] == "start(s)" {
			continue
		}
		k := 3 * rows
		merged := append(append(append([]int64(nil), vals[k]...), vals[k+1]...), vals[k+2]...)
		want := intervalLatency(latencyOfValues(merged))
		if f[1] != strconv.Itoa(len(merged)) || (len(merged) > 0 && f[7] != ms3(float64(want.P99Us))) {
			t.Errorf("row %d: %q, want %d requests, p99 %s", rows, l, len(merged), ms3(float64(want.P99Us)))
		}
		rows++
	}
	if rows != 50 {
		t.Errorf("%d rows, want 50:\n%s", rows, b.String())
	}
}
