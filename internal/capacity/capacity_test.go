package capacity

import (
	"strings"
	"testing"

	"gab/internal/sweep"
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
		s.Record(Step{TargetPerS: r, Pass: p, ClientBound: cb && !p})
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

// Targets are ranked by capacity with sweep's tie rule: targets the ratio's
// test cannot tell apart share a rank; a capacity not found comes last.
func TestRank(t *testing.T) {
	mk := func(label string, caps ...float64) *Target {
		tg := &Target{Label: label}
		for _, c := range caps {
			s := Search{lo: c, hi: c * 1.01, Resolution: 0.05}
			tg.Searches = append(tg.Searches, s)
		}
		tg.Finish()
		return tg
	}
	a, b, c := mk("a", 100, 102, 98), mk("b", 101, 99, 103), mk("c", 200, 201, 199)
	cb := mk("cb", 500)
	cb.Searches[0].clientBound = true
	cb.Finish()
	cb2 := mk("cb2", 50)
	cb2.Searches[0].clientBound = true
	cb2.Finish()
	out := Rank([]*Target{a, b, cb, c, cb2})
	if out[0] != c || out[3] != cb || a.Capacity.Rank != 2 || b.Capacity.Rank != 2 || !a.Capacity.Tied || cb.Capacity.Rank != 4 ||
		cb2.Capacity.Rank != 4 || !cb.Capacity.Tied || !cb2.Capacity.Tied || c.Capacity.Tied {
		t.Fatalf("ranks: %s %+v, %s %+v, %s %+v, %s %+v", out[0].Label, out[0].Capacity, out[1].Label, out[1].Capacity, out[2].Label, out[2].Capacity, out[3].Label, out[3].Capacity)
	}
	if iv := sweep.IntervalOf([]float64{100, 102, 98}); a.Capacity.LoPerS != iv.Lo {
		t.Errorf("interval %+v, want %+v", a.Capacity, iv)
	}
}

// Targets are ranked by the ratio's test (sweep.Apart over the searches'
// capacities), also where ties do not chain: a (100 ± 1) and c (90 ± 1)
// are apart, b (95, sd 10) ties both: a =1, b 1–2, c =2, lettered a, ab, b.
func TestRankChainedTies(t *testing.T) {
	mk := func(label string, caps ...float64) *Target {
		tg := &Target{Label: label}
		for _, c := range caps {
			tg.Searches = append(tg.Searches, Search{lo: c, hi: c * 1.01, Resolution: 0.05})
		}
		tg.Finish()
		return tg
	}
	a, b, c := mk("a", 100, 101, 99), mk("b", 85, 95, 105), mk("c", 90, 91, 89)
	var got []string
	for _, tg := range Rank([]*Target{c, b, a}) {
		got = append(got, tg.Capacity.RankText()+" "+tg.Capacity.Group+" "+tg.Label)
	}
	if s := strings.Join(got, ", "); s != "=1 a a, 1–2 ab b, =2 b c" {
		t.Errorf("ranking %s", s)
	}
	if !sweep.Apart(a.Interval(), c.Interval()) || sweep.Apart(a.Interval(), b.Interval()) {
		t.Errorf("a/c must be apart, a/b not: %+v %+v %+v", a.Interval(), b.Interval(), c.Interval())
	}
}

// The step table has a non-2xx column beside failed (right-aligned under its
// heading), and the header states every objective, the default ones too.
func TestWriteTextNon2xxColumn(t *testing.T) {
	s := Search{Start: 100, MaxRate: 100, Resolution: 0.05}
	s.Record(Step{TargetPerS: 100, AchievedPerS: 100, Complete: 50, Failed: 3, Non2xx: 17, Kept: true})
	tg := &Target{Label: "a", URL: "http://127.0.0.1/", Searches: []Search{s}}
	tg.Finish()
	d := &Document{Objectives: []string{"p99<1s", "failed<0.1%", "non2xx<0.1%"}, MinAchieved: MinAchieved, Targets: []*Target{tg}}
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
		steps []Step
		want  string
	}{
		{nil, "interrupted: not measured"},
		{[]Step{{TargetPerS: 100}, {TargetPerS: 100}}, "interrupted: not measured"},
		{[]Step{{TargetPerS: 100, Pass: true}}, "at least 100 req/s (interrupted)"},
		{[]Step{{TargetPerS: 100, Pass: true}, {TargetPerS: 200}, {TargetPerS: 200}, {TargetPerS: 150, Pass: true}}, "at least 150 req/s (interrupted)"},
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
		tg := &Target{Searches: []Search{*s, *s}}
		tg.Finish()
		if tg.Capacity.Found || !tg.Capacity.Interrupted {
			t.Errorf("%d steps: summary %+v", len(c.steps), tg.Capacity)
		}
	}
	s := &Search{Start: 100, MaxRate: 100, Resolution: 0.05}
	s.Record(Step{TargetPerS: 100, Pass: true})
	s.Interrupt()
	if r := s.Result(); r.Interrupted || !r.ReachedMax {
		t.Errorf("a search that had ended: %+v", r)
	}
}
