package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"gab/report"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"gab/internal/capacity"
	"gab/internal/h3test"
	"gab/internal/testtool"
)

// serialServer is a server whose capacity is known by construction: one
// worker that serves requests one at a time, each taking service. It keeps
// the worker's schedule as a clock of its own (a request starts when it
// arrives or when the previous one ends, whichever is later, and is answered
// at its end), so a late timer wake-up does not lower its capacity: it serves
// exactly 1/service requests per second. conns counts the connections it
// accepted.
func serialServer(t *testing.T, service time.Duration) (url string, conns *atomic.Int64) {
	t.Helper()
	var mu sync.Mutex
	var free time.Time // when the worker is free
	conns = new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		now := time.Now()
		if free.Before(now) {
			free = now
		}
		free = free.Add(service)
		end := free
		mu.Unlock()
		if d := time.Until(end); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Length", "2")
		w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/", conns
}

// capacityOf runs gab capacity with args and returns its document.
func capacityOf(t *testing.T, args ...string) *report.CapacityDocument {
	t.Helper()
	// No noise steps unless a test asks for them: the tests count steps.
	status, out, errs := runGab(t, append([]string{"gab", "capacity", "--format", "json", "--noise", "0"}, args...)...)
	if status != 0 {
		t.Fatalf("gab capacity %v: exit %d\n%s", args, status, errs)
	}
	d, err := capacity.Decode([]byte(out))
	if err != nil {
		t.Fatalf("the document: %v\n%s", err, out)
	}
	return d
}

// readCapacityFile is the capacity document gab wrote to path (--json),
// decoded and checked.
func readCapacityFile(t *testing.T, path string) *report.CapacityDocument {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := capacity.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Against one worker with a 2 ms service time (500 req/s), a search for
// p99<50ms finds 500 req/s within 10 %; with 1 ms (1000 req/s), about twice
// as much. Steps of half a second keep the test short (each search's steps
// are bounded, and the test's time with them); on a machine far busier than
// its cores a stall fails a step now and then, never passes one above the
// server's capacity, so a rate fails only when three steps in a row fail.
func TestCapacityKnownServer(t *testing.T) {
	var caps [2]float64
	for i, svc := range []time.Duration{2 * time.Millisecond, time.Millisecond} {
		url, _ := serialServer(t, svc)
		var d *report.CapacityDocument
		var r report.CapacityResult
		want := 1 / svc.Seconds()
		// A search that finds gab itself starved (a machine far busier than
		// its cores) measured nothing of the server's: it says so, and the
		// test searches again, at most three times. So does one that failed
		// a rate below the server's capacity three times without achieving
		// it: the server keeps any such rate by construction, so the process
		// (gab and the server in it) was starved; its connections waited on
		// the server's backlog, which is the server's (not the client's)
		// failure to gab.
		starved := func(r report.CapacityResult, steps []report.CapacityStep) bool {
			if r.ClientBound {
				return true
			}
			if r.CapacityPerS >= 0.9*want {
				return false
			}
			for _, s := range steps {
				if !s.Pass && !s.Kept && s.TargetPerS < 0.95*want {
					return true
				}
			}
			return false
		}
		// On a machine other programs keep busy the search is disturbed (its
		// failing rate failed only on a busy machine): still bisected, its
		// rates often bound the server's capacity as a found one's do; one
		// that missed it is searched again too.
		missed := func(r report.CapacityResult) bool {
			return r.Disturbed && (r.CapacityPerS < 0.9*want || r.CapacityPerS > 1.1*want)
		}
		for range 3 {
			d = capacityOf(t, "--slo", "p99<50ms", "--step", "0.5s", "--attempts", "3", "--start", "100", url)
			if r = d.Targets[0].Runs[0].Result; !starved(r, d.Targets[0].Runs[0].Steps) && !missed(r) {
				break
			}
			t.Logf("service %v: gab and the server were starved or disturbed: %+v", svc, d.Targets[0].Runs[0].Steps)
		}
		for _, s := range d.Targets[0].Runs[0].Steps {
			if s.TargetPerS > 1.2*want && s.Pass {
				t.Errorf("service %v: a step at %.0f/s passed, above the server's %.0f", svc, s.TargetPerS, want)
			}
		}
		if missed(r) {
			// Every search ran on a busy machine and said so, which is the
			// answer gab owes there ("disturbed", never a found capacity):
			// no capacity to compare.
			t.Logf("service %v: every search disturbed by a busy machine: %+v", svc, r)
			continue
		}
		if r.ClientBound {
			// Every search found gab itself starved (as at a load average of
			// 11 on two cores) and said so: its rate is a lower bound, never
			// found, and no lower bound exceeds the server's capacity.
			if r.Found || r.CapacityPerS > 1.1*want {
				t.Fatalf("service %v: a client-bound search %+v, want a lower bound at most %.0f", svc, r, 1.1*want)
			}
			t.Logf("service %v: every search client-bound: %+v", svc, r)
			continue
		}
		if !(r.Found || r.Disturbed) || r.ClientBound || r.CapacityPerS < 0.9*want || r.CapacityPerS > 1.1*want {
			t.Fatalf("service %v: capacity %+v, want %.0f ± 10 %% (steps %+v)", svc, r, want, d.Targets[0].Runs[0].Steps)
		}
		caps[i] = r.CapacityPerS
	}
	if caps[0] == 0 || caps[1] == 0 {
		return // a disturbed search: nothing to compare
	}
	if ratio := caps[1] / caps[0]; ratio < 1.75 || ratio > 2.25 {
		t.Errorf("twice as fast a server: capacity %.0f against %.0f (ratio %.2f), want about 2", caps[1], caps[0], ratio)
	}
}

// A search that gab cannot drive (one CPU for gab and the built-in server
// beside it, an objective any rate meets) says it is client-bound and reports
// no capacity of the server's.
func TestCapacityClientBound(t *testing.T) {
	status, out, errs := runGab(t, "gab", "capacity", "--noise", "0", "--cpus", "1", "--demo", "--slo", "p99<5s", "--step", "0.3s", "--start", "2000", "-c", "64")
	if status != 0 {
		t.Fatalf("exit %d\n%s", status, errs)
	}
	if !strings.Contains(out, "client-bound: ") || !strings.Contains(out, "Capacity: ") {
		t.Fatalf("no client-bound verdict:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Capacity: ") && !strings.Contains(line, "at least") && !strings.Contains(line, "not measured") {
			t.Errorf("a capacity reported as the server's: %q", line)
		}
	}
}

func TestCapacityUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"http://127.0.0.1:1/"}, "--slo is required"},
		{[]string{"--slo", "rps>5", "http://127.0.0.1:1/"}, "an objective is on latency"},
		{[]string{"--slo", "sd<5ms", "http://127.0.0.1:1/"}, "an objective is on latency"},
		{[]string{"--slo", "client_cpu_us_per_request<5ms", "http://127.0.0.1:1/"}, "an objective is on latency"},
		{[]string{"--slo", "p99.99.9<5ms", "http://127.0.0.1:1/"}, "not a number from 0 to 100"},
		{[]string{"--slo", "p99<", "http://127.0.0.1:1/"}, "--slo"},
		{[]string{"--slo", "p99<1s", "-n", "100", "http://127.0.0.1:1/"}, "-n does not apply"},
		{[]string{"--slo", "p99<1s", "--rate", "100", "http://127.0.0.1:1/"}, "--rate does not apply"},
		{[]string{"--slo", "p99<1s", "--step", "10ms", "http://127.0.0.1:1/"}, "--step must be at least"},
		{[]string{"--slo", "p99<1s", "--repeat", "0", "http://127.0.0.1:1/"}, "--repeat"},
		{[]string{"--slo", "p99<1s", "--noise", "11", "http://127.0.0.1:1/"}, "--noise must be from 0 to 10"},
		{[]string{"--slo", "p99<1s", "--demo", "http://127.0.0.1:1/"}, "takes no TARGET"},
		{[]string{"--slo", "p99<1s", "--plot", "x.bmp", "http://127.0.0.1:1/"}, "--plot"},
	} {
		status, _, errs := runGab(t, append([]string{"gab", "capacity"}, c.args...)...)
		if status != exitUsage || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit %d and one line with %q", c.args, status, errs, exitUsage, c.want)
		}
	}
}

// The document is JSON that Decode reads back, and refuses others.
func TestCapacityDocumentDecode(t *testing.T) {
	if _, err := capacity.Decode([]byte(`{"tool":"gab","schema":"gab-sweep"}`)); err == nil {
		t.Error("a sweep document decoded as a capacity one")
	}
	d := &report.CapacityDocument{Tool: "gab", Schema: capacity.Schema, SchemaVersion: capacity.SchemaVersion + 1, Targets: []*report.CapacityTarget{{}}}
	b, _ := json.Marshal(d)
	if _, err := capacity.Decode(b); err == nil || !strings.Contains(err.Error(), "schema version") {
		t.Errorf("a newer schema: %v", err)
	}
}

// gab compare and gab plot refuse a capacity document whose figures no
// search gives (a capacity of ±1e308: its change was -Inf per cent, which
// gab compare --format json could not write), in one line naming the field.
func TestCapacityCompareRefusesBadFigures(t *testing.T) {
	srch := capacity.Search{Start: 100, Resolution: 1}
	srch.Record(report.CapacityStep{TargetPerS: 100, AchievedPerS: 100, Connections: 2, Complete: 100, Kept: true, Pass: true})
	for range 2 {
		srch.Record(report.CapacityStep{TargetPerS: 200, AchievedPerS: 100, Connections: 2, Complete: 100})
	}
	tg := &report.CapacityTarget{Label: "a", URL: "http://127.0.0.1/"}
	capacity.Finish(tg, srch)
	d := &report.CapacityDocument{Tool: "gab", Schema: capacity.Schema, SchemaVersion: capacity.SchemaVersion, Objectives: []string{"p99<1s"},
		StepS: 1, SettleS: 0.2, ResolutionPercent: 5, MinAchieved: capacity.MinAchieved, MaxConnections: 256, Repeat: 1, Attempts: 2,
		Targets: []*report.CapacityTarget{tg}}
	dir := t.TempDir()
	write := func(name string, mean float64) string {
		tg.Capacity.MeanPerS = mean
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, huge, negative := write("good.json", 100), write("huge.json", 1e308), write("negative.json", -1e308)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--format", "json", huge, negative}, "huge.json: targets[0].capacity.mean_per_s: 1e+308 is beyond what a gab document holds"},
		{[]string{"compare", good, negative}, "negative.json: targets[0].capacity.mean_per_s: -1e+308 is negative"},
		{[]string{"plot", "-o", filepath.Join(dir, "k.html"), huge}, "huge.json: targets[0].capacity.mean_per_s: 1e+308 is beyond"},
	} {
		status, out, errs := runGab(t, append([]string{"gab"}, c.args...)...)
		if status != exitError || out != "" || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("gab %v: exit %d, stdout %q, stderr %q; want exit %d and one line with %q", c.args, status, out, errs, exitError, c.want)
		}
	}
	if status, out, errs := runGab(t, "gab", "compare", "--format", "json", good, good); status != 0 || !strings.Contains(out, `"change_percent": 0`) {
		t.Errorf("two good documents: exit %d %q %s", status, out, errs)
	}
}

// --html and --plot draw the knee: a panel per search, side by side, its
// steps' p99 against their achieved rate (passing apart from failing), the
// uncorrected p99, the capacity and the objective.
func TestCapacityPictures(t *testing.T) {
	testtool.Need(t, "gnuplot", "gnuplot-nox")
	url, _ := serialServer(t, time.Millisecond)
	dir := t.TempDir()
	html, png := filepath.Join(dir, "c.html"), filepath.Join(dir, "c.png")
	doc := filepath.Join(dir, "c.json")
	d := capacityOf(t, "--slo", "p99<200ms", "--step", "0.2s", "--settle", "0.1s", "--max-rate", "200", "--repeat", "2", "--html", html, "--plot", png, "--json", doc, "a="+url)
	if r := d.Targets[0].Runs[0].Result; len(d.Targets[0].Runs[0].Steps) < 2 || d.LatencyObjectiveMs != 200 {
		t.Fatalf("%+v, objective %v", r, d.LatencyObjectiveMs)
	}
	testtool.WantInFile(t, html, "<svg", `id="capacity-knee-1-1"`, `id="capacity-knee-1-2"`, `class="columns"`, "a, search 2: ", "step passed",
		"uncorrected p99", "objective 200 ms", "capacity ", "Steps: a (", "non-2xx")
	script, err := os.ReadFile(png + ".gp")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(png); err != nil || st.Size() == 0 || !strings.Contains(string(script), "set multiplot layout 1,2 ") {
		t.Errorf("the plot: %v\n%s", err, script)
	}

	// gab plot draws a saved document's knee; gab compare compares two.
	again := filepath.Join(dir, "again.html")
	if status, _, errs := runGab(t, "gab", "plot", "-o", again, "x="+doc, "y="+doc); status != 0 {
		t.Fatalf("gab plot: %d %s", status, errs)
	}
	if page, err := os.ReadFile(again); err != nil || !strings.Contains(string(page), "x:a, search 2") || !strings.Contains(string(page), "y:a, search 1") {
		t.Errorf("gab plot's page: %v", err)
	}
	status, out, errs := runGab(t, "gab", "compare", doc, doc)
	if status != 0 || !strings.Contains(out, "Capacity: ") || !strings.Contains(out, "+0.0") {
		t.Errorf("gab compare: %d %q %s", status, out, errs)
	}
	if status, _, errs := runGab(t, "gab", "compare", doc, html); status == 0 || !strings.Contains(errs, "not a capacity document") {
		t.Errorf("gab compare with a page: %d %s", status, errs)
	}
}

// A server that resets every connection fails every step with the failures
// counted (gab capacity implies -r), and the search ends with no capacity,
// in bounded time.
func TestCapacityServerResets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.(*net.TCPConn).SetLinger(0)
			c.Close() // a reset
		}
	}()
	start := time.Now()
	d := capacityOf(t, "--slo", "p99<50ms", "--step", "0.2s", "--settle", "0.1s", "--start", "20", "http://"+ln.Addr().String()+"/")
	r := d.Targets[0].Runs[0]
	if r.Result.CapacityPerS != 0 || len(r.Steps) == 0 {
		t.Fatalf("%+v", r)
	}
	for _, s := range r.Steps {
		// (A rate below one request in the step's 0.2 s has none due there;
		// a step in which gab itself got no CPU to send says client-bound.)
		if s.Pass || (s.Failed == 0 && s.TargetPerS*0.2 >= 1 && !s.ClientBound) {
			t.Errorf("a step passed or counted no failure: %+v", s)
		}
	}
	// At most 60 steps of 0.3 s, and far fewer: every rate from 20/s down.
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("the search took %v", el)
	}
}

// Too few connections for the rate, against a server that answers every
// request in 5 ms whatever the load: the failing steps kept every
// connection busy while the server met the objective, and the output says a
// larger -c might carry more.
func TestCapacityAtMaxConnections(t *testing.T) {
	url := pacedServer(t, func(int64) time.Duration { return 5 * time.Millisecond })
	status, out, errs := runGab(t, "gab", "capacity", "--noise", "0", "--slo", "p99<100ms", "--step", "0.3s", "--settle", "0.1s", "--start", "100", "--max-rate", "800", "-c", "2", url)
	if status != 0 {
		t.Fatalf("exit %d: %s", status, errs)
	}
	// Two connections carry at most 400 requests per second at 5 ms each.
	if !strings.Contains(out, "kept all 2 connections (-c) busy while the server answered within the objective") {
		t.Errorf("no note on -c:\n%s", out)
	}
}

// An interrupted search ends at once with what it measured, marked
// incomplete, and exits with an error; its capacity line says it was
// interrupted: "at least" the rate it passed before (the interrupt comes in
// the second step, after the server answered more than the first step's
// requests), or "not measured" (the interrupt comes in the first step),
// never "no rate met the objectives".
func TestCapacityInterrupted(t *testing.T) {
	for _, c := range []struct {
		after int64 // the interrupt comes at the server's after-th request
		line  string
		steps int
	}{
		{10, "Capacity: interrupted: not measured\n", 0},
		{130, "Capacity: at least 100 req/s (interrupted)\n", 1}, // the first step: 100/s for 1.2 s
	} {
		ctx, cancel := context.WithCancel(t.Context())
		var n atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == c.after {
				cancel()
			}
			w.Header().Set("Content-Length", "2")
			w.Write([]byte("ok"))
		}))
		t.Cleanup(srv.Close)
		doc := filepath.Join(t.TempDir(), "c.json")
		start := time.Now()
		status, out, errs := runArgs(t, ctx, "gab", "capacity", "--noise", "0", "--slo", "p99<500ms", "--step", "1s", "--json", doc, srv.URL+"/")
		cancel()
		if status != exitError || !strings.Contains(errs, "interrupted") {
			t.Fatalf("exit %d: %s", status, errs)
		}
		if el := time.Since(start); el > 15*time.Second {
			t.Errorf("ended %v after the start, a search of at most two steps of 1.2 s", el)
		}
		d := readCapacityFile(t, doc)
		run := d.Targets[0].Runs[0]
		// A loaded machine may fail the first step (then measured again):
		// the line then says "not measured".
		line := c.line
		if c.steps > 0 && !run.Steps[0].Pass {
			line = "Capacity: interrupted: not measured\n"
		}
		if d.Complete || len(run.Steps) != c.steps || !run.Result.Interrupted || run.Result.Found || !d.Targets[0].Capacity.Interrupted ||
			!strings.Contains(out, line) || strings.Contains(out, "no rate met") {
			t.Errorf("interrupted at request %d: %+v\n%s", c.after, run, out)
		}
	}
}

// Several targets are searched step by step in turn (A's first step, B's,
// A's second, ...: the servers' first and last requests interleave), each
// --repeat times, and ranked with sweep's tie rule.
func TestCapacityTargetsInTurn(t *testing.T) {
	type seen struct {
		mu          sync.Mutex
		first, last time.Time
	}
	serve := func(s *seen) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			now := time.Now()
			s.mu.Lock()
			if s.first.IsZero() {
				s.first = now
			}
			s.last = now
			s.mu.Unlock()
			w.Header().Set("Content-Length", "2")
			w.Write([]byte("ok"))
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/"
	}
	// Against servers that answer at once, a step whose rate gab did not
	// drive (client-bound, or under MinAchieved of it), or a search that
	// ended disturbed (a step failed while the machine was busy), is gab
	// starved by a machine far busier than its cores; the search ranks what
	// that made of it, so the test searches again, at most three times.
	starved := func(d *report.CapacityDocument) bool {
		for _, tg := range d.Targets {
			for _, r := range tg.Runs {
				if r.Result.Disturbed {
					return true // gab said so: a failing step on a busy machine
				}
				for _, st := range r.Steps {
					if st.ClientBound || st.AchievedPerS < capacity.MinAchieved*st.TargetPerS {
						return true
					}
				}
			}
		}
		return false
	}
	var a, b seen
	var d *report.CapacityDocument
	for range 3 {
		a, b = seen{}, seen{}
		d = capacityOf(t, "--slo", "p99<500ms", "--step", "0.2s", "--settle", "0.1s", "--max-rate", "200", "--repeat", "2",
			"A="+serve(&a), "B="+serve(&b))
		if !starved(d) {
			break
		}
		t.Logf("a step's rate was not driven (gab starved); searching again")
	}
	if len(d.Targets) != 2 || len(d.Targets[0].Runs) != 2 || len(d.Targets[1].Runs) != 2 {
		t.Fatalf("%d targets: %+v", len(d.Targets), d.Targets)
	}
	// B's last step comes after A's unless A's last search took more steps
	// than B's (a step failed by a stall of a loaded machine is tried again),
	// and A went on alone.
	stepsA, stepsB := len(d.Targets[0].Runs[1].Steps), len(d.Targets[1].Runs[1].Steps)
	if !a.first.Before(b.first) || !b.first.Before(a.last) || a.last.After(b.last) != (stepsA > stepsB) {
		t.Errorf("not in turn: A %v to %v, B %v to %v; last searches' steps A %d, B %d", a.first, a.last, b.first, b.last, stepsA, stepsB)
	}
	for _, tg := range d.Targets {
		c := tg.Capacity
		// Both at --max-rate: lower bounds, not averaged (no capacity found),
		// tied, not found.
		want := []report.CapacityBound{{Search: 0, PerS: 200, Why: report.CapacityBoundMaxRate}, {Search: 1, PerS: 200, Why: report.CapacityBoundMaxRate}}
		if c.N != 2 || len(tg.Runs) != 2 || c.FoundN != 0 || c.MeanPerS != 0 || !slices.Equal(c.Bounds, want) || c.Found || c.Rank != 1 || !c.Tied {
			t.Errorf("%s: %+v (both at --max-rate: bounds, tied, not found); runs %+v", tg.Label, c, tg.Runs)
		}
	}
}

// shedServer answers like nginx's limit_req: a request within rate
// requests per second (a bucket of burst) gets 200, any other a 503 at once,
// both with a 2-byte body (no length failure tells them apart). The server
// counts its answers of each kind before it writes them.
func shedServer(t *testing.T, rate float64, burst int) (url string, ok, shed *atomic.Int64) {
	t.Helper()
	var mu sync.Mutex
	tokens, last := float64(burst), time.Now()
	ok, shed = new(atomic.Int64), new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		now := time.Now()
		tokens = min(float64(burst), tokens+now.Sub(last).Seconds()*rate)
		last = now
		admit := tokens >= 1
		if admit {
			tokens--
		}
		mu.Unlock()
		w.Header().Set("Content-Length", "2")
		if !admit {
			shed.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("no"))
			return
		}
		ok.Add(1)
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/", ok, shed
}

// A server that sheds load (503 at once above 100 req/s) has no capacity
// above what it serves: non2xx<0.1% is a default objective beside
// failed<0.1%, the steps above twice its limit fail on it, and the search
// never reaches --max-rate.
func TestCapacityLoadShedding(t *testing.T) {
	const limit = 100
	url, ok, shed := shedServer(t, limit, 10)
	d := capacityOf(t, "--slo", "p99<200ms", "--step", "0.3s", "--settle", "0.1s", "--start", "50", "--max-rate", "400", "--resolution", "50", url)
	if got := strings.Join(d.Objectives, ", "); got != "p99<200ms, failed<0.1%, non2xx<0.1%" {
		t.Errorf("objectives %q, want the default ones on failed and non2xx stated", got)
	}
	run := d.Targets[0].Runs[0]
	if r := run.Result; r.ReachedMax || r.CapacityPerS > 2*limit {
		t.Errorf("capacity %+v of a server that serves %d req/s (it answered %d 200s and %d 503s); steps %+v", r, limit, ok.Load(), shed.Load(), run.Steps)
	}
	for _, s := range run.Steps {
		if s.TargetPerS < 2*limit {
			continue
		}
		failedOn := slices.ContainsFunc(s.Objectives, func(o string) bool { return strings.HasPrefix(o, "non2xx<0.1%: FAILED") })
		if s.Pass || s.Non2xx == 0 || s.Non2xx > s.Complete || !failedOn {
			t.Errorf("a step at %.0f/s, twice the server's limit: %+v", s.TargetPerS, s)
		}
	}
}

// Every count of a step covers its window past the settle: against a server
// that answers every request 503, a step's non-2xx answers are its complete
// requests, no more (the settle's are not counted), and an objective on
// non2xx replaces the default one.
func TestCapacityStepCountsOneWindow(t *testing.T) {
	url, _, shed := shedServer(t, 0, 0)
	d := capacityOf(t, "--slo", "p99<1s", "--slo", "non2xx<=100%", "--step", "0.5s", "--settle", "0.2s", "--start", "40", "--max-rate", "40", url)
	if got := strings.Join(d.Objectives, ", "); got != "p99<1s, non2xx<=100%, failed<0.1%" {
		t.Errorf("objectives %q", got)
	}
	for _, s := range d.Targets[0].Runs[0].Steps {
		if s.Complete == 0 || s.Non2xx != s.Complete || s.Failed != 0 {
			t.Errorf("a step of %d complete requests, %d non-2xx, %d failed; every answer was a 503 (%d in all, settle included)", s.Complete, s.Non2xx, s.Failed, shed.Load())
		}
	}
}

// silentServer accepts connections, reads what comes and never answers; it
// counts the connections it accepted.
func silentServer(t *testing.T) (url string, conns *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns = new(atomic.Int64)
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			go io.Copy(io.Discard, c)
		}
	}()
	return "http://" + ln.Addr().String() + "/", conns
}

// A server that never answers (over HTTP/1: connections accepted, requests
// read; over HTTP/3: a connection that grants no stream) fails its steps as
// the server's failure: requests sent and unanswered hold the connections
// (and until the first answer, ab's ramp opens no other), so a schedule
// behind is not the client's, and the search never says the client could not
// drive the first rate. The search would go down to 1 req/s; the test
// interrupts it after two steps, the first rate's two attempts.
func TestCapacitySilentServer(t *testing.T) {
	h1, conns := silentServer(t)
	h3 := fmt.Sprintf("https://127.0.0.1:%d/", h3test.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}), &quic.Config{MaxIncomingStreams: -1}))
	for _, c := range []struct {
		name string
		args []string
	}{
		{"HTTP/1", []string{h1}},
		{"HTTP/3", []string{"--http3", h3}},
	} {
		doc := filepath.Join(t.TempDir(), "c.json")
		ctx, cancel := context.WithCancel(t.Context())
		steps := &lineCounter{n: 2, done: cancel}
		var out bytes.Buffer
		// 400/s with p99<10ms opens 6 connections: a client that could not
		// drive the rate would leave most of its 160 requests unsent.
		argv := append([]string{"gab", "capacity", "--noise", "0", "--slo", "p99<10ms", "--step", "0.3s", "--settle", "0.1s", "--start", "400", "--json", doc}, c.args...)
		run(ctx, argv, &out, steps)
		cancel()
		d := readCapacityFile(t, doc)
		run := d.Targets[0].Runs[0]
		if r := run.Result; r.ClientBound || r.CapacityPerS != 0 || len(run.Steps) == 0 || strings.Contains(out.String(), "could not drive") {
			t.Errorf("%s: %+v (%s); steps %+v", c.name, r, r.Line(capacity.Rate), run.Steps)
		}
		for _, s := range run.Steps {
			if s.Pass || s.ClientBound || s.Complete != 0 {
				t.Errorf("%s: a step of a server that never answers: %+v", c.name, s)
			}
		}
	}
	if conns.Load() == 0 {
		t.Error("the HTTP/1 server accepted no connection")
	}
}

// lineCounter is a writer that calls done once it has been written n lines.
type lineCounter struct {
	mu   sync.Mutex
	n    int
	done func()
}

func (w *lineCounter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n > 0 {
		if w.n -= bytes.Count(b, []byte("\n")); w.n <= 0 {
			w.done()
		}
	}
	return len(b), nil
}

// TestCapacityNoise: --noise K measures K steps at a quarter of --start
// before the search, in the document (validated on the way back) and in the
// text; the search's steps are its own.
func TestCapacityNoise(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2")
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	d := capacityOf(t, "--slo", "p99<500ms", "--noise", "2", "--start", "40", "--max-rate", "40", "--step", "0.2s", "--settle", "0.1s", srv.URL+"/")
	tg := d.Targets[0]
	n := tg.Noise
	if n == nil || n.RatePerS != 10 || len(n.Steps) != 2 || n.P99MinUs > n.P99MaxUs {
		t.Fatalf("noise %+v", n)
	}
	for _, st := range n.Steps {
		if st.TargetPerS != 10 || st.Complete == 0 {
			t.Errorf("a noise step %+v", st)
		}
	}
	if st := tg.Runs[0].Steps; len(st) == 0 || st[0].TargetPerS != 40 {
		t.Errorf("the search's steps %+v", st)
	}
	var b strings.Builder
	if err := capacity.WriteText(&b, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Latency noise of ") || !strings.Contains(b.String(), "p99 at 10.0 req/s ranged ") {
		t.Errorf("no noise line in\n%s", b.String())
	}
}

// TestCapacityNoiseByDefault: without --noise, gab capacity measures the
// machine's latency noise first (capacity.DefaultNoise steps at a quarter
// of --start), says so on stderr before the search's first step, and keeps
// it in the document; the search's steps are its own.
func TestCapacityNoiseByDefault(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2")
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	doc := filepath.Join(t.TempDir(), "c.json")
	status, _, errs := runGab(t, "gab", "capacity", "--slo", "p99<500ms", "--start", "40", "--max-rate", "40", "--step", "0.2s", "--settle", "0.1s",
		"--json", doc, srv.URL+"/")
	if status != 0 {
		t.Fatalf("exit %d\n%s", status, errs)
	}
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], ": latency noise: p99 at 10.0 req/s ranged ") ||
		!strings.Contains(lines[0], fmt.Sprintf(" over %d steps", capacity.DefaultNoise)) || !strings.Contains(lines[1], ": 40.0/s: ") {
		t.Errorf("stderr:\n%s", errs)
	}
	d := readCapacityFile(t, doc)
	tg := d.Targets[0]
	if n := tg.Noise; n == nil || n.RatePerS != 10 || len(n.Steps) != capacity.DefaultNoise {
		t.Errorf("noise %+v", n)
	}
	if st := tg.Runs[0].Steps; len(st) == 0 || st[0].TargetPerS != 40 {
		t.Errorf("the search's steps %+v", st)
	}
}
