package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/internal/samples"
)

// inFlightFixture is extFixture's run stopped by -t (-s 2.2 s) with two
// requests unanswered: sent 2.0 s and 2.4 s before the stop, due 2.1 s and
// 2.45 s before it.
func inFlightFixture() *client.Result {
	res, _ := extFixture()
	res.Ending = client.EndTimeLimit
	res.Timeout = 2200 * time.Millisecond
	res.Outstanding = []client.InFlight{
		{Age: 2400 * time.Millisecond, Corrected: 2450 * time.Millisecond},
		{Age: 2 * time.Second, Corrected: 2100 * time.Millisecond},
	}
	return res
}

func summarizeWith(res *client.Result, failIf ...string) *Run {
	o := Options{Host: "127.0.0.1", Port: 8080, Path: "/x", Concurrency: 2, CPU: fixtureCPU(), CommandLine: fixtureCommandLine,
		Run: &RunInfo{URL: "http://127.0.0.1:8080/x"}}
	for _, e := range failIf {
		th, err := ParseThreshold(e)
		if err != nil {
			panic(err)
		}
		o.FailIf = append(o.FailIf, th)
	}
	return Summarize(res, o)
}

// Requests still in flight when the run stopped count in gab's figures as
// latencies of their age (p99, p99.9, max; --fail-if's too, exactly), the
// one older than -s as failed, and rate mode's corrected times from their
// intended send times; the extended report says so. ab's report is the same
// bytes as without them. (Before, they counted nowhere: p99 10.009 ms,
// failed 4.)
func TestOutstandingCountInFigures(t *testing.T) {
	r := summarizeWith(inFlightFixture(), "p99<100ms", "failed<=4", "max<3s")
	plain := summarizeWith(func() *client.Result { res, _ := extFixture(); res.Ending = client.EndTimeLimit; return res }())
	want := map[string]float64{"max": 2400, "p99": 2400, "p99.9": 2400, "failed": 5, "complete": 10}
	for k, w := range want {
		if g, ok := figureValue(k, r); !ok || g < w*0.999 || g > w*1.001 {
			t.Errorf("%s = %v (%v), want %v", k, g, ok, w)
		}
	}
	if g, _ := figureValue("p90", r); g < 2000 || g > 2002 {
		t.Errorf("p90 = %v: the 11th of 12 is the younger one in flight", g)
	}
	if g, _ := figureValue("p50", r); g > 10.1 {
		t.Errorf("p50 = %v: the median is a completed request's", g)
	}
	if m, _ := figureValue("mean", r); m < 4400/12.0 {
		t.Errorf("mean = %v ms, want at least the ages' share (%v)", m, 4400/12.0)
	}
	if r.Report.FailedRequests != 4 || r.Report.CompleteRequests != 10 {
		t.Errorf("ab's counts changed: failed %d complete %d", r.Report.FailedRequests, r.Report.CompleteRequests)
	}
	// --fail-if reads the same figures, exact to the µs.
	got := map[string]string{}
	for _, c := range r.Thresholds.Checks {
		if c.Value != nil {
			got[c.Expression] = fmt.Sprintf("%v %.0f", c.Passed, *c.Value)
		}
	}
	if got["p99<100ms"] != "false 2400000" || got["failed<=4"] != "false 5" || got["max<3s"] != "true 2400000" {
		t.Errorf("--fail-if: %v", got)
	}
	// Rate mode's corrected times count them from their due times.
	if c := r.Rate.Corrected; c.Count != 12 || c.MaxUs != 2_450_000 {
		t.Errorf("corrected: count %d max %d, want 12 and 2450000", c.Count, c.MaxUs)
	}
	// ab's report is ab's; the extended report says what gab counted.
	var a, b bytes.Buffer
	if err := WriteText(&a, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&b, plain); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("ab's report changed:\n%s\nwant\n%s", a.String(), b.String())
	}
	var ext bytes.Buffer
	if err := writeExtended(&ext, r); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"In flight at the stop:  2 requests unanswered when the run stopped, started 2000.000 to 2400.000 [ms] before it: the figures below (not the phase table) count each as a latency of that age (a lower bound), and the 1 older than -s (2.2 s) as failed",
		"p99.9:                            2400.000 [ms]",
	} {
		if !strings.Contains(ext.String(), w) {
			t.Errorf("the extended report lacks %q:\n%s", w, ext.String())
		}
	}
	var cor bytes.Buffer
	if err := writeCorrected(&cor, r); err != nil {
		t.Fatal(err)
	}
	if w := "2 requests unanswered when the run stopped, due 2100.000 to 2450.000 [ms] before it: the corrected times below count each as a latency of that age (a lower bound)\n"; !strings.Contains(cor.String(), w) {
		t.Errorf("the corrected section lacks %q:\n%s", w, cor.String())
	}
	// Read back, the document gives the same figures; merged with itself,
	// twice the requests in flight.
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeDocument("run.json", raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Figures {
		if g, ok := figureValue(f.Key, d); !ok || g != f.Value {
			t.Errorf("read back, %s = %v (%v), want %v", f.Key, g, ok, f.Value)
		}
	}
	m, err := MergeRuns([]*Run{d, d})
	if err != nil {
		t.Fatal(err)
	}
	if o := m.Outstanding; o == nil || o.Requests != 4 || o.Failed != 2 || o.Age.MaxUs != 2_400_000 || o.CorrectedAge == nil || o.CorrectedAge.Count != 4 {
		t.Errorf("merged: %+v", m.Outstanding)
	}
	if g, _ := figureValue("failed", m); g != 10 {
		t.Errorf("merged failed = %v, want 10", g)
	}
}

// A run that a server never answered at all has its figures from the ages
// alone.
func TestOutstandingOnlyRequests(t *testing.T) {
	res := &client.Result{Ending: client.EndTimeLimit, Elapsed: 2 * time.Second, Timeout: 30 * time.Second,
		Outstanding:  []client.InFlight{{Age: 1990 * time.Millisecond, Corrected: 1990 * time.Millisecond}},
		StatusCounts: map[int]int{}, FirstError: map[string]string{}, FirstErrorAt: map[string]time.Duration{}}
	res.Samples = samples.New(0, 10)
	res.Extra = &client.ExtraResult{Connect: samples.NewDist()}
	for p := range res.Extra.Phases {
		res.Extra.Phases[p] = samples.NewDist()
	}
	r := summarizeWith(res, "p99<1s")
	if g, ok := figureValue("p99", r); !ok || g != 1990 {
		t.Errorf("p99 = %v (%v), want 1990", g, ok)
	}
	if c := r.Thresholds.Checks[0]; c.Passed || c.Value == nil || *c.Value != 1_990_000 {
		t.Errorf("--fail-if p99<1s: %+v", c)
	}
}

// A document whose outstanding section does not add up is refused.
func TestOutstandingValidated(t *testing.T) {
	r := summarizeWith(inFlightFixture())
	for name, mutate := range map[string]func(*outstandingFigures){
		"failed":      func(o *outstandingFigures) { o.Failed = 3 },
		"age count":   func(o *outstandingFigures) { o.Requests = 5 },
		"corrected":   func(o *outstandingFigures) { o.CorrectedAge.Count = 1 },
		"max below":   func(o *outstandingFigures) { o.Age.MaxUs = 1 },
		"negative":    func(o *outstandingFigures) { o.Requests = -1 },
		"huge":        func(o *outstandingFigures) { o.Requests = 1 << 60 },
		"timeout NaN": func(o *outstandingFigures) { o.TimeoutS = -1 },
	} {
		raw, _ := json.Marshal(r)
		var d Run
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		mutate(d.Outstanding)
		raw, _ = json.Marshal(&d)
		if _, err := DecodeDocument("x.json", raw); err == nil || !strings.Contains(err.Error(), "outstanding") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The connections' busy share counts the time of the requests still in
// flight: a rate run whose schedule fell behind because the server held
// both connections is not the client's doing. (Before, busy came from the
// completed requests alone, 1 %, and the verdict blamed gab.)
func TestOutstandingKeepConnectionsBusy(t *testing.T) {
	res, _ := extFixture()
	r := Summarize(res, Options{Host: "h", Concurrency: 2, CommandLine: fixtureCommandLine, Machine: quietHost()})
	if find(r, verdictClientBound) == nil {
		t.Fatalf("the fixture's late schedule with idle connections: %v", r.VerdictLines())
	}
	res = inFlightFixture()
	r = Summarize(res, Options{Host: "h", Concurrency: 2, CommandLine: fixtureCommandLine, Machine: quietHost()})
	if v := find(r, verdictClientBound); v != nil {
		t.Errorf("both connections held by the server for most of the run: %v", v.Message)
	}
	if b := BusyShare(r.inFlightTime(), 2, r.local.elapsed); b < 0.88 || b > 1 {
		t.Errorf("busy %v, want (0.055 + 4.4) / 5", b)
	}
}
