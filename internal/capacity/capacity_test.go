package capacity

import (
	"math"
	"strings"
	"testing"

	"gab/report"
)

// search runs a search against a simulated server: a rate passes when
// pass(rate, attempt) says so.
func search(s *Search, pass func(rate float64, attempt int) (ok, client bool)) {
	attempt := map[float64]int{}
	for {
		r, ok := s.Next()
		if !ok {
			return
		}
		attempt[r]++
		p, cb := pass(r, attempt[r])
		s.Record(report.CapacityStep{TargetPerS: r, Pass: p, ClientBound: cb && !p})
	}
}

func TestSearchFindsCapacity(t *testing.T) {
	s := &Search{Start: 100, Resolution: 0.05}
	search(s, func(r float64, _ int) (bool, bool) { return r <= 730, false })
	res := s.Result()
	if !res.Found || res.CapacityPerS < 730/1.05 || res.CapacityPerS > 730 {
		t.Fatalf("%+v, want within 5 %% below 730 (steps %v)", res, s.Steps)
	}
	// 100 200 400 800 (twice) 600 700 750 (twice) 725 737.5 (twice): every
	// failing rate twice, nothing more.
	fails := 0
	for _, st := range s.Steps {
		if !st.Pass {
			fails++
		}
	}
	if len(s.Steps) > 16 || fails%2 != 0 {
		t.Errorf("%d steps, %d failing", len(s.Steps), fails)
	}
}

// A stall that fails a passing rate's first attempt does not end the climb.
func TestSearchRetriesFailure(t *testing.T) {
	s := &Search{Start: 100, Resolution: 0.05, Attempts: 3}
	search(s, func(r float64, a int) (bool, bool) { return r <= 1000 && (r != 400 || a == 3), false })
	if res := s.Result(); !res.Found || res.CapacityPerS < 950 {
		t.Fatalf("%+v (steps %v)", res, s.Steps)
	}
}

func TestSearchFirstRateFails(t *testing.T) {
	s := &Search{Start: 100, Resolution: 0.05}
	search(s, func(r float64, _ int) (bool, bool) { return r <= 30, false })
	if res := s.Result(); !res.Found || res.CapacityPerS < 30/1.05 || res.CapacityPerS > 30 {
		t.Fatalf("%+v (steps %v)", res, s.Steps)
	}
	s = &Search{Start: 100, Resolution: 0.05}
	search(s, func(float64, int) (bool, bool) { return false, false })
	if res := s.Result(); res.CapacityPerS != 0 || len(s.Steps) > MaxSteps {
		t.Fatalf("%+v", res)
	}
}

// A failing step with the client at its limit ends the search: at least the
// highest passing rate, never found.
func TestSearchClientBound(t *testing.T) {
	s := &Search{Start: 100, Resolution: 0.05}
	search(s, func(r float64, _ int) (bool, bool) { return r <= 400, r > 400 })
	res := s.Result()
	if !res.ClientBound || res.Found || res.CapacityPerS != 400 {
		t.Fatalf("%+v", res)
	}
	if line := res.Line(Rate); line != "at least 400 req/s: limited by the client (gab), not measured to the server's limit" {
		t.Errorf("line %q", line)
	}
}

func TestSearchMaxRate(t *testing.T) {
	s := &Search{Start: 100, MaxRate: 300, Resolution: 0.05}
	search(s, func(float64, int) (bool, bool) { return true, false })
	if res := s.Result(); !res.ReachedMax || res.Found || res.CapacityPerS != 300 || len(s.Steps) != 3 {
		t.Fatalf("%+v, %d steps", res, len(s.Steps))
	}
}

// Targets are ranked by capacity with the tie rule (report.TieRule): targets the ratio's
// test cannot tell apart share a rank; a capacity not found comes last.
func TestRank(t *testing.T) {
	mk := func(label string, caps ...float64) *report.CapacityTarget {
		tg := &report.CapacityTarget{Label: label}
		for _, c := range caps {
			Finish(tg, Search{lo: c, hi: c * 1.01, Resolution: 0.05})
		}
		return tg
	}
	clientBound := func(label string, c float64) *report.CapacityTarget {
		tg := &report.CapacityTarget{Label: label}
		Finish(tg, Search{lo: c, hi: c * 1.01, Resolution: 0.05, clientBound: true})
		return tg
	}
	a, b, c := mk("a", 100, 102, 98), mk("b", 101, 99, 103), mk("c", 200, 201, 199)
	cb := clientBound("cb", 500)
	cb2 := clientBound("cb2", 50)
	out := Rank([]*report.CapacityTarget{a, b, cb, c, cb2})
	if out[0] != c || out[3] != cb || a.Capacity.Rank != 2 || b.Capacity.Rank != 2 || !a.Capacity.Tied || cb.Capacity.Rank != 4 ||
		cb2.Capacity.Rank != 4 || !cb.Capacity.Tied || !cb2.Capacity.Tied || c.Capacity.Tied {
		t.Fatalf("ranks: %s %+v, %s %+v, %s %+v, %s %+v", out[0].Label, out[0].Capacity, out[1].Label, out[1].Capacity, out[2].Label, out[2].Capacity, out[3].Label, out[3].Capacity)
	}
	if m, lo, hi := GeoInterval([]float64{100, 102, 98}); a.Capacity.MeanPerS != m || a.Capacity.LoPerS != lo || a.Capacity.HiPerS != hi {
		t.Errorf("interval %+v, want %g (%g to %g)", a.Capacity, m, lo, hi)
	}
}

// Targets are ranked by the ratio's test (report.Apart over the searches'
// capacities), also where ties do not chain: a (100 ± 1) and c (90 ± 1)
// are apart, b (95, sd 10) ties both: a =1, b 1–2, c =2, lettered a, ab, b.
func TestRankChainedTies(t *testing.T) {
	mk := func(label string, caps ...float64) *report.CapacityTarget {
		tg := &report.CapacityTarget{Label: label}
		for _, c := range caps {
			Finish(tg, Search{lo: c, hi: c * 1.01, Resolution: 0.05})
		}
		return tg
	}
	a, b, c := mk("a", 100, 101, 99), mk("b", 85, 95, 105), mk("c", 90, 91, 89)
	var got []string
	for _, tg := range Rank([]*report.CapacityTarget{c, b, a}) {
		got = append(got, tg.Capacity.RankText()+" "+tg.Capacity.Group+" "+tg.Label)
	}
	if s := strings.Join(got, ", "); s != "=1 a a, 1–2 ab b, =2 b c" {
		t.Errorf("ranking %s", s)
	}
	if !report.Apart(a.Interval(), c.Interval()) || report.Apart(a.Interval(), b.Interval()) {
		t.Errorf("a/c must be apart, a/b not: %+v %+v %+v", a.Interval(), b.Interval(), c.Interval())
	}
}

// The step table has a non-2xx column beside failed (right-aligned under its
// heading), and the header states every objective, the default ones too.
func TestWriteTextNon2xxColumn(t *testing.T) {
	s := Search{Start: 100, MaxRate: 100, Resolution: 0.05}
	s.Record(report.CapacityStep{TargetPerS: 100, AchievedPerS: 100, Complete: 50, Failed: 3, Non2xx: 17, Kept: true})
	tg := &report.CapacityTarget{Label: "a", URL: "http://127.0.0.1/"}
	Finish(tg, s)
	d := &report.CapacityDocument{Objectives: []string{"p99<1s", "failed<0.1%", "non2xx<0.1%"}, MinAchieved: MinAchieved, Targets: []*report.CapacityTarget{tg}}
	var b strings.Builder
	if err := WriteText(&b, d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "meeting p99<1s, failed<0.1%, non2xx<0.1% on the corrected latencies") {
		t.Errorf("the objectives are not stated:\n%s", out)
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		end := strings.Index(l, "non-2xx") + len("non-2xx")
		if end < len("non-2xx") || i+1 == len(lines) {
			continue
		}
		row := lines[i+1]
		if fail := strings.Index(l, "failed") + len("failed"); len(row) < end || !strings.HasSuffix(row[:fail], " 3") || !strings.HasSuffix(row[:end], " 17") {
			t.Errorf("failed 3 and non-2xx 17 not under their headings:\n%s\n%s", l, row)
		}
		return
	}
	t.Errorf("no non-2xx column:\n%s", out)
}

// An interrupted search says so: "at least" the highest rate it passed, or
// not measured, never a capacity found nor "no rate met the objectives"; a
// search that had ended keeps its result.
func TestSearchInterrupted(t *testing.T) {
	for _, c := range []struct {
		steps []report.CapacityStep
		want  string
	}{
		{nil, "interrupted: not measured"},
		{[]report.CapacityStep{{TargetPerS: 100}, {TargetPerS: 100}}, "interrupted: not measured"},
		{[]report.CapacityStep{{TargetPerS: 100, Pass: true}}, "at least 100 req/s (interrupted)"},
		{[]report.CapacityStep{{TargetPerS: 100, Pass: true}, {TargetPerS: 200}, {TargetPerS: 200}, {TargetPerS: 150, Pass: true}}, "at least 150 req/s (interrupted)"},
	} {
		s := &Search{Start: 100, Resolution: 0.05}
		for _, st := range c.steps {
			s.Record(st)
		}
		s.Interrupt()
		r := s.Result()
		if _, more := s.Next(); more || r.Found || !r.Interrupted || r.Line(Rate) != c.want {
			t.Errorf("%d steps: %+v %q, want %q", len(c.steps), r, r.Line(Rate), c.want)
		}
		tg := &report.CapacityTarget{}
		Finish(tg, *s, *s)
		if tg.Capacity.Found || !tg.Capacity.Interrupted {
			t.Errorf("%d steps: summary %+v", len(c.steps), tg.Capacity)
		}
	}
	s := &Search{Start: 100, MaxRate: 100, Resolution: 0.05}
	s.Record(report.CapacityStep{TargetPerS: 100, Pass: true})
	s.Interrupt()
	if r := s.Result(); r.Interrupted || !r.ReachedMax {
		t.Errorf("a search that had ended: %+v", r)
	}
}

// A search limited by the client or interrupted is a lower bound, and one
// where no rate passed an upper bound: none is averaged with the capacities
// found. Those are summarized on a log scale, their interval above 0 however
// far apart they are.
func TestSummaryKeepsBoundsApart(t *testing.T) {
	found := func(c float64) Search { return Search{lo: c, hi: c * 1.01, Resolution: 0.05} }
	cb := Search{lo: 400, clientBound: true, done: true}
	in := Search{lo: 96.9, interrupted: true, done: true}
	none := Search{hi: 1.5, Resolution: 0.05, done: true}
	tg := &report.CapacityTarget{Label: "a"}
	Finish(tg, found(1000), cb, found(1210), in, none)
	c := tg.Capacity
	if want := math.Sqrt(1000 * 1210); c.N != 5 || c.FoundN != 2 || math.Abs(c.MeanPerS-want) > 1e-9 || c.Found {
		t.Fatalf("%+v, want the geometric mean of 1000 and 1210 (%g) over 2 found of 5", c, want)
	}
	if c.LoPerS <= 0 || c.LoPerS >= c.MeanPerS || c.HiPerS <= c.MeanPerS || math.Abs(c.LoPerS*c.HiPerS-c.MeanPerS*c.MeanPerS) > 1e-6*c.MeanPerS*c.MeanPerS {
		t.Errorf("interval %g to %g around %g: not above 0 and even in ratio", c.LoPerS, c.HiPerS, c.MeanPerS)
	}
	want := []report.CapacityBound{{Search: 1, PerS: 400, Why: report.CapacityBoundClient}, {Search: 3, PerS: 96.9, Why: report.CapacityBoundInterrupted}, {Search: 4, PerS: 1.5, Why: report.CapacityBoundBelow}}
	if len(c.Bounds) != len(want) {
		t.Fatalf("bounds %v, want %v", c.Bounds, want)
	}
	for i := range want {
		if c.Bounds[i] != want[i] {
			t.Errorf("bounds %v, want %v", c.Bounds, want)
		}
	}
	line := c.Line(Rate)
	for _, w := range []string{"1100 req/s (geometric mean of 2 found, 95 % interval", "; and 1 search at least 400 req/s (client-bound)",
		", 1 search at least 96.9 req/s (interrupted)", ", 1 search below 1.50 req/s (no rate passed)"} {
		if !strings.Contains(line, w) {
			t.Errorf("line %q lacks %q", line, w)
		}
	}
	// Two found capacities far apart (a stalled search and a quiet one):
	// the interval is wide but never below 0.
	tg = &report.CapacityTarget{}
	Finish(tg, found(96.9), found(19200))
	if c := tg.Capacity; c.LoPerS <= 0 || c.LoPerS > 96.9 || c.HiPerS < 19200 {
		t.Errorf("%+v", c)
	}
}

// A rate failing below one that passed (in an earlier search of the same
// target) is noise until measured once more: two stalls at the start rate
// do not end a search at 96.9 req/s after another found 19200; passing the
// third time, the search climbs on. Failing the third time, it fails.
func TestSearchRemeasuresFailureBelowPass(t *testing.T) {
	s := &Search{Start: 100, Resolution: 0.05, Passed: 19200}
	search(s, func(r float64, a int) (bool, bool) { return r <= 20000 && (r != 100 || a == 3), false })
	if res := s.Result(); !res.Found || res.CapacityPerS < 19000 || s.Steps[2].TargetPerS != 100 || !s.Steps[2].Pass || !s.Steps[2].Retry {
		t.Fatalf("%+v (steps %v)", res, s.Steps)
	}
	// Without an earlier pass, two failures fail the rate.
	s = &Search{Start: 100, Resolution: 0.05}
	search(s, func(r float64, a int) (bool, bool) { return r <= 20000 && (r != 100 || a == 3), false })
	if res := s.Result(); res.CapacityPerS >= 100 || s.Steps[2].TargetPerS == 100 {
		t.Fatalf("no earlier pass: %+v (steps %v)", res, s.Steps)
	}
	// Failing a third time, the rate fails: once more, not forever.
	s = &Search{Start: 100, Resolution: 0.05, Passed: 19200}
	search(s, func(r float64, a int) (bool, bool) { return r < 100, false })
	n := 0
	for _, st := range s.Steps {
		if st.TargetPerS == 100 {
			n++
		}
	}
	if res := s.Result(); n != 3 || res.FailingPerS != 100 || res.CapacityPerS < 95 {
		t.Fatalf("%d steps at 100: %+v (steps %v)", n, res, s.Steps)
	}
}

// A search whose lowest failing rate failed only in steps on a busy machine
// ends disturbed, at least its highest passing rate, never a capacity
// found; one quiet failing step among them makes the failure the server's.
func TestSearchDisturbedByBusyMachine(t *testing.T) {
	run := func(busyAttempt func(a int) bool) *Search {
		s := &Search{Start: 100, Resolution: 0.05}
		attempt := map[float64]int{}
		for {
			r, ok := s.Next()
			if !ok {
				return s
			}
			attempt[r]++
			pass := r <= 300
			s.Record(report.CapacityStep{TargetPerS: r, Pass: pass, BusyMachine: !pass && busyAttempt(attempt[r])})
		}
	}
	s := run(func(int) bool { return true })
	res := s.Result()
	if !res.Disturbed || res.Found || res.CapacityPerS < 300/1.05 || res.CapacityPerS > 300 {
		t.Fatalf("%+v (steps %v)", res, s.Steps)
	}
	if line := res.Line(Rate); line != "disturbed: the machine was busy (at least "+Rate(res.CapacityPerS)+" req/s passed; "+Rate(res.FailingPerS)+" failed only on a busy machine)" {
		t.Errorf("line %q", line)
	}
	tg := &report.CapacityTarget{}
	Finish(tg, *s)
	if c := tg.Capacity; c.FoundN != 0 || len(c.Bounds) != 1 || c.Bounds[0].Why != report.CapacityBoundDisturbed {
		t.Errorf("summary %+v", c)
	}
	// The second failing step at a rate was quiet: the server's failure.
	s = run(func(a int) bool { return a == 1 })
	if res := s.Result(); res.Disturbed || !res.Found || res.CapacityPerS < 300/1.05 {
		t.Fatalf("%+v (steps %v)", res, s.Steps)
	}
	// The step table shows the machine verdicts and their lines.
	s = &Search{Start: 100, MaxRate: 100, Resolution: 0.05}
	s.Record(report.CapacityStep{TargetPerS: 100, AchievedPerS: 100, Kept: true, Pass: true, BusyMachine: true, KernelDrops: true,
		Verdicts: []string{"busy-machine: others used 1.2 cores", "kernel-drops: 3 SYNs resent"}})
	tg = &report.CapacityTarget{Label: "a", URL: "http://127.0.0.1/"}
	Finish(tg, *s)
	var b strings.Builder
	if err := WriteText(&b, &report.CapacityDocument{Objectives: []string{"p99<1s"}, MinAchieved: MinAchieved, Targets: []*report.CapacityTarget{tg}}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"verdict      machine", "pass  busy, drops", "100/s: busy-machine: others used 1.2 cores", "100/s: kernel-drops: 3 SYNs resent"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("no %q in\n%s", w, b.String())
		}
	}
}

// The latency noise: the range of the low rate's p99, and whether the
// objectives lie inside it (the same rate passing in some steps and failing
// in others); a step ended on an error judges nothing.
func TestNoiseOf(t *testing.T) {
	steps := []report.CapacityStep{{TargetPerS: 25, P99Us: 2300, Pass: true}, {TargetPerS: 25, P99Us: 91000}, {TargetPerS: 25, P99Us: 5000, Pass: true}}
	n := NoiseOf(25, steps)
	if n.P99MinUs != 2300 || n.P99MaxUs != 91000 || !n.Inside {
		t.Fatalf("%+v", n)
	}
	want := "p99 at 25.0 req/s ranged 2.300 to 91.000 ms over 3 steps: p99<10ms passed in some and failed in others: the objectives lie inside this machine's noise and cannot be judged here"
	if l := n.Line(Rate, Ms, "p99<10ms"); l != want {
		t.Errorf("line %q, want %q", l, want)
	}
	steps[1].Pass = true
	if n := NoiseOf(25, steps); n.Inside {
		t.Errorf("every step passed: %+v", n)
	}
	steps[1] = report.CapacityStep{TargetPerS: 25, Error: "connection refused"}
	steps[2].Pass = true
	if n := NoiseOf(25, steps); n.Inside || n.P99MinUs != 0 {
		t.Errorf("an error is no failure of the objectives: %+v", n)
	}
}

// A target whose searches found no capacity (every one disturbed) ranks
// after one with a capacity found, even when that one's other searches were
// disturbed too: both used to be "unknown" and tied =1.
func TestRankTargetWithoutFoundCapacityLast(t *testing.T) {
	mk := func(label string, rs ...report.CapacityResult) *report.CapacityTarget {
		tg := &report.CapacityTarget{Label: label}
		for _, r := range rs {
			tg.Runs = append(tg.Runs, report.CapacityRun{Result: r})
		}
		tg.Capacity = Summarize(func() []report.CapacityResult {
			var out []report.CapacityResult
			for _, r := range tg.Runs {
				out = append(out, r.Result)
			}
			return out
		}())
		return tg
	}
	found := report.CapacityResult{CapacityPerS: 48000, Found: true}
	disturbed := report.CapacityResult{CapacityPerS: 20000, Disturbed: true}
	nginx := mk("nginx", found, disturbed, disturbed)
	lighttpd := mk("lighttpd", disturbed, disturbed, disturbed)
	ranked := Rank([]*report.CapacityTarget{lighttpd, nginx})
	if ranked[0] != nginx || nginx.Capacity.Rank != 1 || nginx.Capacity.Tied || lighttpd.Capacity.Rank != 2 {
		t.Errorf("nginx rank %d (tied %v), lighttpd rank %d (tied %v)", nginx.Capacity.Rank, nginx.Capacity.Tied, lighttpd.Capacity.Rank, lighttpd.Capacity.Tied)
	}
}
