package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// A run that ends with an error is measured as a finished one, by the plain
// run and by gab sweep alike (runcmd.MeasureRun): its document carries the client's
// and --server-pid's CPU over what it ran.
func TestFatalRunMeasuresServerCPU(t *testing.T) {
	pid := strconv.Itoa(os.Getpid()) // the test's own process serves the requests
	check := func(what string, doc map[string]any) {
		t.Helper()
		if field(doc, "ending") != "fatal" || fmt.Sprint(field(doc, "error.exit_code")) != "119" ||
			fmt.Sprint(field(doc, "report.complete_requests")) != "2" {
			t.Errorf("%s: not the document of a run that timed out after 2 requests: %v", what, doc)
		}
		pids, _ := field(doc, "server_cpu.pids").([]any)
		if field(doc, "server_cpu.label") != "self" || len(pids) != 1 || fmt.Sprint(pids[0]) != pid {
			t.Errorf("%s: server_cpu %v", what, field(doc, "server_cpu"))
		}
		if field(doc, "extended.client_cpu") == nil {
			t.Errorf("%s: no client_cpu", what)
		}
	}

	url, _ := startDocServer(t)
	status, stdout, stderr := runGab(t, "ab", "--format", "json", "--server-pid", "self="+pid, "-s", "1", "-n", "5", url+"/hang-after-2")
	if status != 119 {
		t.Fatalf("run: status %d, stderr %q", status, stderr)
	}
	check("run", decodeOne(t, stdout))

	url, _ = startDocServer(t)
	file := filepath.Join(t.TempDir(), "sweep.json")
	status, _, stderr = runGab(t, "ab", "sweep", "--json", file, "--server-pid", "self="+pid, "-s", "1", "-n", "5", "self="+url+"/hang-after-2")
	if status != exitError {
		t.Fatalf("sweep: status %d, stderr %q", status, stderr)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	points, _ := field(decodeOne(t, string(raw)), "points").([]any)
	if len(points) != 1 {
		t.Fatalf("sweep document: %s", raw)
	}
	runs, _ := points[0].(map[string]any)["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("sweep document: %s", raw)
	}
	doc, _ := runs[0].(map[string]any)["document"].(map[string]any)
	check("sweep run", doc)
}
