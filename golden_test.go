package main

import (
	"bytes"
	"context"
	"flag"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gab/internal/testsrv/golden"
)

// The golden suite runs gab on the command lines of the real ab's captured
// outputs (testdata/golden, see its README.md) against Go test servers that
// answer byte for byte like the ones ab ran against, and compares the outputs
// with the timings masked (golden.Mask). internal/testsrv/golden checks that
// the real ab, run the same way, reproduces these goldens.

var updateGab = flag.Bool("update", false, "rewrite the gab-only goldens in testdata/golden/gab")

const (
	goldenDir    = "testdata/golden"
	gabGoldenDir = "testdata/golden/gab"
)

type goldenMode int

const (
	// modeExact: stdout, stderr, exit status and -g/-e files equal ab's golden, timings masked.
	modeExact goldenMode = iota
	// modeFixed: gab differs from ab on purpose. Compared with gab's own golden
	// (testdata/golden/gab, rewritten by -update) and asserted by check.
	modeFixed
	// modeTiming: counts depend on timing; compared by golden.Shape (layout,
	// labels) and asserted by check.
	modeTiming
	// modeInjected: as modeExact, with DNS failures or unreachable networks
	// simulated by an injected resolver and dialer.
	modeInjected
	// modeChecked: gab differs from ab on purpose in text that changes as gab
	// grows (its long options); only check asserts.
	modeChecked
	// modeSeparate: run by its own test (named in why).
	modeSeparate
)

type goldenCase struct {
	mode  goldenMode
	why   string
	check func(t *testing.T, got golden.Result, outDir string)
}

// goldenExtraArgs go right after argv[0]: a fixed case whose golden command
// would only wait for ab's default 30 s timeout.
var goldenExtraArgs = map[string][]string{"ka-no-content-length": {"-s", "1"}}

// goldenTable lists every case that is not modeExact. Case → mode, reason, assertion.
var goldenTable = map[string]goldenCase{
	// gab's fixes.
	"ka-chunked": {modeFixed, "gab decodes chunked bodies: Document Length 100 (ab counts the framing, 111)", func(t *testing.T, got golden.Result, _ string) {
		wantLines(t, got.Stdout, "Document Length:        100 bytes", "Complete requests:      4", "Failed requests:        0", "HTML transferred:       400 bytes")
	}},
	"ka-no-content-length": {modeFixed, "gab reads a body without Content-Length to the end of the connection; /kanolen never closes, so the run ends at -s (run with -s 1, exit 119)", func(t *testing.T, got golden.Result, _ string) {
		wantExit(t, got, 119)
		if got.Stderr != "apr_pollset_poll: The timeout specified has expired (70007)\n" || strings.Contains(got.Stdout, "Total of") {
			t.Errorf("stdout %q stderr %q", got.Stdout, got.Stderr)
		}
	}},
	"ka-server-closes": {modeFixed, "gab re-sends a request whose kept-alive connection the server closed: no failures", func(t *testing.T, got golden.Result, _ string) {
		wantLines(t, got.Stdout, "Complete requests:      6", "Failed requests:        0", "HTML transferred:       600 bytes")
		wantExit(t, got, 0)
	}},
	"bigheader-stall": {modeFixed, "gab re-issues a request whose header overflowed, so it does not stall until -s; it ends with ab's abort after 10 failures", func(t *testing.T, got golden.Result, _ string) {
		wantExit(t, got, 1)
		if got.Stderr != "\nTest aborted after 10 failures\n\n\n" {
			t.Errorf("stderr %q, want the abort after 10 failures", got.Stderr)
		}
	}},
	"err-illegal-option-first": {modeFixed, "-Q is the next ab's option (no banner), which gab accepts: the run goes on without the banner", checkTrunkQ},
	"err-illegal-option-last":  {modeFixed, "-Q is the next ab's option (no banner), which gab accepts: no illegal-option line, no banner", checkTrunkQ},
	"refused-r":                {modeFixed, "with -r a refused connect is a Connect failure, retried; Failed ≤ Complete", checkRefusedR},
	"refused-r-v1":             {modeFixed, "with -r a refused connect is a Connect failure, retried; Failed ≤ Complete", checkRefusedR},
	"https-on-plain-port": {modeFixed, "a failed TLS handshake is a Connect failure (ab records an empty success)", func(t *testing.T, got golden.Result, _ string) {
		if !strings.Contains(got.Stdout+got.Stderr, "Connect: ") && !strings.Contains(got.Stderr, "Test aborted after 10 failures") {
			t.Errorf("no Connect failures reported:\n%s%s", got.Stdout, got.Stderr)
		}
	}},
	"csv-n10": {modeFixed, "-e rows 95-99 repeat the last sample (ab reads past its data: 0.257); fresh /var counter", func(t *testing.T, got golden.Result, outDir string) {
		b, err := os.ReadFile(filepath.Join(outDir, "csv-n10.csv"))
		if err != nil {
			t.Fatal(err)
		}
		vals, err := golden.CSVValues(string(b))
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(vals); i++ {
			if vals[i] < vals[i-1] {
				t.Errorf("-e row %d (%.3f) below row %d (%.3f)", i, vals[i], i-1, vals[i-1])
			}
		}
		for i := 95; i <= 99; i++ {
			if vals[i] != vals[100] {
				t.Errorf("-e row %d = %.3f, want the last sample %.3f", i, vals[i], vals[100])
			}
		}
	}},
	"https-bad-cipher": {modeFixed, "OpenSSL's error-queue line cannot be printed by Go; the first line and exit are ab's", func(t *testing.T, got golden.Result, _ string) {
		wantExit(t, got, 1)
		if !strings.HasPrefix(got.Stderr, "error setting ciphersuite list [BOGUS]\n") || got.Stdout != "" {
			t.Errorf("stdout %q stderr %q", got.Stdout, got.Stderr)
		}
	}},
	"https-verbose2": {modeFixed, "stdout is ab's; stderr has the connection summary but not OpenSSL's SSL_SESSION_print block", func(t *testing.T, got golden.Result, _ string) {
		wantExit(t, got, 0)
		wantLines(t, got.Stdout, "Peer certificate", "Public key is 2048 bits", "The subject name is /CN=localhost")
	}},
	"err-help": {modeChecked, "gab's long options follow ab's usage text, which is a byte-exact prefix of stderr", func(t *testing.T, got golden.Result, _ string) {
		wantExit(t, got, 22)
		c, err := golden.Load(goldenDir, "err-help")
		if err != nil {
			t.Fatal(err)
		}
		if got.Stdout != c.Stdout || !strings.HasPrefix(got.Stderr, c.Stderr+"\n") {
			t.Errorf("ab's usage is not a prefix of gab's:\n%s", got.Stderr)
		}
	}},
	// Counter-dependent: the goldens' server shared one counter between cases; ours is fresh.
	"varlen":      {modeFixed, "fresh /var counter (diff_test.go compares with ab)", checkVarlen(false)},
	"varlen-l":    {modeFixed, "fresh /var counter (diff_test.go compares with ab)", checkVarlen(true)},
	"html-varlen": {modeFixed, "fresh /var counter (diff_test.go compares with ab)", nil},
	"timeout-after-some": {modeFixed, "fresh /sometimes counter: requests 1 and 2 complete, the 3rd hangs", func(t *testing.T, got golden.Result, _ string) {
		wantExit(t, got, 119)
		if !strings.HasSuffix(got.Stdout, "(be patient)...Total of 2 requests completed\n") {
			t.Errorf("stdout %q", got.Stdout)
		}
	}},
	// Timing-dependent.
	"sane-error":   {modeTiming, "the ERROR line appears only when the timings fall so", checkSanity},
	"sane-warning": {modeTiming, "the WARNING line appears only when the timings fall so", checkSanity},
	"timelimit": {modeTiming, "how many requests fit in 1 s", func(t *testing.T, got golden.Result, _ string) {
		wantExit(t, got, 0)
		wantLines(t, got.Stdout, "Failed requests:        0")
	}},
	"timelimit-then-n": {modeTiming, "how many requests fit in 1 s", func(t *testing.T, got golden.Result, _ string) { wantExit(t, got, 0) }},
	"n-then-timelimit": {modeTiming, "how many requests fit in 1 s", func(t *testing.T, got golden.Result, _ string) { wantExit(t, got, 0) }},
	// Simulated network failures.
	"err-dns":                 {mode: modeInjected, why: "resolver returns not-found"},
	"err-bad-url-scheme-case": {mode: modeInjected, why: "resolver returns not-found for the host HTTP:"},
	"err-connect-abort":       {mode: modeInjected, why: "dialer returns ENETUNREACH"},
	"sigint":                  {mode: modeSeparate, why: "TestGoldenSigint sends SIGINT to a gab process"},
}

func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains("\n"+out+"\n", "\n"+l+"\n") {
			t.Errorf("missing line %q in:\n%s", l, out)
		}
	}
}

// checkTrunkQ: ab 2.3 refuses -Q (its goldens' illegal option); gab takes
// it as httpd trunk's ab does, so "-Q -n 3" runs 3 requests without the banner.
func checkTrunkQ(t *testing.T, got golden.Result, _ string) {
	wantExit(t, got, 0)
	wantLines(t, got.Stdout, "Complete requests:      3", "Failed requests:        0")
	if got.Stderr != "" || strings.Contains(got.Stdout, "ApacheBench") {
		t.Errorf("-Q: stderr %q, stdout:\n%s", got.Stderr, got.Stdout)
	}
}

func wantExit(t *testing.T, got golden.Result, want int) {
	t.Helper()
	if got.Exit != want {
		t.Errorf("exit %d, want %d\nstderr: %s", got.Exit, want, got.Stderr)
	}
}

var failedLine = regexp.MustCompile(`(?m)^Failed requests:        (\d+)\n   \(Connect: (\d+), Receive: 0, Length: 0, Exceptions: 0\)$`)
var completeLine = regexp.MustCompile(`(?m)^Complete requests:      (\d+)$`)

func checkRefusedR(t *testing.T, got golden.Result, _ string) {
	m := failedLine.FindStringSubmatch(got.Stdout)
	c := completeLine.FindStringSubmatch(got.Stdout)
	if m == nil || c == nil {
		t.Fatalf("no Failed/Complete lines with only Connect failures:\n%s", got.Stdout)
	}
	failed, _ := strconv.Atoi(m[1])
	complete, _ := strconv.Atoi(c[1])
	if m[1] != m[2] || failed > complete || failed == 0 {
		t.Errorf("Failed %s, Connect %s, Complete %d", m[1], m[2], complete)
	}
}

// checkVarlen asserts the fresh-counter numbers for n=50: the k-th body is
// 100 + k mod 7 bytes, so the first (101 bytes) fixes the Document Length and
// every request with k mod 7 != 1 is a Length failure (42 of 50).
func checkVarlen(variable bool) func(*testing.T, golden.Result, string) {
	return func(t *testing.T, got golden.Result, _ string) {
		html := 0
		for k := 1; k <= 50; k++ {
			html += 100 + k%7
		}
		want := []string{"Complete requests:      50", "HTML transferred:       " + strconv.Itoa(html) + " bytes"}
		if variable {
			want = append(want, "Document Length:        Variable", "Failed requests:        0")
		} else {
			want = append(want, "Document Length:        101 bytes", "Failed requests:        42",
				"   (Connect: 0, Receive: 0, Length: 42, Exceptions: 0)")
		}
		wantLines(t, got.Stdout, want...)
	}
}

func checkSanity(t *testing.T, got golden.Result, _ string) {
	wantExit(t, got, 0)
	// Mask drops only well-formed ERROR/WARNING blocks; a malformed one stays and fails the Shape comparison.
	for _, block := range golden.SanityLines(got.Stdout) {
		if !strings.Contains(block, "processing time") && !strings.Contains(block, "total time") &&
			!strings.Contains(block, "waiting time") && !strings.Contains(block, "initial connection time") {
			t.Errorf("unexpected confidence block %q", block)
		}
	}
}

// notFoundResolver fails every lookup as getaddrinfo does for an unknown name.
type notFoundResolver struct{}

func (notFoundResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func unreachableDial(context.Context, string, string) (net.Conn, error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ENETUNREACH)}
}

// hooksFor returns the injected resolver and dialer a case needs. Everything
// else resolves only literal addresses and localhost and connects to loopback.
func hooksFor(name string) runHooks {
	switch name {
	case "err-dns", "err-bad-url-scheme-case":
		return runHooks{resolver: notFoundResolver{}}
	case "err-connect-abort":
		return runHooks{dial: unreachableDial}
	}
	return runHooks{}
}

// runInProcess runs gab's run function with argv (argv[0] "ab").
func runInProcess(argv []string, hooks runHooks) golden.Result {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := runWith(ctx, argv, &stdout, &stderr, hooks)
	return golden.Result{Stdout: stdout.String(), Stderr: stderr.String(), Exit: code}
}

func TestGoldenTableNamesExistingCases(t *testing.T) {
	names, err := golden.Names(goldenDir)
	if err != nil || len(names) != 80 {
		t.Fatalf("%d golden cases, %v", len(names), err)
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for n, c := range goldenTable {
		if !have[n] {
			t.Errorf("table names %q, which has no golden", n)
		}
		if c.why == "" {
			t.Errorf("%s: no reason given", n)
		}
	}
}

func TestGolden(t *testing.T) {
	names, err := golden.Names(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	dataDir, err := filepath.Abs(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	if *updateGab {
		if err := os.MkdirAll(gabGoldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		gc := goldenTable[name]
		if gc.mode == modeSeparate || (name == "ipv6-refused" && !golden.IPv6Loopback()) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, srv := loadGoldenCase(t, name)
			outDir := t.TempDir()
			argv := c.Argv(srv.Ports, dataDir, outDir)
			argv = append(append(argv[:1:1], goldenExtraArgs[name]...), argv[1:]...)
			got := runInProcess(argv, hooksFor(name))
			compareGolden(t, c, gc, srv.Ports, got, outDir)
		})
	}
}

// compareGolden applies a case's mode to gab's result.
func compareGolden(t *testing.T, c *golden.Case, gc goldenCase, ports golden.Ports, got golden.Result, outDir string) {
	t.Helper()
	switch gc.mode {
	case modeExact, modeInjected:
		if got.Exit != c.Exit {
			t.Errorf("exit %d, golden %d\nstderr: %s", got.Exit, c.Exit, got.Stderr)
		}
		mask := func(s string) string { return golden.Mask(golden.MaskTLS(s)) }
		if d := golden.Diff(mask(ports.Rewrite(c.Stdout)), mask(got.Stdout)); d != "" {
			t.Errorf("stdout: %s", d)
		}
		if d := golden.Diff(mask(ports.Rewrite(c.Stderr)), mask(got.Stderr)); d != "" {
			t.Errorf("stderr: %s", d)
		}
		compareFiles(t, c, outDir)
	case modeTiming:
		if d := golden.Diff(golden.Shape(golden.MaskTLS(ports.Rewrite(c.Stdout))), golden.Shape(golden.MaskTLS(got.Stdout))); d != "" {
			t.Errorf("stdout layout: %s", d)
		}
		if d := golden.Diff(golden.Shape(ports.Rewrite(c.Stderr)), golden.Shape(got.Stderr)); d != "" {
			t.Errorf("stderr layout: %s", d)
		}
	case modeFixed:
		compareGabGolden(t, c, ports, got)
	}
	if gc.check != nil {
		gc.check(t, got, outDir)
	}
}

// compareFiles compares the -g/-e files with the goldens' (times masked, row
// counts and layout exact) and checks that -g rows are sorted by total time.
func compareFiles(t *testing.T, c *golden.Case, outDir string) {
	t.Helper()
	for f, want := range c.Files {
		b, err := os.ReadFile(filepath.Join(outDir, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		got := string(b)
		if d := golden.Diff(golden.MaskTSV(golden.MaskCSV(want)), golden.MaskTSV(golden.MaskCSV(got))); d != "" {
			t.Errorf("%s: %s", f, d)
		}
		if strings.HasSuffix(f, ".tsv") {
			if err := golden.TSVSortedByTotal(got); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}

// compareGabGolden compares gab's masked output with testdata/golden/gab/<case>.*
// (ports written as the goldens' 1808x), or rewrites those files with -update.
func compareGabGolden(t *testing.T, c *golden.Case, ports golden.Ports, got golden.Result) {
	t.Helper()
	mask := func(s string) string { return golden.Mask(golden.MaskTLS(ports.Unrewrite(s))) }
	text := "# cmd: " + c.Cmd + "\n# exit: " + strconv.Itoa(got.Exit) + "\n" + mask(got.Stdout)
	stderr := mask(got.Stderr)
	txtPath := filepath.Join(gabGoldenDir, c.Name+".txt")
	errPath := filepath.Join(gabGoldenDir, c.Name+".stderr")
	if *updateGab {
		if err := os.WriteFile(txtPath, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(errPath)
		if stderr != "" {
			if err := os.WriteFile(errPath, []byte(stderr), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want, err := os.ReadFile(txtPath)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
	}
	wantErr, err := os.ReadFile(errPath)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if d := golden.Diff(string(want), text); d != "" {
		t.Errorf("gab golden %s: %s", txtPath, d)
	}
	if d := golden.Diff(string(wantErr), stderr); d != "" {
		t.Errorf("gab golden %s: %s", errPath, d)
	}
}

// binaryCases are re-run through the built binary (linked as ab): the
// process-level behaviour (buffering, exit statuses, stdout/stderr split)
// must match too, not only run().
var binaryCases = []string{"plain-100b", "plain-10k-n1000", "keepalive", "post-form", "html", "quiet",
	"err-help", "err-c-zero", "err-refused", "timeout-hang", "gnuplot-csv", "verbose2"}

func TestGoldenBinary(t *testing.T) {
	ab := buildGab(t)
	dataDir, err := filepath.Abs(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range binaryCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, srv := loadGoldenCase(t, name)
			outDir := t.TempDir()
			got, err := golden.RunBinary(context.Background(), ab, c.Argv(srv.Ports, dataDir, outDir), outDir, 60*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, c, goldenTable[name], srv.Ports, got, outDir)
		})
	}
}

// loadGoldenCase loads golden case name and starts a fresh set of servers for
// it, closed when the test ends.
func loadGoldenCase(t *testing.T, name string) (*golden.Case, *golden.Servers) {
	t.Helper()
	c, err := golden.Load(goldenDir, name)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := golden.StartServers()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return c, srv
}

// TestGoldenSigint interrupts a gab process as the sigint golden was made:
// SIGINT after 1 s of a run against /slow. gab prints the partial text
// report, no "..done", and exits 1.
func TestGoldenSigint(t *testing.T) {
	ab := buildGab(t)
	c, srv := loadGoldenCase(t, "sigint")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(ab)
	cmd.Args = c.Argv(srv.Ports, "", t.TempDir())
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// As the golden was made, SIGINT after 1 s; but not before the server has
	// received 4 requests (slow to start on a loaded machine, gab may not have
	// sent them yet): each of the 2 workers then had an answer.
	time.Sleep(time.Second)
	waitFor(20*time.Second, func() bool { return srv.Py.Requests() >= 4 })
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("gab did not stop after SIGINT")
	}
	got := golden.Result{Stdout: stdout.String(), Stderr: stderr.String(), Exit: cmd.ProcessState.ExitCode()}
	wantExit(t, got, 1)
	if strings.Contains(got.Stdout, "..done") || strings.Contains(got.Stderr, "Finished") {
		t.Errorf("an interrupted run printed ..done or Finished:\n%s", got.Stdout)
	}
	if d := golden.Diff(golden.Shape(srv.Ports.Rewrite(c.Stdout)), golden.Shape(got.Stdout)); d != "" {
		t.Errorf("stdout layout: %s", d)
	}
	m := completeLine.FindStringSubmatch(got.Stdout)
	if m == nil {
		t.Fatalf("no Complete requests line:\n%s", got.Stdout)
	}
	// At least the 2 answers before the signal, at most what the server
	// received (a second of 2 × 200 ms requests holds 8 to 10 of them, more on a
	// loaded machine where the signal comes late).
	if n, _ := strconv.Atoi(m[1]); n < 2 || int64(n) > srv.Py.Requests() {
		t.Errorf("Complete requests %d; the server received %d requests", n, srv.Py.Requests())
	}
}
