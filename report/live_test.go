package report

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/internal/chart"
	"gab/internal/samples"
)

// liveInterval is interval k of 100 ms with n requests of latencies
// base+i µs and fail failures.
func liveInterval(k int, n, fail int64, base int64) client.Interval {
	h := samples.NewHist()
	lo, hi := int64(math.MaxInt64), int64(0)
	for i := range n {
		v := base + i
		h.RecordValue(v)
		lo, hi = min(lo, v), max(hi, v)
	}
	if n == 0 {
		lo = 0
	}
	iv := client.Interval{Start: time.Duration(k) * 100 * time.Millisecond, Length: 100 * time.Millisecond,
		Requests: n, Failures: fail, Bytes: 100 * n, Sent: 250 * n, Latency: client.LatencyOf(h, n, lo, hi)}
	iv.Status[2] = n
	return iv
}

// TestLivePage: the page of a run in progress has every chart of the
// finished report (the phases one as a frame that says it comes at the
// end), the complete count so far in #complete, ab's counts so far, the
// percentile and ranges tables from the intervals' histograms, the live
// line and its script; what a command line holds is escaped.
func TestLivePage(t *testing.T) {
	l := NewLive(LiveOptions{Report: Options{Host: "127.0.0.1", Port: 8080, Path: "/<x>", Concurrency: 4, BodySent: true,
		CommandLine: []string{"ab", "-n", "100", "http://127.0.0.1:8080/<script>alert(1)</script>"}},
		Start: time.Now(), Interval: 100 * time.Millisecond, TargetPerS: 500})
	for k := range 5 {
		if err := l.Add(liveInterval(k, 40, int64(k%2), 1000*int64(k+1))); err != nil {
			t.Fatal(err)
		}
	}
	if l.Complete() != 200 || l.Failed() != 2 || l.Intervals() != 5 || l.Elapsed() != 500*time.Millisecond {
		t.Fatalf("complete %d failed %d intervals %d elapsed %v", l.Complete(), l.Failed(), l.Intervals(), l.Elapsed())
	}
	page := l.Page("gab: 127.0.0.1/<x>", "gab -n 100 <script>", ChartOptions{})
	page.Live = &PageLive{Note: "Live <now>", Seq: 7, RefreshMs: 250, PagePath: "/", StatePath: "/state"}
	var b bytes.Buffer
	if err := WriteHTMLPage(&b, page); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, id := range []string{chart.PanelRate, chart.PanelStatus, chart.PanelLatencyTime, chart.PanelPhases, chart.PanelScatter,
		chart.PanelPercentiles, chart.PanelRanges, chart.PanelKnee, "ranges-1"} {
		if !strings.Contains(html, `id="`+id+`"`) {
			t.Errorf("no element %q in the live page", id)
		}
	}
	for _, want := range []string{`<td id="complete">200</td>`, "<td>Failed requests:</td><td>2 (by class when the run ends)</td>",
		`id="live" data-seq="7">Live &lt;now&gt;</p>`, `var every =  250 , pagePath = "/", statePath = "/state"`,
		"&lt;script&gt;alert(1)&lt;/script&gt;", "Ending</td><td>running", "<td>t ≤ 800 ms</td><td>200</td>",
		"drawn when the run ends",
		// The request bytes written so far (250 a request), not a 0.
		"<td>Total body sent:</td><td>50000</td>"} {
		if !strings.Contains(html, want) {
			t.Errorf("no %q in the live page", want)
		}
	}
	if strings.Contains(html, "<script>alert") {
		t.Error("the command line's markup reached the page unescaped")
	}
	// The p99 of all 200 requests: the table's row from the merged histograms.
	if !regexp.MustCompile(`<td>99%</td><td>5\.0\d\d</td>`).MatchString(html) {
		t.Errorf("no p99 of about 5 ms in the percentile table")
	}

	// The finished report's page of the same figures has no live line nor
	// its script.
	page.Live = nil
	b.Reset()
	if err := WriteHTMLPage(&b, page); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Contains(s, `id="live"`) || strings.Contains(s, "statePath") {
		t.Error("a page without Live has the live line or script")
	}
}

// TestLiveBounded: a long run's intervals fold into at most maxLiveGroups
// groups of a power-of-two number of intervals, its counts and its
// percentiles kept; an interval whose histogram does not hold its requests
// is refused and changes nothing.
func TestLiveBounded(t *testing.T) {
	l := NewLive(LiveOptions{Start: time.Now(), Interval: 100 * time.Millisecond})
	const n = 1000
	for k := range n {
		if err := l.Add(liveInterval(k, 3, 0, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.groups) > maxLiveGroups || l.per != 8 || len(l.groups) != (n+7)/8 {
		t.Fatalf("%d groups of %d intervals for %d intervals", len(l.groups), l.per, n)
	}
	d := l.chartData(ChartOptions{})
	sum := int64(0)
	for _, iv := range d.Intervals {
		sum += iv.Requests
		if iv.Requests > 0 && (iv.P50Us != 101 || iv.MaxUs != 102) {
			t.Fatalf("group %v: p50 %d max %d, want 101 and 102", iv.StartS, iv.P50Us, iv.MaxUs)
		}
	}
	if sum != 3*n || l.Complete() != 3*n {
		t.Errorf("groups hold %d requests, the record %d, want %d", sum, l.Complete(), 3*n)
	}
	if !strings.Contains(d.IntervalNote, "800ms intervals (8 × 100ms)") {
		t.Errorf("interval note %q", d.IntervalNote)
	}
	if len(d.Latency) == 0 || len(d.Latency) > livePointLimit+len(l.groups) {
		t.Errorf("%d dots in the live latency chart", len(d.Latency))
	}
	bad := liveInterval(n, 3, 0, 100)
	bad.Requests = 4
	if err := l.Add(bad); err == nil || l.Intervals() != n || l.Complete() != 3*n {
		t.Errorf("a histogram of 3 values for 4 requests: error %v, %d intervals, %d complete", err, l.Intervals(), l.Complete())
	}
	bad.Latency.Histogram = "not base64"
	if err := l.Add(bad); err == nil {
		t.Error("an undecodable histogram was added")
	}
}
