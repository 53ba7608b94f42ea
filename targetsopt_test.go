package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"gab/internal/h3test"
)

// requestRecorder records every request as one line: protocol, method, URI,
// the headers the test names, and the body.
type requestRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (rr *requestRecorder) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var hs []string
		for _, name := range []string{"X-Account-Id", "Authorization", "Cookie", "Content-Type", "X-Common", "User-Agent", "Accept"} {
			if v := r.Header.Values(name); len(v) > 0 {
				hs = append(hs, name+"="+strings.Join(v, "|"))
			}
		}
		line := fmt.Sprintf("%s %s %s [%s] %q", r.Proto, r.Method, r.URL.RequestURI(), strings.Join(hs, " "), body)
		rr.mu.Lock()
		rr.seen = append(rr.seen, line)
		rr.mu.Unlock()
		w.Header().Set("Content-Length", "2")
		if r.Method != "HEAD" {
			w.Write([]byte("ok"))
		}
	})
}

// distinct is every distinct request seen, with its count, sorted.
func (rr *requestRecorder) distinct() []string {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	n := map[string]int{}
	for _, s := range rr.seen {
		n[s]++
	}
	var out []string
	for s, k := range n {
		out = append(out, fmt.Sprintf("%d× %s", k, s))
	}
	sort.Strings(out)
	return out
}

// targetsFixture writes vegeta's http and JSON target files for base (with
// a body file) and the requests a server must see from -n 6 over them, with
// -H "X-Common: c" -C "c=1" -A "u:p" -T "text/x".
func targetsFixture(t *testing.T, base string) (httpFile, jsonFile string, want func(proto string) []string) {
	dir := t.TempDir()
	bodyFile := filepath.Join(dir, "thing.json")
	if err := os.WriteFile(bodyFile, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	httpFile = filepath.Join(dir, "targets.txt")
	httpText := "# three targets\n" +
		"GET " + base + "/dragon?item=ball\n" +
		"X-Account-ID: 8675309\n" +
		"\n" +
		"DELETE " + base + "/remove\n" +
		"Authorization: Token DEADBEEF\n" +
		"Cookie: own=2\n" +
		"\n" +
		"POST " + base + "/things\n" +
		"Content-Type: application/json\n" +
		"@" + bodyFile + "\n"
	if err := os.WriteFile(httpFile, []byte(httpText), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonFile = filepath.Join(dir, "targets.json")
	jsonText := `{"method":"GET","url":"` + base + `/dragon?item=ball","header":{"X-Account-ID":["8675309"]}}` + "\n" +
		`{"method":"DELETE","url":"` + base + `/remove","header":{"Authorization":["Token DEADBEEF"],"Cookie":["own=2"]}}` + "\n" +
		`{"method":"POST","url":"` + base + `/things","header":{"Content-Type":["application/json"]},"body":"` + base64.StdEncoding.EncodeToString([]byte(`{"a":1}`)) + `"}` + "\n"
	if err := os.WriteFile(jsonFile, []byte(jsonText), 0o644); err != nil {
		t.Fatal(err)
	}
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("u:p"))
	ua := "User-Agent=ApacheBench/2.3 Accept=*/*"
	want = func(proto string) []string {
		return []string{
			fmt.Sprintf("2× %s DELETE /remove [Authorization=Token DEADBEEF Cookie=own=2 X-Common=c %s] \"\"", proto, ua),
			fmt.Sprintf("2× %s GET /dragon?item=ball [X-Account-Id=8675309 Authorization=%s Cookie=c=1 X-Common=c %s] \"\"", proto, auth, ua),
			fmt.Sprintf("2× %s POST /things [Authorization=%s Cookie=c=1 Content-Type=application/json X-Common=c %s] \"{\\\"a\\\":1}\"", proto, auth, ua),
		}
	}
	return httpFile, jsonFile, want
}

// Each target's method, headers and body reach the server exactly, in both
// formats, on HTTP/1.0, HTTP/1.1, HTTP/2 (both paths) and HTTP/3; -H, -C, -A
// apply to every target, a target's own header wins, -T yields to a target's
// Content-Type.
func TestTargetsReachServerExactly(t *testing.T) {
	rr := &requestRecorder{}
	srv := httptest.NewUnstartedServer(rr.handler())
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	h3rr := &requestRecorder{}
	h3port := h3test.Serve(t, h3rr.handler(), nil)
	common := []string{"-n", "6", "-H", "X-Common: c", "-C", "c=1", "-A", "u:p", "-T", "text/x"}
	for _, c := range []struct {
		name, proto string
		args        []string
		rec         *requestRecorder
		base        string
	}{
		{"http1.0", "HTTP/1.0", nil, rr, srv.URL},
		{"http1.1 -k -c 2", "HTTP/1.1", []string{"--http1.1", "-k", "-c", "2"}, rr, srv.URL},
		{"http2 --streams 3", "HTTP/2.0", []string{"--http2", "--streams", "3"}, rr, srv.URL},
		{"http2 portable", "HTTP/2.0", []string{"--http2", "--request-timeout", "10s"}, rr, srv.URL},
		{"http3 -c 2", "HTTP/3.0", []string{"--http3", "-c", "2"}, h3rr, fmt.Sprintf("https://127.0.0.1:%d", h3port)},
	} {
		httpFile, jsonFile, want := targetsFixture(t, c.base)
		for _, format := range []string{"http", "json"} {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				c.rec.mu.Lock()
				c.rec.seen = nil
				c.rec.mu.Unlock()
				file := map[string]string{"http": httpFile, "json": jsonFile}[format]
				argv := append(append([]string{"ab", "--targets", file, "--targets-format", format}, common...), c.args...)
				status, stdout, stderr := runGab(t, argv...)
				if status != 0 {
					t.Fatalf("status %d: %s", status, stderr)
				}
				wantLines(t, stdout, "Complete requests:      6", "Failed requests:        0")
				got := c.rec.distinct()
				if w := want(c.proto); strings.Join(got, "\n") != strings.Join(w, "\n") {
					t.Errorf("the server saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
				}
			})
		}
	}
}

// Every bad input is one line naming the file and its line, exit 22, before
// any request.
func TestTargetsErrors(t *testing.T) {
	rr := &requestRecorder{}
	srv := httptest.NewServer(rr.handler())
	defer srv.Close()
	dir := t.TempDir()
	for _, c := range []struct {
		name, format, text string
		args               []string
		want               string
	}{
		{"bad header", "http", "GET " + srv.URL + "/\nno colon\n", nil, ":2: a header line is"},
		{"missing body", "http", "GET " + srv.URL + "/a\n\nPOST " + srv.URL + "/b\n@" + filepath.Join(dir, "none") + "\n", nil, ":4: body file " + filepath.Join(dir, "none") + ": No such file or directory"},
		{"body is a directory", "http", "POST " + srv.URL + "/b\n@" + dir + "\n", nil, ":2: body file " + dir + ": not a regular file"},
		{"bad url", "http", "GET http://127.0.0.1:99999/\n", nil, ":1: not a URL ab accepts"},
		{"bad json", "json", "{\"method\":\"GET\",\"url\":\"" + srv.URL + "/\"}\n{\n", nil, ":2: not a JSON target"},
		{"bad base64", "json", "{\"method\":\"GET\",\"url\":\"" + srv.URL + "/\",\"body\":\"%%\"}\n", nil, ":1: the body is not base64"},
		{"empty", "http", "# nothing\n", nil, ": no target in the file"},
		{"with -p", "http", "GET " + srv.URL + "/\n", []string{"-i"}, "-i, -p, -u and -m cannot be used with it"},
		{"with --urls", "http", "GET " + srv.URL + "/\n", []string{"--urls", "x"}, "--targets and --urls exclude each other"},
	} {
		file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.WriteFile(file, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		argv := append([]string{"ab", "-n", "2", "--targets", file, "--targets-format", c.format}, c.args...)
		status, stdout, stderr := runGab(t, argv...)
		if status != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: status %d, stdout %q, stderr %q; want 22 and one line with %q", c.name, status, stdout, stderr, c.want)
		}
		if strings.HasPrefix(c.want, ":") && !strings.Contains(stderr, "--targets "+file+c.want) {
			t.Errorf("%s: %q does not name the file and line as %q", c.name, stderr, file+c.want)
		}
	}
	if got := rr.distinct(); len(got) != 0 {
		t.Errorf("the server saw requests from refused command lines: %v", got)
	}
}
