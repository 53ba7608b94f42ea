package client

import (
	"testing"
	"time"
)

// urlConfig is a GET of rawURL over protocol p with ab's defaults, for the
// transports that build their requests from Spec (CGI, HTTP/2).
func urlConfig(t testing.TB, rawURL string, n, c int, p Protocol) Config {
	t.Helper()
	target, err := ParseURL(rawURL)
	if err != nil {
		t.Fatalf("ParseURL(%q): %v", rawURL, err)
	}
	return Config{
		Target:      target,
		Spec:        RequestSpec{Method: "GET", Target: target.Path, Host: target.HostField()},
		Requests:    n,
		Concurrency: c,
		Timeout:     30 * time.Second,
		Protocol:    p,
	}
}
