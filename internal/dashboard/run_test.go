package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gab/client"
	"gab/internal/live"
	"gab/report"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startRun is a dashboard run attached to live outputs of its own, begun,
// with the stream its intervals come through.
func startRun(t *testing.T) (d *Run, lo *live.Outputs, st *live.Stream, stderr *lockedBuffer) {
	t.Helper()
	stderr = &lockedBuffer{}
	d, err := Start(RunConfig{Addr: "127.0.0.1:0", Title: "t", Figure: "f", Refresh: time.Second, Stderr: stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background(), false) })
	lo, err = live.Open(live.Spec{}, "run", "", io.Discard, stderr)
	if err != nil {
		t.Fatal(err)
	}
	d.Attach(lo)
	d.Begin(report.LiveOptions{Start: time.Now(), Interval: time.Second})
	var cfg client.Config
	st = lo.Begin(&cfg, "http://127.0.0.1/", "", time.Second)
	return d, lo, st, stderr
}

// state is what the dashboard's /state says.
func state(t *testing.T, d *Run) State {
	t.Helper()
	_, body := get(t, http.DefaultClient, "GET", d.srv.URL()+"state", "")
	var st State
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("%v: %q", err, body)
	}
	return st
}

func failedInterval(i int) client.Interval {
	return client.Interval{Start: time.Duration(i) * time.Second, Length: time.Second, Failures: 1}
}

// The dashboard takes the run's intervals as a sink of the live outputs'
// hub: every interval reaches the page, which is rendered once the queue is
// empty.
func TestRunTakesEveryInterval(t *testing.T) {
	d, lo, st, stderr := startRun(t)
	for i := range 5 {
		st.OnInterval(failedInterval(i))
	}
	lo.Close(context.Background(), 0, false) // the sinks handle what they queued
	if s := state(t, d); s.Failed != 5 || s.Final {
		t.Fatalf("state %+v, want the 5 intervals' failures on a live page", s)
	}
	if stderr.String() != "gab: dashboard at "+d.srv.URL()+"\n" {
		t.Fatalf("stderr %q", stderr.String())
	}
}

// A render slower than Depth intervals (here: the sink held while more
// are published) drops intervals rather than queue them without bound; the
// page then stays as it was, and stderr says so.
func TestRunQueueIsBounded(t *testing.T) {
	d, lo, st, stderr := startRun(t)
	d.mu.Lock() // a render under way
	for i := range Depth + 10 {
		st.OnInterval(failedInterval(i))
	}
	d.mu.Unlock()
	lo.Close(context.Background(), 0, false)
	if s := state(t, d); s.Failed > 1 {
		t.Fatalf("state %+v: the page followed a run whose intervals were dropped", s)
	}
	if !strings.Contains(stderr.String(), " intervals dropped (the page fell behind; it stays as it was until the run ends)\n") {
		t.Fatalf("stderr %q", stderr.String())
	}
	// The finished report still replaces the page.
	d.Finish([]byte("<html>final</html>"), &client.Result{Complete: 7})
	if s := state(t, d); !s.Final || s.Complete != 7 {
		t.Fatalf("state %+v after Finish", s)
	}
}
