// Package shard is gab's sharded runs: --shard i/N (or auto, from a Slurm
// job array or a Kubernetes Indexed Job), --shards, --run-id and --start-at.
// Shard i of N runs its share of -n, -c and --rate (remainders spread over
// the first shards, so the shares add up to the totals exactly), starts a
// --urls or --targets list at its own line (Plan.Apply), and writes
// its JSON document with the shard index, the count, the run id and the
// whole run's options; gab merge checks them and combines the documents.
package shard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Flags hold the sharding long options while they are parsed.
type Flags struct {
	Shard, RunID, StartAt string
	Shards                int
	StartAtForce          bool
}

// maxStartAhead is how far ahead --start-at may be without --start-at-force:
// a time further ahead is more likely a typo (a year, a time zone, an epoch in
// milliseconds) than a wait anyone means.
const maxStartAhead = 24 * time.Hour

// AddFlags registers the sharding options.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Shard, "shard", "", "run shard `i/N` of a sharded run (0 ≤ i < N), or auto (Slurm job array, or Kubernetes Indexed Job with --shards); --urls and --targets start at the fraction i/N of the list, --replay takes every N-th line from line i")
	fs.IntVar(&f.Shards, "shards", 0, "with --shard auto in a Kubernetes Indexed Job: the number of shards `N` (its completions)")
	fs.StringVar(&f.RunID, "run-id", "", "the `ID` every shard of one run shares (default: the Slurm array job id, or derived from --start-at)")
	fs.StringVar(&f.StartAt, "start-at", "", "wait until `TIME` (RFC 3339 or Unix seconds, at most 24h ahead) before starting, so that shards overlap")
	fs.BoolVar(&f.StartAtForce, "start-at-force", false, "accept a --start-at more than 24h ahead")
}

// Plan is what the sharding options say: when to start (zero: at once) and
// this process's shard (Count 0: not a shard).
type Plan struct {
	StartAt      time.Time
	Index, Count int
	RunID        string
}

// Plan checks the sharding options against each other at now and says
// what they ask for; an error is the message to print.
func (f *Flags) Plan(now time.Time) (Plan, error) {
	var p Plan
	if f.StartAt != "" {
		t, err := parseStartAt(f.StartAt)
		if err != nil {
			return p, err
		}
		if !t.After(now) {
			return p, fmt.Errorf("--start-at %s is in the past (it is now %s): every shard must be able to wait for it",
				t.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339))
		}
		if ahead := t.Sub(now); ahead > maxStartAhead && !f.StartAtForce {
			return p, fmt.Errorf("--start-at %s is %s ahead, more than %v: add --start-at-force to wait that long",
				t.UTC().Format(time.RFC3339Nano), AheadText(ahead), maxStartAhead)
		}
		p.StartAt = t
	} else if f.StartAtForce {
		return p, errors.New("--start-at-force only goes with --start-at")
	}
	if f.Shard == "" {
		switch {
		case f.Shards != 0:
			return p, errors.New("--shards only goes with --shard auto")
		case f.RunID != "":
			return p, errors.New("--run-id only goes with --shard")
		}
		return p, nil
	}
	var err error
	if f.Shard == "auto" {
		p.Index, p.Count, p.RunID, err = autoShard(f.Shards)
	} else {
		if f.Shards != 0 {
			return p, fmt.Errorf("--shards only goes with --shard auto (--shard %s gives the count)", f.Shard)
		}
		p.Index, p.Count, err = parseShard(f.Shard)
	}
	if err != nil {
		return Plan{}, err
	}
	if f.RunID != "" {
		p.RunID = f.RunID
	}
	if p.RunID == "" && !p.StartAt.IsZero() {
		p.RunID = "start-" + strconv.FormatInt(p.StartAt.UnixNano(), 10)
	}
	if p.RunID == "" {
		return Plan{}, errors.New("--shard needs an id that every shard of the run shares: give --run-id ID (or --start-at TIME)")
	}
	return p, nil
}

// Share is shard i's part of total when it is split over n shards: total/n,
// plus one for each of the first total%n shards.
func Share(total, n, i int) int {
	s := total / n
	if i < total%n {
		s++
	}
	return s
}

// RateShare is shard i's part of a --rate of r requests per second. An
// integral rate is split like a count (the shares are whole and add up to r
// exactly); any other rate is divided evenly.
func RateShare(r float64, n, i int) float64 {
	if r == math.Trunc(r) && r >= float64(n) && r <= math.MaxInt32 {
		return float64(Share(int(r), n, i))
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

// AheadText is how long a wait is, in whole seconds (in days past two days).
func AheadText(d time.Duration) string {
	if d > 48*time.Hour {
		return fmt.Sprintf("%.1f days", d.Hours()/24)
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// WaitForStart sleeps until --start-at. It reports false when ctx ended first
// (the user interrupted the wait).
func WaitForStart(ctx context.Context, at time.Time) bool {
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
