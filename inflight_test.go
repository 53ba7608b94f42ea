package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gab/internal/capacity"
)

// holdingServer is a raw HTTP/1 server on loopback that answers each request
// at once with keep-alive, except those hold(k) names (k counts requests
// from 1): their connection stays open and silent until the client closes
// it or the test ends. It counts connections, requests and held requests
// before it answers or holds.
type holdingServer struct {
	url                   string
	conns, requests, held atomic.Int64
}

func startHoldingServer(t *testing.T, hold func(k int64) bool) *holdingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &holdingServer{url: "http://" + ln.Addr().String() + "/"}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	t.Cleanup(func() {
		close(done)
		ln.Close()
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			mu.Lock()
			open[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					for { // the request's head (gab's GET has no body)
						line, err := br.ReadString('\n')
						if err != nil {
							return
						}
						if line == "\r\n" {
							break
						}
					}
					if k := s.requests.Add(1); hold(k) {
						s.held.Add(1)
						go func() { <-done; c.Close() }()
						_, _ = io.Copy(io.Discard, br) // until gab closes, or the test ends
						return
					}
					if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"); err != nil {
						return
					}
				}
			}()
		}
	}()
	return s
}

// A rate run against a server that holds every request: every -c
// connection opens at the start (before, ab's ramp kept 7 of 8 waiting for
// a first response head that never came), each request counts at its age,
// and the connections the server holds are busy, not free: the verdicts do
// not blame gab (before: "client-bound: the schedule fell behind (100 %
// late or unsent) with connections free (0 % busy)").
func TestRateServerHoldsConnections(t *testing.T) {
	srv := startHoldingServer(t, func(int64) bool { return true })
	js := filepath.Join(t.TempDir(), "run.json")
	status, out, errs := runGab(t, "gab", "--rate", "100", "-c", "8", "-t", "2", "-k", "--extended", "--json", js, srv.url)
	if status != 0 {
		t.Fatalf("exit %d\n%s", status, errs)
	}
	if c, r := srv.conns.Load(), srv.requests.Load(); c != 8 || r != 8 {
		t.Errorf("the server saw %d connections and %d requests, want 8 and 8", c, r)
	}
	d := readRun(t, js)
	if d.Outstanding == nil || d.Outstanding.Requests != 8 {
		t.Fatalf("outstanding %+v, want the 8 held requests", d.Outstanding)
	}
	// Each was sent after the run's start and unanswered at its end.
	if a := d.Outstanding.Age; a.MaxUs > d.Report.TimeTakenUs || a.MinUs <= 0 {
		t.Errorf("ages %d to %d µs in a run of %d µs", a.MinUs, a.MaxUs, d.Report.TimeTakenUs)
	}
	if k := strings.Join(d.VerdictKinds(), ","); strings.Contains(k, "client_bound") {
		t.Errorf("verdicts %s:\n%s", k, strings.Join(d.VerdictLines(), "\n"))
	}
	if !strings.Contains(out, "In flight at the stop:  8 requests unanswered when the run stopped") {
		t.Errorf("the report does not say what was in flight:\n%s", out)
	}
}

// The server answers every request but the first, which it holds for the
// whole run: the schedule goes on over the 7 other connections.
func TestRateFirstAnswerHeld(t *testing.T) {
	srv := startHoldingServer(t, func(k int64) bool { return k == 1 })
	status, out, errs := runGab(t, "gab", "--rate", "100", "-c", "8", "-t", "2", "-k", "--extended", srv.url)
	if status != 0 {
		t.Fatalf("exit %d\n%s", status, errs)
	}
	if c, h := srv.conns.Load(), srv.held.Load(); c != 8 || h != 1 {
		t.Errorf("the server saw %d connections and held %d requests, want 8 and 1", c, h)
	}
	if strings.Contains(out, "Complete requests:      0\n") || !strings.Contains(out, "In flight at the stop:  ") {
		t.Errorf("no request answered, or none in flight:\n%s", out)
	}
}

// A capacity step against a server that never answers every 50th request:
// the unanswered requests count at their age in the step's latencies and,
// past the objective, as failed; the step fails (before: failed 0, p99.9 a
// few ms, a pass).
func TestCapacityStepCountsUnanswered(t *testing.T) {
	srv := startHoldingServer(t, func(k int64) bool { return k%50 == 0 })
	ca, err := splitCapacityArgs([]string{"--slo", "p99<50ms", "--step", "0.5s", "--settle", "0.1s", srv.url})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ca.settings()
	if err != nil {
		t.Fatal(err)
	}
	ss, opts, err := capacitySession(ca, s, "gab")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st := s.Judge(400, capacity.RunMeasure(opts, nil)(ctx, 0, s.StepConfig(ss.Bases[0], 400, uncappedRequests), ""))
	held := srv.held.Load()
	t.Logf("step %+v; the server got %d requests and held %d", st, srv.requests.Load(), held)
	if held == 0 {
		t.Fatalf("the server held nothing (%d requests)", srv.requests.Load())
	}
	// Every held request is unanswered at the step's end; others may be
	// in flight then too.
	if st.Outstanding < held {
		t.Errorf("%d requests unanswered at the step's end, the server held %d", st.Outstanding, held)
	}
	if st.Pass || st.Failed == 0 {
		t.Errorf("the step passed or counted no failure: %+v", st)
	}
	if st.P999Us < 50_000 {
		t.Errorf("p99.9 %d µs, below the held requests' ages", st.P999Us)
	}
}
