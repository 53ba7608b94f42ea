package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gab/internal/capacity"
)

// TestCapacityBusyMachineStep: with two CPU hogs beside the search, every
// step carries the single run's busy_machine verdict (in the document and
// the step table), and a rate that failed only on the busy machine ends the
// search disturbed, never as a capacity found (it said "below 1.00 req/s:
// no rate met the objectives" before). The server answers in 20 ms, above
// the objective at any rate, so every step fails whatever the load: 2 and 1
// req/s twice each.
func TestCapacityBusyMachineStep(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		w.Header().Set("Content-Length", "2")
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	startHogs(t, 2)
	d := capacityOf(t, "--slo", "p99<5ms", "--start", "2", "--max-rate", "2", "--step", "0.5s", "--settle", "0.1s", srv.URL+"/")
	r := d.Targets[0].Runs[0]
	if len(r.Steps) != 4 {
		t.Fatalf("%d steps, want 2 and 1 req/s twice each: %+v", len(r.Steps), r.Steps)
	}
	for _, st := range r.Steps {
		if st.Pass || !st.BusyMachine || len(st.Verdicts) == 0 || !strings.HasPrefix(st.Verdicts[0], "busy-machine: ") {
			t.Fatalf("a step beside two hogs: %+v", st)
		}
	}
	if !r.Result.Disturbed || r.Result.Found {
		t.Fatalf("result %+v", r.Result)
	}
	var b strings.Builder
	if err := capacity.WriteText(&b, d); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "fail (") {
			rows++
			if !strings.Contains(l, "  busy") {
				t.Errorf("the step's row lacks busy: %q", l)
			}
		}
	}
	if rows != 4 {
		t.Errorf("%d failing rows in\n%s", rows, b.String())
	}
	for _, w := range []string{"1.00/s: busy-machine: ", "Capacity: disturbed: the machine was busy (1.00 failed only on a busy machine, no rate passed)"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("no %q in\n%s", w, b.String())
		}
	}
}
