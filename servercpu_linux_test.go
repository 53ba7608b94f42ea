package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gab/internal/capacity"
	"gab/report"
)

// burnPerRequest is the CPU the burn server spends on each request.
const burnPerRequest = 50 * time.Millisecond

// TestBurnServerProcess is not a test: run as a child (GAB_BURN_SERVER set)
// it is an HTTP server that spends burnPerRequest of CPU time (its thread's,
// so the machine's load does not change it) on each request. It prints its
// address and serves until its stdin closes.
func TestBurnServerProcess(t *testing.T) {
	if os.Getenv("GAB_BURN_SERVER") == "" {
		t.Skip("helper process for TestServerCPU")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(2)
	}
	os.Stdout.WriteString(ln.Addr().String() + "\n")
	go func() {
		buf := make([]byte, 1)
		os.Stdin.Read(buf)
		os.Exit(0)
	}()
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		start := threadCPU()
		for threadCPU()-start < burnPerRequest {
			for i := 0; i < 10000; i++ {
			}
		}
		w.Header().Set("Content-Length", "2")
		w.Write([]byte("ok"))
	}))
}

func threadCPU() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startBurnServer starts the burn server as a child process.
func startBurnServer(t *testing.T) (url string, pid int) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBurnServerProcess$")
	cmd.Env = append(os.Environ(), "GAB_BURN_SERVER=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + strings.TrimSpace(addr) + "/", cmd.Process.Pid
}

// wantBurn checks a server CPU figure per request (µs) against the burn:
// /proc counts 10 ms ticks, and the server's HTTP work adds a little (more
// under the race detector). A request still in flight when the measure
// ended (inFlight: a capacity step's end, on a loaded machine) may have
// burnt up to its whole share without being counted complete.
func wantBurn(t *testing.T, what string, us float64, requests, inFlight int) {
	t.Helper()
	lo := float64(burnPerRequest.Microseconds()) - 10000/float64(requests)
	hi := float64(burnPerRequest.Microseconds())*1.15 + float64(10000+inFlight*int(burnPerRequest.Microseconds()))/float64(requests)
	if us < lo || us > hi {
		t.Errorf("%s: %.1f us of server CPU per request, want %.0f..%.0f (%v burnt per request)", what, us, lo, hi, burnPerRequest)
	}
}

func TestServerCPU(t *testing.T) {
	url, pid := startBurnServer(t)
	const n = 8
	runJSON := filepath.Join(t.TempDir(), "run.json")
	status, stdout, stderr := runArgs(t, t.Context(), "ab", "--server-pid", "burn="+strconv.Itoa(pid), "--json", runJSON,
		"-n", strconv.Itoa(n), "-c", "2", url)
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	_, rest, ok := strings.Cut(stdout, "  Per request:          ")
	us, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
	if !ok || err != nil || !strings.Contains(stdout, "Server CPU of burn (PID "+strconv.Itoa(pid)+", with threads and children; 10 ms resolution):") ||
		!strings.Contains(stdout, "  Client CPU (gab): ") {
		t.Fatalf("no server CPU lines in:\n%s", stdout)
	}
	wantBurn(t, "single run", us, n, 0)
	// The label names the server in the JSON document too.
	var runDoc report.Run
	if raw, err := os.ReadFile(runJSON); err != nil || json.Unmarshal(raw, &runDoc) != nil ||
		runDoc.ServerCPU == nil || runDoc.ServerCPU.Label != "burn" || len(runDoc.ServerCPU.PIDs) != 1 {
		t.Fatalf("run document server_cpu %+v (%v)", runDoc.ServerCPU, err)
	}

	csvFile, jsonFile := filepath.Join(t.TempDir(), "s.csv"), filepath.Join(t.TempDir(), "s.json")
	status, _, stderr = runArgs(t, t.Context(), "ab", "sweep", "--server-pid", "burn="+strconv.Itoa(pid), "-n", strconv.Itoa(n), "-c", "1,3",
		"--csv", csvFile, "--json", jsonFile, "burn="+url)
	if status != 0 {
		t.Fatalf("sweep: status %d, stderr %q", status, stderr)
	}
	rows, col := readCSV(t, csvFile)
	if len(rows) != 3 {
		t.Fatalf("CSV %q", rows)
	}
	for _, r := range rows[1:] {
		us, err := strconv.ParseFloat(r[col["server_cpu_us_per_req"]], 64)
		if err != nil {
			t.Fatalf("row %q", r)
		}
		wantBurn(t, "sweep c="+r[col["concurrency"]], us, n, 0)
		if pct, _ := strconv.ParseFloat(r[col["server_cpu_pct"]], 64); pct <= 0 {
			t.Errorf("server cpu %% %q", r[col["server_cpu_pct"]])
		}
	}
	// Each run's document carries its own measurement.
	raw, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc report.SweepDocument
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Points) != 2 {
		t.Fatalf("document: %v", err)
	}
	for _, p := range doc.Points {
		sc := p.Runs[0].Document.ServerCPU
		if sc == nil || sc.Label != "burn" || len(sc.PIDs) != 1 || sc.PIDs[0] != pid || sc.ClientPercent == nil {
			t.Fatalf("run document server_cpu %+v", sc)
		}
		wantBurn(t, "run document", sc.UsPerRequest, n, 0)
	}
}

// TestCapacityServerPID: gab capacity --server-pid measures the server's CPU
// in every step, and states it at the capacity; with two targets it is a
// usage error (it names one server).
func TestCapacityServerPID(t *testing.T) {
	url, pid := startBurnServer(t)
	js := filepath.Join(t.TempDir(), "cap.json")
	status, stdout, stderr := runArgs(t, t.Context(), "gab", "capacity", "--noise", "0", "--server-pid", "burn="+strconv.Itoa(pid), "--slo", "p99<5s",
		"--start", "4", "--max-rate", "4", "--step", "1s", "--json", js, url)
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	d := readCapacityFile(t, js)
	r := d.Targets[0].Runs[0]
	// One step at 4/s; on a loaded machine that step may not keep its
	// rate (a request still in flight at its end), and the search measures
	// it again: the passing step is the last.
	last := len(r.Steps) - 1
	if last < 0 || !r.Steps[last].Pass || r.Steps[last].ServerCPUUsPerRequest == nil || r.Steps[last].ServerCPUPercent == nil {
		t.Fatalf("steps %+v", r.Steps)
	}
	for _, st := range r.Steps {
		if st.TargetPerS != 4 {
			t.Fatalf("a step at %v/s, want 4 only: %+v", st.TargetPerS, r.Steps)
		}
	}
	st := r.Steps[last]
	wantBurn(t, "capacity step", *st.ServerCPUUsPerRequest, int(st.Complete), int(st.Outstanding))
	if !strings.Contains(stdout, "Server CPU at the capacity (the "+capacity.Rate(st.TargetPerS)+"/s step): ") || !strings.Contains(stdout, fmt.Sprintf("%.1f µs per request", *st.ServerCPUUsPerRequest)) {
		t.Fatalf("no server CPU at the capacity:\n%s", stdout)
	}
	status, _, stderr = runArgs(t, t.Context(), "gab", "capacity", "--server-pid", strconv.Itoa(pid), "--slo", "p99<5s", "a="+url, "b="+url)
	if status != exitUsage || !strings.Contains(stderr, "--server-pid measures one server: give one TARGET") {
		t.Fatalf("two targets: status %d, stderr %q", status, stderr)
	}
}
