package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gab/internal/testsrv"
)

// TestGnuplotRendersGabFile feeds gab's -g file to Debian's gnuplot with the
// two recipes people use with ab's file: tab-separated columns (plot
// 'f' using 2:5, seconds against total time) and whitespace-separated columns
// (using 9 smooth sbezier: the ctime-style date spreads over five fields, so
// column 9 is ttime). Both must render a PNG.
func TestGnuplotRendersGabFile(t *testing.T) {
	gnuplotBin := needTool(t, "gnuplot", "gnuplot-nox")
	srv, err := testsrv.NewNginx()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	tsv := filepath.Join(dir, "run.tsv")
	got := runInProcess([]string{"ab", "-n", "40", "-c", "4", "-g", tsv, srv.URL() + "/f100.txt"}, runHooks{})
	if got.Exit != 0 {
		t.Fatalf("gab exit %d: %s", got.Exit, got.Stderr)
	}
	data, err := os.ReadFile(tsv)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); lines != 41 {
		t.Fatalf("-g file has %d lines, want 41 (header + 40 rows)", lines)
	}
	// Each recipe first prints how many data rows gnuplot read from the
	// columns it plots (the header line is skipped as non-numeric).
	recipes := map[string]string{
		"tab.png": "set datafile separator '\\t'\n" +
			"stats '" + tsv + "' using 2:5 nooutput\nprint STATS_records\n" +
			"plot '" + tsv + "' using 2:5 title 'ttime'\n",
		"sbezier.png": "set size 1,0.7\nset grid y\nset xlabel 'request'\nset ylabel 'response time (ms)'\n" +
			"stats '" + tsv + "' using 9 nooutput\nprint STATS_records\n" +
			"plot '" + tsv + "' using 9 smooth sbezier with lines title 'ttime'\n",
	}
	for name, recipe := range recipes {
		png := filepath.Join(dir, name)
		script := "set terminal png size 640,480\nset output '" + png + "'\n" + recipe
		cmd := exec.Command(gnuplotBin)
		cmd.Stdin = strings.NewReader(script)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: gnuplot: %v\n%s", name, err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s: gnuplot did not finish", name)
		}
		img, err := os.ReadFile(png)
		if err != nil {
			t.Fatal(err)
		}
		if len(img) < 1000 || !bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s: %d bytes, not a PNG (%q)", name, len(img), img[:min(len(img), 8)])
		}
		// A sub-second run has one value in the seconds column, and against
		// a fast server every ttime can be 0 ms; gnuplot widens such an
		// empty x or y range with a warning, which is fine.
		var msgs []string
		for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			if !strings.HasPrefix(l, "Warning: empty x range") && !strings.HasPrefix(l, "Warning: empty y range") {
				msgs = append(msgs, l)
			}
		}
		if msg := strings.Join(msgs, "\n"); msg != "40" {
			t.Errorf("%s: gnuplot printed %q, want 40 data rows and no complaint", name, msg)
		}
		t.Logf("%s: %s bytes", name, strconv.Itoa(len(img)))
	}
}
