package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCalibrate: gab calibrate measures every mode against both targets,
// the round trip, the latency it adds and the clock, prints the rule, and
// writes the file later runs read (a short run: --requests).
func TestCalibrate(t *testing.T) {
	bin := buildGab(t)
	cache := t.TempDir()
	cmd := exec.Command(bin, "calibrate", "--requests", "300")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("took %v", d)
	}
	for _, want := range []string{"Clock resolution:", "Loopback round trip:", "Latency gab adds:", "HTTP/1 keep-alive (-k -c 8)",
		"h2 over TLS", "Rule: HTTP/1 keep-alive (-k -c 8) above", "Written to " + filepath.Join(cache, "gab", "calibration.json")} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(cache, "gab", "calibration.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c calibration
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Schema != calibrationSchema || c.ClockNs <= 0 || c.LoopbackRTTUs <= 0 || c.GabLatencyUs <= 0 || len(c.Modes) != 7 {
		t.Fatalf("%+v", c)
	}
	for _, m := range c.Modes {
		if m.Error != "" || m.RPS <= 0 || m.RPSPerCore <= 0 {
			t.Errorf("mode %+v", m)
		}
	}
	for _, k := range []string{"h1_keepalive", "h1_close", "https_keepalive", "h2"} {
		if c.Ceiling[k] <= 0 {
			t.Errorf("no ceiling for %s: %v", k, c.Ceiling)
		}
	}
}

// TestCalibratedCeilingMakesClientBound: a run at this machine's calibrated
// ceiling (a file claiming 10 req/s per core) is reported client-bound with
// the calibration named; a run of another kind (no keep-alive) is not
// compared with the keep-alive ceiling.
func TestCalibratedCeilingMakesClientBound(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	c := calibration{Schema: calibrationSchema, SchemaVersion: 1, Ceiling: map[string]float64{"h1_keepalive": 10}}
	b, _ := json.Marshal(c)
	if err := os.MkdirAll(filepath.Join(cache, "gab"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "gab", "calibration.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	url := extServer(t)
	for _, keep := range []bool{true, false} {
		js := filepath.Join(t.TempDir(), "run.json")
		args := []string{"ab", "-n", "300", "-c", "2", "--json", js, url + "/"}
		if keep {
			args = append([]string{"ab", "-k"}, args[1:]...)
		}
		status, _, errs := runGab(t, args...)
		if status != 0 {
			t.Fatalf("status %d: %s", status, errs)
		}
		d := readVerdicts(t, js)
		v := d.find("client_bound")
		named := v != nil && strings.Contains(v.Message, "gab calibrate: 10 req/s per core")
		if named != keep {
			t.Fatalf("keep-alive %v: verdict %+v", keep, v)
		}
	}
}

// gab calibrate's bad options are one line that names them, exit 22.
func TestCalibrateOptionErrors(t *testing.T) {
	for _, c := range [][]string{{"--seconds", "0"}, {"--requests", "5"}, {"--bogus"}, {"extra"}} {
		status, stdout, stderr := runGab(t, append([]string{"gab", "calibrate"}, c...)...)
		if status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, strings.TrimLeft(c[0], "-")) {
			t.Errorf("%q: status %d, stdout %q, stderr %q", c, status, stdout, stderr)
		}
	}
}

// An --out path that cannot be written stops gab calibrate before it
// measures anything.
func TestCalibrateUnwritableOut(t *testing.T) {
	out := filepath.Join(t.TempDir(), "missing", "cal.json")
	status, stdout, stderr := runGab(t, "gab", "calibrate", "--requests", "10", "--out", out)
	if status != exitError || stdout != "" || !strings.Contains(stderr, "--out "+out+": cannot write there") {
		t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Dir(out)); err == nil {
		t.Fatal("--out's directory was made")
	}
}
