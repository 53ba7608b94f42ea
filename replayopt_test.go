package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// arrival is a request as a recording server saw it.
type arrival struct {
	at           time.Time
	method, path string
}

func arrivalServer(t *testing.T) (*httptest.Server, func() []arrival) {
	var mu sync.Mutex
	var seen []arrival
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := arrival{time.Now(), r.Method, r.URL.RequestURI() + " " + r.Proto}
		mu.Lock()
		seen = append(seen, a)
		mu.Unlock()
		w.Header().Set("Content-Length", "2")
		w.Write([]byte("ok"))
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, func() []arrival {
		mu.Lock()
		defer mu.Unlock()
		return append([]arrival(nil), seen...)
	}
}

// A 5-second log (12 requests: 3, 1, 2, 4 and 2 a second, one a POST, and
// two lines that are not requests) replayed at --replay-speed 2: every
// request arrives in the log's order, none before its due time (its
// second's offset plus its share of the second, halved), the run lasts at
// least the last one's (2.25 s, bounded from below by each due time), and
// the bad lines are named in one warning
// and never sent.
func TestReplayArrivesOnSchedule(t *testing.T) {
	for _, c := range []struct {
		name, proto string
		args        []string
	}{{"http1.1 -k", "HTTP/1.1", []string{"--http1.1", "-k"}}, {"http2", "HTTP/2.0", []string{"--http2"}}} {
		t.Run(c.name, func(t *testing.T) { replayOnSchedule(t, c.proto, c.args) })
	}
}

func replayOnSchedule(t *testing.T, proto string, extra []string) {
	srv, seen := arrivalServer(t)
	perSecond := []int{3, 1, 2, 4, 2}
	var log strings.Builder
	var want []string
	var due []time.Duration
	line := 0
	for s, m := range perSecond {
		for j := range m {
			method, path := "GET", fmt.Sprintf("/s%d/r%d?x=1", s, j)
			if s == 3 && j == 1 {
				method = "POST"
			}
			fmt.Fprintf(&log, "10.0.0.%d - - [02/Dec/2026:10:00:%02d +0000] \"%s %s HTTP/1.1\" 200 12 \"-\" \"curl/8\"\n", j, 10+s, method, path)
			line++
			want = append(want, method+" "+path+" "+proto)
			sec := float64(s) + float64(j)/float64(m)
			due = append(due, time.Duration(sec/2*float64(time.Second)))
			if s == 1 {
				log.WriteString("this is not a log line\n")
				line++
			}
		}
	}
	log.WriteString(`10.0.0.9 - - [02/Dec/2026:10:00:14 +0000] "-" 400 0 "-" "-"` + "\n")
	file := writeFile(t, "access.log", log.String())
	before := time.Now()
	status, stdout, stderr := runGab(t, append(append([]string{"ab", "--replay", file, "--replay-speed", "2"}, extra...), srv.URL+"/")...)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	if !strings.Contains(stderr, "--replay "+file+": 2 lines are not requests, not sent (lines 5, 14)\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr %q, want one warning naming lines 5 and 14", stderr)
	}
	wantLines(t, stdout, "Complete requests:      12", "Failed requests:        0")
	got := seen()
	if len(got) != len(want) {
		t.Fatalf("the server saw %d requests, want %d", len(got), len(want))
	}
	for k, a := range got {
		if a.method+" "+a.path != want[k] {
			t.Errorf("request %d: %s %s, want %s (the log's order)", k, a.method, a.path, want[k])
		}
		if early := before.Add(due[k]).Sub(a.at); early > 0 {
			t.Errorf("request %d (%s) arrived %v before its due time %v", k, want[k], early, due[k])
		}
		if k > 0 && a.at.Before(got[k-1].at) {
			t.Errorf("request %d arrived before request %d", k, k-1)
		}
	}
	t.Logf("the log's 12 requests over 4.5 s arrived at speed 2 within %v of the first (due: 2.25 s)", got[len(got)-1].at.Sub(got[0].at))
}

// Replay's errors: one line each, exit 22, before any request.
func TestReplayErrors(t *testing.T) {
	srv, seen := arrivalServer(t)
	paths := writeFile(t, "paths.log", `h - - [02/Dec/2026:10:00:10 +0000] "GET /a HTTP/1.1" 200 1`+"\n")
	empty := writeFile(t, "empty.log", "nothing here\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--replay", paths}, ":1: the log's requests have paths only: give the URL to replay them against"},
		{[]string{"--replay", empty, srv.URL + "/"}, ": no request in the log"},
		{[]string{"--replay", paths, "--replay-speed", "0", srv.URL + "/"}, "--replay-speed must be a positive number"},
		{[]string{"--replay-speed", "2", srv.URL + "/"}, "--replay-speed needs --replay"},
		{[]string{"--replay", paths, "--rate", "10", srv.URL + "/"}, "--replay excludes --rate"},
		{[]string{"--replay", paths, "-i", srv.URL + "/"}, "-i, -p, -u and -m cannot be used with it"},
	} {
		status, stdout, stderr := runGab(t, append([]string{"ab"}, c.args...)...)
		if status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want 22 and one line with %q", c.args, status, stdout, stderr, c.want)
		}
	}
	if n := len(seen()); n != 0 {
		t.Errorf("the server saw %d requests from refused command lines", n)
	}
}
