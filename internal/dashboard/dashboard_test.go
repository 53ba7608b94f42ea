package dashboard

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		":8080":          "127.0.0.1:8080",
		"127.0.0.1:0":    "127.0.0.1:0",
		"[::1]:9":        "[::1]:9",
		"0.0.0.0:8080":   "0.0.0.0:8080",
		"localhost:8080": "localhost:8080",
	} {
		if got, err := ListenAddr(in); err != nil || got != want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"8080", "", "127.0.0.1", "127.0.0.1:", "a:b:c"} {
		if got, err := ListenAddr(in); err == nil {
			t.Errorf("ListenAddr(%q) = %q, want an error", in, got)
		}
	}
}

func get(t *testing.T, c *http.Client, method, url, host string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestServer: / is the page last published with a policy that lets it load
// nothing from elsewhere, /state its state with a growing sequence number;
// another path is 404, another method 405, and a Host that is not a
// loopback name (DNS rebinding) 421; after Close nothing answers.
func TestServer(t *testing.T) {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := &http.Client{Timeout: 20 * time.Second}
	resp, body := get(t, c, "GET", s.URL(), "")
	if resp.StatusCode != 200 || !strings.Contains(body, `<span id="complete">0</span>`) {
		t.Fatalf("before the first page: %d %q", resp.StatusCode, body)
	}
	if s.NextSeq() != 2 {
		t.Fatalf("next seq %d, want 2 (the starting page is 1)", s.NextSeq())
	}
	s.Publish([]byte("<p>page 2</p>"), State{Complete: 5, Failed: 1, ElapsedS: 0.5})
	resp, body = get(t, c, "GET", s.URL(), "")
	if body != "<p>page 2</p>" || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("page: %q, headers %v", body, resp.Header)
	}
	_, body = get(t, c, "GET", s.URL()+"state", "")
	var st State
	if err := json.Unmarshal([]byte(body), &st); err != nil || st != (State{Seq: 2, Complete: 5, Failed: 1, ElapsedS: 0.5}) {
		t.Errorf("state %q: %+v, %v", body, st, err)
	}
	resp, body = get(t, c, "HEAD", s.URL(), "")
	if resp.StatusCode != 200 || body != "" || resp.ContentLength != int64(len("<p>page 2</p>")) {
		t.Errorf("HEAD: %d, %q, length %d", resp.StatusCode, body, resp.ContentLength)
	}
	for _, c2 := range []struct {
		method, path, host string
		want               int
	}{
		{"GET", "other", "", 404},
		{"POST", "", "", 405},
		{"GET", "", "evil.example:80", 421},
		{"GET", "", "localhost:1", 200},
		{"GET", "", "[::1]:1", 200},
	} {
		if resp, _ := get(t, c, c2.method, s.URL()+c2.path, c2.host); resp.StatusCode != c2.want {
			t.Errorf("%s /%s Host %q: %d, want %d", c2.method, c2.path, c2.host, resp.StatusCode, c2.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Linger(ctx, time.Hour); err != nil { // ctx ended: no wait
		t.Fatal(err)
	}
	if _, err := c.Get(s.URL()); err == nil {
		t.Error("the server still answers after Linger")
	}
}

// TestListenTaken: an address in use is an error from Listen, before any run.
func TestListenTaken(t *testing.T) {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s2, err := Listen(s.Addr().String()); err == nil {
		s2.Close()
		t.Fatal("a second Listen on the same address succeeded")
	}
}
