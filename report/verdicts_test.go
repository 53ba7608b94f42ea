package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"gab/internal/hoststat"
	"gab/internal/samples"
)

// quietHost is a machine that did nothing but the run over 2.5 s on 4 cores.
func quietHost() *hoststat.Delta {
	return &hoststat.Delta{Elapsed: 2500 * time.Millisecond, Cores: 4, Somaxconn: 4096,
		CPU: hoststat.CPUTimes{User: 5 * time.Millisecond, Idle: 9995 * time.Millisecond}}
}

// judged summarizes the extended fixture, without its rate schedule, with a
// machine reading.
func judged(t *testing.T, h *hoststat.Delta, mutate func(*Options)) *Run {
	t.Helper()
	res, _ := extFixture()
	res.Extra.Rate = nil // a closed-loop run: the fixture's schedule is late
	o := Options{Host: "127.0.0.1", Port: 8080, Path: "/x", Concurrency: 2, CommandLine: fixtureCommandLine, Machine: h, CPU: fixtureCPU()}
	if mutate != nil {
		mutate(&o)
	}
	return Summarize(res, o)
}

func kinds(r *Run) string { return strings.Join(r.VerdictKinds(), ",") }

// TestVerdictsNotJudgedWithoutMachine: without the machine's readings (a
// document summarized elsewhere, the goldens) there is no verdicts section.
func TestVerdictsNotJudgedWithoutMachine(t *testing.T) {
	_, r := extFixture()
	if r.Verdicts != nil {
		t.Fatalf("verdicts without readings: %+v", r.Verdicts)
	}
	var b bytes.Buffer
	if err := writeVerdicts(&b, r); err != nil || b.Len() != 0 {
		t.Fatalf("%q %v", b.String(), err)
	}
}

// TestVerdictsQuietRunOnlyTooFew: a quiet 2.5 s run of 10 requests finds
// nothing but its size (p99 needs 100 requests, p99.9 1000).
func TestVerdictsQuietRunOnlyTooFew(t *testing.T) {
	r := judged(t, quietHost(), nil)
	if got := kinds(r); got != verdictTooFew {
		t.Fatalf("verdicts %q, want too_few alone: %v", got, r.VerdictLines())
	}
	if l := r.VerdictLines()[0]; !strings.Contains(l, "p99 needs 100, p99.9 needs 1000") {
		t.Fatalf("%s", l)
	}
}

// TestVerdictsTooFewNamesThePercentileAsGiven: a --percentiles entry is
// named in its shortest form, not rounded (99.99999 is not p100).
func TestVerdictsTooFewNamesThePercentileAsGiven(t *testing.T) {
	r := judged(t, quietHost(), func(o *Options) { o.Percentiles = []float64{99.99999} })
	if l := r.VerdictLines()[0]; !strings.Contains(l, "p99.99999 needs 10000000") {
		t.Fatalf("%s", l)
	}
}

func TestMinRequestsFor(t *testing.T) {
	for p, want := range map[float64]int{50: 2, 90: 10, 99: 100, 99.9: 1000, 99.99: 10000} {
		if got := minRequestsFor(p); got != want {
			t.Errorf("p%v: %d, want %d", p, got, want)
		}
	}
}

// TestVerdictsBusyMachine: the host's busy CPU minus gab's and the server's
// is the others'; at 10 % of the cores it is a busy machine, with its share.
func TestVerdictsBusyMachine(t *testing.T) {
	h := quietHost()
	// gab (fixtureCPU) and the server use theirs; others 2 cores of 4 for 2.5 s.
	cpu := fixtureCPU()
	server := &ServerCPU{PIDs: []int{7}, CPU: time.Second, Client: cpu}
	h.CPU.User = cpu.User + cpu.Sys + server.CPU + 5*time.Second
	h.LoadBefore, h.LoadAfter = [3]float64{3.5}, [3]float64{4.25}
	r := judged(t, h, func(o *Options) { o.ServerCPU = server })
	v := find(r, verdictBusyMachine)
	if v == nil {
		t.Fatalf("no busy_machine: %v", r.VerdictLines())
	}
	if got := v.Evidence["others_cores"]; got < 1.99 || got > 2.01 {
		t.Fatalf("others %.3f cores, want 2", got)
	}
	for _, want := range []string{"and --server-pid's used 2.00 of the machine's 4 cores (50 %)", "load average 3.50 before, 4.25 after"} {
		if !strings.Contains(v.Message, want) {
			t.Errorf("%q lacks %q", v.Message, want)
		}
	}
	// Just below the threshold: quiet.
	h.CPU.User = cpu.User + cpu.Sys + server.CPU + time.Duration(0.099*4*2.5*float64(time.Second))
	if v := find(judged(t, h, func(o *Options) { o.ServerCPU = server }), verdictBusyMachine); v != nil {
		t.Fatalf("below the threshold: %s", v.Message)
	}
	// A server found listening is named as such; --demo's is gab's own, so
	// the message names no --server-pid; an unnamed server may be among the others.
	h.CPU.User = cpu.User + cpu.Sys + server.CPU + 5*time.Second
	found := &ServerCPU{PIDs: []int{7, 8}, CPU: time.Second, Client: cpu, Found: "listening on 127.0.0.1:8080"}
	for _, c := range []struct {
		mutate func(*Options)
		want   string
	}{
		{func(o *Options) { o.ServerCPU = found }, "processes other than gab and the server (PID 7,8, listening on 127.0.0.1:8080) used 2.00 of"},
		{func(o *Options) { o.InProcessServer = true }, "processes other than gab used 2.40 of"},
		{nil, "processes other than gab (the server among them: --server-pid names it) used 2.40 of"},
	} {
		if v := find(judged(t, h, c.mutate), verdictBusyMachine); v == nil || !strings.HasPrefix(v.Message, c.want) {
			t.Errorf("busy_machine %+v, want %q", v, c.want)
		}
	}
	// Steal alone.
	h.CPU.User, h.CPU.Steal = 0, time.Second
	if find(judged(t, h, nil), verdictBusyMachine) == nil {
		t.Fatal("10 % steal is a busy machine")
	}
}

func find(r *Run, kind string) *verdict {
	if r.Verdicts == nil {
		return nil
	}
	for i := range r.Verdicts.Found {
		if r.Verdicts.Found[i].Kind == kind {
			return &r.Verdicts.Found[i]
		}
	}
	return nil
}

// TestVerdictsAcceptQueueTail: requests that waited ~1 s to connect beside
// SYN retransmissions and listen overflows are the accept queue's; the same
// counters without that tail name the counters only.
func TestVerdictsAcceptQueueTail(t *testing.T) {
	h := quietHost()
	h.TCP = hoststat.TCP{ListenOverflows: 24, ListenDrops: 24, SynRetrans: 20}
	res, _ := extFixture()
	res.Extra.Connect = samples.NewDist()
	for i := range 98 {
		res.Extra.Connect.Add(int64(100 + i))
	}
	res.Extra.Connect.Add(1_010_000)
	res.Extra.Connect.Add(3_020_000)
	r := Summarize(res, Options{Host: "h", Concurrency: 2, CommandLine: fixtureCommandLine, Machine: h})
	v := find(r, verdictKernelDrops)
	if v == nil {
		t.Fatalf("no kernel_drops: %v", r.VerdictLines())
	}
	for _, want := range []string{"24 listen queue overflows", "20 SYN retransmissions", "2 requests", "1 near 1 s, 1 near 3 s", "accept queue overflowed"} {
		if !strings.Contains(v.Message, want) {
			t.Errorf("%q lacks %q", v.Message, want)
		}
	}
	if !strings.Contains(v.Advice, "somaxconn (now 4096)") {
		t.Errorf("advice %q", v.Advice)
	}
	// No tail: the counters, no attribution.
	res2, _ := extFixture()
	r2 := Summarize(res2, Options{Host: "h", Concurrency: 2, CommandLine: fixtureCommandLine, Machine: h})
	if v := find(r2, verdictKernelDrops); v == nil || strings.Contains(v.Message, "accept queue") || v.Advice != "" {
		t.Fatalf("%+v", v)
	}
	// Quiet counters: no verdict.
	if v := find(judged(t, quietHost(), nil), verdictKernelDrops); v != nil {
		t.Fatalf("%+v", v)
	}
}

// TestVerdictsClientBound: gab's CPU, or its CPU and its wait for one, at
// 90 % of the cores it may use.
func TestVerdictsClientBound(t *testing.T) {
	cores := Cores()
	wall := 2500 * time.Millisecond // the fixture's elapsed
	full := time.Duration(float64(wall) * cores)
	r := judged(t, quietHost(), func(o *Options) { o.CPU = CPUUsage{User: full * 95 / 100, Known: true} })
	if find(r, verdictClientBound) == nil {
		t.Fatalf("95 %% of the cores: %v", r.VerdictLines())
	}
	h := quietHost()
	h.RunDelay = full / 2
	r = judged(t, h, func(o *Options) { o.CPU = CPUUsage{User: full / 2, Known: true} })
	if v := find(r, verdictClientBound); v == nil || !strings.Contains(v.Message, "waited") {
		t.Fatalf("half the cores used, half waited for: %v", r.VerdictLines())
	}
	r = judged(t, quietHost(), func(o *Options) { o.CPU = CPUUsage{User: full / 2, Known: true} })
	if find(r, verdictClientBound) != nil {
		t.Fatalf("half the cores: %v", r.VerdictLines())
	}
	// Rate mode: the fixture's schedule sent 1 of 10 late with its
	// connections almost idle.
	res, _ := extFixture()
	r = Summarize(res, Options{Host: "h", Concurrency: 2, CommandLine: fixtureCommandLine, Machine: quietHost()})
	if v := find(r, verdictClientBound); v == nil || !strings.Contains(v.Message, "schedule fell behind") {
		t.Fatalf("a late schedule with free connections: %v", r.VerdictLines())
	}
}

// TestVerdictsNotChecked: what could not be read is said, not judged.
func TestVerdictsNotChecked(t *testing.T) {
	h := quietHost()
	h.Missing = []string{hoststat.FileStat, hoststat.FileNetstat}
	r := judged(t, h, nil)
	var b bytes.Buffer
	if err := writeVerdicts(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"not checked: busy_machine: /proc/stat unreadable", "not checked: kernel_drops:"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
}

// TestVerdictsDocument: a judged run's document matches the schema, decodes
// back with its verdicts, and a decoded document's text cannot reach the
// terminal raw.
func TestVerdictsDocument(t *testing.T) {
	h := quietHost()
	h.TCP.SynRetrans = 3
	h.CPU.User = 9 * time.Second
	r := judged(t, h, nil)
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	schema := loadSchema(t)
	var errs []string
	validate(schema, schema, decodeGeneric(t, b.Bytes()), "$", &errs)
	if len(errs) > 0 {
		t.Fatalf("schema: %v", errs)
	}
	if !strings.Contains(b.String(), `"verdicts"`) || !strings.Contains(b.String(), `"kind": "busy_machine"`) {
		t.Fatalf("%s", b.String())
	}
	d, err := DecodeDocument("x.json", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := kinds(d), kinds(r); got != want {
		t.Fatalf("decoded %q, want %q", got, want)
	}
	d.Verdicts.Found[0].Message = "evil\x1b[2J\x07"
	var out bytes.Buffer
	_ = writeVerdicts(&out, d)
	if strings.ContainsAny(out.String(), "\x1b\x07") {
		t.Fatalf("control bytes reach the terminal: %q", out.String())
	}
}

// TestVerdictsHTMLBanner: the HTML report shows a judged run's verdicts in
// a banner, escaped; an unjudged run has none.
func TestVerdictsHTMLBanner(t *testing.T) {
	h := quietHost()
	h.CPU.User = 9 * time.Second
	r := judged(t, h, nil)
	r.Verdicts.Found[0].Advice = "<script>alert(1)</script>"
	var b bytes.Buffer
	if err := WriteHTMLPage(&b, &Page{Title: "t", Runs: []PageRun{{Doc: r}}}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<div class="verdicts"`, `data-kind="busy_machine"`, "<strong>busy-machine</strong>: processes other than gab", "&lt;script&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>alert") {
		t.Fatal("advice reached the page unescaped")
	}
	_, plain := extFixture()
	b.Reset()
	if err := WriteHTMLPage(&b, &Page{Title: "t", Runs: []PageRun{{Doc: plain}}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `class="verdicts"`) {
		t.Fatal("a banner for a run that was not judged")
	}
}

// TestVerdictsShortRunAndPortExhaustion: a run under a second is too short
// for its CPU figures; connects failing for want of a local port are the
// kernel's verdict with what to change.
func TestVerdictsShortRunAndPortExhaustion(t *testing.T) {
	res, _ := extFixture()
	res.Extra.Rate = nil
	res.Elapsed = 400 * time.Millisecond
	res.FirstError["connect"] = "dial tcp 127.0.0.1:80: connect: cannot assign requested address"
	r := Summarize(res, Options{Host: "h", Concurrency: 2, CommandLine: fixtureCommandLine, Machine: quietHost()})
	if v := find(r, verdictTooShort); v == nil || !strings.Contains(v.Message, "0.400 s") {
		t.Fatalf("too_short: %v", r.VerdictLines())
	}
	v := find(r, verdictKernelDrops)
	if v == nil || !strings.Contains(v.Message, "1 connects failed for want of a local port") ||
		!strings.Contains(v.Advice, "ip_local_port_range") || v.Evidence["port_exhaustion_failures"] != 1 {
		t.Fatalf("port exhaustion: %+v", v)
	}
}
