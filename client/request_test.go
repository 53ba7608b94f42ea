package client

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// captures reads testdata/request-capture.raw (the exact bytes the real ab sent,
// as a raw server logged them) into command → request.
func captures(t *testing.T) map[string][]byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/request-capture.raw")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, block := range bytes.Split(raw, []byte("\n=====\n")) {
		if len(block) == 0 {
			continue
		}
		nl := bytes.IndexByte(block, '\n')
		cmd := strings.TrimPrefix(string(block[:nl]), "# cmd: ")
		out[cmd] = block[nl+1:]
	}
	if len(out) != 12 {
		t.Fatalf("request-capture.raw: %d captures, want 12", len(out))
	}
	return out
}

func TestBuildRequestMatchesABCaptures(t *testing.T) {
	body, err := os.ReadFile("testdata/post.data")
	if err != nil {
		t.Fatal(err)
	}
	auth := func(cred string, proxy bool) string {
		l, err := AuthLine(cred, proxy)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	get := func(target, host string) RequestSpec {
		return RequestSpec{Method: "GET", Target: target, Host: host, ContentType: DefaultContentType}
	}
	tests := map[string]RequestSpec{
		"ab -n 1 http://127.0.0.1:18081/capture1": get("/capture1", "127.0.0.1:18081"),
		"ab -n 1 -k -C c1=1 -C c2=2 -A user:pass -P ' puser:ppass' -H 'X-One: 1' -H 'X-Two: 2' 'http://127.0.0.1:18081/capture2?q=1'": {
			Method: "GET", Target: "/capture2?q=1", Host: "127.0.0.1:18081", KeepAlive: true, Cookie: "c2=2",
			Auth:    []string{auth("user:pass", false), auth(" puser:ppass", true)},
			Headers: []string{"X-One: 1", "X-Two: 2"}, ContentType: DefaultContentType,
		},
		"ab -n 1 -p post.data -T application/x-www-form-urlencoded -H 'X-A: b' http://127.0.0.1:18081/capture3": {
			Method: "POST", Target: "/capture3", Host: "127.0.0.1:18081", HasBody: true, Body: body,
			ContentType: "application/x-www-form-urlencoded", Headers: []string{"X-A: b"},
		},
		"ab -n 1 -u post.data http://127.0.0.1:18081/capture4": {
			Method: "PUT", Target: "/capture4", Host: "127.0.0.1:18081", HasBody: true, Body: body, ContentType: DefaultContentType,
		},
		"ab -n 1 -H 'host: example.org:99' -H 'user-agent: foo' -H 'accept: text/html' http://127.0.0.1:18081/capture5": {
			Method: "GET", Target: "/capture5", Host: "127.0.0.1:18081", ContentType: DefaultContentType,
			Headers: []string{"host: example.org:99", "user-agent: foo", "accept: text/html"},
		},
		"ab -n 1 -m PATCH http://127.0.0.1:18081/capture6":       {Method: "PATCH", Target: "/capture6", Host: "127.0.0.1:18081"},
		"ab -n 1 -X 127.0.0.1:18081 http://example.com/capture7": get("http://example.com/capture7", "example.com"),
		"ab -n 1 -i http://localhost:18081/capture8": {
			Method: "HEAD", HeadMethod: true, Target: "/capture8", Host: "localhost:18081",
		},
		"ab -n 1 -p post.data -m PUT http://127.0.0.1:18081/capture9": {
			Method: "PUT", Target: "/capture9", Host: "127.0.0.1:18081", HasBody: true, Body: body, ContentType: DefaultContentType,
		},
		"ab -n 1 127.0.0.1:18081/capture10": get("/capture10", "127.0.0.1:18081"),
		"ab -n 1 -X 127.0.0.1:18081 -P u:p http://[::1]:8080/capture11": {
			Method: "GET", Target: "http://[::1]:8080/capture11", Host: "[::1]:8080", Auth: []string{auth("u:p", true)},
		},
		"ab -n 1 -T text/x-ignored http://127.0.0.1:18081/capture12": {
			Method: "GET", Target: "/capture12", Host: "127.0.0.1:18081", ContentType: "text/x-ignored",
		},
	}
	caps := captures(t)
	for cmd, spec := range tests {
		want, ok := caps[cmd]
		if !ok {
			t.Errorf("no capture for %q", cmd)
			continue
		}
		got, headLen := BuildRequest(spec)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", cmd, got, want)
		}
		if h := bytes.Index(got, []byte("\r\n\r\n")) + 4; headLen != h {
			t.Errorf("%s: headLen = %d, want %d", cmd, headLen, h)
		}
	}
}

func TestBuildRequestHTTP11(t *testing.T) {
	spec := RequestSpec{Method: "GET", Target: "/x", Host: "h", HTTP11: true}
	got, _ := BuildRequest(spec)
	want := "GET /x HTTP/1.1\r\nConnection: close\r\nHost: h\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"
	if string(got) != want {
		t.Errorf("HTTP/1.1 without keep-alive:\n got %q\nwant %q", got, want)
	}
	spec.KeepAlive = true
	got, _ = BuildRequest(spec)
	want = "GET /x HTTP/1.1\r\nHost: h\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"
	if string(got) != want {
		t.Errorf("HTTP/1.1 keep-alive:\n got %q\nwant %q", got, want)
	}
}

func TestBuildRequestEmptyBodyAndLongHead(t *testing.T) {
	got, headLen := BuildRequest(RequestSpec{Method: "POST", Target: "/", Host: "h", HasBody: true, Body: []byte{}, ContentType: "text/plain"})
	if !bytes.Contains(got, []byte("\r\nContent-length: 0\r\nContent-type: text/plain\r\n")) || headLen != len(got) {
		t.Errorf("empty body: got %q (headLen %d)", got, headLen)
	}
	// ab truncates heads at 8191 bytes; gab sends them whole.
	long := "X-Long: " + strings.Repeat("v", 20000)
	got, headLen = BuildRequest(RequestSpec{Method: "GET", Target: "/", Host: "h", Headers: []string{long}})
	if headLen != len(got) || !bytes.HasSuffix(got, []byte("\r\nAccept: */*\r\n\r\n")) || !bytes.Contains(got, []byte(long+"\r\n")) {
		t.Errorf("long head was altered (len %d, headLen %d)", len(got), headLen)
	}
}

func TestBuildRequestEmptyCookie(t *testing.T) {
	got, _ := BuildRequest(RequestSpec{Method: "GET", Target: "/", Host: "h", HasCookie: true})
	if want := "GET / HTTP/1.0\r\nCookie: \r\nHost: h\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"; string(got) != want {
		t.Errorf("-C '':\n got %q\nwant %q", got, want)
	}
}

func TestBuildRequestOverrides(t *testing.T) {
	tests := []struct {
		headers []string
		want    string
	}{
		{[]string{"Host:x"}, "GET / HTTP/1.0\r\nHost:x\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"},
		{[]string{"HOST  : x"}, "GET / HTTP/1.0\r\nHOST  : x\r\nHost: h\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"},
		{[]string{"Hostname: x"}, "GET / HTTP/1.0\r\nHostname: x\r\nHost: h\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"},
		{[]string{"Accept-Encoding: gzip"}, "GET / HTTP/1.0\r\nAccept-Encoding: gzip\r\nHost: h\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"},
		{[]string{"USER-AGENT:"}, "GET / HTTP/1.0\r\nUSER-AGENT:\r\nHost: h\r\nAccept: */*\r\n\r\n"},
		{[]string{"X: a, b", ""}, "GET / HTTP/1.0\r\nX: a, b\r\n\r\nHost: h\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"},
	}
	for _, tc := range tests {
		got, _ := BuildRequest(RequestSpec{Method: "GET", Target: "/", Host: "h", Headers: tc.headers})
		if string(got) != tc.want {
			t.Errorf("headers %q:\n got %q\nwant %q", tc.headers, got, tc.want)
		}
	}
}

func TestHeaderOverridesHostValue(t *testing.T) {
	host, hasHost, _, _ := HeaderOverrides([]string{"Host: a", "host: \t example.org:99 \r"})
	if !hasHost || host != "example.org:99" {
		t.Errorf("HeaderOverrides host = %q, %v; want the last Host value trimmed", host, hasHost)
	}
}

func TestAuthLine(t *testing.T) {
	tests := []struct {
		cred  string
		proxy bool
		want  string
	}{
		{"user:pass", false, "Authorization: Basic dXNlcjpwYXNz"},
		{" \t puser:ppass", true, "Proxy-Authorization: Basic cHVzZXI6cHBhc3M="},
		{"", false, "Authorization: Basic "},
		{"a:b ", false, "Authorization: Basic YTpiIA=="},
	}
	for _, tc := range tests {
		if got, err := AuthLine(tc.cred, tc.proxy); err != nil || got != tc.want {
			t.Errorf("AuthLine(%q, %v) = %q, %v; want %q", tc.cred, tc.proxy, got, err, tc.want)
		}
	}
	if _, err := AuthLine(strings.Repeat("a", 765), false); err != nil {
		t.Errorf("765 bytes: %v, want accepted (base64 + NUL = 1021 bytes)", err)
	}
	_, err := AuthLine("  "+strings.Repeat("a", 766), false)
	var ce *credentialsError
	if !errors.As(err, &ce) || ce.Error() != "Authentication credentials too long\n" {
		t.Errorf("766 bytes: %v, want ab's Authentication credentials too long", err)
	}
	if _, err := AuthLine(strings.Repeat("a", 766), true); err == nil || err.Error() != "Proxy credentials too long\n" {
		t.Errorf("766-byte proxy credentials: %v, want ab's Proxy credentials too long", err)
	}
}

func BenchmarkBuildRequest(b *testing.B) {
	spec := RequestSpec{
		Method: "POST", Target: "/post", Host: "127.0.0.1:8080", KeepAlive: true, Cookie: "a=1",
		Headers: []string{"X-A: 1", "X-B: 2"}, HasBody: true, Body: []byte("a=1&b=2"), ContentType: DefaultContentType,
	}
	b.ReportAllocs()
	for b.Loop() {
		BuildRequest(spec)
	}
}

func FuzzBuildRequest(f *testing.F) {
	f.Add("X-One: 1", "user:pass", "c=1", false)
	f.Add("Host: example.org:99", " puser:ppass", "", true)
	f.Add("user-agent: x\r\nInjected: y", "", "a\x00b", false)
	f.Fuzz(func(t *testing.T, header, cred, cookie string, keepAlive bool) {
		spec := RequestSpec{Method: "GET", Target: "/", Host: "h", KeepAlive: keepAlive, Cookie: cookie, Headers: []string{header}}
		if l, err := AuthLine(cred, false); err == nil {
			spec.Auth = append(spec.Auth, l)
		} else if len(strings.TrimLeft(cred, " \t\n\v\f\r")) <= maxCredentials {
			t.Fatalf("AuthLine(%q) refused short credentials: %v", cred, err)
		}
		req, headLen := BuildRequest(spec)
		if headLen != len(req) {
			t.Fatalf("no body, but headLen %d != len %d", headLen, len(req))
		}
		if !bytes.HasPrefix(req, []byte("GET / HTTP/1.0\r\n")) || !bytes.HasSuffix(req, []byte("\r\n\r\n")) {
			t.Fatalf("malformed frame: %q", req)
		}
		// The -H line is sent verbatim, and each default appears exactly once unless replaced.
		if !bytes.Contains(req, []byte("\r\n"+header+"\r\n")) {
			t.Fatalf("header %q not sent verbatim in %q", header, req)
		}
		_, hasHost, hasUA, hasAccept := HeaderOverrides(spec.Headers)
		for _, d := range []struct {
			line     string
			replaced bool
		}{{"\r\nHost: h\r\n", hasHost}, {"\r\nUser-Agent: ApacheBench/2.3\r\n", hasUA}, {"\r\nAccept: */*\r\n", hasAccept}} {
			if n := bytes.Count(req, []byte(d.line)); !d.replaced && n < 1 {
				t.Fatalf("default %q missing from %q", d.line, req)
			}
		}
	})
}

// BuildRequestWithBody sends exactly BuildRequest's bytes, the body written in
// place (held once: no copy of it outside the request).
func TestBuildRequestWithBody(t *testing.T) {
	body := []byte("0123456789abcdef")
	spec := RequestSpec{Method: "POST", Target: "/x", Host: "h", ContentType: "a/b", Body: body, HasBody: true}
	want, wantHead := BuildRequest(spec)
	spec.Body, spec.HasBody = nil, false // implied, not read
	got, head := BuildRequestWithBody(spec, len(body), func(b []byte) { copy(b, body) })
	if string(got) != string(want) || head != wantHead {
		t.Errorf("got %q (head %d), want %q (head %d)", got, head, want, wantHead)
	}
}
