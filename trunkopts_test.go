package main

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// The next ab's options (-W, -R, -Q) parse with ab's getopt, attached or
// separate, in clusters, and reach the configuration.
func TestTrunkOptionsParse(t *testing.T) {
	o, status, done, _, stderr := parse(t, "ab", "-W", "3", "-R20", "-kQ", "-c", "4", "-n", "8", testURL)
	if done || status != exitOK {
		t.Fatalf("status %d done %v: %s", status, done, stderr)
	}
	cfg := o.Config
	if cfg.Workers != 3 || cfg.ConnectDelay != 20*time.Millisecond || !o.NoBanner || !cfg.KeepAlive {
		t.Errorf("-W 3 -R20 -kQ: Workers %d ConnectDelay %v NoBanner %v KeepAlive %v", cfg.Workers, cfg.ConnectDelay, o.NoBanner, cfg.KeepAlive)
	}
	o, _, _, _, _ = parse(t, "ab", testURL)
	if o.Config.Workers != 0 || o.Config.ConnectDelay != 0 || o.NoBanner {
		t.Errorf("defaults: Workers %d ConnectDelay %v NoBanner %v", o.Config.Workers, o.Config.ConnectDelay, o.NoBanner)
	}
}

// A -W below 1 or a negative -R is a usage error: one line naming it, ab's
// usage, exit 22.
func TestTrunkOptionErrors(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"ab", "-W", "0", testURL}, "ab: Invalid number of workers [at least 1]\n"},
		{[]string{"ab", "-Wx", testURL}, "ab: Invalid number of workers [at least 1]\n"},
		{[]string{"ab", "-R", "-5", testURL}, "ab: Invalid ramp delay [Range 0..86400000 ms]\n"},
	} {
		_, status, done, _, stderr := parse(t, c.argv...)
		if !done || status != exitUsage || !strings.HasPrefix(stderr, c.want+usageOf("ab")) {
			t.Errorf("%v: status %d done %v, stderr %q, want %q and the usage", c.argv, status, done, stderr, c.want)
		}
	}
}

// -h lists the next ab's options after ab 2.3's usage text, which stays a
// byte-exact prefix.
func TestHelpListsTrunkOptions(t *testing.T) {
	_, _, _, _, stderr := parse(t, "ab", "-h")
	rest, ok := strings.CutPrefix(stderr, usageOf("ab")+"\n")
	if !ok {
		t.Fatalf("-h does not start with ab's usage:\n%s", stderr)
	}
	for _, opt := range []string{"-W workers", "-R rampdelay", "-Q "} {
		if !strings.Contains(rest, "    "+opt) {
			t.Errorf("-h does not list %q after ab's usage", opt)
		}
	}
}

// A run with -Q prints no banner (and is otherwise ab's run); -W's threads
// are given back after the run.
func TestTrunkOptionsRun(t *testing.T) {
	url, hits := startDocServer(t)
	procs := runtime.GOMAXPROCS(0)
	status, stdout, stderr := runGab(t, "ab", "-Q", "-W", "1", "-R", "10", "-c", "2", "-n", "4", url+"/")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	if strings.Contains(stdout, "ApacheBench") || !strings.HasPrefix(stdout, "Benchmarking 127.0.0.1 (be patient)") {
		t.Errorf("-Q: stdout begins %q", stdout[:min(len(stdout), 120)])
	}
	if !strings.Contains(stdout, "Complete requests:      4\n") || hits.Load() != 4 {
		t.Errorf("-Q -W 1 -R 10: server saw %d requests; report:\n%s", hits.Load(), stdout)
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d after a -W 1 run, want %d as before", got, procs)
	}
	_, stdout, _ = runGab(t, "ab", "-n", "1", url+"/")
	if !strings.HasPrefix(stdout, "This is ApacheBench") {
		t.Errorf("without -Q: stdout begins %q", stdout[:min(len(stdout), 60)])
	}
}
