package main

import (
	"bufio"
	"fmt"
	"gab/report"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gab/internal/testtool"
)

// sweepNginx is a real nginx for the sweep's method tests: one worker on a
// free loopback port, its files in dir/www, every request logged with its
// connection's number, that connection's request count and the time.
type sweepNginx struct {
	dir, base string
}

// startSweepNginx starts nginx, stopped by its PID when the test ends.
// files (name: size in bytes) are written to its document root first.
func startSweepNginx(t *testing.T, files map[string]int) *sweepNginx {
	t.Helper()
	www := map[string][]byte{}
	for name, size := range files {
		www[name] = []byte(strings.Repeat("x", size))
	}
	n := testtool.StartNginx(t, www, 1, `    log_format req '$request_uri $connection $connection_requests $msec';
    access_log %[1]s/logs/access.log req;
    keepalive_requests 100000;
    server {
        listen 127.0.0.1:%[2]d backlog=1024;
        server_name localhost;
        root %[1]s/www;
    }`)
	return &sweepNginx{dir: n.Dir, base: "http://127.0.0.1:" + strconv.Itoa(n.Ports[0])}
}

// requests are the access log's lines: URI, connection number, that
// connection's request count, the time it was logged (s).
func (n *sweepNginx) requests(t *testing.T) [][4]string {
	t.Helper()
	f, err := os.Open(filepath.Join(n.dir, "logs", "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][4]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) == 4 {
			out = append(out, [4]string{fs[0], fs[1], fs[2], fs[3]})
		}
	}
	return out
}

// TestSweepNginxTiesAndBaseline: two labels pointing at the same nginx file
// share their rank by req/s and by deviation (their intervals overlap), the
// third (a file 1000 times larger) ranks apart; --baseline prints every
// target as ratios to one of them, with intervals, in the table and the
// document; every point carries the host's CPU (/proc/stat).
//
// The tie rule is a test at 5 %: a sweep ranks the same server apart in
// about one sweep in twenty by design (more often by deviation, whose
// latency sd a loaded machine's stalls drive), so the same-server ties are
// asked of one of two sweeps: both failing has a chance well under 1 %,
// unless the rule ranks the same server apart far more often than it says.
func TestSweepNginxTiesAndBaseline(t *testing.T) {
	n := startSweepNginx(t, map[string]int{"small.html": 100, "big.bin": 256 << 10})
	var d *report.SweepDocument
	var stdout, csvFile string
	var tieErrors []string
	for sweeps := 1; ; sweeps++ {
		var jsonFile string
		var status int
		var stderr string
		jsonFile, csvFile = filepath.Join(t.TempDir(), "s.json"), filepath.Join(t.TempDir(), "s.csv")
		status, stdout, stderr = runGab(t, "gab", "sweep", "-k", "-n", "1000", "-c", "2", "--repeat", "5",
			"--baseline", "nginx", "--json", jsonFile, "--csv", csvFile,
			"nginx="+n.base+"/small.html", "again="+n.base+"/small.html", "big="+n.base+"/big.bin")
		if status != exitOK {
			t.Fatalf("status %d\n%s\n%s", status, stdout, stderr)
		}
		d = readSweepDoc(t, jsonFile)
		if len(d.Rankings) != 1 {
			t.Fatalf("%d rankings", len(d.Rankings))
		}
		tieErrors = sameServerTies(d.Rankings[0], stdout)
		if len(tieErrors) == 0 || sweeps == 2 {
			break
		}
		t.Logf("sweep %d ranked the same server apart (the next must not):\n%s", sweeps, strings.Join(tieErrors, "\n"))
	}
	// A ranking whose points carry flags of a disturbed measure (a busy
	// machine's stalls drive the latency sd) says it cannot be trusted:
	// that is the answer gab owes there, and the same-server ties are not
	// asked of it.
	wants := []string{"=1 a nginx", "=1 a again", "3 b big", "Ratios to nginx (--baseline)", "deviation (pooled)"}
	_, said, _ := strings.Cut(stdout, "\nNot trustworthy at c=2: ")
	said, _, _ = strings.Cut(said, " carry flags")
	if len(tieErrors) > 0 && (strings.HasPrefix(said, "nginx ") || strings.Contains(said, ", nginx ") ||
		strings.HasPrefix(said, "again ") || strings.Contains(said, ", again ")) {
		t.Logf("both sweeps disturbed, and the ranking says so:\n%s", strings.Join(tieErrors, "\n"))
		tieErrors, wants = nil, wants[3:]
	}
	for _, e := range tieErrors {
		t.Error(e)
	}
	for _, want := range wants {
		if !strings.Contains(strings.Join(strings.Fields(stdout), " "), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	for _, p := range d.Points {
		pct := func(name string) float64 { v, _ := p.HostCPU.Float(name); return v }
		if h := p.HostCPU; h == nil || pct("busy_us_per_request") <= 0 || pct("busy_percent") <= 0 ||
			pct("user_percent")+pct("system_percent")+pct("softirq_percent")+pct("steal_percent") > 100.5 {
			t.Errorf("point %s host CPU %+v", p.Label, h)
		}
	}
	rows, col := readCSV(t, csvFile)
	for _, r := range rows[1:] {
		if r[col["host_busy_us_per_req"]] == "" || r[col["host_softirq_pct"]] == "" || r[col["deviation_ms"]] == "" {
			t.Errorf("CSV row without the host's CPU or the deviation: %q", r)
		}
	}
	if d.Settings.Baseline != "nginx" || d.Settings.TieRule == "" || len(d.BaselineRatios) != 2 {
		t.Fatalf("settings %+v, %d ratios", d.Settings, len(d.BaselineRatios))
	}
	for _, c := range d.BaselineRatios {
		r := c.Throughput
		if c.BaseLabel != "nginx" || r == nil || !(r.Lo < r.Ratio && r.Ratio < r.Hi) {
			t.Errorf("ratio %+v %+v", c, r)
			continue
		}
		// The same server's ratio is near 1 (whether its 95 % interval holds
		// 1 is a coin with 5 % on the wrong side); the big file's interval is
		// below 1.
		if c.Label == "again" && !(0.5 < r.Ratio && r.Ratio < 2) || c.Label == "big" && !(r.Hi < 1) {
			t.Errorf("%s: req/s ratio %+v", c.Label, r)
		}
	}
}

// sameServerTies returns what is wrong with a ranking of nginx, again (the
// same file) and big: nginx and again must share rank 1 by req/s and one
// rank by deviation, big rank 3 by req/s.
func sameServerTies(r report.SweepRanking, stdout string) []string {
	var errs []string
	rank := map[string]report.SweepRankedPoint{}
	for _, p := range r.ByThroughput {
		rank[p.Label] = p
	}
	if a, b, c := rank["nginx"], rank["again"], rank["big"]; a.Rank != 1 || b.Rank != 1 || !a.Tied || !b.Tied || c.Rank != 3 || c.Tied {
		errs = append(errs, fmt.Sprintf("by req/s: nginx %+v again %+v big %+v; want =1 =1 3\n%s", a, b, c, stdout))
	}
	dev := map[string]report.SweepRankedPoint{}
	for _, p := range r.ByDeviation {
		dev[p.Label] = p
	}
	if dev["nginx"].Rank != dev["again"].Rank {
		errs = append(errs, fmt.Sprintf("by deviation the same server ranks apart: %+v\n%s", r.ByDeviation, stdout))
	}
	return errs
}

// TestSweepNginxMethod: --requests-per-conn sets each point's -n to c × N
// (what nginx logged), the default order runs every point's first
// repetition before any second, --param/--before runs the command with the
// point's value before each run (it chooses the file nginx serves, so the
// runs' document lengths show it took effect).
func TestSweepNginxMethod(t *testing.T) {
	n := startSweepNginx(t, map[string]int{"v10.html": 10, "v300.html": 300})
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "s.json")
	www := filepath.Join(n.dir, "www")
	before := "cp " + www + "/v{len}.html " + www + "/cur.html && echo {len} >> " + filepath.Join(dir, "before.log")
	status, stdout, stderr := runGab(t, "gab", "sweep", "-k", "-c", "1,3", "--requests-per-conn", "4", "--repeat", "2",
		"--param", "len=10,300", "--before", before, "--json", jsonFile, "cur="+n.base+"/cur.html")
	if status != exitOK {
		t.Fatalf("status %d\n%s\n%s", status, stdout, stderr)
	}
	d := readSweepDoc(t, jsonFile)
	if len(d.Points) != 4 || d.Settings.RequestsPerConn != 4 || d.Settings.Order != "interleaved" || d.Settings.Param == nil {
		t.Fatalf("%d points, settings %+v", len(d.Points), d.Settings)
	}
	// 2 values × (1 + 3 clients) × 4 requests × 2 repetitions.
	if got := len(n.requests(t)); got != 2*(1+3)*4*2 {
		t.Errorf("nginx logged %d requests, want 64", got)
	}
	type run struct {
		order int
		value string
	}
	var runs []run
	for _, p := range d.Points {
		if p.RequestsComplete != p.Concurrency*4*2 {
			t.Errorf("point %s c=%d: %d requests, want c × 4 × 2", p.ParamValue, p.Concurrency, p.RequestsComplete)
		}
		for _, r := range p.Runs {
			if got, want := r.Document.Report.DocumentLengthBytes, p.ParamValue; strconv.FormatInt(got, 10) != want {
				t.Errorf("point len=%s run %d served %d bytes: --before did not run first", want, r.Order, got)
			}
			if r.Order > len(d.Points) && r.Repetition == 1 || r.Order <= len(d.Points) && r.Repetition == 2 {
				t.Errorf("run order %d is repetition %d: the rounds are not interleaved", r.Order, r.Repetition)
			}
			runs = append(runs, run{r.Order, p.ParamValue})
		}
	}
	slices.SortFunc(runs, func(a, b run) int { return a.order - b.order })
	raw, err := os.ReadFile(filepath.Join(dir, "before.log"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range runs {
		want = append(want, r.value)
	}
	if got := strings.Fields(string(raw)); !slices.Equal(got, want) {
		t.Errorf("--before ran with %q, want one per run in the runs' order %q", got, want)
	}
	for _, col := range []string{"len", "Change of each target from c=1 to c=3"} {
		if !strings.Contains(stdout, col) {
			t.Errorf("table lacks %q:\n%s", col, stdout)
		}
	}
}

// TestSweepOrderRandom: --order random runs each round's points shuffled,
// every point once per round, and records its seed.
func TestSweepOrderRandom(t *testing.T) {
	n := startSweepNginx(t, map[string]int{"a.html": 10})
	jsonFile := filepath.Join(t.TempDir(), "s.json")
	status, stdout, stderr := runGab(t, "gab", "sweep", "-n", "5", "-c", "1,2,3,4", "--repeat", "3", "--order", "random",
		"--json", jsonFile, "a="+n.base+"/a.html", "b="+n.base+"/a.html")
	if status != exitOK {
		t.Fatalf("status %d\n%s\n%s", status, stdout, stderr)
	}
	d := readSweepDoc(t, jsonFile)
	if d.Settings.Order != "random" || d.Settings.Seed == 0 {
		t.Errorf("settings %+v", d.Settings)
	}
	// The recorded seed runs the same order again.
	order := func(d *report.SweepDocument) map[string]int {
		out := map[string]int{}
		for _, p := range d.Points {
			for _, r := range p.Runs {
				out[fmt.Sprintf("%s %d %d", p.Label, p.Concurrency, r.Repetition)] = r.Order
			}
		}
		return out
	}
	again := filepath.Join(t.TempDir(), "again.json")
	if status, _, stderr := runGab(t, "gab", "sweep", "-n", "5", "-c", "1,2,3,4", "--repeat", "3", "--order", "random",
		"--seed", strconv.FormatUint(d.Settings.Seed, 10), "--json", again, "a="+n.base+"/a.html", "b="+n.base+"/a.html"); status != exitOK {
		t.Fatalf("again: status %d\n%s", status, stderr)
	}
	if a, b := order(d), order(readSweepDoc(t, again)); !maps.Equal(a, b) {
		t.Errorf("--seed %d ran another order:\n%v\n%v", d.Settings.Seed, a, b)
	}
	points := len(d.Points)
	orders := make([]int, 0, points*3)
	for _, p := range d.Points {
		for _, r := range p.Runs {
			if round := (r.Order - 1) / points; round != r.Repetition-1 {
				t.Errorf("%s c=%d repetition %d ran at %d, outside its round", p.Label, p.Concurrency, r.Repetition, r.Order)
			}
			orders = append(orders, r.Order)
		}
	}
	slices.Sort(orders)
	for i, o := range orders {
		if o != i+1 {
			t.Fatalf("orders %v", orders)
		}
	}
}

// TestSweepNginxRamp: --ramp opens the connections evenly over its time
// (nginx sees the connections' first requests spread over most of it) and
// leaves the requests that started meanwhile out: the point counts -n
// requests while nginx served more, and the run's time taken leaves the
// ramp out.
func TestSweepNginxRamp(t *testing.T) {
	n := startSweepNginx(t, map[string]int{"a.html": 10})
	jsonFile := filepath.Join(t.TempDir(), "s.json")
	status, stdout, stderr := runGab(t, "gab", "sweep", "-k", "-n", "100", "-c", "5", "--ramp", "1s",
		"--json", jsonFile, "a="+n.base+"/a.html")
	if status != exitOK {
		t.Fatalf("status %d\n%s\n%s", status, stdout, stderr)
	}
	d := readSweepDoc(t, jsonFile)
	if d.Settings.RampS != 1 || len(d.Points) != 1 || d.Points[0].RequestsComplete != 100 {
		t.Fatalf("settings %+v, points %+v", d.Settings, d.Points)
	}
	reqs := n.requests(t)
	if len(reqs) <= 100 {
		t.Errorf("nginx served %d requests: none during the ramp-up?", len(reqs))
	}
	first := map[string]float64{}
	var lo, hi float64
	for i, r := range reqs {
		at, err := strconv.ParseFloat(r[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := first[r[1]]; !ok {
			first[r[1]] = at
		}
		if i == 0 || at < lo {
			lo = at
		}
		hi = max(hi, at)
	}
	var starts []float64
	for _, at := range first {
		starts = append(starts, at)
	}
	slices.Sort(starts)
	if len(starts) != 5 || starts[4]-starts[0] < 0.5 {
		t.Errorf("connections' first requests at %v: not spread over the 1 s ramp-up", starts)
	}
	taken := d.Points[0].Runs[0].Document.Report.TimeTakenS
	if span := hi - lo; taken > span-0.5 {
		t.Errorf("time taken %.3f s of a %.3f s run: the ramp-up is not left out", taken, span)
	}
}

// TestSweepBeforeFails: a --before command that fails stops the sweep
// (status 1, naming the command), and the outputs hold the runs measured
// before it, marked incomplete; --param without --before, or a --before
// without {NAME}, is a usage error.
func TestSweepBeforeFails(t *testing.T) {
	jsonFile := filepath.Join(t.TempDir(), "s.json")
	status, _, stderr := runGab(t, "gab", "sweep", "--demo", "-n", "5", "--param", "v=a,b", "--before", "test {v} = a", "--json", jsonFile)
	if status != exitError || !strings.Contains(stderr, `--before "test b = a": exit status 1; stopped after 1 of 2 runs`) {
		t.Errorf("status %d, stderr %q", status, stderr)
	}
	if d := readSweepDoc(t, jsonFile); d.Complete || len(d.Points) != 1 || d.Points[0].ParamValue != "a" {
		t.Errorf("document: complete %v, points %+v", d.Complete, d.Points)
	}
	for _, c := range [][]string{
		{"--param", "v=a,b"},
		{"--param", "v=a,b", "--before", "true"},
		{"--param", "v=a,b;c", "--before", "echo {v}"},
	} {
		status, stdout, stderr := runGab(t, append([]string{"gab", "sweep", "--demo", "-n", "5"}, c...)...)
		if status != exitUsage || stdout != "" || !strings.Contains(stderr, "--") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: status %d, stderr %q", c, status, stderr)
		}
	}
}

// TestSweepRampTimeLimit: with -t, --ramp comes before the -t measured
// seconds: the run's time taken is about -t, not -t less the ramp.
func TestSweepRampTimeLimit(t *testing.T) {
	jsonFile := filepath.Join(t.TempDir(), "s.json")
	status, stdout, stderr := runGab(t, "gab", "sweep", "--demo", "-k", "-t", "1", "-n", "50000000", "-c", "2", "--ramp", "500ms", "--json", jsonFile)
	if status != exitOK {
		t.Fatalf("status %d\n%s\n%s", status, stdout, stderr)
	}
	d := readSweepDoc(t, jsonFile)
	if taken := d.Points[0].Runs[0].Document.Report.TimeTakenS; taken < 0.9 {
		t.Errorf("time taken %.3f s: the ramp-up took its share of -t 1", taken)
	}
}
