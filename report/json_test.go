package report

import (
	"gab/internal/samples"

	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"gab/client"
	"gab/internal/threshold"
)

var fixtureCommandLine = []string{"gab", "--format", "json", "--rate", "4", "--percentiles", "50,99.9", "-n", "10", "-c", "2", "http://127.0.0.1:8080/x"}

func fixtureDocument(t *testing.T) (*Run, []byte) {
	t.Helper()
	_, s := extFixture(50, 99.9)
	d := s
	var b bytes.Buffer
	if err := WriteJSON(&b, d); err != nil {
		t.Fatal(err)
	}
	return d, b.Bytes()
}

func TestJSONGolden(t *testing.T) {
	_, b := fixtureDocument(t)
	golden(t, "ext-json.golden", b)
	if bytes.Count(b, []byte("\n")) < 10 || !json.Valid(b) || b[len(b)-1] != '\n' {
		t.Fatal("not one indented JSON document ending in a newline")
	}
}

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../docs/json-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	return schema
}

func decodeGeneric(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if dec.More() {
		t.Fatal("more than one JSON value")
	}
	return v
}

func TestJSONMatchesSchema(t *testing.T) {
	schema := loadSchema(t)
	_, full := fixtureDocument(t)
	docs := map[string][]byte{"full": full}

	// A fatal ending with what was measured, and a run that never started.
	res, _ := extFixture()
	res.Ending, res.Extra = client.EndFatal, nil
	s := Summarize(res, Options{Host: "127.0.0.1", Port: 8080, Path: "/x", Concurrency: 2,
		CommandLine: []string{"gab", "http://127.0.0.1:1/"}})
	s.SetError("apr_socket_recv: Connection refused (111)\n", 111)
	var b bytes.Buffer
	_ = WriteJSON(&b, s)
	docs["fatal"] = append([]byte(nil), b.Bytes()...)
	b.Reset()
	_ = WriteJSON(&b, NotStarted([]string{"gab"}, time.Unix(0, 0), "gab: wrong number of arguments\n", 22))
	docs["not_started"] = append([]byte(nil), b.Bytes()...)
	// TLS and HTTP/2 lines.
	_, s2 := extFixture()
	s2.Report.TLS = &tlsInfo{Protocol: "TLSv1.3", Cipher: "TLS_AES_128_GCM_SHA256", PeerKeyBits: 2048, CipherBits: 128,
		ServerTempKey: "X25519 253 bits", ServerName: "localhost"}
	s2.Report.Protocol = "h2"
	b.Reset()
	_ = WriteJSON(&b, s2)
	docs["tls_h2"] = append([]byte(nil), b.Bytes()...)
	if !strings.Contains(string(docs["tls_h2"]), `"server_temp_key": "X25519 253 bits"`) || !strings.Contains(string(docs["tls_h2"]), `"protocol": "h2"`) {
		t.Errorf("TLS/HTTP/2 fields missing:\n%s", docs["tls_h2"])
	}
	// --warmup and --fail-if (a passing, a failing and a no-data check).
	res3, _ := extFixture()
	res3.Warmup = &client.WarmupResult{Complete: 30, Failed: 1, Elapsed: 1500 * time.Millisecond}
	var ts []threshold.Threshold
	for _, e := range []string{"p99<50ms", "rps>1e9", "failed<1%"} {
		th, err := ParseThreshold(strings.Replace(e, "1e9", "1000000000", 1))
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, th)
	}
	s3 := Summarize(res3, Options{Concurrency: 2, FailIf: ts})
	b.Reset()
	_ = WriteJSON(&b, s3)
	docs["warmup_thresholds"] = append([]byte(nil), b.Bytes()...)
	for _, want := range []string{`"warmup": {`, `"requests": 30`, `"time_s": 1.5`, `"thresholds": {`, `"passed": false`, `"exit_code": 3`,
		`"expression": "rps>1000000000"`, `"unit": "per_s"`, `"unit": "us"`, `"unit": "percent"`} {
		if !strings.Contains(string(docs["warmup_thresholds"]), want) {
			t.Errorf("warm-up/thresholds document lacks %s:\n%s", want, docs["warmup_thresholds"])
		}
	}
	// Nothing recorded: no tables.
	empty := &client.Result{Samples: samples.New(5, 0), StatusCounts: map[int]int{}, FirstError: map[string]string{},
		Extra: &client.ExtraResult{}}
	for p := range empty.Extra.Phases {
		empty.Extra.Phases[p] = samples.NewDist()
	}
	b.Reset()
	_ = WriteJSON(&b, Summarize(empty, Options{Concurrency: 1}))
	docs["empty"] = append([]byte(nil), b.Bytes()...)

	for name, raw := range docs {
		var errs []string
		validate(schema, schema, decodeGeneric(t, raw), "$", &errs)
		for _, e := range errs {
			t.Errorf("%s: %s", name, e)
		}
	}
	if !strings.Contains(string(docs["fatal"]), `"message": "apr_socket_recv: Connection refused (111)"`) ||
		!strings.Contains(string(docs["fatal"]), `"complete_requests": 10`) {
		t.Errorf("fatal document lacks its error or what was measured:\n%s", docs["fatal"])
	}
	if strings.Contains(string(docs["not_started"]), `"report"`) || !strings.Contains(string(docs["not_started"]), `"ending": "not_started"`) {
		t.Errorf("not-started document:\n%s", docs["not_started"])
	}
}

// TestSchemaValidatorRejects keeps the small validator below honest.
func TestSchemaValidatorRejects(t *testing.T) {
	schema := loadSchema(t)
	_, full := fixtureDocument(t)
	for _, mutate := range []struct {
		name string
		f    func(m map[string]any)
	}{
		{"unknown field", func(m map[string]any) { m["surprise"] = 1 }},
		{"missing required", func(m map[string]any) { delete(m, "ending") }},
		{"wrong type", func(m map[string]any) { m["report"].(map[string]any)["complete_requests"] = "10" }},
		{"bad enum", func(m map[string]any) { m["ending"] = "finished" }},
		{"negative count", func(m map[string]any) {
			m["extended"].(map[string]any)["phases"].(map[string]any)["total"].(map[string]any)["count"] = json.Number("-1")
		}},
	} {
		doc := decodeGeneric(t, full).(map[string]any)
		mutate.f(doc)
		var errs []string
		validate(schema, schema, doc, "$", &errs)
		if len(errs) == 0 {
			t.Errorf("%s: accepted", mutate.name)
		}
	}
}

// validate checks v against the subset of JSON Schema that
// docs/json-schema.json uses: type, enum, minimum, properties, required,
// additionalProperties (false or a schema), items, maxItems, $ref to
// #/$defs/….
func validate(root, schema map[string]any, v any, path string, errs *[]string) {
	fail := func(format string, args ...any) { *errs = append(*errs, path+": "+fmt.Sprintf(format, args...)) }
	if ref, ok := schema["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		def, ok := root["$defs"].(map[string]any)[name].(map[string]any)
		if !ok {
			fail("unresolved $ref %s", ref)
			return
		}
		validate(root, def, v, path, errs)
		return
	}
	if typ, ok := schema["type"].(string); ok {
		okType := false
		switch typ {
		case "object":
			_, okType = v.(map[string]any)
		case "array":
			_, okType = v.([]any)
		case "string":
			_, okType = v.(string)
		case "boolean":
			_, okType = v.(bool)
		case "number":
			_, okType = v.(json.Number)
		case "integer":
			if n, isNum := v.(json.Number); isNum {
				_, err := strconv.ParseInt(string(n), 10, 64)
				okType = err == nil
			}
		}
		if !okType {
			fail("want %s, got %T %v", typ, v, v)
			return
		}
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			fail("%v not in %v", v, enum)
		}
	}
	if minimum, ok := schema["minimum"].(float64); ok {
		if n, isNum := v.(json.Number); isNum {
			if f, _ := n.Float64(); f < minimum {
				fail("%v below minimum %v", f, minimum)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := schema["properties"].(map[string]any)
		for _, r := range asSlice(schema["required"]) {
			if _, present := obj[r.(string)]; !present {
				fail("missing required %q", r)
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := props[k].(map[string]any); ok {
				validate(root, ps, obj[k], path+"."+k, errs)
				continue
			}
			switch ap := schema["additionalProperties"].(type) {
			case bool:
				if !ap {
					fail("unexpected field %q", k)
				}
			case map[string]any:
				validate(root, ap, obj[k], path+"."+k, errs)
			}
		}
	}
	if arr, ok := v.([]any); ok {
		if most, ok := schema["maxItems"].(float64); ok && float64(len(arr)) > most {
			fail("%d items, more than maxItems %v", len(arr), most)
		}
		if items, ok := schema["items"].(map[string]any); ok {
			for i, e := range arr {
				validate(root, items, e, fmt.Sprintf("%s[%d]", path, i), errs)
			}
		}
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func TestJSONHistogramRoundTrip(t *testing.T) {
	res, _ := extFixture()
	_, b := fixtureDocument(t)
	var d Run // the document read back: each histogram where the run keeps it
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		h    *histogramData
		orig *hdrhistogram.Histogram
	}{
		{"latency", d.Extended.Phases.Total.Histogram, res.Extra.Phases[client.PhaseTotal].Hist},
		{"corrected", d.Rate.Corrected.Histogram, res.Extra.Rate.Corrected.Hist},
	} {
		if c.h == nil {
			t.Fatalf("%s: no histogram read back", c.name)
		}
		if c.h.Data == "" || c.h.SignificantDigits != 3 || c.h.Unit != "us" {
			t.Fatalf("%s: %+v", c.name, c.h)
		}
		back, err := hdrhistogram.Decode([]byte(c.h.Data))
		if err != nil {
			t.Fatalf("%s: decode: %v", c.name, err)
		}
		if !back.Equals(c.orig) {
			t.Errorf("%s: decoded histogram differs from the recorded one", c.name)
		}
		for _, q := range []float64{50, 90, 99, 99.9} {
			if back.ValueAtQuantile(q) != c.orig.ValueAtQuantile(q) {
				t.Errorf("%s: p%v %d after the round trip, %d before", c.name, q, back.ValueAtQuantile(q), c.orig.ValueAtQuantile(q))
			}
		}
		// Mergeable: two copies merged hold twice the count.
		m := samples.NewHist()
		m.Merge(back)
		m.Merge(back)
		if m.TotalCount() != 2*c.orig.TotalCount() {
			t.Errorf("%s: merged count %d", c.name, m.TotalCount())
		}
	}
}

// TestJSONNumbersMatchText prints every report the fixture has (ab's, the
// --percentiles table, the extended report, the corrected section) and finds
// each JSON figure in it, formatted as the text formats it.
func TestJSONNumbersMatchText(t *testing.T) {
	_, s := extFixture(50, 99.9)
	d, _ := fixtureDocument(t)
	var b bytes.Buffer
	if err := WriteText(&b, s); err != nil {
		t.Fatal(err)
	}
	_ = writePercentiles(&b, s)
	_ = writeExtended(&b, s)
	_ = writeCorrected(&b, s)
	text := b.String()
	r := d.Report
	want := []string{
		fmt.Sprintf("Server Software:        %s\n", r.ServerSoftware),
		fmt.Sprintf("Server Port:            %d\n", r.ServerPort),
		fmt.Sprintf("Document Length:        %d bytes\n", r.DocumentLengthBytes),
		fmt.Sprintf("Concurrency Level:      %d\n", r.ConcurrencyLevel),
		fmt.Sprintf("Time taken for tests:   %.3f seconds\n", r.TimeTakenS),
		fmt.Sprintf("Complete requests:      %d\n", r.CompleteRequests),
		fmt.Sprintf("Failed requests:        %d\n", r.FailedRequests),
		fmt.Sprintf("   (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)\n", r.Failures.Connect, r.Failures.Receive, r.Failures.Length, r.Failures.Exceptions),
		fmt.Sprintf("Write errors:           %d\n", r.WriteErrors),
		fmt.Sprintf("Non-2xx responses:      %d\n", r.Non2xxResponses),
		fmt.Sprintf("Total transferred:      %d bytes\n", r.TotalTransferredBytes),
		fmt.Sprintf("HTML transferred:       %d bytes\n", r.HTMLTransferredBytes),
		fmt.Sprintf("Requests per second:    %.2f [#/sec] (mean)\n", r.RequestsPerSecond),
		fmt.Sprintf("Time per request:       %.3f [ms] (mean)\n", r.TimePerRequestMs),
		fmt.Sprintf("Time per request:       %.3f [ms] (mean, across all concurrent requests)\n", r.TimePerRequestAllMs),
		fmt.Sprintf("Transfer rate:          %.2f [Kbytes/sec] received\n", r.TransferReceivedKBPerS),
	}
	ct := r.ConnectionTimes
	for _, row := range []struct {
		label string
		c     columnStats
	}{{"Connect:    ", ct.Connect}, {"Processing: ", ct.Processing}, {"Waiting:    ", ct.Waiting}, {"Total:      ", ct.Total}} {
		want = append(want, fmt.Sprintf("%s%5d %4d %5.1f %6d %7d\n", row.label, row.c.MinMs, row.c.MeanMs, row.c.SDMs, row.c.MedianMs, row.c.MaxMs))
	}
	for _, row := range []struct {
		what string
		c    columnStats
	}{{"the initial connection time", ct.Connect}, {"the processing time", ct.Processing}, {"the waiting time", ct.Waiting}, {"the total time", ct.Total}} {
		verdict := map[confidence]string{"error": "ERROR", "warning": "WARNING"}[row.c.Confidence]
		if inText := strings.Contains(text, ": The median and mean for "+row.what+" are"); inText != (verdict != "") ||
			verdict != "" && !strings.Contains(text, verdict+": The median and mean for "+row.what) {
			t.Errorf("%s: JSON confidence %q, text disagrees", row.what, row.c.Confidence)
		}
	}
	for _, p := range r.PercentageServed {
		if p.Percent == 100 {
			want = append(want, fmt.Sprintf(" 100%%  %5d (longest request)\n", p.TotalMs))
		} else {
			want = append(want, fmt.Sprintf("  %d%%  %5d\n", int(p.Percent), p.TotalMs))
		}
	}
	for _, p := range d.Percentiles {
		want = append(want, fmt.Sprintf("%6s  %8d  %14d  %8d\n", percentLabel(p.Percent), p.ConnectUs, p.WaitingUs, p.TotalUs))
	}
	x := d.Extended
	want = append(want, fmt.Sprintf("DNS resolution:         %.3f [ms]", float64(x.DNSUs)/1000))
	for _, ph := range []struct {
		name string
		d    distFigures
	}{{"TCP connect:", x.Phases.TCPConnect}, {"TLS handshake:", x.Phases.TLSHandshake}, {"Request write:", x.Phases.RequestWrite},
		{"Waiting (TTFB):", x.Phases.Waiting}, {"Body transfer:", x.Phases.BodyTransfer}, {"Total:", x.Phases.Total}} {
		want = append(want, fmt.Sprintf("%-16s%10s%10s%10s%10s%10s%10s%10s%10s\n", ph.name, ms3(float64(ph.d.MinUs)), ms3(ph.d.MeanUs),
			ms3(ph.d.SDUs), ms3(float64(ph.d.MedianUs)), ms3(float64(ph.d.P90Us)), ms3(float64(ph.d.P99Us)), ms3(float64(ph.d.P999Us)), ms3(float64(ph.d.MaxUs))))
	}
	for code, n := range x.StatusCounts {
		want = append(want, fmt.Sprintf("  %s: %d\n", code, n))
	}
	for name, f := range x.FailuresByClass {
		want = append(want, fmt.Sprintf("  %-11s %d", name+":", f.Count))
	}
	want = append(want,
		fmt.Sprintf("Throughput:             %.2f [#/sec] mean, sd %.2f (over %d whole 1-second intervals)\n", x.Throughput.MeanPerS, x.Throughput.SDPerS, x.Throughput.Intervals),
		fmt.Sprintf("Response time:          %.3f [ms] mean, sd %.3f", x.ResponseTimeMeanMs, x.ResponseTimeSDMs),
		fmt.Sprintf("Bandwidth:              %.3f [Mbit/s] received, %.3f [Mbit/s] sent", x.ReceivedMbitPerS, x.SentMbitPerS),
		fmt.Sprintf("Client CPU:             %.3f [s] user, %.3f [s] sys, %.1f%% of one core, %.2f cores busy\n",
			x.ClientCPU.UserMs/1000, x.ClientCPU.SysMs/1000, *x.ClientCPU.PercentOfOneCore, *x.ClientCPU.CoresBusy),
		"Sample store:           "+x.SampleStore+"\n",
	)
	rt := d.Rate
	want = append(want,
		fmt.Sprintf("Target rate:            %.2f [#/sec]\n", rt.TargetPerS),
		fmt.Sprintf("Achieved rate:          %.2f [#/sec] (mean)\n", rt.AchievedPerS),
		fmt.Sprintf("Requests sent:          %d, %d on schedule (within %s [ms] of the intended time), %d due but never sent\n",
			rt.Sent, rt.OnSchedule, ms3(float64(rt.OnScheduleTolUs)), rt.DueButNotSent),
		fmt.Sprintf("Behind schedule:        %s [ms] mean, %s [ms] p99, %s [ms] max", ms3(rt.Lag.MeanUs), ms3(float64(rt.Lag.P99Us)), ms3(float64(rt.Lag.MaxUs))),
	)
	c := rt.Corrected
	want = append(want, fmt.Sprintf("Total:      %5d %4d %5.1f %6d %7d\n", roundMs(c.MinUs), roundMs(int64(c.MeanUs)), c.SDUs/1000,
		roundMs(c.MedianUs), roundMs(c.MaxUs)))
	for _, p := range rt.CorrectedServed {
		if p.Percent == 100 {
			want = append(want, fmt.Sprintf(" 100%%  %5d (longest request)\n", p.TotalMs))
		} else {
			want = append(want, fmt.Sprintf("%5s  %5d\n", percentLabel(p.Percent), p.TotalMs))
		}
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q", w)
		}
	}
	// And the other way round: every number in the text's ab tables is one
	// the JSON holds (no figure is only in the text).
	nums := regexp.MustCompile(`\b\d+(\.\d+)?\b`)
	jsonNumbers := map[string]bool{}
	collectNumbers(decodeGeneric(t, mustJSON(t, d)), jsonNumbers)
	section := text[:strings.Index(text, "\nPercentage of the requests served within a certain time (µs")]
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "Server Hostname") || strings.HasPrefix(line, "Document Path") || strings.Contains(line, "%") && !strings.Contains(line, "longest") {
			continue // host/path strings; percent labels
		}
		for _, n := range nums.FindAllString(line, -1) {
			if !jsonNumbers[n] {
				t.Errorf("text number %s (line %q) is not in the JSON document", n, line)
			}
		}
	}
}

func mustJSON(t *testing.T, d *Run) []byte {
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// collectNumbers gathers every number of the document in the text report's
// formats (integers, and floats at 1, 2 and 3 decimals).
func collectNumbers(v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			collectNumbers(e, out)
		}
	case []any:
		for _, e := range x {
			collectNumbers(e, out)
		}
	case json.Number:
		out[string(x)] = true
		if f, err := x.Float64(); err == nil {
			for _, prec := range []int{0, 1, 2, 3} {
				out[strconv.FormatFloat(f, 'f', prec, 64)] = true
			}
			if f == math.Trunc(f) {
				out[strconv.FormatInt(int64(f), 10)] = true
			}
		}
	case string:
		// numbers inside strings (e.g. "127.0.0.1") are not figures
	}
}
