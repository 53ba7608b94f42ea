package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gab/internal/testtool"
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

// readCalibration takes a regular file of a calibration only: not a FIFO
// (at once, without a writer), a directory, nor a file over
// maxCalibrationFile.
func TestReadCalibrationRegularFilesOnly(t *testing.T) {
	dir := t.TempDir()
	good, _ := json.Marshal(calibration{Schema: calibrationSchema, SchemaVersion: 1, Ceiling: map[string]float64{"h1_keepalive": 10}})
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if c := readCalibration(write("good.json", good)); c == nil || c.Ceiling["h1_keepalive"] != 10 {
		t.Fatalf("a calibration file read as %+v", c)
	}
	big := append(bytes.Repeat([]byte(" "), maxCalibrationFile), good...)
	fifo := testtool.MakeFIFO(t, dir, "fifo.json")
	for _, name := range []string{write("big.json", big), dir, fifo.Path, filepath.Join(dir, "missing.json")} {
		if c := readCalibration(name); c != nil {
			t.Errorf("%s read as %+v", name, c)
		}
	}
}

// A read of the calibration file that never ends (a hung file system)
// holds no run: a run goes without the calibration a second after the
// read began, and a run while that read is still under way shares it
// rather than starting another.
func TestCalibrationReadThatHangs(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	release := make(chan struct{})
	var reads atomic.Int64
	readCalibrationFile = func(string) *calibration {
		reads.Add(1)
		<-release
		return &calibration{Schema: calibrationSchema, Ceiling: map[string]float64{"h1_keepalive": 10}}
	}
	t.Cleanup(func() {
		// The read ends; once it is no longer under way the hook can go.
		close(release)
		for end := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
			calibrationReads.Lock()
			n := len(calibrationReads.pending)
			calibrationReads.Unlock()
			if n == 0 {
				break
			}
			if time.Now().After(end) {
				t.Error("the calibration read did not end")
				return
			}
		}
		readCalibrationFile = readCalibration
	})
	url := extServer(t)
	for i := range 2 {
		js := filepath.Join(t.TempDir(), "run.json")
		begin := time.Now()
		status, _, errs := runGab(t, "ab", "-k", "-n", "300", "-c", "2", "--json", js, url+"/")
		if status != 0 {
			t.Fatalf("run %d: status %d: %s", i, status, errs)
		}
		if d := time.Since(begin); d > 20*time.Second {
			t.Fatalf("run %d took %v", i, d)
		}
		if v := readVerdicts(t, js).find("client_bound"); v != nil && strings.Contains(v.Message, "gab calibrate") {
			t.Fatalf("run %d: verdict %+v from a read that never ended", i, v)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Fatalf("%d reads of the calibration file, want one shared by both runs", n)
	}
}
