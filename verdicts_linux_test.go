package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gab/internal/hoststat"
	"gab/internal/servercpu"
	"gab/internal/testtool"
	"gab/report"
)

// verdictDoc is the part of the JSON document the verdict tests read.
type verdictDoc struct {
	Verdicts *struct {
		Found      []verdictJSON `json:"found"`
		NotChecked []string      `json:"not_checked"`
	} `json:"verdicts"`
	Extended struct {
		ClientCPU struct {
			UserMs float64 `json:"user_ms"`
			SysMs  float64 `json:"sys_ms"`
		} `json:"client_cpu"`
	} `json:"extended"`
	ServerCPU struct {
		CPUMs float64 `json:"cpu_ms"`
	} `json:"server_cpu"`
}

// verdictJSON is one verdict of the document.
type verdictJSON struct {
	Kind     string             `json:"kind"`
	Message  string             `json:"message"`
	Advice   string             `json:"advice"`
	Evidence map[string]float64 `json:"evidence"`
}

// find returns the verdict of that kind (nil if none).
func (d *verdictDoc) find(kind string) *verdictJSON {
	if d.Verdicts == nil {
		return nil
	}
	for i := range d.Verdicts.Found {
		if d.Verdicts.Found[i].Kind == kind {
			return &d.Verdicts.Found[i]
		}
	}
	return nil
}

func readVerdicts(t *testing.T, name string) *verdictDoc {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var d verdictDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Verdicts == nil {
		t.Fatalf("no verdicts in the document:\n%s", b)
	}
	return &d
}

// backlogServer listens on loopback with a listen backlog of 8 and answers
// one connection at a time (HTTP/1.0, 100 bytes, then close), so that a
// burst of connects overflows its accept queue. It stops with the test.
func backlogServer(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 8); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "backlog8")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	resp := []byte("HTTP/1.0 200 OK\r\nServer: backlog8\r\nContent-Length: 100\r\n\r\n" + strings.Repeat("b", 100))
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			got := 0
			for !strings.Contains(string(buf[:got]), "\r\n\r\n") && got < len(buf) {
				n, err := c.Read(buf[got:])
				got += n
				if err != nil {
					break
				}
			}
			time.Sleep(500 * time.Microsecond) // a slow accept loop
			c.Write(resp)
			c.Close()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// TestVerdictListenQueueOverflow: connects faster than a backlog-8 server
// accepts them overflow its accept queue; the kernel drops SYNs, the client
// sends them again after 1 s, and --extended and the JSON name the overflows
// and SYN retransmissions and attribute the ~1 s connect tail to them.
func TestVerdictListenQueueOverflow(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // no calibration file of this machine's
	url := backlogServer(t)
	js := filepath.Join(t.TempDir(), "run.json")
	status, out, errs := runGab(t, "ab", "-n", "400", "-c", "32", "--extended", "--json", js, url)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errs)
	}
	d := readVerdicts(t, js)
	v := d.find("kernel_drops")
	if v == nil {
		t.Fatalf("no kernel_drops verdict: %+v\n%s", d.Verdicts, out)
	}
	ev := v.Evidence
	if ev["listen_overflows"]+ev["listen_drops"] == 0 || ev["syn_retransmissions"] == 0 {
		t.Fatalf("evidence %v: want listen overflows and SYN retransmissions", ev)
	}
	if ev["slow_connects"] == 0 || !strings.Contains(v.Message, "accept queue overflowed") ||
		!strings.Contains(v.Advice, "somaxconn") {
		t.Fatalf("the ~1 s connect tail is not attributed to the accept queue: %+v", v)
	}
	for _, want := range []string{"Verdicts (gab", "kernel-drops: the kernel counted", "listen queue overflows", "SYN retransmissions", "accept queue overflowed", "near 1 s"} {
		if !strings.Contains(out, want) {
			t.Errorf("--extended lacks %q:\n%s", want, out)
		}
	}
	t.Logf("%s", v.Message)
}

// TestVerdictClientBoundDemo: the demo server inside gab on one CPU with 64
// keep-alive connections is gab's own limit: whatever gab's CPU share came to
// (a short run on a loaded machine may read below the CPU bound), the server
// shares gab's one core, and the verdict says so.
func TestVerdictClientBoundDemo(t *testing.T) {
	bin := buildGab(t)
	js := filepath.Join(t.TempDir(), "run.json")
	out, err := exec.Command(bin, "--demo", "--cpus", "1", "-c", "64", "-k", "-n", "20000", "--extended", "--json", js).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	d := readVerdicts(t, js)
	v := d.find("client_bound")
	if v == nil {
		t.Fatalf("not reported client-bound: %+v\n%s", d.Verdicts, out)
	}
	if v.Evidence["cores"] != 1 {
		t.Fatalf("cores %v, want 1 (--cpus 1)", v.Evidence["cores"])
	}
	if !strings.Contains(string(out), "client-bound: ") || !strings.Contains(v.Message, "the server runs inside gab (--demo) on the same 1 core(s)") {
		t.Fatalf("--extended lacks the verdict:\n%s", out)
	}
	t.Logf("%s", v.Message)
}

// startHogs starts n processes that spin on a CPU until the test ends and
// returns their PIDs.
func startHogs(t *testing.T, n int) []int {
	t.Helper()
	var pids []int
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		pids = append(pids, cmd.Process.Pid)
	}
	return pids
}

// TestVerdictBusyMachine: two CPU hogs beside a run make it a busy machine,
// and the CPU the verdict gives to other processes covers what the hogs used.
func TestVerdictBusyMachine(t *testing.T) {
	bin := buildGab(t)
	hogs := startHogs(t, 2)
	m, err := servercpu.New(hogs)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := m.Read()
	start := time.Now()
	js := filepath.Join(t.TempDir(), "run.json")
	out, err := exec.Command(bin, "--demo", "-c", "2", "-k", "-t", "1", "-n", "1000000", "--extended", "--json", js).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	after, _ := m.Read()
	wall := time.Since(start)
	d := readVerdicts(t, js)
	v := d.find("busy_machine")
	if v == nil {
		t.Fatalf("two hogs beside the run, no busy_machine verdict: %+v\n%s", d.Verdicts, out)
	}
	hogCores := (after - before).Seconds() / wall.Seconds()
	// The hogs ran over a span a little longer than the run: allow them 20 %.
	if got := v.Evidence["others_cores"]; got < 0.8*hogCores {
		t.Fatalf("others used %.2f cores, the hogs alone %.2f", got, hogCores)
	}
	if !strings.Contains(string(out), "busy-machine: processes other than gab") {
		t.Fatalf("--extended lacks the verdict:\n%s", out)
	}
	t.Logf("hogs %.2f cores; %s", hogCores, v.Message)
}

// nginxFor starts nginx (one process, no master) serving a 100-byte file on
// a free loopback port, and returns its URL and PID; it is stopped by PID
// when the test ends.
func nginxFor(t *testing.T) (string, int) {
	t.Helper()
	n := testtool.StartNginx(t, map[string][]byte{"f100.txt": []byte(strings.Repeat("a", 100))}, 1,
		`    access_log off;
    server { listen 127.0.0.1:%[2]d; root %[1]s/www; }`)
	return "http://127.0.0.1:" + strconv.Itoa(n.Ports[0]) + "/f100.txt", n.Cmd.Process.Pid
}

// TestVerdictQuietNginx: a modest run against nginx (its CPU named with
// --server-pid) is not client-bound; on a quiet machine it is not a busy
// machine either. On a machine that other programs keep busy, the
// busy_machine verdict must agree with the test's own reading of the others'
// CPU: the host's busy CPU (/proc/stat, read around the run) less gab's and
// nginx's as the document states them.
func TestVerdictQuietNginx(t *testing.T) {
	url, pid := nginxFor(t)
	bin := buildGab(t)
	js := filepath.Join(t.TempDir(), "run.json")
	cmd := exec.Command(bin, "-t", "1", "-n", "1000000", "-c", "2", "-k", "--extended", "--server-pid", strconv.Itoa(pid), "--json", js, url)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir()) // no calibration file of this machine's
	h0 := hoststat.Read()
	out, err := cmd.CombinedOutput()
	h := hoststat.Read().Sub(h0)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	d := readVerdicts(t, js)
	if v := d.find("client_bound"); v != nil {
		t.Fatalf("a quiet run against nginx reported client-bound: %s\n%s", v.Message, out)
	}
	measured := (d.Extended.ClientCPU.UserMs + d.Extended.ClientCPU.SysMs + d.ServerCPU.CPUMs) / 1000
	others := (h.CPU.Busy().Seconds() - measured) / h.Elapsed.Seconds() / float64(h.Cores)
	v := d.find("busy_machine")
	switch {
	case v == nil && others >= 0.10+0.05: // the test's window is a little wider than the run's
		t.Fatalf("others used %.0f %% of the machine and no busy_machine verdict", 100*others)
	case v != nil && v.Evidence["others_share"] < 0.10:
		t.Fatalf("busy_machine below its threshold: %+v", v)
	case v != nil:
		t.Logf("the machine was not quiet (others %.0f %% by the test's reading, load %.1f): %s", 100*others, h.LoadBefore[0], v.Message)
	}
}

// serverDoc is the run document's server_cpu section.
type serverDoc struct {
	ServerCPU *struct {
		PIDs  []int   `json:"pids"`
		Found string  `json:"found"`
		CPUs  string  `json:"cpus"`
		CPUMs float64 `json:"cpu_ms"`
	} `json:"server_cpu"`
	Report struct {
		TimeTakenS float64 `json:"time_taken_s"`
	} `json:"report"`
}

func readServerDoc(t *testing.T, name string) serverDoc {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var d serverDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestVerdictFindsLoopbackServer: without --server-pid, gab finds the nginx
// listening on a loopback URL's port, measures its CPU as --server-pid's
// and never counts it among the machine's other processes; ab's text output
// stays ab's (no server CPU lines without --server-pid).
func TestVerdictFindsLoopbackServer(t *testing.T) {
	url, pid := nginxFor(t)
	js := filepath.Join(t.TempDir(), "run.json")
	status, stdout, stderr := runGab(t, "ab", "-t", "1", "-n", "1000000", "-c", "2", "-k", "--json", js, url)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	if strings.Contains(stdout, "Server CPU") {
		t.Fatalf("server CPU lines in ab's output without --server-pid:\n%s", stdout)
	}
	d := readServerDoc(t, js)
	port := url[len("http://127.0.0.1:"):strings.LastIndexByte(url, '/')]
	if s := d.ServerCPU; s == nil || len(s.PIDs) != 1 || s.PIDs[0] != pid || s.Found != "listening on 127.0.0.1:"+port || s.CPUs == "" || s.CPUMs <= 0 {
		t.Fatalf("server_cpu %+v, want nginx's PID %d found listening on port %s, with its CPUs and CPU time", s, pid, port)
	}
	v := readVerdicts(t, js).find("busy_machine")
	if v != nil && !strings.Contains(v.Message, "processes other than gab and the server (PID "+strconv.Itoa(pid)+", listening on 127.0.0.1:"+port+")") {
		t.Fatalf("busy_machine counts the server among the other processes: %s", v.Message)
	}
	if v != nil {
		t.Logf("the machine was busy: %s", v.Message)
	}
}

// TestVerdictSharedCore: gab and nginx pinned to core 0 are client-bound,
// the verdict naming the core they share. The rule asks each of them for
// SharedCoreShare of the core: on a machine so loaded that one got less, the
// test reads the document's figures and says so instead of failing.
func TestVerdictSharedCore(t *testing.T) {
	taskset := testtool.Need(t, "taskset", "util-linux")
	if hoststat.Read().Cores < 2 {
		t.Skip("one core: nothing to pin apart")
	}
	url, pid := nginxFor(t)
	var set unix.CPUSet
	set.Set(0)
	if err := unix.SchedSetaffinity(pid, &set); err != nil {
		t.Fatal(err)
	}
	bin := buildGab(t)
	js := filepath.Join(t.TempDir(), "run.json")
	cmd := exec.Command(taskset, "-c", "0", bin, "-t", "1", "-n", "1000000", "-c", "8", "-k", "--extended", "--json", js, url)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir()) // no calibration file of this machine's
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	d, s := readVerdicts(t, js), readServerDoc(t, js)
	if s.ServerCPU == nil || s.ServerCPU.CPUs != "0" {
		t.Fatalf("server_cpu %+v: nginx's CPUs should read 0", s.ServerCPU)
	}
	v := d.find("client_bound")
	if v != nil && strings.Contains(v.Message, "gab (CPUs 0) and the server (CPUs 0) share core 0, busy ") &&
		strings.Contains(v.Advice, "pin gab and the server to different cores") && v.Evidence["shared_cores"] == 1 {
		t.Logf("%s", v.Message)
		return
	}
	wall := s.Report.TimeTakenS
	gab := (d.Extended.ClientCPU.UserMs + d.Extended.ClientCPU.SysMs) / 1000 / wall
	srv := s.ServerCPU.CPUMs / 1000 / wall
	if gab >= report.SharedCoreShare+0.05 && srv >= report.SharedCoreShare+0.05 {
		t.Fatalf("gab used %.0f %% of core 0 and nginx %.0f %%, and no shared-core verdict: %+v\n%s", 100*gab, 100*srv, d.Verdicts, out)
	}
	t.Logf("the machine left gab %.0f %% of core 0 and nginx %.0f %%: %+v", 100*gab, 100*srv, d.Verdicts)
}
