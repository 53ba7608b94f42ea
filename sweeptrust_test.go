package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// pacedServer answers each request after a delay: delay(i) for the i-th
// request (from 0).
func pacedServer(t *testing.T, delay func(i int64) time.Duration) string {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := delay(n.Add(1) - 1)
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Length", "10")
		w.Write([]byte("0123456789"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// TestSweepRepeatAuto: --repeat auto stops a steady target once its req/s
// interval is within --ci of its mean, and runs a target whose speed
// alternates from run to run to the maximum, which the sweep then names.
//
// Both go at --rate 200/s, which sets how long a run takes whatever the
// machine does: a stall only delays requests the schedule then catches up
// (4 connections answered in 1 ms can do 4000/s), so the steady target's
// runs all take about 0.5 s and settle. The alternating target answers
// every other run's requests in 40 ms, which caps those runs at 100/s: its
// req/s alternate between about 200 and 100 or less, an interval near ±30 %
// after 8 runs, wider than --ci 15 %. (Without --rate, on a loaded machine
// the stalls alone kept a steady target's runs from settling.)
func TestSweepRepeatAuto(t *testing.T) {
	const n = 100 // requests per run: the alternating server switches every run
	steady := pacedServer(t, func(int64) time.Duration { return time.Millisecond })
	alternating := pacedServer(t, func(i int64) time.Duration {
		if (i/n)%2 == 0 {
			return time.Millisecond
		}
		return 40 * time.Millisecond
	})
	js := filepath.Join(t.TempDir(), "sweep.json")
	status, _, stderr := runGab(t, "ab", "sweep", "-n", "100", "-c", "4", "--rate", "200", "--repeat", "auto:8", "--ci", "15%", "--json", js,
		"steady="+steady, "alternating="+alternating)
	if status != 0 {
		t.Fatalf("status %d\n%s", status, stderr)
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Settings struct {
			Repeat     int     `json:"repeat"`
			RepeatAuto bool    `json:"repeat_auto"`
			CI         float64 `json:"ci"`
		} `json:"settings"`
		Points []struct {
			Label        string   `json:"label"`
			Repeats      int      `json:"repeats"`
			Planned      int      `json:"repeats_planned"`
			Complete     bool     `json:"complete"`
			StoppedAtMax bool     `json:"stopped_at_max"`
			Verdicts     []string `json:"verdicts"`
		} `json:"points"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if !d.Settings.RepeatAuto || d.Settings.Repeat != 8 || d.Settings.CI != 0.15 {
		t.Fatalf("settings %+v", d.Settings)
	}
	if len(d.Points) != 2 {
		t.Fatalf("%d points", len(d.Points))
	}
	for _, p := range d.Points {
		switch p.Label {
		case "steady":
			if p.Repeats >= 8 || p.Repeats < 3 || p.StoppedAtMax || !p.Complete || p.Planned != p.Repeats {
				t.Errorf("steady: %+v, want it settled in 3 to 7 runs\n%s", p, stderr)
			}
		case "alternating":
			if p.Repeats != 8 || !p.StoppedAtMax || !strings.Contains(strings.Join(p.Verdicts, ","), "wide_interval") {
				t.Errorf("alternating: %+v, want 8 runs, stopped at the maximum, flagged wide_interval\n%s", p, stderr)
			}
		}
	}
	for _, want := range []string{"--repeat auto: 1 of 2 points stopped at the maximum of 8 runs with their 95 % interval wider than ±15 %: alternating",
		"wide-interval: req/s ±", "runs] too-short: the run took"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
