package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Resource limits: gab under a low open-file limit.

// runLimited runs argv under prlimit with an open-file limit of 64 (soft and
// hard, so Go cannot raise it) and returns stdout, stderr, the exit status and
// the wall time.
func runLimited(t *testing.T, prlimit string, argv ...string) (stdout, stderr string, status int, took time.Duration) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(prlimit, append([]string{"--nofile=64:64", "--"}, argv...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	err := waitExit(t, cmd, done, 30*time.Second)
	return out.String(), errb.String(), exitStatus(err), time.Since(began)
}

// -c beyond the open-file limit ends the run at once with ab's
// "socket: Too many open files (24)" and exit status 24.
func TestTooManyOpenFiles(t *testing.T) {
	prlimit := needTool(t, "prlimit", "util-linux")
	ab := buildGab(t)
	url, _ := startSlowServer(t, 50*time.Millisecond, 0)
	argv := []string{"-c", "200", "-n", "1000", url + "/"}
	stdout, stderr, status, took := runLimited(t, prlimit, append([]string{ab}, argv...)...)
	if status != 24 || stderr != "socket: Too many open files (24)\n" {
		t.Errorf("exit %d, stderr %q; want 24 and ab's socket: Too many open files (24)", status, stderr)
	}
	if !strings.HasSuffix(stdout, "Benchmarking 127.0.0.1 (be patient)\n") &&
		!strings.Contains(stdout, "Benchmarking 127.0.0.1 (be patient)\nTotal of ") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if took > 5*time.Second {
		t.Errorf("took %v; the error must come at once", took)
	}

	// The real ab says the same, with the same status.
	abPath := realAB(t)
	abOut, abErr, abStatus, _ := runLimited(t, prlimit, append([]string{abPath}, argv...)...)
	if abStatus != status || abErr != stderr {
		t.Errorf("ab: exit %d stderr %q; gab: exit %d stderr %q", abStatus, abErr, status, stderr)
	}
	if !strings.HasSuffix(abOut, "(be patient)\n") {
		t.Errorf("ab's stdout:\n%s", abOut)
	}

	// -k, the same.
	_, stderr, status, took = runLimited(t, prlimit, ab, "-k", "-c", "100", "-n", "100000", url+"/")
	if status != 24 || stderr != "socket: Too many open files (24)\n" || took > 5*time.Second {
		t.Errorf("-k: exit %d, stderr %q, took %v", status, stderr, took)
	}
}
