package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gab/internal/testsrv"
)

// -g past --sample-limit: the rows past the exact store go through a
// temporary file and the file still has every request's row.

// gnuplotTotals checks a -g file's shape and returns its ttime column.
func gnuplotTotals(t *testing.T, name string) []int {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if lines[0] != "starttime\tseconds\tctime\tdtime\tttime\twait" {
		t.Fatalf("header %q", lines[0])
	}
	var totals []int
	for _, line := range lines[1:] {
		f := strings.Split(line, "\t")
		if len(f) != 6 {
			t.Fatalf("row %q has %d fields", line, len(f))
		}
		ttime, err := strconv.Atoi(f[4])
		if err != nil {
			t.Fatalf("row %q: %v", line, err)
		}
		totals = append(totals, ttime)
	}
	return totals
}

// wantNoSpillFiles fails t if dir holds one of the spill's temporary files.
func wantNoSpillFiles(t *testing.T, dir string) {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(dir, "gab-rows-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestGnuplotPastSampleLimitHasEveryRow(t *testing.T) {
	srv, err := testsrv.NewNginx()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, keepAlive := range []bool{false, true} {
		t.Run("k="+strconv.FormatBool(keepAlive), func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp) // where os.TempDir puts the spilled rows
			tsv := filepath.Join(t.TempDir(), "g.tsv")
			argv := []string{"ab", "-n", "3000", "-c", "8", "--sample-limit", "500", "-g", tsv}
			if keepAlive {
				argv = append(argv, "-k")
			}
			argv = append(argv, srv.URL()+"/f100.txt")
			var stdout, stderr bytes.Buffer
			if status := run(context.Background(), argv, &stdout, &stderr); status != 0 {
				t.Fatalf("exit status %d; stderr %q", status, stderr.String())
			}
			out := stdout.String()
			if !strings.Contains(out, "\nComplete requests:      3000\n") {
				t.Errorf("not 3000 complete requests:\n%s", out)
			}
			if !strings.Contains(out, "Statistics from 1 ms histograms past the first 500 requests") {
				t.Errorf("no histogram note in the report:\n%s", out)
			}
			totals := gnuplotTotals(t, tsv)
			if len(totals) != 3000 {
				t.Errorf("%d rows, want 3000", len(totals))
			}
			if !slices.IsSorted(totals) {
				t.Error("rows not sorted by ttime")
			}
			wantNoSpillFiles(t, tmp)
		})
	}
}

// An interrupted run past the limit writes a row for every completed request.
func TestGnuplotInterruptedPastSampleLimit(t *testing.T) {
	ab := buildGab(t)
	url, hits := startSlowServer(t, 2*time.Millisecond, 0)
	tmp := t.TempDir()
	tsv := filepath.Join(t.TempDir(), "g.tsv")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(ab, "-n", "100000", "-c", "4", "--sample-limit", "50", "-g", tsv, url+"/slow")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if !waitFor(20*time.Second, func() bool { return hits.Load() >= 300 }) {
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the run did not get past the limit: stderr %q", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if st := exitStatus(waitExit(t, cmd, done, 10*time.Second)); st != 1 {
		t.Errorf("exit status %d, want 1; stderr %q", st, stderr.String())
	}
	m := completeLine.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no Complete requests line:\n%s", stdout.String())
	}
	complete, _ := strconv.Atoi(m[1])
	if complete <= 50 {
		t.Fatalf("Complete requests %d: not past the limit of 50", complete)
	}
	totals := gnuplotTotals(t, tsv)
	if len(totals) != complete {
		t.Errorf("%d rows, want one per completed request (%d)", len(totals), complete)
	}
	if !slices.IsSorted(totals) {
		t.Error("rows not sorted by ttime")
	}
	wantNoSpillFiles(t, tmp)
}
