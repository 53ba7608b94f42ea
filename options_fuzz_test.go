package main

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"gab/client"
)

// FuzzHeaderOptions feeds arbitrary -H, -A, -P and -C values through the
// command-line parser: each must reach the request as ab sends it (-H verbatim,
// -A/-P as Basic credentials that decode back, the last -C as the Cookie line),
// whatever the value looks like (an option, a long option, control bytes).
func FuzzHeaderOptions(f *testing.F) {
	f.Add("X-Test: 1", "user:pass", "proxy:secret", "a=b")
	f.Add("Host: example.org:8080", "", " \tspaced:pw", "")
	f.Add("--http2", "-n", "--", "-k")
	f.Add("accept: text/html\r\nX-Injected: 1", "u:\xff\x00p", "p:", "c=1; d=2")
	f.Add("", strings.Repeat("x", 300), "x", "\r\n")
	f.Fuzz(func(t *testing.T, header, user, proxyUser, cookie string) {
		argv := []string{"ab", "-H", header, "-A", user, "-P", proxyUser, "-C", "ignored", "-C", cookie, "http://127.0.0.1:8080/p"}
		var out, errb bytes.Buffer
		o, status, done := parseArgs(argv, &out, &errb)
		_, userErr := client.AuthLine(user, false)
		_, proxyErr := client.AuthLine(proxyUser, true)
		if userErr != nil || proxyErr != nil {
			if !done || status == 0 || errb.Len() == 0 {
				t.Fatalf("%q: over-long credentials accepted (status %d, stderr %q)", argv, status, errb.String())
			}
			return
		}
		if done || status != 0 {
			t.Fatalf("%q: refused (status %d, stderr %q)", argv, status, errb.String())
		}
		req := string(o.Config.Request)
		if !strings.HasPrefix(req, "GET /p HTTP/1.0\r\n") || !strings.HasSuffix(req, "\r\n\r\n") || o.Config.HeadLen != len(req) {
			t.Fatalf("%q: malformed request %q", argv, req)
		}
		if !strings.Contains(req, "\r\n"+header+"\r\n") {
			t.Fatalf("-H %q not sent verbatim: %q", header, req)
		}
		if !strings.Contains(req, "\r\nCookie: "+cookie+"\r\n") || strings.Contains(req, "ignored") && !strings.Contains(header+cookie, "ignored") {
			t.Fatalf("-C %q (the last one) not sent as the cookie: %q", cookie, req)
		}
		for _, c := range []struct{ name, cred string }{{"Authorization", user}, {"Proxy-Authorization", proxyUser}} {
			plain := strings.TrimLeft(c.cred, " \t\n\v\f\r")
			line := "\r\n" + c.name + ": Basic " + base64.StdEncoding.EncodeToString([]byte(plain)) + "\r\n"
			if !strings.Contains(req, line) {
				t.Fatalf("no %q line for %q in %q", line, c.cred, req)
			}
		}
	})
}
