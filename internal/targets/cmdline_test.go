package targets

import (
	"bytes"
	"strings"
	"testing"

	"gab/client"
)

func serverName(t client.Target) string { return t.Host }

// LoadList refuses each option a list cannot go with, in one line, and
// leaves the configuration without a list; else it reads stdin's URLs
// ("-") into the configuration.
func TestLoadListRefusesAndLoads(t *testing.T) {
	urls := "http://127.0.0.1:1/a\n# comment\nhttp://127.0.0.1:1/b\n"
	for _, c := range []struct {
		name string
		o    Options
		r    Run
		cfg  client.Config
		want string
	}{
		{"-X", Options{URLs: "-"}, Run{Proxy: true}, client.Config{}, "--urls cannot be used with -X (each URL's origin is a connection's)"},
		{"--cgi", Options{Targets: "-"}, Run{}, client.Config{Protocol: client.CGI}, "--targets cannot be used with --cgi (a CGI program has no URL)"},
		{"-p", Options{Targets: "-"}, Run{MethodGiven: true}, client.Config{}, "--targets gives each request's method and body: -i, -p, -u and -m cannot be used with it"},
		{"--early-data", Options{Targets: "-"}, Run{}, client.Config{Protocol: client.HTTP3, TLS: client.TLSOptions{EarlyData: true}},
			"--early-data cannot be used with --targets (0-RTT data is for GET and HEAD only)"},
		{"-c 0", Options{URLs: "-", Order: "sequential"}, Run{}, client.Config{}, "--urls - names 1 origins (scheme, host, port) and -c is 0: each connection keeps to one origin, so -c must be at least 1"},
	} {
		cfg := c.cfg
		c.r.Config, c.r.ServerName = &cfg, serverName
		_, _, err := c.o.LoadList(strings.NewReader(urls), c.r)
		if err == nil || err.Error() != c.want || cfg.URLs != nil {
			t.Errorf("%s: got %v (list %v), want %q", c.name, err, cfg.URLs, c.want)
		}
	}
	cfg := client.Config{Concurrency: 1}
	o := Options{URLs: "-", Order: "random", Seed: 9}
	first, limit, err := o.LoadList(strings.NewReader(urls), Run{Config: &cfg, ServerName: serverName})
	if err != nil || first.Path != "/a" || limit != 0 || cfg.URLs == nil || cfg.URLs.Len() != 2 || !cfg.URLs.Random || cfg.URLs.Seed != 9 {
		t.Fatalf("load: first %+v limit %d err %v list %+v", first, limit, err, cfg.URLs)
	}
}

// LoadLog refuses the options a log cannot go with, else reads it into the
// configuration: its URLs, schedule, count, rate and its one method.
func TestLoadLogRefusesAndLoads(t *testing.T) {
	log := `1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "HEAD /a HTTP/1.0" 200 2326` + "\n" +
		`1.2.3.4 - - [10/Oct/2000:13:55:37 -0700] "HEAD /b HTTP/1.0" 200 2326` + "\n" +
		`1.2.3.4 - - [10/Oct/2000:13:55:38 -0700] "HEAD /c HTTP/1.0" 200 2326` + "\n"
	base, err := client.ParseURL("http://127.0.0.1:1/")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Replay: "-", Speed: 1}
	for _, c := range []struct {
		r    Run
		cfg  client.Config
		want string
	}{
		{Run{MethodGiven: true}, client.Config{}, "--replay sends each line's method: -i, -p, -u and -m cannot be used with it"},
		{Run{Proxy: true}, client.Config{}, "--replay cannot be used with -X"},
		{Run{}, client.Config{Protocol: client.CGI}, "--replay cannot be used with --cgi"},
	} {
		cfg := c.cfg
		c.r.Config = &cfg
		if _, err := o.LoadLog(strings.NewReader(log), base, true, c.r, nil); err == nil || err.Error() != c.want || cfg.URLs != nil {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	cfg := client.Config{Requests: 1}
	cfg.Spec.Method = "GET"
	var warn bytes.Buffer
	first, err := o.LoadLog(strings.NewReader(log), base, true, Run{Config: &cfg, Requests: 2, ServerName: serverName}, &warn)
	if err != nil || first.Path != "/a" || cfg.Requests != 2 || len(cfg.Replay) != 2 || cfg.URLs.Len() != 2 ||
		cfg.Spec.Method != "HEAD" || !cfg.Spec.HeadMethod || !(cfg.Rate > 0) || warn.Len() != 0 {
		t.Errorf("load: first %+v err %v cfg %+v warn %q", first, err, cfg, warn.String())
	}
}
