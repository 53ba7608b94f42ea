package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gab/internal/calibrate"
	"gab/internal/hoststat"
	"gab/internal/testtool"
)

// TestCalibrate: gab calibrate measures every mode against both targets,
// the round trip, the latency it adds and the clock, prints the rule, and
// writes the file later runs read (a short run: --requests).
func TestCalibrate(t *testing.T) {
	bin := buildGab(t)
	cache := t.TempDir()
	cmd := exec.Command(bin, "calibrate", "--requests", "300", "--force") // the machine may be busy: TestCalibrateBusyMachine
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("took %v", d)
	}
	for _, want := range []string{"Other processes used ", "Clock resolution:", "Loopback round trip:", "Latency gab adds:", "HTTP/1 keep-alive (-k -c 8)",
		"h2 over TLS", "Rule: HTTP/1 keep-alive (-k -c 8) above", "Written to " + filepath.Join(cache, "gab", "calibration.json")} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(cache, "gab", "calibration.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c calibrate.Calibration
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Schema != calibrate.Schema || c.ClockNs <= 0 || c.LoopbackRTTUs <= 0 || c.GabLatencyUs <= 0 || len(c.Modes) != 7 {
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
	c := calibrate.Calibration{Schema: calibrate.Schema, SchemaVersion: 1, Ceiling: map[string]float64{"h1_keepalive": 10}}
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

// A FIFO at the calibration file, which nothing writes, does not hold a
// run: the file is opened without blocking and read only if it is a
// regular file. Before, every run (a plain ab run too) waited in open(2)
// after its last request, and a SIGINT did not end the wait.
func TestCalibrationFIFODoesNotHoldARun(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	if err := os.MkdirAll(filepath.Join(cache, "gab"), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := testtool.MakeFIFO(t, filepath.Join(cache, "gab"), "calibration.json")
	url := extServer(t)
	type result struct {
		status   int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		status := run(t.Context(), []string{"ab", "-k", "-n", "20", "-c", "2", url + "/"}, &out, &errb)
		done <- result{status, out.String(), errb.String()}
	}()
	select {
	case r := <-done:
		if r.status != 0 || !strings.Contains(r.out, "Complete requests:      20") {
			t.Fatalf("status %d, stderr %q\n%s", r.status, r.err, r.out)
		}
	case <-time.After(20 * time.Second):
		// A writer's open (without blocking: the run's open counts as a
		// reader) ends the run's wait, so that its goroutine ends.
		if w, err := os.OpenFile(fifo.Path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("the run waited on the FIFO at the calibration file")
	}
}

// fakeCalibrationHost makes gab calibrate read a machine whose other
// processes keep every core busy twice over (busy) or that does nothing at
// all, with a load average of load, instead of the real machine's.
func fakeCalibrationHost(t *testing.T, busy bool, load float64) {
	t.Helper()
	start := time.Now()
	calibrationHost = func() *hoststat.Snapshot {
		now := time.Now()
		s := &hoststat.Snapshot{Time: now, Cores: runtime.NumCPU(), Load: [3]float64{load}}
		if busy {
			s.CPU.User = 2 * time.Duration(runtime.NumCPU()) * now.Sub(start)
		}
		return s
	}
	exe := filepath.Join(filepath.Dir(buildGab(t)), "gab") // the responder
	calibrationExe = func() (string, error) { return exe, nil }
	t.Cleanup(func() { calibrationHost, calibrationExe = hoststat.Read, os.Executable })
}

// TestCalibrateBusyMachine: a calibration taken while other processes kept
// the machine busy says so and is not written (TestCalibrate writes one
// with --force); a quiet machine's is written, its other processes' CPU
// stated.
func TestCalibrateBusyMachine(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cal.json")
	fakeCalibrationHost(t, true, 0.5)
	status, stdout, stderr := runGab(t, "gab", "calibrate", "--requests", "10", "--out", out)
	cores := strconv.Itoa(runtime.NumCPU())
	if status != exitError || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "gab calibrate: not written to "+out+": the machine was busy (other processes used ") ||
		!strings.Contains(stderr, "of the "+cores+" cores") || !strings.Contains(stderr, "--force") {
		t.Fatalf("busy: status %d, stderr %q", status, stderr)
	}
	for _, want := range []string{"load average 0.50 before, 0.50 after", "The machine was busy: other processes used ", "Not written to " + out} {
		if !strings.Contains(stdout, want) {
			t.Errorf("busy: output lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a busy machine's calibration was written")
	}

	fakeCalibrationHost(t, false, 0.1)
	status, stdout, stderr = runGab(t, "gab", "calibrate", "--requests", "10", "--out", out)
	c := calibrate.ReadFile(out)
	if status != exitOK || c == nil || c.Busy || c.OthersCores != 0 || !strings.Contains(stdout, "Other processes used 0.00 of the "+cores+" cores (0 %) during the calibration") ||
		strings.Contains(stdout, "busy") {
		t.Fatalf("quiet: status %d, file %+v, stderr %q\n%s", status, c, stderr, stdout)
	}
}
