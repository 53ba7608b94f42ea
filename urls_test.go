package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"gab/internal/h3test"
)

// pathRecorder is a server that records the path of every request, in the
// order it saw them (counted before it answers).
type pathRecorder struct {
	mu     sync.Mutex
	paths  []string
	protos []string // each request's protocol (HTTP/1.0, HTTP/2.0)
	srv    *httptest.Server
}

func newPathRecorder(t *testing.T) *pathRecorder {
	t.Helper()
	p := &pathRecorder{}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.paths = append(p.paths, r.URL.RequestURI())
		p.protos = append(p.protos, r.Proto)
		p.mu.Unlock()
		w.Header().Set("Content-Length", "10")
		w.Write([]byte("0123456789"))
	}))
	p.srv.Config.Protocols = new(http.Protocols)
	p.srv.Config.Protocols.SetHTTP1(true)
	p.srv.Config.Protocols.SetUnencryptedHTTP2(true) // h2c with prior knowledge, as --http2 speaks it
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

func (p *pathRecorder) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.paths...)
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *pathRecorder) reset() {
	p.mu.Lock()
	p.paths, p.protos = nil, nil
	p.mu.Unlock()
}

func countOf(paths []string) map[string]int {
	m := map[string]int{}
	for _, p := range paths {
		m[p]++
	}
	return m
}

// Three URLs, -n 300: the server sees each in turn, 100 times each; with
// -c 1 in the file's order exactly. Blank lines and comments are skipped.
func TestURLsEachInTurn(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"http1.0 -c 1", []string{"-c", "1"}},
		{"http1.0 -k -c 3", []string{"-k", "-c", "3"}},
		{"http1.1 -k -c 2", []string{"--http1.1", "-k", "-c", "2"}},
		{"portable -k -c 3", []string{"-k", "-c", "3", "--request-timeout", "10s"}},
		{"http2 -c 1", []string{"-c", "1", "--http2"}},
		{"http2 -c 2 --streams 4", []string{"-c", "2", "--http2", "--streams", "4"}},
		{"http2 portable -c 2 --streams 2", []string{"-c", "2", "--http2", "--streams", "2", "--request-timeout", "10s"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := newPathRecorder(t)
			file := writeFile(t, "urls.txt", fmt.Sprintf("# three pages\n%[1]s/a\n\n  %[1]s/b?q=1  \n%[1]s/c\n", rec.srv.URL))
			argv := append([]string{"ab", "-n", "300", "--urls", file}, c.args...)
			status, stdout, stderr := runGab(t, argv...)
			if status != 0 {
				t.Fatalf("status %d: %s", status, stderr)
			}
			seen := rec.seen()
			got := countOf(seen)
			if len(seen) != 300 || got["/a"] != 100 || got["/b?q=1"] != 100 || got["/c"] != 100 {
				t.Errorf("server saw %d requests: %v, want 100 each of /a, /b?q=1, /c", len(seen), got)
			}
			if c.args[1] == "1" {
				for i, p := range seen {
					if want := []string{"/a", "/b?q=1", "/c"}[i%3]; p != want {
						t.Fatalf("request %d was %s, want %s (in turn)", i, p, want)
					}
				}
			}
			wantLines(t, stdout, "Complete requests:      300", "Failed requests:        0", "Document Path:          /a")
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if want := map[bool]string{true: "HTTP/2.0", false: "HTTP/1."}[strings.Contains(c.name, "http2")]; !strings.HasPrefix(rec.protos[0], want) {
				t.Errorf("the server saw %s, want %s", rec.protos[0], want)
			}
		})
	}
}

// --http3: the h3test server sees the three URLs in turn, 100 each, over
// QUIC; two origins keep to their own connections.
func TestURLsHTTP3(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]map[string]int{} // by the request's Host (the server's port)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if seen[r.Host] == nil {
			seen[r.Host] = map[string]int{}
		}
		seen[r.Host][r.URL.RequestURI()+" "+r.Proto]++
		mu.Unlock()
		w.Header().Set("Content-Length", "2")
		w.Write([]byte("ok"))
	})
	p1, p2 := h3test.Serve(t, handler, nil), h3test.Serve(t, handler, nil)
	one, two := fmt.Sprintf("127.0.0.1:%d", p1), fmt.Sprintf("127.0.0.1:%d", p2)
	file := writeFile(t, "urls.txt", "https://"+one+"/a\nhttps://"+one+"/b?x=%20\nhttps://"+one+"/c\n")
	status, stdout, stderr := runGab(t, "ab", "--http3", "-n", "300", "-c", "2", "--streams", "3", "--urls", file)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	wantLines(t, stdout, "Complete requests:      300", "Failed requests:        0")
	mu.Lock()
	if got := seen[one]; got["/a HTTP/3.0"] != 100 || got["/b?x=%20 HTTP/3.0"] != 100 || got["/c HTTP/3.0"] != 100 {
		t.Errorf("server saw %v, want 100 each of /a, /b?x=%%20, /c over HTTP/3", got)
	}
	mu.Unlock()
	file = writeFile(t, "two.txt", "https://"+one+"/one\nhttps://"+two+"/two\n")
	mu.Lock()
	seen = map[string]map[string]int{}
	mu.Unlock()
	status, _, stderr = runGab(t, "ab", "--http3", "-n", "40", "-c", "2", "--urls", file)
	mu.Lock()
	defer mu.Unlock()
	if a, b := seen[one], seen[two]; status != 0 || len(a) != 1 || len(b) != 1 || a["/one HTTP/3.0"]+b["/two HTTP/3.0"] != 40 {
		t.Errorf("status %d (%s): first server saw %v, second %v; want each its own path, 40 in all", status, stderr, a, b)
	}
}

// --url-order random with a seed: the same sequence for the same seed,
// another for another seed, every URL taken.
func TestURLsRandomOrderSeeded(t *testing.T) {
	order := func(seed string) []string {
		rec := newPathRecorder(t)
		var b strings.Builder
		for i := range 10 {
			fmt.Fprintf(&b, "%s/p%d\n", rec.srv.URL, i)
		}
		file := writeFile(t, "urls.txt", b.String())
		status, _, stderr := runGab(t, "ab", "-n", "200", "--urls", file, "--url-order", "random", "--seed", seed)
		if status != 0 {
			t.Fatalf("status %d: %s", status, stderr)
		}
		return rec.seen()
	}
	a, b, c := order("7"), order("7"), order("8")
	if strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("seed 7 twice gave two orders")
	}
	if strings.Join(a, " ") == strings.Join(c, " ") {
		t.Errorf("seeds 7 and 8 gave the same order")
	}
	if n := len(countOf(a)); n != 10 {
		t.Errorf("%d distinct URLs of 10 in 200 random picks", n)
	}
}

// URLs on two origins: each connection keeps to one origin (the server of
// each sees only its own paths), and -n counts them all.
func TestURLsTwoOrigins(t *testing.T) {
	one, two := newPathRecorder(t), newPathRecorder(t)
	file := writeFile(t, "urls.txt", fmt.Sprintf("%s/one\n%s/two\n", one.srv.URL, two.srv.URL))
	for _, extra := range [][]string{{"-k"}, {}, {"--http2", "--streams", "3"}} {
		one.reset()
		two.reset()
		argv := append([]string{"ab", "-n", "40", "-c", "4", "--urls", file}, extra...)
		status, stdout, stderr := runGab(t, argv...)
		if status != 0 {
			t.Fatalf("%v: status %d: %s", extra, status, stderr)
		}
		a, b := countOf(one.seen()), countOf(two.seen())
		if a["/two"] != 0 || b["/one"] != 0 || a["/one"]+b["/two"] != 40 || a["/one"] == 0 || b["/two"] == 0 {
			t.Errorf("%v: first server saw %v, second %v; want each its own paths, 40 in all", extra, a, b)
		}
		wantLines(t, stdout, "Complete requests:      40", "Failed requests:        0")
	}
}

// Every bad input is one line naming the file and the line, exit 22, before
// any request.
func TestURLsErrors(t *testing.T) {
	rec := newPathRecorder(t)
	u := rec.srv.URL
	dir := t.TempDir()
	for _, c := range []struct {
		name, text string
		args       []string
		want       string
	}{
		{"relative", u + "/a\nexample.org/x\n", nil, ":2: not an absolute http:// or https:// URL: example.org/x"},
		{"no path", "# c\n" + u + "\n", nil, ":2: not a URL ab accepts"},
		{"bad port", "http://127.0.0.1:99999/x\n", nil, ":1: not a URL ab accepts"},
		{"control", u + "/a\x01b\n", nil, ":1: a space or control character in the path"},
		{"empty", "# nothing\n\n", nil, ": no URL in the file"},
		{"too many origins", "http://127.0.0.1:1/a\nhttp://127.0.0.1:2/a\n", []string{"-c", "1"}, "names 2 origins (scheme, host, port) and -c is 1"},
		{"with a URL", u + "/a\n", []string{u + "/"}, "--urls takes its URLs from its file and no URL argument"},
		{"with -X", u + "/a\n", []string{"-X", "127.0.0.1:1"}, "--urls cannot be used with -X"},
		{"seed without random", u + "/a\n", []string{"--seed", "3"}, "--seed needs --url-order random"},
		{"bad order", u + "/a\n", []string{"--url-order", "shuffled"}, "--url-order must be sequential or random"},
	} {
		file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".txt")
		if err := os.WriteFile(file, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		argv := append([]string{"ab", "-n", "2", "--urls", file}, c.args...)
		status, stdout, stderr := runGab(t, argv...)
		if status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: status %d, stdout %q, stderr %q; want 22 and one line with %q", c.name, status, stdout, stderr, c.want)
		}
		if strings.HasPrefix(c.want, ":") && !strings.Contains(stderr, "--urls "+file+c.want) {
			t.Errorf("%s: %q does not name the file and line as %q", c.name, stderr, file+c.want)
		}
	}
	status, _, stderr := runGab(t, "ab", "--urls", filepath.Join(dir, "missing"))
	if status != exitUsage || !strings.Contains(stderr, "missing: No such file or directory") {
		t.Errorf("missing file: status %d, %q", status, stderr)
	}
	if n := len(rec.seen()); n != 0 {
		t.Errorf("the server saw %d requests from refused command lines", n)
	}
}

// A URL file is held compactly: 100,000 lines (4.4 MB) take less heap than
// the file's size plus 8 bytes a line (4 of offset, the rest the offsets'
// slack), and "-" reads the list from stdin.
func TestURLsHeldCompactly(t *testing.T) {
	var b strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&b, "http://127.0.0.1:9/catalog/item/%07d?v=1\n", i)
	}
	file := writeFile(t, "urls.txt", b.String())
	size := uint64(b.Len())
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	o, status, done, _, stderr := parse(t, "ab", "-n", "5", "--urls", file)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if done || status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	if l := o.Config.URLs; l.Len() != 100000 || string(l.RequestTarget(99999)) != "/catalog/item/0099999?v=1" {
		t.Fatalf("%d URLs, last %q", l.Len(), l.RequestTarget(l.Len()-1))
	}
	if grew := after.HeapInuse - min(after.HeapInuse, before.HeapInuse); grew > size+8*100000 {
		t.Errorf("the list of a %d-byte file holds %d bytes of heap, want at most %d", size, grew, size+8*100000)
	}
	runtime.KeepAlive(o)

	rec := newPathRecorder(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old; r.Close() }()
	fmt.Fprintf(w, "%[1]s/in\n%[1]s/out\n", rec.srv.URL)
	w.Close()
	status, _, stderr = runGab(t, "ab", "-n", "4", "--urls", "-")
	if got := countOf(rec.seen()); status != 0 || got["/in"] != 2 || got["/out"] != 2 {
		t.Errorf("--urls -: status %d (%s), server saw %v", status, stderr, got)
	}
}

// --extended and the JSON document break the run down per target, adding up
// to the whole; gab merge of two documents keeps the breakdown, summed.
func TestURLsResultsPerTarget(t *testing.T) {
	rec := newPathRecorder(t)
	file := writeFile(t, "urls.txt", fmt.Sprintf("%[1]s/a\n%[1]s/b\n%[1]s/a\n", rec.srv.URL))
	dir := t.TempDir()
	var docs []string
	for i := range 2 {
		doc := filepath.Join(dir, fmt.Sprintf("run%d.json", i))
		status, stdout, stderr := runGab(t, "ab", "-n", "60", "-c", "4", "--urls", file, "--extended", "--json", doc,
			"--shard", fmt.Sprintf("%d/2", i), "--run-id", "targets")
		if status != 0 {
			t.Fatalf("status %d: %s", status, stderr)
		}
		if !strings.Contains(stdout, "Per target (times in ms):") || !strings.Contains(stdout, "GET "+rec.srv.URL+"/a\n") {
			t.Errorf("--extended has no per-target table:\n%s", stdout)
		}
		r := readRun(t, doc)
		if len(r.Targets) != 2 || r.Targets[0].Complete != 20 || r.Targets[1].Complete != 10 ||
			r.Targets[0].Complete+r.Targets[1].Complete != int64(r.Report.CompleteRequests) ||
			r.Targets[0].BodyBytes+r.Targets[1].BodyBytes != r.Report.HTMLTransferredBytes {
			t.Errorf("targets %+v do not add up to the run's %d complete, %d body bytes", r.Targets, r.Report.CompleteRequests, r.Report.HTMLTransferredBytes)
		}
		docs = append(docs, doc)
	}
	status, stdout, stderr := runGab(t, "gab", "merge", "--format", "json", docs[0], docs[1])
	if status != 0 {
		t.Fatalf("merge: status %d: %s", status, stderr)
	}
	merged := writeFile(t, "merged.json", stdout)
	m := readRun(t, merged)
	if len(m.Targets) != 2 || m.Targets[0].Complete != 40 || m.Targets[1].Complete != 20 || m.Targets[0].Sums.Count != 40 {
		t.Errorf("merged targets %+v, want 40 and 20", m.Targets)
	}
}
