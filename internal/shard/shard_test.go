package shard

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"gab/client"
)

func TestShareAddsUp(t *testing.T) {
	for total := 0; total < 60; total++ {
		for n := 1; n <= 9; n++ {
			sum, lo, hi := 0, total, 0
			for i := 0; i < n; i++ {
				s := Share(total, n, i)
				sum += s
				lo, hi = min(lo, s), max(hi, s)
			}
			if sum != total || hi-lo > 1 {
				t.Fatalf("Share(%d, %d): sum %d, spread %d..%d", total, n, sum, lo, hi)
			}
		}
	}
	for _, r := range []float64{7, 100, 1000.5, 3.3} {
		var sum float64
		for i := 0; i < 4; i++ {
			sum += RateShare(r, 4, i)
		}
		if r == 7 || r == 100 {
			if sum != r || RateShare(r, 4, 0) != float64(Share(int(r), 4, 0)) {
				t.Errorf("rate %v: integral shares sum to %v", r, sum)
			}
		} else if d := sum - r; d > 1e-9 || d < -1e-9 {
			t.Errorf("rate %v: shares sum to %v", r, sum)
		}
	}
}

func TestParseStartAt(t *testing.T) {
	want := time.Date(2030, 1, 2, 3, 4, 5, 500_000_000, time.UTC)
	for _, s := range []string{"2030-01-02T03:04:05.5Z", "2030-01-02T04:04:05.5+01:00", strconv.FormatInt(want.Unix(), 10) + ".5"} {
		got, err := parseStartAt(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseStartAt(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "tomorrow", "2030-01-02", "-5", "NaN"} {
		if _, err := parseStartAt(s); err == nil {
			t.Errorf("parseStartAt(%q) accepted", s)
		}
	}
}

func clearSchedulerEnv(t *testing.T) {
	for _, k := range []string{"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_STEP",
		"SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_JOB_ID", "JOB_COMPLETION_INDEX"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

func TestAutoShard(t *testing.T) {
	clearSchedulerEnv(t)
	if _, _, _, err := autoShard(0); err == nil || !strings.Contains(err.Error(), "not inside a scheduler") {
		t.Fatalf("outside a scheduler: %v", err)
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "7")
	t.Setenv("SLURM_ARRAY_TASK_MIN", "3")
	t.Setenv("SLURM_ARRAY_TASK_STEP", "2")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "4")
	t.Setenv("SLURM_ARRAY_JOB_ID", "1234")
	i, n, id, err := autoShard(0)
	if err != nil || i != 2 || n != 4 || id != "1234" {
		t.Fatalf("slurm: %d/%d %q %v", i, n, id, err)
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "11")
	if _, _, _, err := autoShard(0); err == nil {
		t.Fatal("task past the count accepted")
	}
	clearSchedulerEnv(t)
	t.Setenv("JOB_COMPLETION_INDEX", "2")
	if _, _, _, err := autoShard(0); err == nil || !strings.Contains(err.Error(), "--shards") {
		t.Fatalf("indexed job without --shards: %v", err)
	}
	i, n, _, err = autoShard(3)
	if err != nil || i != 2 || n != 3 {
		t.Fatalf("indexed job: %d/%d %v", i, n, err)
	}
}

// Apply refuses a run it cannot split, in one line, leaving the
// configuration as it was; else it gives the shard its shares.
func TestApplyRefusesAndShares(t *testing.T) {
	two := Plan{Index: 1, Count: 2, RunID: "r"}
	for _, c := range []struct {
		cfg  client.Config
		json bool
		want string
	}{
		{client.Config{Requests: 10, Concurrency: 4}, false, "--shard needs --json FILE (or --format json): gab merge combines the shards' JSON documents"},
		{client.Config{Requests: 10, Concurrency: 4, RateSchedule: []client.RatePhase{{}}}, true,
			"--shard cannot split a --rate schedule (a ramp or steps); give each machine its own --rate"},
		{client.Config{Requests: 10, Concurrency: 1}, true, "--shard 1/2: -c 1 is below the 2 shards: every shard needs at least one connection"},
		{client.Config{Requests: 10, Concurrency: 5, URLs: &client.URLList{Origins: make([]client.Origin, 3)}}, true,
			"--shard 1/2: -c 5 leaves a shard 2 connections for the list's 3 origins (scheme, host, port): each connection keeps to one origin, so -c must be at least 6"},
	} {
		cfg := c.cfg
		if err := two.Apply(&cfg, c.json, -1); err == nil || err.Error() != c.want || cfg.Requests != 10 || cfg.Concurrency != c.cfg.Concurrency {
			t.Errorf("got %v (-n %d -c %d), want %q", err, cfg.Requests, cfg.Concurrency, c.want)
		}
	}
	cfg := client.Config{Requests: 11, Concurrency: 5, Rate: 7}
	if err := (Plan{}).Apply(&cfg, false, -1); err != nil || cfg.Requests != 11 {
		t.Errorf("not a shard: %v, -n %d", err, cfg.Requests)
	}
	if err := two.Apply(&cfg, true, -1); err != nil || cfg.Requests != 5 || cfg.Concurrency != 2 || cfg.Rate != 3 {
		t.Errorf("shard 1/2 of -n 11 -c 5 --rate 7: %v, -n %d -c %d --rate %v", err, cfg.Requests, cfg.Concurrency, cfg.Rate)
	}
	cfg = client.Config{Requests: 99, Concurrency: 4, URLs: client.NewURLList(0)}
	cfg.URLs.Random, cfg.URLs.Seed = true, 7
	if err := two.Apply(&cfg, true, 99); err != nil || cfg.Requests != 99 || cfg.Concurrency != 2 {
		t.Errorf("uncapped: %v, -n %d -c %d", err, cfg.Requests, cfg.Concurrency)
	}
	if l := cfg.URLs; l.Part != 1 || l.Parts != 2 || l.Seed == 7 {
		t.Errorf("the URL list's share: part %d of %d, seed %d (want its own, not 7)", l.Part, l.Parts, l.Seed)
	}
	cfg = client.Config{Requests: 5, Concurrency: 2, URLs: client.NewURLList(0), Replay: []int64{0, 1, 2, 3, 4}}
	cfg.URLs.Replay = true
	if err := two.Apply(&cfg, true, 99); err != nil || cfg.Requests != 2 || fmt.Sprint(cfg.Replay) != "[1 3]" || cfg.URLs.Part != 1 {
		t.Errorf("replay: %v, -n %d, due %v, part %d", err, cfg.Requests, cfg.Replay, cfg.URLs.Part)
	}
}
