package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/internal/longopt"
)

// --rate's forms: a constant, a ramp FROM:TO/DURATION, steps R1,R2,... of
// --step each; a schedule without -t lasts its phases.
func TestRateSchedules(t *testing.T) {
	for _, c := range []struct {
		args   []string
		rate   float64
		phases []client.RatePhase
		limit  time.Duration
	}{
		{[]string{"--rate", "250", "-n", "10"}, 250, nil, 0},
		{[]string{"--rate", "100:5000/60s"}, 5000, []client.RatePhase{{From: 100, To: 5000, For: time.Minute}}, time.Minute},
		{[]string{"--rate", "1000,2000,4000", "--step", "10s"}, 4000,
			[]client.RatePhase{{From: 1000, To: 1000, For: 10 * time.Second}, {From: 2000, To: 2000, For: 10 * time.Second}, {From: 4000, To: 4000, For: 10 * time.Second}}, 30 * time.Second},
		{[]string{"--rate", "10,20"}, 20, []client.RatePhase{{From: 10, To: 10, For: 10 * time.Second}, {From: 20, To: 20, For: 10 * time.Second}}, 20 * time.Second},
		{[]string{"--rate", "10,20", "--step", "2", "-t", "5"}, 20, []client.RatePhase{{From: 10, To: 10, For: 2 * time.Second}, {From: 20, To: 20, For: 2 * time.Second}}, 5 * time.Second},
		// The range's ends are rates.
		{[]string{"--rate", "0.001", "-n", "10"}, client.MinRate, nil, 0},
		{[]string{"--rate", "1e9", "-n", "10"}, client.MaxRate, nil, 0},
		{[]string{"--rate", "0.001:1e9/1s"}, client.MaxRate, []client.RatePhase{{From: client.MinRate, To: client.MaxRate, For: time.Second}}, time.Second},
	} {
		o, status, done := parseArgs(append(append([]string{"gab"}, c.args...), "-c", "4", "http://127.0.0.1:1/"), &strings.Builder{}, &strings.Builder{})
		if done {
			t.Fatalf("%v: exit %d", c.args, status)
		}
		cfg := o.Config
		if cfg.Rate != c.rate || len(cfg.RateSchedule) != len(c.phases) || cfg.TimeLimit != c.limit {
			t.Errorf("%v: rate %v, schedule %v, -t %v", c.args, cfg.Rate, cfg.RateSchedule, cfg.TimeLimit)
			continue
		}
		for i, p := range c.phases {
			if cfg.RateSchedule[i] != p {
				t.Errorf("%v: phase %d %+v, want %+v", c.args, i, cfg.RateSchedule[i], p)
			}
		}
		if c.phases != nil && c.limit == client.ScheduleLength(c.phases) && cfg.Requests != uncappedRequests {
			t.Errorf("%v: -n %d, want no limit but the schedule's time", c.args, cfg.Requests)
		}
	}
}

func TestRateScheduleErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "0"}, "--rate must be a positive"},
		{[]string{"--rate", "x"}, "--rate must be a positive"},
		{[]string{"--rate", "100:0/10s"}, "a ramp is FROM:TO/DURATION"},
		{[]string{"--rate", "100:200"}, "a ramp is FROM:TO/DURATION"},
		{[]string{"--rate", "100:200/0s"}, "a ramp is FROM:TO/DURATION"},
		{[]string{"--rate", "100:200/10s", "--step", "1s"}, "--step is for a --rate list"},
		{[]string{"--rate", "100,-5"}, "every step must be a positive"},
		{[]string{"--rate", "100,200", "--step", "0"}, "--step must be a positive"},
		{[]string{"--rate", "100", "--step", "1s"}, "--step needs a --rate list"},
		{[]string{"--step", "1s"}, "--step needs a --rate list"},
		{[]string{"--rate", "1,2", "--shard", "1/2", "--run-id", "x", "--json", "/dev/null"}, "--shard cannot split a --rate schedule"},
		// Every rate is from client.MinRate to client.MaxRate: beyond them a
		// run lost its JSON document (1e307), sent nothing (a ramp to
		// 1e308) or never ended (1e-320).
		{[]string{"--rate", "1e307"}, "--rate 1e307: the rate must be " + longopt.RateRange},
		{[]string{"--rate", "1e-320"}, "--rate 1e-320: the rate must be " + longopt.RateRange},
		{[]string{"--rate", "0.0009"}, "the rate must be " + longopt.RateRange},
		{[]string{"--rate", "1000000001"}, "the rate must be " + longopt.RateRange},
		{[]string{"--rate", "1:1e308/1s"}, "a ramp's rates must be " + longopt.RateRange},
		{[]string{"--rate", "1e-9:10/1s"}, "a ramp's rates must be " + longopt.RateRange},
		{[]string{"--rate", "10,2e9"}, "every step must be " + longopt.RateRange},
		{[]string{"--rate", "10,1e-4", "--step", "1s"}, "every step must be " + longopt.RateRange},
		{[]string{"--rate", "1:2/2540400h"}, "a ramp lasts at most"},
		{[]string{"--rate", "1,2,3", "--step", "1000000h"}, "3 steps last more than"},
		// A step's figures are whole timeline intervals: --interval must
		// divide the steps, and a step must be one interval at least.
		{[]string{"--rate", "20,40", "--step", "0.5s", "--interval", "1s", "--extended"},
			"--interval 1s does not divide the --rate steps (their ends are multiples of 500ms): each step's figures need whole intervals; --interval 500ms does"},
		{[]string{"--rate", "20,40", "--step", "0.5s", "--interval", "300ms", "--json", "/dev/null"}, "--interval 250ms does"},
		{[]string{"--rate", "20,40", "--step", "50ms", "--extended"}, "--rate steps whose ends are multiples of 50ms cannot be cut into timeline intervals of at least 100ms"},
		// A ramp's end is a step's when the run goes on past it.
		{[]string{"--rate", "1:2/50ms", "-t", "1", "--hlog", "/dev/null"}, "multiples of 50ms"},
		{[]string{"--rate", "1:2/1.5s", "-t", "3", "--interval", "1s", "--extended"}, "--interval 750ms does"},
	} {
		var errb strings.Builder
		_, status, done := parseArgs(append(append([]string{"gab"}, c.args...), "-c", "4", "http://127.0.0.1:1/"), &strings.Builder{}, &errb)
		if !done || status != exitUsage || !strings.Contains(errb.String(), c.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want exit %d and one line with %q", c.args, status, errb.String(), exitUsage, c.want)
		}
	}
}

// The timeline's interval divides the steps when --interval is not given:
// steps of 0.5 s get 500 ms intervals, not the default 1 s (whose first
// interval held both steps' requests and left the second step none).
// Without a timeline to show, a step of any length is taken.
func TestRateStepsShorterThanTheInterval(t *testing.T) {
	url := extServer(t)
	doc := filepath.Join(t.TempDir(), "r.json")
	status, _, errs := runGab(t, "gab", "-k", "-c", "2", "--rate", "20,40", "--step", "0.5s", "--json", doc, url+"/")
	if status != 0 {
		t.Fatalf("exit %d: %s", status, errs)
	}
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Report struct {
			Complete int64 `json:"complete_requests"`
		} `json:"report"`
		Rate struct {
			Steps []struct {
				Requests  int64 `json:"requests"`
				Intervals int   `json:"intervals"`
			} `json:"steps"`
		} `json:"rate"`
		Timeline struct {
			IntervalUs int64 `json:"interval_us"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	s := d.Rate.Steps
	if d.Timeline.IntervalUs != 500_000 || len(s) != 2 || s[0].Intervals != 1 || s[1].Intervals != 1 {
		t.Fatalf("interval %d µs, steps %+v; want one 500 ms interval a step", d.Timeline.IntervalUs, s)
	}
	// The first step's slots are the first 10: a request of the second step
	// (due at 0.5 s or later) cannot end in the first. (A request that ends
	// past the schedule's end is in no step.)
	if s[0].Requests > 10 || s[0].Requests+s[1].Requests > d.Report.Complete {
		t.Errorf("steps %+v of %d requests: want at most 10 in the first", s, d.Report.Complete)
	}
	status, _, errs = runGab(t, "gab", "-k", "-c", "2", "--rate", "20,40", "--step", "50ms", url+"/")
	if status != 0 {
		t.Fatalf("a schedule of 50 ms steps without a timeline: exit %d: %s", status, errs)
	}
}

// A schedule's run reports each step: --extended's table and the JSON's
// rate.steps, the target and achieved rates and the latencies of each.
func TestRateStepsReported(t *testing.T) {
	url := extServer(t)
	dir := t.TempDir()
	doc := filepath.Join(dir, "r.json")
	status, out, errs := runGab(t, "gab", "-k", "-c", "4", "--rate", "40,120", "--step", "0.5s", "--interval", "250ms", "--extended", "--json", doc, url+"/")
	if status != 0 {
		t.Fatalf("exit %d: %s", status, errs)
	}
	if !strings.Contains(out, "Rate schedule by step") || !strings.Contains(out, "target/s") {
		t.Fatalf("no step table:\n%s", out)
	}
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Rate struct {
			Steps []struct {
				Target         float64 `json:"target_per_s"`
				Achieved       float64 `json:"achieved_per_s"`
				Requests       int64   `json:"requests"`
				Intervals      int     `json:"intervals"`
				CorrectedP99Us int64   `json:"corrected_p99_us"`
			} `json:"steps"`
		} `json:"rate"`
		Timeline struct {
			Intervals []struct {
				Target float64 `json:"target_per_s"`
			} `json:"intervals"`
		} `json:"timeline"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	s := d.Rate.Steps
	if len(s) != 2 || s[0].Target != 40 || s[1].Target != 120 || s[0].Intervals != 2 || s[1].Intervals < 1 {
		t.Fatalf("steps %+v", s)
	}
	// 20 requests due in the first step, 60 in the second. A request counts
	// in the step where it ends, and the run stops at the schedule's end, so
	// a loaded machine's late sends move requests out of the second step
	// (seen: 23 of its 60): the second step must outnumber the first, at a
	// third of its rate, not reach a count of its own.
	if s[0].Requests < 15 || s[0].Requests > 25 || s[1].Requests <= s[0].Requests || s[1].Requests > 60 || s[1].CorrectedP99Us <= 0 {
		t.Errorf("steps %+v", s)
	}
	if iv := d.Timeline.Intervals; len(iv) < 3 || iv[0].Target != 40 || iv[2].Target != 120 {
		t.Errorf("the timeline's targets %+v", iv)
	}
}
