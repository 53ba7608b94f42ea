package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gab/client"
	"gab/report"
)

// This file is sharded runs: --shard i/N (or auto, from a Slurm job array or a
// Kubernetes Indexed Job), --shards, --run-id and --start-at. Shard i of N
// runs its share of -n, -c and --rate (remainders spread over the first
// shards, so the shares add up to the totals exactly) and writes its JSON
// document with the shard index, the count, the run id and the whole run's
// options; `gab merge` (merge.go) checks them and combines the documents.

// shardFlags holds the sharding long options while they are parsed.
type shardFlags struct {
	shard, runID, startAt string
	shards                int
	startAtForce          bool
}

// maxStartAhead is how far ahead --start-at may be without --start-at-force:
// a time further ahead is more likely a typo (a year, a time zone, an epoch in
// milliseconds) than a wait anyone means.
const maxStartAhead = 24 * time.Hour

func addShardFlags(fs *pflag.FlagSet, f *shardFlags) {
	fs.StringVar(&f.shard, "shard", "", "run shard `i/N` of a sharded run (0 ≤ i < N), or auto (Slurm job array, or Kubernetes Indexed Job with --shards)")
	fs.IntVar(&f.shards, "shards", 0, "with --shard auto in a Kubernetes Indexed Job: the number of shards `N` (its completions)")
	fs.StringVar(&f.runID, "run-id", "", "the `ID` every shard of one run shares (default: the Slurm array job id, or derived from --start-at)")
	fs.StringVar(&f.startAt, "start-at", "", "wait until `TIME` (RFC 3339 or Unix seconds, at most 24h ahead) before starting, so that shards overlap")
	fs.BoolVar(&f.startAtForce, "start-at-force", false, "accept a --start-at more than 24h ahead")
}

// shardSpec is a shard's place in its run and the whole run's figures.
type shardSpec struct {
	Index, Count int
	RunID        string
	// The whole run's -n, -c and --rate, before the shares.
	Requests, Concurrency int
	Rate                  float64
}

// share is shard i's part of total when it is split over n shards: total/n,
// plus one for each of the first total%n shards.
func share(total, n, i int) int {
	s := total / n
	if i < total%n {
		s++
	}
	return s
}

// rateShare is shard i's part of a --rate of r requests per second. An
// integral rate is split like a count (the shares are whole and add up to r
// exactly); any other rate is divided evenly.
func rateShare(r float64, n, i int) float64 {
	if r == math.Trunc(r) && r >= float64(n) && r <= math.MaxInt32 {
		return float64(share(int(r), n, i))
	}
	return r / float64(n)
}

// parseShard reads --shard's i/N.
func parseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("--shard wants i/N (such as 0/4) or auto, not %q", s)
	}
	if n < 1 {
		return 0, 0, fmt.Errorf("--shard %s: the number of shards must be at least 1", s)
	}
	if i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %s: shards are numbered from 0, so i must be from 0 to %d", s, n-1)
	}
	return i, n, nil
}

// autoShard finds the shard from the scheduler's environment: a Slurm job
// array (SLURM_ARRAY_TASK_ID, _MIN, _STEP and _COUNT; the run id defaults to
// SLURM_ARRAY_JOB_ID) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with
// the count from --shards).
func autoShard(shards int) (i, n int, runID string, err error) {
	if id := os.Getenv("SLURM_ARRAY_TASK_ID"); id != "" {
		num := func(name, def string) (int, error) {
			v := os.Getenv(name)
			if v == "" {
				v = def
			}
			x, err := strconv.Atoi(v)
			if err != nil {
				return 0, fmt.Errorf("--shard auto: %s=%q is not a number", name, v)
			}
			return x, nil
		}
		task, err := num("SLURM_ARRAY_TASK_ID", "")
		if err != nil {
			return 0, 0, "", err
		}
		lo, err := num("SLURM_ARRAY_TASK_MIN", "0")
		if err != nil {
			return 0, 0, "", err
		}
		step, err := num("SLURM_ARRAY_TASK_STEP", "1")
		if err != nil {
			return 0, 0, "", err
		}
		if os.Getenv("SLURM_ARRAY_TASK_COUNT") == "" {
			return 0, 0, "", fmt.Errorf("--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not")
		}
		n, err = num("SLURM_ARRAY_TASK_COUNT", "")
		if err != nil {
			return 0, 0, "", err
		}
		if step < 1 || (task-lo)%step != 0 {
			return 0, 0, "", fmt.Errorf("--shard auto: Slurm array task %d is not on the array's steps (min %d, step %d)", task, lo, step)
		}
		i = (task - lo) / step
		if n < 1 || i < 0 || i >= n {
			return 0, 0, "", fmt.Errorf("--shard auto: Slurm array task %d (min %d, step %d) is not one of %d tasks: submit the array as --array=0-%d", task, lo, step, n, n-1)
		}
		if shards != 0 && shards != n {
			return 0, 0, "", fmt.Errorf("--shards %d differs from the Slurm array's %d tasks", shards, n)
		}
		return i, n, os.Getenv("SLURM_ARRAY_JOB_ID"), nil
	}
	if idx := os.Getenv("JOB_COMPLETION_INDEX"); idx != "" {
		i, err := strconv.Atoi(idx)
		if err != nil {
			return 0, 0, "", fmt.Errorf("--shard auto: JOB_COMPLETION_INDEX=%q is not a number", idx)
		}
		if shards < 1 {
			return 0, 0, "", fmt.Errorf("--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but --shards N is not: give the Job's completions")
		}
		if i < 0 || i >= shards {
			return 0, 0, "", fmt.Errorf("--shard auto: JOB_COMPLETION_INDEX %d is not below --shards %d", i, shards)
		}
		return i, shards, "", nil
	}
	return 0, 0, "", fmt.Errorf("--shard auto: not inside a scheduler: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set; give --shard i/N")
}

// parseStartAt reads --start-at: RFC 3339 (fractional seconds allowed) or
// Unix seconds (fractional allowed).
func parseStartAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	secs, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(secs) || math.IsInf(secs, 0) || secs < 0 || secs > 1e11 {
		return time.Time{}, fmt.Errorf("--start-at wants RFC 3339 (2026-01-02T15:04:05Z) or Unix seconds, not %q", s)
	}
	whole, frac := math.Modf(secs)
	return time.Unix(int64(whole), int64(math.Round(frac*1e9))), nil
}

// applyShard checks the sharding options against the rest of the command line
// and gives this process its shares. It runs after ab's checks.
func (o *cliOptions) applyShard(f *shardFlags, now time.Time, stderr io.Writer) (status int, done bool) {
	fail := func(format string, args ...any) (int, bool) {
		fmt.Fprintf(stderr, "gab: "+format+"\n", args...)
		return exitUsage, true
	}
	if f.startAt != "" {
		t, err := parseStartAt(f.startAt)
		if err != nil {
			return fail("%v", err)
		}
		if !t.After(now) {
			return fail("--start-at %s is in the past (it is now %s): every shard must be able to wait for it",
				t.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339))
		}
		if ahead := t.Sub(now); ahead > maxStartAhead && !f.startAtForce {
			return fail("--start-at %s is %s ahead, more than %v: add --start-at-force to wait that long",
				t.UTC().Format(time.RFC3339Nano), aheadText(ahead), maxStartAhead)
		}
		o.StartAt = t
	} else if f.startAtForce {
		return fail("--start-at-force only goes with --start-at")
	}
	if f.shard == "" {
		switch {
		case f.shards != 0:
			return fail("--shards only goes with --shard auto")
		case f.runID != "":
			return fail("--run-id only goes with --shard")
		}
		return exitOK, false
	}
	var (
		i, n  int
		runID string
		err   error
	)
	if f.shard == "auto" {
		i, n, runID, err = autoShard(f.shards)
	} else {
		if f.shards != 0 {
			return fail("--shards only goes with --shard auto (--shard %s gives the count)", f.shard)
		}
		i, n, err = parseShard(f.shard)
	}
	if err != nil {
		return fail("%v", err)
	}
	if f.runID != "" {
		runID = f.runID
	}
	if runID == "" && !o.StartAt.IsZero() {
		runID = "start-" + strconv.FormatInt(o.StartAt.UnixNano(), 10)
	}
	if runID == "" {
		return fail("--shard needs an id that every shard of the run shares: give --run-id ID (or --start-at TIME)")
	}
	if o.JSONFile == "" && o.Format != "json" {
		return fail("--shard needs --json FILE (or --format json): gab merge combines the shards' JSON documents")
	}
	cfg := &o.Config
	if len(cfg.RateSchedule) > 0 {
		return fail("--shard cannot split a --rate schedule (a ramp or steps); give each machine its own --rate")
	}
	if cfg.Concurrency < n {
		return fail("--shard %d/%d: -c %d is below the %d shards: every shard needs at least one connection", i, n, cfg.Concurrency, n)
	}
	o.Shard = &shardSpec{Index: i, Count: n, RunID: runID,
		Requests: cfg.Requests, Concurrency: cfg.Concurrency, Rate: cfg.Rate}
	if cfg.Requests != uncappedRequests {
		cfg.Requests = share(cfg.Requests, n, i)
	}
	cfg.Concurrency = share(cfg.Concurrency, n, i)
	if cfg.Rate > 0 {
		cfg.Rate = rateShare(cfg.Rate, n, i)
	}
	if o.Progress > 0 {
		o.Progress = client.ProgressInterval(cfg.Requests, false)
		cfg.Quiet = o.Progress == 0
	}
	return exitOK, false
}

// aheadText is how long a wait is, in whole seconds (in days past two days).
func aheadText(d time.Duration) string {
	if d > 48*time.Hour {
		return fmt.Sprintf("%.1f days", d.Hours()/24)
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// noteStartAt tells a user at a terminal that gab waits for --start-at, and
// how long. ab has no such wait; when stderr is not a terminal nothing is
// written (scripts see ab's output).
func noteStartAt(stderr io.Writer, at, now time.Time) {
	if at.IsZero() || !isTerminal(stderr) {
		return
	}
	fmt.Fprintf(stderr, "gab: waiting until %s (in %s) for --start-at\n", at.UTC().Format(time.RFC3339Nano), aheadText(at.Sub(now)))
}

// waitForStart sleeps until --start-at. It reports false when ctx ended first
// (the user interrupted the wait).
func waitForStart(ctx context.Context, at time.Time) bool {
	if at.IsZero() {
		return true
	}
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// runInfo is what the JSON document records about the command line (nil
// when no JSON document is written: then the report gathers no sums).
func runInfo(o *cliOptions) *report.RunInfo {
	if o.JSONFile == "" && o.Format != "json" {
		return nil
	}
	cfg := &o.Config
	h := sha256.New()
	h.Write(cfg.Request)
	h.Write(cfg.Spec.Body)
	r := &report.RunInfo{
		URL: o.URL, Method: cfg.Spec.Method, RequestSHA256: hex.EncodeToString(h.Sum(nil)),
		Protocol: cfg.Protocol.String(), Requests: cfg.Requests, Concurrency: cfg.Concurrency,
		RatePerS: cfg.Rate, TimeLimitS: cfg.TimeLimit.Seconds(), TLS: cfg.Target.TLS,
	}
	return r
}

// shardInfo is the JSON document's shard section of a --shard command line
// (nil without --shard).
func shardInfo(o *cliOptions) *report.Shard {
	sh := o.Shard
	if sh == nil {
		return nil
	}
	out := &report.Shard{Index: sh.Index, Count: sh.Count, RunID: sh.RunID,
		TotalRequests: sh.Requests, TotalConcurrency: sh.Concurrency, TotalRatePerS: sh.Rate}
	if !o.StartAt.IsZero() {
		out.StartAt = o.StartAt.UTC().Format(time.RFC3339Nano)
	}
	return out
}
