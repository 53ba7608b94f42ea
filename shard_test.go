package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"gab/internal/runcmd"
)

func clearSchedulerEnv(t *testing.T) {
	for _, k := range []string{"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_STEP",
		"SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_JOB_ID", "JOB_COMPLETION_INDEX"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// TestShardBadInput: each mistake is a clear message and exit 22, before any request.
func TestShardBadInput(t *testing.T) {
	clearSchedulerEnv(t)
	url, hits := startDocServer(t)
	js := filepath.Join(t.TempDir(), "s.json")
	past := strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "4/4"}, "shards are numbered from 0, so i must be from 0 to 3"},
		{[]string{"--shard", "1/0"}, "at least 1"},
		{[]string{"--shard", "x"}, "wants i/N"},
		{[]string{"--shard", "auto"}, "not inside a scheduler"},
		{[]string{"--shards", "3"}, "--shards only goes with --shard auto"},
		{[]string{"--shard", "0/2"}, "needs an id"},
		{[]string{"--run-id", "r"}, "--run-id only goes with --shard"},
		{[]string{"--shard", "0/8", "--run-id", "r"}, "-c 4 is below the 8 shards"},
		{[]string{"--start-at", past}, "is in the past"},
		{[]string{"--start-at", "soon"}, "--start-at wants RFC 3339"},
	} {
		argv := append([]string{"gab", "-n", "8", "-c", "4", "--json", js}, c.args...)
		status, _, stderr := runArgs(t, t.Context(), append(argv, url+"/")...)
		if status != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: status %d, stderr %q; want 22 and %q", c.args, status, stderr, c.want)
		}
	}
	status, _, stderr := runArgs(t, t.Context(), "gab", "-n", "8", "--shard", "0/1", "--run-id", "r", url+"/")
	if status != exitUsage || !strings.Contains(stderr, "needs --json FILE") {
		t.Errorf("--shard without --json: %d %q", status, stderr)
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests sent by rejected command lines", hits.Load())
	}
}

// TestShardRunsItsShare: shard 1 of 3 of -n 10 -c 4 sends 3 requests on 1
// connection, waits for --start-at, and its document says where it belongs.
func TestShardRunsItsShare(t *testing.T) {
	url, hits := startDocServer(t)
	js := filepath.Join(t.TempDir(), "shard-1.json")
	at := time.Now().Add(300 * time.Millisecond)
	status, stdout, stderr := runArgs(t, t.Context(), "gab", "-n", "10", "-c", "4", "--shard", "1/3",
		"--start-at", at.UTC().Format(time.RFC3339Nano), "--json", js, url+"/")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	if time.Now().Before(at) {
		t.Error("the run ended before --start-at")
	}
	if hits.Load() != 3 || !strings.Contains(stdout, "Complete requests:      3\n") || !strings.Contains(stdout, "Concurrency Level:      1\n") {
		t.Errorf("hits %d, report:\n%s", hits.Load(), stdout)
	}
	d := readRun(t, js)
	sh := d.Shard
	if sh == nil || sh.Index != 1 || sh.Count != 3 || sh.RunID != "start-"+strconv.FormatInt(at.UnixNano(), 10) ||
		sh.TotalRequests != 10 || sh.TotalConcurrency != 4 || sh.StartDelayUs == nil || *sh.StartDelayUs < 0 {
		t.Errorf("shard section %+v", sh)
	}
	if d.Run == nil || d.Run.Requests != 3 || d.Run.Concurrency != 1 || d.Sums == nil || d.Sums.Total.Count != 3 {
		t.Errorf("run %+v sums %+v", d.Run, d.Sums)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(js), ".*tmp*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// --start-at more than 24 h ahead is refused (a typo, most likely) unless
// --start-at-force says it is meant; --start-at-force alone is refused.
func TestStartAtBound(t *testing.T) {
	clearSchedulerEnv(t)
	far := time.Now().Add(74 * 365 * 24 * time.Hour).Unix()
	farText := strconv.FormatInt(far, 10)
	_, status, done, stdout, stderr := parse(t, "ab", "--start-at", farText, testURL)
	if !done || status != exitUsage || stdout != "" || !oneLineNaming(stderr, "gab: --start-at ", "add --start-at-force to wait that long") ||
		!strings.Contains(stderr, " days ahead, more than 24h0m0s") {
		t.Errorf("74 years ahead: status %d done %v stderr %q", status, done, stderr)
	}
	o, status, done, _, stderr := parse(t, "ab", "--start-at", farText, "--start-at-force", testURL)
	if done || status != exitOK || o.StartAt.Unix() != far {
		t.Errorf("with --start-at-force: status %d done %v start %v stderr %q", status, done, o.StartAt, stderr)
	}
	soon := strconv.FormatInt(time.Now().Add(23*time.Hour).Unix(), 10)
	if o, _, done, _, stderr := parse(t, "ab", "--start-at", soon, testURL); done || o.StartAt.IsZero() {
		t.Errorf("23 h ahead refused: %q", stderr)
	}
	_, status, done, _, stderr = parse(t, "ab", "--start-at-force", testURL)
	if !done || status != exitUsage || stderr != "gab: --start-at-force only goes with --start-at\n" {
		t.Errorf("--start-at-force alone: status %d stderr %q", status, stderr)
	}
}

// On a terminal, gab says on stderr when --start-at's wait begins and how
// long it is, before ab's first line; elsewhere it says nothing.
func TestStartAtNoteOnATerminal(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	var b bytes.Buffer
	runcmd.NoteStartAt(&runcmd.SyncWriter{W: &b}, at, at.Add(-192*time.Second))
	if b.Len() != 0 {
		t.Errorf("note without a terminal: %q", b.String())
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no pseudo-terminal: %v", err)
		}
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	read := make(chan string, 1)
	go func() {
		got, _ := io.ReadAll(ptmx) // ends with EIO once the terminal side is closed
		read <- string(got)
	}()
	runcmd.NoteStartAt(&runcmd.SyncWriter{W: tty}, at, at.Add(-192*time.Second))
	// A whole run: the note comes before the run, which waits for --start-at.
	url, hits := startDocServer(t)
	start := time.Now().Add(300 * time.Millisecond)
	var out bytes.Buffer
	status := run(t.Context(), []string{"gab", "-n", "1", "--start-at", start.UTC().Format(time.RFC3339Nano), url + "/"}, &out, tty)
	tty.Close()
	got := <-read
	if status != 0 || hits.Load() != 1 {
		t.Fatalf("run: status %d, %d requests, stderr %q", status, hits.Load(), got)
	}
	want := "gab: waiting until 2030-01-02T03:04:05Z (in 3m12s) for --start-at\r\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("terminal got %q, want it to start with %q", got, want)
	}
	if n := strings.Count(got, "gab: waiting until "+start.UTC().Format(time.RFC3339Nano)+" (in "); n != 1 {
		t.Errorf("the run's note is there %d times in %q", n, got)
	}
}

// Two shards of a 10-line list, -n 10 -c 2 (5 requests on one connection
// each): in turn, shard 0 starts at the list's first line and shard 1 at
// its sixth, so together they send every URL once, as one run does, where
// both used to send the first five; at random, each shard draws its own
// sequence (the same one again for the same --seed).
func TestShardURLsSplitTheList(t *testing.T) {
	clearSchedulerEnv(t)
	rec := newPathRecorder(t)
	var urls, tgts strings.Builder
	var want []string
	for i := range 10 {
		fmt.Fprintf(&urls, "%s/p%d\n", rec.srv.URL, i)
		fmt.Fprintf(&tgts, "GET %s/p%d\n\n", rec.srv.URL, i)
		want = append(want, fmt.Sprintf("/p%d", i))
	}
	lists := map[string]string{"--urls": writeFile(t, "urls.txt", urls.String()), "--targets": writeFile(t, "targets.txt", tgts.String())}
	dir := t.TempDir()
	shardRun := func(i int, extra ...string) []string {
		t.Helper()
		rec.reset()
		argv := append([]string{"ab", "-n", "10", "-c", "2", "--shard", strconv.Itoa(i) + "/2", "--run-id", "r",
			"--json", filepath.Join(dir, "s.json")}, extra...)
		if status, _, stderr := runGab(t, argv...); status != 0 {
			t.Fatalf("%v: status %d: %s", argv, status, stderr)
		}
		return rec.seen()
	}
	for _, opt := range []string{"--urls", "--targets"} {
		a, b := shardRun(0, opt, lists[opt]), shardRun(1, opt, lists[opt])
		if got := strings.Join(append(a, b...), " "); got != strings.Join(want, " ") {
			t.Errorf("%s in turn: shard 0 sent %v, shard 1 %v; want %v then %v", opt, a, b, want[:5], want[5:])
		}
	}
	random := []string{"--urls", lists["--urls"], "--url-order", "random", "--seed", "7"}
	a, b, again := shardRun(0, random...), shardRun(1, random...), shardRun(1, random...)
	if len(a) != 5 || strings.Join(a, " ") == strings.Join(b, " ") || strings.Join(b, " ") != strings.Join(again, " ") {
		t.Errorf("at random: shard 0 sent %v, shard 1 %v and again %v; want two sequences, the same one again", a, b, again)
	}
}

// Two shards of a 10-line --replay log, -c 2 (one connection each): shard
// i replays lines i, i+2, ... at their recorded times, so together the
// shards replay the log once, as one run does, where both used to send its
// first five lines.
func TestShardReplaySplitsTheLog(t *testing.T) {
	clearSchedulerEnv(t)
	rec := newPathRecorder(t)
	var log strings.Builder
	for i := range 10 {
		fmt.Fprintf(&log, "127.0.0.1 - - [10/Oct/2000:13:55:%02d -0700] \"GET /p%d HTTP/1.0\" 200 10\n", 30+i/5, i)
	}
	file := writeFile(t, "access.log", log.String())
	dir := t.TempDir()
	var got [2][]string
	for i := range 2 {
		rec.reset()
		js := filepath.Join(dir, strconv.Itoa(i)+".json")
		status, stdout, stderr := runGab(t, "ab", "-c", "2", "--replay", file, "--replay-speed", "10",
			"--shard", strconv.Itoa(i)+"/2", "--run-id", "r", "--json", js, rec.srv.URL+"/")
		if status != 0 {
			t.Fatalf("shard %d: status %d: %s", i, status, stderr)
		}
		wantLines(t, stdout, "Complete requests:      5")
		got[i] = rec.seen()
	}
	if a, b := strings.Join(got[0], " "), strings.Join(got[1], " "); a != "/p0 /p2 /p4 /p6 /p8" || b != "/p1 /p3 /p5 /p7 /p9" {
		t.Errorf("shard 0 replayed %s, shard 1 %s; want the even lines, then the odd", a, b)
	}
}

// A list's origins each need a connection of every shard: -c too small to
// give the smallest shard one per origin is a usage error naming the -c
// that is enough, for every shard alike, where shard 1 used to fail at the
// start of its run ("gab: gab: --urls names more origins than -c
// connections", exit 1).
func TestShardBelowTheListsOrigins(t *testing.T) {
	clearSchedulerEnv(t)
	js := filepath.Join(t.TempDir(), "s.json")
	file := writeFile(t, "urls.txt", "http://127.0.0.1:9/a\nhttp://127.0.0.2:9/b\nhttp://127.0.0.3:9/c\n")
	for _, i := range []string{"0/2", "1/2"} {
		_, status, done, _, stderr := parse(t, "ab", "-n", "12", "-c", "5", "--urls", file, "--shard", i, "--run-id", "r", "--json", js)
		want := "gab: --shard " + i + ": -c 5 leaves a shard 2 connections for the list's 3 origins (scheme, host, port): each connection keeps to one origin, so -c must be at least 6\n"
		if !done || status != exitUsage || stderr != want {
			t.Errorf("shard %s: status %d done %v stderr %q, want 22 and %q", i, status, done, stderr, want)
		}
	}
	if o, _, done, _, stderr := parse(t, "ab", "-n", "12", "-c", "6", "--urls", file, "--shard", "1/2", "--run-id", "r", "--json", js); done || o.Config.Concurrency != 3 {
		t.Errorf("-c 6: done %v, -c %d, stderr %q", done, o.Config.Concurrency, stderr)
	}
}
