package report

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"gab/client"
	"gab/internal/hoststat"
)

func TestClientBound(t *testing.T) {
	for _, c := range []struct {
		name  string
		load  ClientLoad
		bound bool
		why   string
	}{
		{"idle", ClientLoad{CPU: time.Second, Wall: 10 * time.Second, Cores: 2}, false, ""},
		{"cpu at the cores", ClientLoad{CPU: 19 * time.Second, Wall: 10 * time.Second, Cores: 2}, true, "95 % of the 2 core(s)"},
		{"cpu at one core", ClientLoad{CPU: 950 * time.Millisecond, Wall: time.Second, Cores: 1}, true, "of the 1 core(s)"},
		{"late, connections free", ClientLoad{Sent: 1000, LateShare: 0.2, Busy: 0.3}, true, "fell behind"},
		{"late, connections busy", ClientLoad{Sent: 1000, LateShare: 0.2, Busy: 0.95}, false, ""},
		{"unsent at the end", ClientLoad{Sent: 900, Behind: 100, Busy: 0.1}, true, "fell behind"},
		{"lag grew", ClientLoad{Sent: 1000, LagP95: 50 * time.Millisecond, Busy: 0.1}, true, "send lag grew"},
		{"lag grew, busy", ClientLoad{Sent: 1000, LagP95: 50 * time.Millisecond, Busy: 0.9}, false, ""},
		{"waited for a CPU", ClientLoad{SchedP99: 20 * time.Millisecond}, true, "waited 20ms (p99) for a CPU"},
		{"waited a little", ClientLoad{SchedP99: 2 * time.Millisecond}, false, ""},
		{"waited, generous bound", ClientLoad{SchedP99: 20 * time.Millisecond, SchedBound: 100 * time.Millisecond}, false, ""},
		{"on time", ClientLoad{Sent: 1000, LateShare: 0.01, Busy: 0.1}, false, ""},
		{"connections slow", ClientLoad{ConnsAsked: 100, ConnsOpened: 40, ConnsWindow: 150 * time.Millisecond}, true, "40 of 100 connections opened in time (within 150ms of asking)"},
		{"connections prompt", ClientLoad{ConnsAsked: 100, ConnsOpened: 100, ConnsWindow: 150 * time.Millisecond}, false, ""},
		{"server inside gab", ClientLoad{CPU: 100 * time.Millisecond, Wall: time.Second, Cores: 1, InProcessServer: true}, true, "the server runs inside gab (--demo) on the same 1 core(s)"},
		{"unknown", ClientLoad{}, false, ""},
	} {
		v := ClientBound(c.load)
		if v.Bound != c.bound || !strings.Contains(v.String(), c.why) {
			t.Errorf("%s: %v, want bound %v with %q", c.name, v, c.bound, c.why)
		}
	}
}

func TestCores(t *testing.T) {
	if c := Cores(); c <= 0 {
		t.Errorf("Cores() = %v", c)
	}
}

func TestSchedReading(t *testing.T) {
	before := ReadSched()
	done := make(chan bool)
	for range 100 {
		go func() { done <- true }()
	}
	for range 100 {
		<-done
	}
	after := ReadSched()
	if p := after.P99Since(before); p < 0 || p > time.Minute {
		t.Errorf("p99 %v", p)
	}
	if p := after.P99Since(SchedReading{}); p != 0 {
		t.Errorf("against no reading: %v", p)
	}
}

// slowOpenRun runs -c 20 -k for 4 s against an in-process HTTP server on
// loopback, its connections dialled through dial (nil: the system's), and
// summarizes it with a quiet machine's readings.
func slowOpenRun(t *testing.T, dial client.DialFunc) *Run {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	tg, err := client.ParseURL(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	spec := client.RequestSpec{Method: "GET", Target: tg.Path, KeepAlive: true, Host: srv.Listener.Addr().String()}
	req, headLen := client.BuildRequest(spec)
	rn, err := client.New(client.Config{Target: tg, Request: req, HeadLen: headLen, Spec: spec, Requests: 1 << 30, Concurrency: 20,
		TimeLimit: 4 * time.Second, Timeout: 10 * time.Second, KeepAlive: true, Extended: true, SampleLimit: 1000, Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := rn.Run(ctx)
	if err != nil || ctx.Err() != nil {
		t.Fatalf("run: %v %v", err, ctx.Err())
	}
	return Summarize(res, Options{Host: "127.0.0.1", Port: tg.Port, Path: "/", Concurrency: 20, Machine: quietHost()})
}

// TestClientBoundConnectionsSlowToOpen: a client that opens one connection
// at a time, 80 ms each (a dial that waits on the client's side; the server
// accepts at once), opens about 2W/80ms of -c 20 by twice the window W (a
// tenth of the run, about 400 ms): the run is client-bound and says so, with
// the figures as evidence. The same run with the system's dialler opens all
// 20 in time: no such reason. (A window of 400 ms, not less, leaves a loaded
// machine time to answer the first request and to open 20 connections within
// it.)
func TestClientBoundConnectionsSlowToOpen(t *testing.T) {
	var mu sync.Mutex
	var nd net.Dialer
	slow := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		time.Sleep(80 * time.Millisecond)
		return nd.DialContext(ctx, network, addr)
	}
	r := slowOpenRun(t, slow)
	lines := strings.Join(r.VerdictLines(), "\n")
	t.Log(lines)
	if !strings.Contains(lines, "client-bound: ") || !strings.Contains(lines, " of 20 connections opened in time (within ") {
		t.Fatalf("slow opening not named: %s", lines)
	}
	for _, v := range r.Verdicts.Found {
		// One dial per 80 ms: by twice the window, no more than 2W/80ms.
		ev := v.Evidence
		if v.Kind == verdictClientBound && (ev["conns_asked"] != 20 || ev["conns_opened"] > 2*ev["conns_window_s"]/0.080) {
			t.Errorf("evidence %v", ev)
		}
	}
	r = slowOpenRun(t, nil)
	if lines := strings.Join(r.VerdictLines(), "\n"); strings.Contains(lines, "opened in time") {
		t.Fatalf("prompt connections called slow: %s", lines)
	}
}

// TestVerdictConnectionsSlowUnlessServers: connections opened late make the
// run client-bound, unless connects failed or the kernel dropped or resent
// SYNs: then the server or the network made them late.
func TestVerdictConnectionsSlowUnlessServers(t *testing.T) {
	for _, c := range []struct {
		name    string
		connect int
		tcp     hoststat.TCP
		named   bool
	}{
		{"late", 0, hoststat.TCP{}, true},
		{"connects failed", 1, hoststat.TCP{}, false},
		{"SYNs resent", 0, hoststat.TCP{SynRetrans: 3}, false},
		{"listen overflows", 0, hoststat.TCP{ListenOverflows: 2, ListenDrops: 2}, false},
	} {
		res, _ := extFixture()
		res.Extra.Rate = nil
		res.Failed.Connect = c.connect
		res.Opening = &client.ConnOpening{Asked: 20, Opened: 7, Window: 250 * time.Millisecond}
		h := quietHost()
		h.TCP = c.tcp
		r := Summarize(res, Options{Host: "127.0.0.1", Port: 8080, Path: "/x", Concurrency: 20, CommandLine: fixtureCommandLine, Machine: h})
		lines := strings.Join(r.VerdictLines(), "\n")
		if named := strings.Contains(lines, "client-bound: 7 of 20 connections opened in time (within 250ms of asking)"); named != c.named {
			t.Errorf("%s: named %v, want %v: %s", c.name, named, c.named, lines)
		}
	}
}

// TestSharedCores: gab and a server confined to one shared core that was
// busy with both are client-bound, naming the core; apart, unpinned, with
// with either idle, they are not.
func TestSharedCores(t *testing.T) {
	sec := time.Second
	core := func(busy, idle time.Duration) hoststat.CPUTimes { return hoststat.CPUTimes{User: busy, Idle: idle} }
	full := map[int]hoststat.CPUTimes{0: core(sec, 0), 1: core(sec/5, 4*sec/5)}
	for _, c := range []struct {
		name          string
		gab, server   []int
		perCore       map[int]hoststat.CPUTimes
		gabCPU, srvCP time.Duration
		want          bool
	}{
		{"same core, busy with both", []int{0}, []int{0}, full, 450 * time.Millisecond, 500 * time.Millisecond, true},
		{"apart", []int{0}, []int{1}, full, 450 * time.Millisecond, 500 * time.Millisecond, false},
		{"unpinned", []int{0, 1}, []int{0, 1}, full, 900 * time.Millisecond, 900 * time.Millisecond, false},
		{"core not busy", []int{0}, []int{0}, map[int]hoststat.CPUTimes{0: core(sec/2, sec/2)}, 200 * time.Millisecond, 300 * time.Millisecond, false},
		{"others' work too", []int{0}, []int{0}, full, 150 * time.Millisecond, 150 * time.Millisecond, true},
		{"server idle", []int{0}, []int{0}, full, 900 * time.Millisecond, 50 * time.Millisecond, false},
		{"core unread", []int{0}, []int{0}, nil, 450 * time.Millisecond, 500 * time.Millisecond, false},
	} {
		sh := NewSharedCores(c.gab, c.server, c.perCore, 2, sec, c.gabCPU, c.srvCP)
		v := ClientBound(ClientLoad{Shared: sh})
		if v.Bound != c.want {
			t.Errorf("%s: %v (%+v)", c.name, v, sh)
		}
		if c.want && !strings.Contains(v.String(), "gab (CPUs 0) and the server (CPUs 0) share core 0, busy 100 % of the run, gab using ") {
			t.Errorf("%s: %s", c.name, v)
		}
	}
}
