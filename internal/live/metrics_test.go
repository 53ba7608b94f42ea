package live

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/golang/snappy"

	"gab/client"
	"gab/internal/samples"
)

// TestDurationBoundsAreHDRBucketStarts: each bound is the lowest value of
// its HDR bucket (gab's geometry), so no bucket of an interval's histogram
// straddles it and the latency histogram's counts are exact.
func TestDurationBoundsAreHDRBucketStarts(t *testing.T) {
	h := samples.NewHist()
	for i, b := range DurationBounds {
		if h.ValuesAreEquivalent(b-1, b) {
			t.Errorf("bound %d µs shares an HDR bucket with %d µs", b, b-1)
		}
		if i > 0 && b <= DurationBounds[i-1] {
			t.Errorf("bounds out of order at %d", i)
		}
	}
	if DurationBounds[0] != 100 || DurationBounds[len(DurationBounds)-1] < 60_000_000 {
		t.Errorf("bounds from %d µs to %d µs, want 100 µs to at least 60 s", DurationBounds[0], DurationBounds[len(DurationBounds)-1])
	}
}

// intervalOf makes an interval of the given latencies in µs.
func intervalOf(t *testing.T, k int, us []int64) client.Interval {
	t.Helper()
	h := samples.NewHist()
	for _, v := range us {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase) // as the timeline encodes
	if err != nil {
		t.Fatal(err)
	}
	iv := client.Interval{Start: time.Duration(k) * time.Second, Length: time.Second, Requests: int64(len(us))}
	iv.Latency.Histogram = string(enc)
	iv.Status[2] = int64(len(us))
	return iv
}

// TestMetricsHistogramExact: the buckets built from interval histograms
// count exactly the values below each bound, whatever the values (bounds
// and their neighbours included), and the count is every value.
func TestMetricsHistogramExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var all []int64
	var h Hub
	var m Metrics
	h.Attach("m", 1000, m.Handle)
	st := h.Begin(Run{ID: "r", Target: "t"})
	for k := range 20 {
		var us []int64
		for range 500 {
			v := rng.Int64N(1 << uint(rng.IntN(27)))
			if rng.IntN(5) == 0 { // a bound or its neighbour
				b := DurationBounds[rng.IntN(len(DurationBounds))]
				v = b + rng.Int64N(3) - 1
			}
			us = append(us, v)
		}
		all = append(all, us...)
		st.OnInterval(intervalOf(t, k, us))
	}
	h.Close(time.Minute)
	fams := m.snapshot()
	var hist family
	for _, f := range fams {
		if f.name == "gab_request_duration_seconds" {
			hist = f
		}
	}
	for i, b := range DurationBounds {
		var want int64
		for _, v := range all {
			if v < b {
				want++
			}
		}
		if got := hist.samples[i].value; got != float64(want) {
			t.Errorf("bucket le=%s: %v, want %d", formatSeconds(b), got, want)
		}
	}
	n := len(DurationBounds)
	if got := hist.samples[n].value; got != float64(len(all)) || hist.samples[n+1].value != float64(len(all)) {
		t.Errorf("+Inf %v, count %v; want %d", got, hist.samples[n+1].value, len(all))
	}
	if m.bad != 0 {
		t.Errorf("%d histograms did not decode", m.bad)
	}
}

// promLine is a sample line of either format: name, labels, value.
var promLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$`)

// parseExposition checks text in Prometheus's text format (or OpenMetrics)
// line by line and returns the samples by name{labels} (label values
// unescaped, labels in their order).
func parseExposition(t *testing.T, text string, openMetrics bool) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	types := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sawEOF := false
	for sc.Scan() {
		line := sc.Text()
		if sawEOF {
			t.Fatalf("a line after # EOF: %q", line)
		}
		switch {
		case line == "# EOF":
			sawEOF = true
			continue
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(line)
			if len(f) != 4 {
				t.Fatalf("bad TYPE line %q", line)
			}
			types[f[2]] = f[3]
			if openMetrics && f[3] == "counter" && strings.HasSuffix(f[2], "_total") {
				t.Errorf("OpenMetrics counter family named with _total: %q", line)
			}
			continue
		case strings.HasPrefix(line, "# HELP "), strings.HasPrefix(line, "# UNIT "):
			continue
		case strings.HasPrefix(line, "#"):
			t.Fatalf("unknown comment %q", line)
		}
		m := promLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("bad sample line %q", line)
		}
		name := m[1]
		typed := false
		for fam, typ := range types {
			base := fam
			if openMetrics && typ == "counter" {
				base += "_total"
			}
			if name == base || (typ == "histogram" && (name == fam+"_bucket" || name == fam+"_count" || name == fam+"_sum")) ||
				(!openMetrics && typ == "counter" && name == fam) {
				typed = true
			}
		}
		if !typed {
			t.Errorf("sample %s has no TYPE before it", name)
		}
		labels := parseLabels(t, m[3])
		v, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			t.Fatalf("bad value in %q", line)
		}
		key := name + "{" + strings.Join(labels, ",") + "}"
		if _, dup := out[key]; dup {
			t.Errorf("duplicate series %s", key)
		}
		out[key] = v
	}
	if openMetrics != sawEOF {
		t.Errorf("# EOF present: %v, OpenMetrics: %v", sawEOF, openMetrics)
	}
	return out
}

// parseLabels reads name="value",... unescaping the values.
func parseLabels(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || len(s) < eq+2 || s[eq+1] != '"' {
			t.Fatalf("bad labels %q", s)
		}
		name := s[:eq]
		var v strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' {
				i++
				switch s[i] {
				case 'n':
					v.WriteByte('\n')
				case '\\', '"':
					v.WriteByte(s[i])
				default:
					t.Fatalf("bad escape in %q", s)
				}
				continue
			}
			v.WriteByte(s[i])
		}
		if i >= len(s) {
			t.Fatalf("unterminated label value in %q", s)
		}
		out = append(out, name+"="+v.String())
		s = strings.TrimPrefix(s[i+1:], ",")
	}
	return out
}

// TestMetricsExposition: both formats parse, a target with quotes,
// backslashes and a line feed comes back intact, the requests by result sum
// to complete plus failed, and the histogram's count is the complete
// requests; the server picks the format from Accept.
func TestMetricsExposition(t *testing.T) {
	var h Hub
	var m Metrics
	h.Attach("m", 1000, m.Handle)
	target := "http://127.0.0.1/a\"b\\c\nd"
	st := h.Begin(Run{ID: "r1", Target: target, Rate: true})
	iv := intervalOf(t, 0, []int64{50, 120, 130, 5000, 90_000_000})
	iv.Failures, iv.FailuresBy[client.FailureReceive], iv.Due = 2, 2, 1000
	iv.Bytes, iv.Sent = 1234, 56789
	st.OnInterval(iv)
	res := &client.Result{Complete: 5, Timeline: &client.Timeline{Interval: time.Second, Intervals: []client.Interval{iv}}}
	res.Failed.Total = 2
	st.Finish(nil, res)
	h.Close(time.Minute)

	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	for _, om := range []bool{false, true} {
		req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
		if om {
			// Prometheus's own Accept header.
			req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := TextContentType
		if om {
			want = OpenMetricsContentType
		}
		if ct := resp.Header.Get("Content-Type"); ct != want {
			t.Errorf("Content-Type %q, want %q", ct, want)
		}
		got := parseExposition(t, string(body), om)
		run := "run_id=r1,target=" + target
		var sum float64
		for _, r := range resultLabels {
			sum += got["gab_requests_total{"+run+",result="+r+"}"]
		}
		if sum != 5+2 {
			t.Errorf("gab_requests_total sums to %v, want complete 5 + failed 2:\n%s", sum, body)
		}
		if c := got["gab_request_duration_seconds_count{"+run+"}"]; c != 5 {
			t.Errorf("histogram count %v, want 5", c)
		}
		if c := got["gab_request_duration_seconds_bucket{"+run+",le=0.00015}"]; c != 3 {
			t.Errorf("bucket le=0.00015 holds %v, want 3 (50, 120, 130 µs)", c)
		}
		if c := got["gab_request_duration_seconds_bucket{"+run+",le=+Inf}"]; c != 5 {
			t.Errorf("+Inf bucket %v, want 5", c)
		}
		if v := got["gab_failures_total{"+run+",class=receive}"]; v != 2 {
			t.Errorf("receive failures %v, want 2", v)
		}
		if v, w := got["gab_received_bytes_total{"+run+"}"], got["gab_sent_bytes_total{"+run+"}"]; v != 1234 || w != 56789 {
			t.Errorf("bytes received %v and sent %v, want 1234 and 56789:\n%s", v, w, body)
		}
		if v := got["gab_rate_target_per_second{"+run+"}"]; v != 1000 {
			t.Errorf("target rate %v, want 1000", v)
		}
		if v := got["gab_run_finished{"+run+"}"]; v != 1 {
			t.Errorf("run_finished %v", v)
		}
	}
	resp, err := http.Get(srv.URL + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("/other answered %d", resp.StatusCode)
	}
}

func TestWantsOpenMetrics(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                                 false,
		"text/plain;version=0.0.4":         false,
		"application/openmetrics-text":     true,
		"application/openmetrics-text;q=0": false,
		"text/plain, application/openmetrics-text; version=1.0.0; q=0.5": true,
	} {
		if got := wantsOpenMetrics(accept); got != want {
			t.Errorf("%q: %v, want %v", accept, got, want)
		}
	}
}

func TestListenAddress(t *testing.T) {
	for in, want := range map[string]string{
		"9100":         "127.0.0.1:9100",
		":9100":        "127.0.0.1:9100",
		"0.0.0.0:9100": "0.0.0.0:9100",
		"[::1]:0":      "[::1]:0",
		"localhost:80": "localhost:80",
	} {
		if got, err := ListenAddress(in); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", ":", "host:", ":http", ":70000", "a:b:c"} {
		if got, err := ListenAddress(bad); err == nil {
			t.Errorf("%q accepted as %q", bad, got)
		}
	}
}

// TestNDJSONLines: an interval line and the final line are JSON objects
// with the fields gab documents, a run's names escaped whatever they hold.
func TestNDJSONLines(t *testing.T) {
	run := &Run{ID: "id\"1", Target: "http://h/\x01\u2028\xff", Step: "rate 100", Rate: true}
	iv := intervalOf(t, 2, []int64{100, 200, 300})
	iv.Due, iv.Failures, iv.FailuresBy[client.FailureLength], iv.ConnsOpen = 150, 1, 1, 4
	iv.Bytes, iv.Sent = 300, 4096
	ev := &Event{Run: run, Time: time.Unix(1, 0), Index: 2, Interval: iv, Totals: Totals{Complete: 9, Failed: 1, Bytes: 900, Sent: 9000}}
	var got map[string]any
	line := AppendInterval(nil, ev, 3)
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	want := map[string]any{"run_id": "id\"1", "target": "http://h/\x01\u2028\ufffd", "step": "rate 100", "interval": 2.0,
		"start_us": 2e6, "length_us": 1e6, "requests": 3.0, "failures": 1.0, "bytes": 300.0, "sent_bytes": 4096.0, "target_per_s": 150.0,
		"achieved_per_s": 3.0, "connections_open": 4.0, "complete": 9.0, "failed": 1.0, "dropped": 3.0,
		"histogram": iv.Latency.Histogram}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %#v, want %#v", k, got[k], v)
		}
	}
	if by := got["failures_by_class"].(map[string]any); by["length"] != 1.0 || len(by) != 5 {
		t.Errorf("failures_by_class %v", by)
	}
	if st := got["status_classes"].(map[string]any); st["2xx"] != 3.0 || len(st) != 6 {
		t.Errorf("status_classes %v", st)
	}
	if _, ok := got["corrected"].(map[string]any); !ok {
		t.Errorf("no corrected latencies in rate mode: %s", line)
	}
	if bytes.ContainsAny(line, "\n\u2028") {
		t.Errorf("a line terminator inside the line: %q", line)
	}
	if _, err := base64.StdEncoding.DecodeString(got["histogram"].(string)); err != nil {
		t.Errorf("histogram is not base64: %v", err)
	}
	final := AppendFinal(nil, &Event{Run: run, Time: time.Unix(2, 0), Final: true, Ending: "completed", Totals: Totals{Complete: 9, Failed: 1, Bytes: 900, Sent: 9000}}, 0)
	got = nil
	if err := json.Unmarshal(final, &got); err != nil {
		t.Fatalf("%v: %s", err, final)
	}
	if got["final"] != true || got["complete"] != 9.0 || got["failed"] != 1.0 || got["ending"] != "completed" ||
		got["bytes"] != 900.0 || got["sent_bytes"] != 9000.0 {
		t.Errorf("final line %s", final)
	}
}

// pbField is one decoded protobuf field.
type pbField struct {
	num  int
	wire int
	u    uint64
	b    []byte
}

// decodePB splits a protobuf message into its fields (varint, 64-bit and
// length-delimited only: what remote write uses).
func decodePB(t *testing.T, b []byte) []pbField {
	t.Helper()
	var out []pbField
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatal("bad key")
		}
		b = b[n:]
		f := pbField{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0:
			f.u, n = binary.Uvarint(b)
			if n <= 0 {
				t.Fatal("bad varint")
			}
			b = b[n:]
		case 1:
			f.u = binary.LittleEndian.Uint64(b)
			b = b[8:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				t.Fatal("bad length")
			}
			f.b = b[n : n+int(l)]
			b = b[n+int(l):]
		default:
			t.Fatalf("wire type %d", f.wire)
		}
		out = append(out, f)
	}
	return out
}

// decodeWriteRequest reads a snappy-compressed WriteRequest into
// name{labels} → (value, timestamp), checking that labels are sorted.
func decodeWriteRequest(t *testing.T, body []byte) map[string][2]float64 {
	t.Helper()
	raw, err := snappy.Decode(nil, body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]float64{}
	for _, ts := range decodePB(t, raw) {
		if ts.num != 1 || ts.wire != 2 {
			t.Fatalf("WriteRequest field %d", ts.num)
		}
		var names, labels []string
		var name string
		var val, at float64
		for _, f := range decodePB(t, ts.b) {
			switch f.num {
			case 1:
				lf := decodePB(t, f.b)
				if len(lf) != 2 || lf[0].num != 1 || lf[1].num != 2 {
					t.Fatal("bad Label")
				}
				n, v := string(lf[0].b), string(lf[1].b)
				names = append(names, n)
				if n == "__name__" {
					name = v
				} else {
					labels = append(labels, n+"="+v)
				}
			case 2:
				for _, sf := range decodePB(t, f.b) {
					switch sf.num {
					case 1:
						val = math.Float64frombits(sf.u)
					case 2:
						at = float64(int64(sf.u))
					}
				}
			}
		}
		if !sort.StringsAreSorted(names) {
			t.Errorf("labels not sorted: %v", names)
		}
		sort.Strings(labels)
		out[name+"{"+strings.Join(labels, ",")+"}"] = [2]float64{val, at}
	}
	return out
}

// TestRemoteWrite: each event is pushed as a snappy WriteRequest with the
// protocol's headers; a 500 is tried again and a 400 is not; the final
// push holds the final counts at the event's time.
func TestRemoteWrite(t *testing.T) {
	var calls atomic.Int32
	var last atomic.Value
	fail := map[int32]int{1: 500, 4: 400} // the first push's first try, the third push's only try
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if r.Header.Get("Content-Encoding") != "snappy" || r.Header.Get("Content-Type") != "application/x-protobuf" ||
			r.Header.Get("X-Prometheus-Remote-Write-Version") != "0.1.0" {
			t.Errorf("headers %v", r.Header)
		}
		body, _ := io.ReadAll(r.Body)
		if code := fail[n]; code != 0 {
			http.Error(w, "no", code)
			return
		}
		last.Store(body)
	}))
	defer srv.Close()
	w, err := NewRemoteWriter(srv.URL+"/api/v1/write", "gab/test")
	if err != nil {
		t.Fatal(err)
	}
	w.backoff = time.Millisecond
	var h Hub
	h.Attach("rw", 100, w.Handle)
	st := h.Begin(Run{ID: "r", Target: "http://x/"})
	var ivs []client.Interval
	for k := range 3 {
		iv := intervalOf(t, k, []int64{100, 200})
		iv.Sent = 1000 * int64(k+1)
		ivs = append(ivs, iv)
		st.OnInterval(iv)
	}
	res := &client.Result{Complete: 6}
	res.Timeline = &client.Timeline{Intervals: ivs}
	st.Finish(nil, res)
	h.Close(time.Minute)
	pushed, failed, lastErr := w.Status()
	// Pushes: 1 (500, then 200), 2 (200), 3 (400: given up), final (200).
	if calls.Load() != 5 || pushed != 3 || failed != 1 || lastErr != nil {
		t.Errorf("%d calls, %d pushed, %d failed, last error %v; want 5, 3, 1, nil", calls.Load(), pushed, failed, lastErr)
	}
	got := decodeWriteRequest(t, last.Load().([]byte))
	key := func(name string, kv ...string) string {
		l := append([]string{"run_id=r", "target=http://x/"}, kv...)
		sort.Strings(l)
		return name + "{" + strings.Join(l, ",") + "}"
	}
	if v := got[key("gab_requests_total", "result=2xx")]; v[0] != 6 {
		t.Errorf("final push: 2xx %v, want 6; got %v", v, got)
	}
	if v := got[key("gab_request_duration_seconds_count")]; v[0] != 6 {
		t.Errorf("final push: count %v, want 6", v)
	}
	if v := got[key("gab_sent_bytes_total")]; v[0] != 6000 {
		t.Errorf("final push: bytes sent %v, want the intervals' 1000+2000+3000", v)
	}
	if v := got[key("gab_run_finished")]; v[0] != 1 || v[1] < 1e12 {
		t.Errorf("final push: run_finished %v (value, ms)", v)
	}
	if _, err := NewRemoteWriter("ftp://x/", ""); err == nil {
		t.Error("an ftp URL accepted")
	}
}
