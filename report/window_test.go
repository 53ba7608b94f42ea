package report

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"gab/client"
	"gab/internal/samples"
	"gab/internal/threshold"
)

// windowReq is one request of windowResult's runs.
type windowReq struct {
	end              time.Duration // since the run's start
	total, corrected int64         // µs
	status           int           // 0: failed (receive)
	read, sent       int64         // bytes
}

// windowReqs are requests over 6 one-second intervals at 40 to 90 per
// second, whose latency grows with time and some of which fail or answer
// 503.
func windowReqs() []windowReq {
	var out []windowReq
	for k := range 6 {
		n := 40 + 10*k
		for j := range n {
			end := time.Duration(k)*time.Second + time.Duration(j)*time.Second/time.Duration(n)
			total := int64(500 + 37*j + 900*k*k + (j*j*k)%4000)
			r := windowReq{end: end, total: total, corrected: total + int64(200*k*j), status: 200,
				read: int64(180 + 13*j), sent: int64(90 + 1000*k + 7*(j%5))}
			switch {
			case (j+k)%17 == 0:
				r.status = 503
			case (j*k)%23 == 5:
				r.status = 0
			}
			out = append(out, r)
		}
	}
	return out
}

// windowResult is the result of a rate-mode run that recorded reqs (those
// whose end lies in [from, to), from its start at from) over whole
// one-second intervals: ab's counts, the extended phases, the corrected
// times and the timeline, as the engine gives them.
func windowResult(reqs []windowReq, from, to time.Duration) *client.Result {
	res := &client.Result{Start: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Add(from), Elapsed: to - from,
		Ending: client.EndCompleted, StatusCounts: map[int]int{}, FirstError: map[string]string{}}
	x := &client.ExtraResult{}
	for p := range x.Phases {
		x.Phases[p] = samples.NewDist()
	}
	rr := &client.RateResult{Target: 60, Corrected: samples.NewDist(), Lag: samples.NewDist()}
	tl := &client.Timeline{Interval: time.Second, Corrected: true}
	var in []windowReq
	for _, r := range reqs {
		if r.end >= from && r.end < to {
			in = append(in, r)
		}
	}
	smp := samples.New(len(in), 0)
	for k := range int((to - from) / time.Second) {
		var total, cor []int64
		iv := client.Interval{Start: time.Duration(k) * time.Second, Length: time.Second}
		for _, r := range in {
			if r.end-from < iv.Start || r.end-from >= iv.Start+iv.Length {
				continue
			}
			iv.Bytes += r.read
			iv.Sent += r.sent
			res.TotalRead += r.read
			res.TotalSent += r.sent
			if r.status == 0 {
				iv.Failures++
				iv.FailuresBy[client.FailureReceive]++
				res.Failed.Total++
				res.Failed.Receive++
				continue
			}
			iv.Requests++
			iv.Status[r.status/100]++
			res.Complete++
			res.StatusCounts[r.status]++
			if r.status != 200 {
				res.Non2xx++
			}
			smp.Put(smp.Len(), samples.Sample{Start: uint32((r.end - from).Microseconds()), Total: uint32(r.total)}, nil)
			x.Phases[client.PhaseTotal].Add(r.total)
			rr.Corrected.Add(r.corrected)
			rr.Sent++
			total, cor = append(total, r.total), append(cor, r.corrected)
		}
		iv.Latency, iv.Corrected = latencyOfValues(total), latencyOfValues(cor)
		iv.Due = 60
		tl.Intervals = append(tl.Intervals, iv)
	}
	x.Rate = rr
	res.Extra, res.Samples, res.Timeline = x, smp, tl
	return res
}

func windowOptions() Options {
	return Options{Host: "127.0.0.1", Port: 8080, Path: "/", Concurrency: 8, KeepAlive: true, CommandLine: []string{"gab"}}
}

// checkSameFigures fails the test for each catalog figure of got that
// differs from want's: exact but for the mean and sd, which a window reads
// from its intervals' histograms (3 significant digits).
func checkSameFigures(t *testing.T, what string, got, want *Run) {
	t.Helper()
	for _, key := range []string{"rps", "complete", "failed", "non2xx", "min", "p50", "p90", "p99", "p99.9", "max", "mean", "sd", "received_mbit_per_s", "sent_mbit_per_s"} {
		f, _ := FigureByKey(key)
		g, gok := f.Value(got)
		w, wok := f.Value(want)
		tol := 0.0
		if key == "mean" || key == "sd" {
			tol = 0.005 * w
		}
		if gok != wok || math.Abs(g-w) > tol {
			t.Errorf("%s: %s = %v (%v), the run over the same intervals %v (%v)", what, key, g, gok, w, wok)
		}
	}
}

// A window of a run is the run of its intervals: its catalog figures (and
// those from the intended send times) are those of a run that recorded the
// same requests over the same intervals, its --fail-if checks read them, and
// its verdicts are the run's.
func TestWindowIsTheRunOfItsIntervals(t *testing.T) {
	reqs := windowReqs()
	whole := Summarize(windowResult(reqs, 0, 6*time.Second), windowOptions())
	whole.Verdicts = &verdictsSection{Found: []verdict{{Kind: verdictBusyMachine, Message: "others used the machine."}}}
	for _, span := range [][2]time.Duration{{0, 6 * time.Second}, {2 * time.Second, 5 * time.Second}, {5 * time.Second, 6 * time.Second}} {
		from, to := span[0], span[1]
		w, err := Window(whole, from, to)
		if err != nil {
			t.Fatal(err)
		}
		part := Summarize(windowResult(reqs, from, to), windowOptions())
		name := "window " + from.String() + " to " + to.String()
		checkSameFigures(t, name, w, part)
		checkSameFigures(t, name+" from the intended send times", w.FromIntendedSend(), part.FromIntendedSend())
		if len(w.Timeline.Intervals) != int((to-from)/time.Second) || w.Timeline.Intervals[0].StartUs != 0 {
			t.Errorf("%s: timeline %+v", name, w.Timeline.Intervals)
		}
		if w.Rate.TargetPerS != 60 || w.Report.Failures.Receive != part.Report.FailedRequests {
			t.Errorf("%s: target %v/s, receive failures %d of %d", name, w.Rate.TargetPerS, w.Report.Failures.Receive, part.Report.FailedRequests)
		}
		if !slices.Equal(w.VerdictKinds(), []string{verdictBusyMachine}) {
			t.Errorf("%s: verdicts %v, not the run's", name, w.VerdictKinds())
		}
		for _, expr := range []string{"p99<20ms", "p50<3ms", "failed<1%", "non2xx=0", "rps>60"} {
			th, err := ParseThreshold(expr)
			if err != nil {
				t.Fatal(err)
			}
			g, p := th.Check(w.ThresholdFigures()), th.Check(part.ThresholdFigures())
			if g.Pass != p.Pass || g.Actual != p.Actual {
				t.Errorf("%s: %s: %s, the run over the same intervals %s", name, expr, g.Line(), p.Line())
			}
		}
	}
	if _, err := Window(whole, 6*time.Second, 7*time.Second); err == nil {
		t.Error("a window without an interval")
	}
	if _, err := Window(&Run{Report: whole.Report}, 0, time.Second); err == nil {
		t.Error("a window of a run without a timeline")
	}
}

// The requests in flight at the stop belong to the window that holds the
// run's last whole interval (an interval cut short by the run's end may
// follow it), in its latencies (from their starts, and from their
// intended send times in the corrected view) and its requests, as they do
// in the run's; an earlier window has none of them.
func TestWindowOutstandingAtTheEnd(t *testing.T) {
	reqs := windowReqs()
	res := windowResult(reqs, 0, 6*time.Second)
	res.Outstanding = []client.InFlight{{Age: 3 * time.Second, Corrected: 4 * time.Second}, {Age: 2 * time.Second, Corrected: 5 * time.Second}}
	// The engine took 40 ms to stop: a last interval cut short, after the
	// last whole one.
	res.Timeline.Intervals = append(res.Timeline.Intervals, client.Interval{Start: 6 * time.Second, Length: 40 * time.Millisecond,
		Latency: latencyOfValues(nil), Corrected: latencyOfValues(nil)})
	res.Elapsed += 40 * time.Millisecond
	whole := Summarize(res, windowOptions())
	last, err := Window(whole, 4*time.Second, 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	early, err := Window(whole, 0, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	maxOf := func(r *Run) float64 { f, _ := FigureByKey("max"); v, _ := f.Value(r); return v }
	if early.Outstanding != nil || maxOf(early) >= 2000 {
		t.Errorf("an early window holds the requests in flight at the stop: max %v ms", maxOf(early))
	}
	if last.Outstanding == nil || maxOf(last) != 3000 || maxOf(last.FromIntendedSend()) != 5000 {
		t.Errorf("the last window: max %v ms, corrected %v ms; want 3000 and 5000", maxOf(last), maxOf(last.FromIntendedSend()))
	}
	if maxOf(whole.FromIntendedSend()) != 5000 || last.ThresholdFigures().Requests != int64(last.Report.CompleteRequests)+2 {
		t.Errorf("the run's corrected max %v ms; the window's requests %d", maxOf(whole.FromIntendedSend()), last.ThresholdFigures().Requests)
	}
	// The view counts each in-flight request once: its count of latencies
	// is the requests recorded and those in flight.
	c := last.FromIntendedSend()
	if d, ok := totalDist(c); !ok || d.Count != int64(last.Report.CompleteRequests)+2 {
		t.Errorf("the corrected view's latencies: %d of %d requests", d.Count, last.Report.CompleteRequests+2)
	}
	if b := last.ConnectionsBusy(8); b <= 0 || b > 1 {
		t.Errorf("busy share %v", b)
	}
}

// windowRunAndDocument is the run of windowReqs over 6 s and its JSON
// document read back.
func windowRunAndDocument(t *testing.T) (run, doc *Run) {
	t.Helper()
	run = Summarize(windowResult(windowReqs(), 0, 6*time.Second), Options{Host: "127.0.0.1", Port: 8080, Path: "/", Concurrency: 8,
		CommandLine: []string{"gab"}, Run: &RunInfo{}})
	var b bytes.Buffer
	if err := WriteJSON(&b, run); err != nil {
		t.Fatal(err)
	}
	doc, err := DecodeDocument("run.json", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return run, doc
}

// A window of a document read back (no engine intervals, µs times) has the
// figures of the same window of the run that wrote it, but for the
// failures' classes and write errors, which only the engine's intervals
// carry.
func TestWindowOfADocument(t *testing.T) {
	run, doc := windowRunAndDocument(t)
	for _, span := range [][2]time.Duration{{0, 6 * time.Second}, {1 * time.Second, 3 * time.Second}} {
		w, err := Window(run, span[0], span[1])
		if err != nil {
			t.Fatal(err)
		}
		d, err := Window(doc, span[0], span[1])
		if err != nil {
			t.Fatal(err)
		}
		name := "the document's window " + span[0].String() + " to " + span[1].String()
		checkSameFigures(t, name, d, w)
		checkSameFigures(t, name+" from the intended send times", d.FromIntendedSend(), w.FromIntendedSend())
		if d.StartTime != w.StartTime {
			t.Errorf("%s starts %s, the run's window %s", name, d.StartTime, w.StartTime)
		}
	}
}

// A window's sent_mbit_per_s is the bytes its intervals wrote over its
// length, in the process that measured the run and in its document read
// back; so is received_mbit_per_s with the bytes read.
func TestWindowBytesSent(t *testing.T) {
	run, doc := windowRunAndDocument(t)
	sent, _ := FigureByKey("sent_mbit_per_s")
	received, _ := FigureByKey("received_mbit_per_s")
	for _, span := range [][2]time.Duration{{0, 6 * time.Second}, {2 * time.Second, 4 * time.Second}, {5 * time.Second, 6 * time.Second}} {
		var wrote, read int64
		for _, iv := range doc.Timeline.Intervals {
			if at := time.Duration(iv.StartUs) * time.Microsecond; at >= span[0] && at < span[1] {
				wrote += *iv.SentBytes
				read += iv.Bytes
			}
		}
		secs := (span[1] - span[0]).Seconds()
		for _, r := range []*Run{run, doc} {
			w, err := Window(r, span[0], span[1])
			if err != nil {
				t.Fatal(err)
			}
			s, sok := sent.Value(w)
			rx, rok := received.Value(w)
			if !sok || !rok || math.Abs(s-float64(wrote)*8/1e6/secs) > 1e-9 || math.Abs(rx-float64(read)*8/1e6/secs) > 1e-9 || wrote == 0 {
				t.Errorf("window %v to %v: sent %v Mbit/s (%v), received %v (%v); its intervals wrote %d bytes and read %d in %v s",
					span[0], span[1], s, sok, rx, rok, wrote, read, secs)
			}
		}
	}
}

// A document of an earlier gab, whose intervals carry neither the bytes
// sent nor the status classes: a window of it has no sent_mbit_per_s and
// no non2xx (not measured), rather than 0; the rest of its figures are the
// window's of the document that has them.
func TestWindowOfAnOlderDocument(t *testing.T) {
	run := Summarize(windowResult(windowReqs(), 0, 6*time.Second), Options{Host: "127.0.0.1", Port: 8080, Path: "/", Concurrency: 8,
		CommandLine: []string{"gab"}, Run: &RunInfo{}})
	var b bytes.Buffer
	if err := WriteJSON(&b, run); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	for _, iv := range raw["timeline"].(map[string]any)["intervals"].([]any) {
		delete(iv.(map[string]any), "sent_bytes")
		delete(iv.(map[string]any), "status_classes")
	}
	old, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := DecodeDocument("old.json", old)
	if err != nil {
		t.Fatalf("a document without sent_bytes: %v", err)
	}
	newer, err := DecodeDocument("run.json", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	w, err := Window(doc, time.Second, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"sent_mbit_per_s", "non2xx"} {
		f, _ := FigureByKey(key)
		if v, ok := f.Value(w); ok {
			t.Errorf("%s = %v of intervals that did not count it", key, v)
		}
	}
	if _, ok := w.ThresholdFigures().Value(threshold.Metric{Key: "non2xx"}); ok {
		t.Error("--fail-if's non2xx reads a window of intervals without status classes")
	}
	want, err := Window(newer, time.Second, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"rps", "complete", "failed", "p99", "received_mbit_per_s"} {
		f, _ := FigureByKey(key)
		g, gok := f.Value(w)
		x, xok := f.Value(want)
		if !gok || !xok || g != x {
			t.Errorf("%s = %v (%v), the newer document's window %v (%v)", key, g, gok, x, xok)
		}
	}
}
