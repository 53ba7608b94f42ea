package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gab/internal/abprint"
)

// readErrorGolden reads testdata/golden/<name>.txt (# cmd, # exit, stdout) and .stderr.
func readErrorGolden(t *testing.T, name string) (argv []string, status int, stdout, stderr string) {
	t.Helper()
	txt, err := os.ReadFile(filepath.Join("testdata/golden", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	cmdLine, rest, _ := strings.Cut(string(txt), "\n")
	exitLine, out, _ := strings.Cut(rest, "\n")
	status, err = strconv.Atoi(strings.TrimPrefix(exitLine, "# exit: "))
	if err != nil {
		t.Fatalf("%s: bad exit line %q", name, exitLine)
	}
	argv = shellWords(strings.TrimPrefix(cmdLine, "# cmd: "))
	for i, a := range argv {
		if a == "post.data" {
			argv[i] = "testdata/golden/post.data"
		}
	}
	if e, err := os.ReadFile(filepath.Join("testdata/golden", name+".stderr")); err == nil {
		stderr = string(e)
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return argv, status, out, stderr
}

// TestErrorGoldens replays ab's captured error cases that end before any
// connection, and compares stdout, stderr and the exit status byte for byte.
func TestErrorGoldens(t *testing.T) {
	for _, name := range []string{
		"err-help", "err-version", "err-version-html", "err-no-args", "err-too-many-args",
		"err-bad-url-noslash", "err-bad-url-port", "err-n-zero", "err-c-gt-n", "err-c-too-big",
		"err-c-negative", "err-missing-postfile", "err-mix-post-put", "err-mix-head-post",
		"err-missing-optarg", "err-c-zero", // err-illegal-option-*: goldenTable (gab takes the next ab's -Q)
	} {
		argv, wantStatus, wantOut, wantErr := readErrorGolden(t, name)
		status, stdout, stderr := runArgs(t, t.Context(), argv...)
		if name == "err-help" {
			// gab lists its long options after ab's text.
			if strings.HasPrefix(stderr, wantErr+"\n") {
				stderr = wantErr
			}
		}
		if status != wantStatus || stdout != wantOut || stderr != wantErr {
			t.Errorf("%s: %q\n got status %d\nstdout %q\nstderr %q\nwant status %d\nstdout %q\nstderr %q",
				name, argv, status, stdout, stderr, wantStatus, wantOut, wantErr)
		}
	}
}

// TestResolverErrorGoldens replays ab's name-resolution failures with an
// injected resolver, so that no real name is looked up.
func TestResolverErrorGoldens(t *testing.T) {
	for _, name := range []string{"err-dns", "err-bad-url-scheme-case"} {
		argv, wantStatus, wantOut, wantErr := readErrorGolden(t, name)
		var out, errb bytes.Buffer
		status := runWith(t.Context(), argv, &out, &errb, runHooks{resolver: failingResolver{}})
		if status != wantStatus || out.String() != wantOut || errb.String() != wantErr {
			t.Errorf("%s: %q\n got status %d\nstdout %q\nstderr %q\nwant status %d\nstdout %q\nstderr %q",
				name, argv, status, out.String(), errb.String(), wantStatus, wantOut, wantErr)
		}
	}
}

func TestVersion(t *testing.T) {
	status, stdout, stderr := runArgs(t, t.Context(), "gab", "--version")
	if status != 0 || stdout != "gab "+version+"\n" || stderr != "" {
		t.Errorf("--version: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	status, stdout, _ = runArgs(t, t.Context(), "/usr/local/bin/gab", "-w", "-V", "-n", "0")
	if status != 0 || !strings.HasPrefix(stdout, "<p>\n This is ApacheBench, Version 2.3 <i>&lt;$Revision$&gt;</i><br>\n") {
		t.Errorf("-w -V: status %d, stdout %q", status, stdout)
	}
}

func TestHelp(t *testing.T) {
	status, stdout, stderr := runArgs(t, t.Context(), "./gab", "-h")
	if status != 22 || stdout != "" || !strings.HasPrefix(stderr, usageOf("./gab")+"\n"+abprint.TrunkUsage+"\ngab's own options") {
		t.Errorf("-h: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
}

func TestRunReportAndFiles(t *testing.T) {
	url, hits := startDocServer(t)
	dir := t.TempDir()
	csv, tsv := filepath.Join(dir, "p.csv"), filepath.Join(dir, "g.tsv")
	status, stdout, stderr := runArgs(t, t.Context(), "ab", "-n", "20", "-c", "4", "-e", csv, "-g", tsv, url+"/doc")
	if status != 0 || stderr != "" {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	host := strings.TrimPrefix(url, "http://")
	wantStart := "This is ApacheBench, Version 2.3 <$Revision$>\n" +
		"Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/\n" +
		"Licensed to The Apache Software Foundation, http://www.apache.org/\n\n" +
		"Benchmarking 127.0.0.1 (be patient).....done\n\n\nServer Software:        test/1.0\n" +
		"Server Hostname:        127.0.0.1\nServer Port:            " + host[strings.IndexByte(host, ':')+1:] + "\n\n" +
		"Document Path:          /doc\nDocument Length:        100 bytes\n\nConcurrency Level:      4\n"
	if !strings.HasPrefix(stdout, wantStart) || !strings.Contains(stdout, "\nComplete requests:      20\nFailed requests:        0\n") {
		t.Errorf("stdout:\n%s\nwant it to start with:\n%s", stdout, wantStart)
	}
	if hits.Load() < 20 {
		t.Errorf("server saw %d requests, want at least 20", hits.Load())
	}
	c, err := os.ReadFile(csv)
	if err != nil || !strings.HasPrefix(string(c), "Percentage served,Time in ms\n0,") || strings.Count(string(c), "\n") != 102 {
		t.Errorf("-e file: %v\n%s", err, c)
	}
	g, err := os.ReadFile(tsv)
	if err != nil || !strings.HasPrefix(string(g), "starttime\tseconds\tctime\tdtime\tttime\twait\n") || strings.Count(string(g), "\n") != 21 {
		t.Errorf("-g file: %v\n%s", err, g)
	}
}

func TestRunHTMLSkipsFiles(t *testing.T) {
	url, _ := startDocServer(t)
	csv := filepath.Join(t.TempDir(), "p.csv")
	status, stdout, stderr := runArgs(t, t.Context(), "ab", "-n", "3", "-x", "border=1", "-e", csv, url+"/")
	if status != 0 || stderr != "" {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	if !strings.HasPrefix(stdout, "<p>\n This is ApacheBench") || !strings.Contains(stdout, "</p>\n<p>\n..done\n\n\n<table border=1>\n") {
		t.Errorf("HTML stdout:\n%s", stdout)
	}
	if _, err := os.Stat(csv); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-e file written in HTML mode (stat: %v)", err)
	}
}

func TestRunCSVOpenFailure(t *testing.T) {
	url, _ := startDocServer(t)
	status, stdout, stderr := runArgs(t, t.Context(), "ab", "-n", "2", "-e", "/nonexistent/dir/p.csv", "-g", "/nonexistent/g.tsv", url+"/")
	if status != 1 || stderr != "Cannot open CSV output file: No such file or directory\n" {
		t.Errorf("status %d, stderr %q; want 1 and ab's perror line", status, stderr)
	}
	if !strings.Contains(stdout, "Percentage of the requests served within a certain time (ms)\n") {
		t.Errorf("the report must be printed before the file error; stdout:\n%s", stdout)
	}
}

func TestRunGnuplotOpenFailure(t *testing.T) {
	url, _ := startDocServer(t)
	csv := filepath.Join(t.TempDir(), "p.csv")
	status, _, stderr := runArgs(t, t.Context(), "ab", "-n", "2", "-e", csv, "-g", "/nonexistent/g.tsv", url+"/")
	if status != 1 || stderr != "Cannot open gnuplot output file: No such file or directory\n" {
		t.Errorf("status %d, stderr %q", status, stderr)
	}
	if _, err := os.Stat(csv); err != nil {
		t.Errorf("the CSV file comes first and must exist: %v", err)
	}
}

// failingWriter fails every write, like a closed pipe.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestRunStdoutWriteError(t *testing.T) {
	var errb bytes.Buffer
	status := run(t.Context(), []string{"ab", "-V"}, failingWriter{}, &errb)
	if status == 0 || errb.String() != "gab: stdout: broken pipe\n" {
		t.Errorf("status %d, stderr %q; want non-zero and gab: stdout: broken pipe", status, errb.String())
	}
}

func TestRunInterrupted(t *testing.T) {
	url, hits := startDocServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	var status int
	var out, errb bytes.Buffer
	go func() {
		defer close(done)
		status = run(ctx, []string{"ab", "-n", "10", "-w", url + "/hang"}, &out, &errb)
	}()
	for hits.Load() == 0 {
		select {
		case <-done:
			t.Fatalf("run ended before any request: status %d, stderr %q", status, errb.String())
		case <-time.After(time.Millisecond):
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop after cancellation")
	}
	// SIGINT: text report even with -w, no "..done", exit 1.
	if status != 1 || !strings.Contains(out.String(), "</p>\n<p>\n\n\nServer Software:") || strings.Contains(out.String(), "..done") {
		t.Errorf("status %d, stdout:\n%s\nstderr %q", status, out.String(), errb.String())
	}
}

func TestRunFatalTotalOfN(t *testing.T) {
	url, _ := startDocServer(t)
	status, stdout, stderr := runArgs(t, t.Context(), "ab", "-s", "1", "-n", "5", url+"/hang-after-2")
	if status != 119 || stderr != "apr_pollset_poll: The timeout specified has expired (70007)\n" ||
		!strings.HasSuffix(stdout, "(be patient)...Total of 2 requests completed\n") {
		t.Errorf("status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
}

func TestRunVerboseDump(t *testing.T) {
	url, _ := startDocServer(t)
	status, stdout, _ := runArgs(t, t.Context(), "ab", "-v", "2", "-n", "1", "-H", "X-A: b", url+"/v")
	host := strings.TrimPrefix(url, "http://")
	want := "(be patient)...INFO: GET header == \n---\nGET /v HTTP/1.0\r\nX-A: b\r\nHost: " + host +
		"\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n\n---\nLOG: header received:\nHTTP/1.0 200 OK\r\n"
	if status != 0 || !strings.Contains(stdout, want) {
		t.Errorf("status %d, stdout:\n%q\nwant it to contain\n%q", status, stdout, want)
	}
}

func TestRunDemo(t *testing.T) {
	status, stdout, stderr := runArgs(t, t.Context(), "gab", "--demo", "-k", "-n", "200", "-c", "4")
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	for _, want := range []string{
		"Benchmarking 127.0.0.1 (be patient)\n", "Server Software:        gab-demo/" + version + "\n",
		"Document Length:        100 bytes\n", "Complete requests:      200\n", "Failed requests:        0\n",
		"Keep-Alive requests:    200\n", " 100%",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo stdout lacks %q:\n%s", want, stdout)
		}
	}
	if stderr != "Completed 100 requests\nCompleted 200 requests\nFinished 200 requests\n" {
		t.Errorf("demo stderr %q", stderr)
	}
}

type failingResolver struct{}

func (failingResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestMainProcess is not a test: run as a child process (GAB_MAIN_ARGS set),
// it is gab's main with those arguments, so signal handling can be tested
// without building a binary.
func TestMainProcess(t *testing.T) {
	args := os.Getenv("GAB_MAIN_ARGS")
	if args == "" {
		t.Skip("helper process for TestSignalStopsRun")
	}
	os.Args = append([]string{"ab"}, strings.Split(args, "\x1f")...)
	main()
}

func TestSignalStopsRun(t *testing.T) {
	url, hits := startDocServer(t)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		hits.Store(0)
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMainProcess$")
		cmd.Env = append(os.Environ(), "GAB_MAIN_ARGS="+strings.Join([]string{"-n", "5", url + "/hang"}, "\x1f"))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for hits.Load() == 0 && time.Now().Before(deadline) { // wait until the request is in flight
			time.Sleep(time.Millisecond)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("%v: exit %v, want status 1; stderr %q", sig, err, errb.String())
		}
		if !strings.Contains(out.String(), "(be patient)...\n\nServer Software:        \n") || strings.Contains(out.String(), "..done") {
			t.Errorf("%v: want a partial text report without ..done; stdout:\n%s", sig, out.String())
		}
	}
}

// TestDemoNeverSpins: the demo's server runs on gab's own cores, so its
// event loops must sleep rather than poll (client.Config.NoSpin).
func TestDemoNeverSpins(t *testing.T) {
	var o cliOptions
	stop, err := startDemo(&o)
	if err != nil {
		t.Fatalf("startDemo: %v", err)
	}
	defer stop()
	if !o.Config.NoSpin || o.URL == "" {
		t.Errorf("after startDemo: NoSpin %v, URL %q; want NoSpin and the demo's URL", o.Config.NoSpin, o.URL)
	}
}
