package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"gab/client"
	"gab/internal/abprint"
	"gab/internal/targets"
)

const (
	testURL    = "http://127.0.0.1:18080/f100.txt"
	testTLSURL = "https://127.0.0.1:18443/f100.txt"
)

// parse runs parseArgs on a command line whose words are separated by spaces.
func parse(t *testing.T, argv ...string) (o *cliOptions, status int, done bool, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	o, status, done = parseArgs(argv, &out, &errb)
	return o, status, done, out.String(), errb.String()
}

func usageOf(argv0 string) string {
	var b bytes.Buffer
	abprint.WriteUsage(&b, argv0)
	return b.String()
}

func TestUsageMatchesAB(t *testing.T) {
	want, err := os.ReadFile("testdata/golden/err-help.stderr")
	if err != nil {
		t.Fatal(err)
	}
	if got := usageOf("ab"); got != string(want) {
		t.Errorf("usage text differs from ab's:\n got %q\nwant %q", got, want)
	}
}

// TestOptionEffects checks options that take effect at once and in order.
func TestOptionEffects(t *testing.T) {
	tests := []struct {
		name  string
		argv  []string
		check func(o *cliOptions) bool
	}{
		{"default n and c", []string{"ab", testURL}, func(o *cliOptions) bool {
			return o.Config.Requests == 1 && o.Config.Concurrency == 1 && o.Config.Timeout == 30*time.Second && o.Progress == 0
		}},
		{"-t then -n keeps n", []string{"ab", "-t", "1", "-n", "3", testURL}, func(o *cliOptions) bool {
			return o.Config.Requests == 3 && o.Config.TimeLimit == time.Second
		}},
		{"-n then -t sets 50000", []string{"ab", "-n", "3", "-t", "1", testURL}, func(o *cliOptions) bool {
			return o.Config.Requests == 50000 && o.Progress == 5000
		}},
		{"-t 0 still sets 50000, no limit", []string{"ab", "-t", "0", testURL}, func(o *cliOptions) bool {
			return o.Config.Requests == 50000 && o.Config.TimeLimit == 0
		}},
		{"negative -t stops at once", []string{"ab", "-t", "-3", testURL}, func(o *cliOptions) bool {
			return o.Config.TimeLimit == time.Nanosecond
		}},
		{"--no-cap lifts -t's 50000", []string{"ab", "-t", "5", "--no-cap", testURL}, func(o *cliOptions) bool {
			return o.Config.Requests == math.MaxInt32 && o.NoCap
		}},
		{"--no-cap before -t too, and a later -n wins", []string{"ab", "--no-cap", "-t", "5", "-n", "7", testURL}, func(o *cliOptions) bool {
			return o.Config.Requests == 7
		}},
		{"cluster -kq", []string{"ab", "-kq", "-n", "1000", testURL}, func(o *cliOptions) bool {
			return o.Config.KeepAlive && o.Progress == 0 && o.Config.Quiet
		}},
		{"attached value", []string{"ab", "-n100", "-c10", testURL}, func(o *cliOptions) bool {
			return o.Config.Requests == 100 && o.Config.Concurrency == 10
		}},
		{"cluster ending with an option that takes the next word", []string{"ab", "-kn", "5", testURL}, func(o *cliOptions) bool {
			return o.Config.KeepAlive && o.Config.Requests == 5
		}},
		{"cluster with attached value", []string{"ab", "-n", "5", "-kc2n5", testURL}, func(o *cliOptions) bool {
			return o.Config.KeepAlive && o.Config.Concurrency == 2 && o.Config.Requests == 5
		}},
		{"atoi stops at the first non-digit", []string{"ab", "-n", " +10k", testURL}, func(o *cliOptions) bool {
			return o.Config.Requests == 10
		}},
		{"-c 0 passes validation", []string{"ab", "-c", "0", testURL}, func(o *cliOptions) bool {
			return o.Config.Concurrency == 0
		}},
		{"-s", []string{"ab", "-s", "2.9", testURL}, func(o *cliOptions) bool { return o.Config.Timeout == 2*time.Second }},
		{"-s -1 waits forever", []string{"ab", "-s", "-1", testURL}, func(o *cliOptions) bool { return o.Config.Timeout < 0 }},
		{"progress max(100, n/10)", []string{"ab", "-n", "151", testURL}, func(o *cliOptions) bool {
			return o.Progress == 100 && !o.Config.Quiet
		}},
		{"progress n/10", []string{"ab", "-n", "1234", testURL}, func(o *cliOptions) bool { return o.Progress == 123 }},
		{"no progress at 150", []string{"ab", "-n", "150", testURL}, func(o *cliOptions) bool { return o.Progress == 0 && o.Config.Quiet }},
		{"-x -y -z imply -w", []string{"ab", "-z", "bgcolor=#eee", testURL}, func(o *cliOptions) bool {
			return o.HTML && o.CellAttrs == "bgcolor=#eee" && o.TableAttrs == ""
		}},
		{"default td attribute", []string{"ab", "-w", testURL}, func(o *cliOptions) bool { return o.HTML && o.CellAttrs == "bgcolor=white" }},
		{"output options", []string{"ab", "-d", "-S", "-l", "-r", "-g", "g.tsv", "-e", "e.csv", "-v", "3", "-b", "4096", "-B", "127.0.0.1", testURL}, func(o *cliOptions) bool {
			c := o.Config
			return o.NoPercentiles && o.NoConfidence && c.VariableLength && c.KeepGoing && o.GnuplotFile == "g.tsv" &&
				o.CSVFile == "e.csv" && c.Verbosity == 3 && c.SocketBuffer == 4096 && c.LocalAddr == "127.0.0.1"
		}},
		{"-X host:port sends the URL as typed", []string{"ab", "-X", "127.0.0.1:18081", "example.com/x"}, func(o *cliOptions) bool {
			return o.Proxy && o.Config.ProxyHost == "127.0.0.1" && o.Config.ProxyPort == 18081 &&
				strings.HasPrefix(string(o.Config.Request), "GET example.com/x HTTP/1.0\r\n")
		}},
		{"-X without port is port 0", []string{"ab", "-X", "proxy", testURL}, func(o *cliOptions) bool {
			return o.Config.ProxyHost == "proxy" && o.Config.ProxyPort == 0
		}},
		{"-m renames after -p, body kept", []string{"ab", "-p", "testdata/golden/post.data", "-m", "PUT", testURL}, func(o *cliOptions) bool {
			return o.Config.Spec.Method == "PUT" && o.Config.Spec.HasBody && string(o.Config.Spec.Body) == "a=1&b=2"
		}},
		{"-i then -m is the custom method", []string{"ab", "-i", "-m", "X", testURL}, func(o *cliOptions) bool {
			return o.Config.Spec.Method == "X" && !o.Config.Spec.HeadMethod
		}},
		{"-i is HEAD", []string{"ab", "-i", testURL}, func(o *cliOptions) bool {
			return o.Config.Spec.Method == "HEAD" && o.Config.Spec.HeadMethod
		}},
		{"-m HEAD is HEAD for gab", []string{"ab", "-m", "HEAD", testURL}, func(o *cliOptions) bool { return o.Config.Spec.HeadMethod }},
		{"only the last -C counts, even an empty one", []string{"ab", "-C", "a=1", "-C", "", testURL}, func(o *cliOptions) bool {
			return bytes.Contains(o.Config.Request, []byte("\r\nCookie: \r\n")) && !bytes.Contains(o.Config.Request, []byte("a=1"))
		}},
		{"-T without a body is ignored", []string{"ab", "-T", "x/y", testURL}, func(o *cliOptions) bool {
			return !bytes.Contains(o.Config.Request, []byte("Content-type"))
		}},
		{"-f prefix match", []string{"ab", "-f", "tls1.2-ish", testURL}, func(o *cliOptions) bool { return o.Config.TLS.Protocol == "TLS1.2" }},
		{"-f unknown is ignored", []string{"ab", "-f", "TLS1.3", "-f", "SSL2", testURL}, func(o *cliOptions) bool { return o.Config.TLS.Protocol == "TLS1.3" }},
		{"-f TLS1.5 is TLS1", []string{"ab", "-f", "TLS1.5", testURL}, func(o *cliOptions) bool { return o.Config.TLS.Protocol == "TLS1" }},
		{"-f all", []string{"ab", "-f", "all", testURL}, func(o *cliOptions) bool { return o.Config.TLS.Protocol == "ALL" }},
		{"TLS options", []string{"ab", "-Z", "AES128-SHA", "-E", "c.pem", "-I", "https://localhost/"}, func(o *cliOptions) bool {
			c := o.Config.TLS
			return c.Ciphers == "AES128-SHA" && c.CertFile == "c.pem" && c.NoSNI && c.ServerName == ""
		}},
		{"SNI is the URL host", []string{"ab", "https://localhost:8443/"}, func(o *cliOptions) bool { return o.Config.TLS.ServerName == "localhost" }},
		{"no SNI for an IP", []string{"ab", "https://127.0.0.1/"}, func(o *cliOptions) bool { return o.Config.TLS.ServerName == "" }},
		{"no SNI for an IPv6 address", []string{"ab", "https://[::1]/"}, func(o *cliOptions) bool { return o.Config.TLS.ServerName == "" }},
		{"SNI from -H Host, verbatim", []string{"ab", "-H", "host:  example.org:99 ", "https://127.0.0.1/"}, func(o *cliOptions) bool {
			return o.Config.TLS.ServerName == "example.org:99"
		}},
		{"no SNI for a partial IPv4 Host", []string{"ab", "-H", "Host: 10.1.", "https://localhost/"}, func(o *cliOptions) bool {
			return o.Config.TLS.ServerName == ""
		}},
		{"no SNI for an empty Host", []string{"ab", "-H", "Host:", "https://localhost/"}, func(o *cliOptions) bool {
			return o.Config.TLS.ServerName == ""
		}},
		{"URL target", []string{"ab", "-n", "2", "-c", "2", "-k", "https://[::1]:8443/a?b#c"}, func(o *cliOptions) bool {
			tg := o.Config.Target
			return tg.TLS && tg.Host == "::1" && tg.Port == 8443 && tg.Path == "/a?b#c" && o.URL == "https://[::1]:8443/a?b#c" &&
				string(o.Config.Request) == "GET /a?b#c HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: [::1]:8443\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n"
		}},
		{"long options anywhere", []string{"ab", "-n", "4", testURL, "--http1.1", "--request-timeout", "2"}, func(o *cliOptions) bool {
			return o.Config.Protocol == client.HTTP11 && o.Config.RequestTimeout == 2*time.Second &&
				strings.HasPrefix(string(o.Config.Request), "GET /f100.txt HTTP/1.1\r\nConnection: close\r\n")
		}},
		{"long option as a short option's argument", []string{"ab", "-H", "--http2", testURL}, func(o *cliOptions) bool {
			return o.Config.Protocol == client.HTTP10 && o.Config.Spec.Headers[0] == "--http2"
		}},
		{"all long options", []string{"ab", "--http2", "--streams=8", "--request-timeout", "1.5s", "--cpus", "2",
			"--sample-limit", "1000", "--verify-tls", "--format", "json", "--json", "out.json", "--percentiles", "50, 99.9",
			"--extended", "--rate", "250.5", "--tls-resume", testTLSURL}, func(o *cliOptions) bool {
			c := o.Config
			return c.Protocol == client.HTTP2 && c.Streams == 8 && c.RequestTimeout == 1500*time.Millisecond && o.CPUs == 2 &&
				c.SampleLimit == 1000 && c.TLS.Verify && c.TLS.Resume && o.Format == "json" && o.JSONFile == "out.json" &&
				len(o.Percentiles) == 2 && o.Percentiles[1] == 99.9 && o.Extended && c.Rate == 250.5
		}},
		{"--percentiles' one rule: 0 to 100, '%' allowed", []string{"ab", "--percentiles", "0,99.9%, 100", testURL}, func(o *cliOptions) bool {
			return len(o.Percentiles) == 3 && o.Percentiles[0] == 0 && o.Percentiles[1] == 99.9 && o.Percentiles[2] == 100
		}},
		{"--cgi", []string{"ab", "--cgi", "./x.cgi", "--cgi-env", "A=1", "--cgi-env=B=", testURL}, func(o *cliOptions) bool {
			c := o.Config
			return c.Protocol == client.CGI && c.CGIProgram == "./x.cgi" && len(c.CGIEnv) == 2 && c.CGIEnv[1] == "B="
		}},
		{"--demo needs no URL", []string{"ab", "--demo", "-n", "5"}, func(o *cliOptions) bool {
			return o.Demo && o.URL == "" && o.Config.Requests == 5
		}},
		{"ab's full handshake per connection by default", []string{"ab", "-n", "5", testTLSURL}, func(o *cliOptions) bool {
			return !o.Config.TLS.Resume && !o.Config.TLS.Verify
		}},
		{"--tls-resume", []string{"ab", "--tls-resume", "-n", "5", testTLSURL}, func(o *cliOptions) bool {
			return o.Config.TLS.Resume && o.Config.Target.TLS
		}},
		{"-- ends the options", []string{"ab", "-n", "2", "--", testURL}, func(o *cliOptions) bool {
			return o.Config.Requests == 2
		}},
		{"illegal option as the last letter: the run goes on", []string{"ab", "-n", "3", "-Y", testURL}, func(o *cliOptions) bool {
			return o.Config.Requests == 3
		}},
		{"illegal ':' option", []string{"ab", "-:", testURL}, func(o *cliOptions) bool { return o.Config.Requests == 1 }},
	}
	for _, tc := range tests {
		o, status, done, _, stderr := parse(t, tc.argv...)
		if done || status != 0 {
			t.Errorf("%s: parseArgs(%q) ended with status %d: %s", tc.name, tc.argv, status, stderr)
			continue
		}
		if !tc.check(o) {
			t.Errorf("%s: parseArgs(%q) gave unexpected options: %+v", tc.name, tc.argv, o)
		}
	}
}

// TestParseErrors checks every way parsing ends early, with exact output.
func TestParseErrors(t *testing.T) {
	dir := t.TempDir()
	usage := usageOf("ab")
	tests := []struct {
		name           string
		argv           []string
		status         int
		stdout, stderr string
	}{
		{"no arguments", []string{"ab"}, 22, "", "ab: wrong number of arguments\n" + usage},
		{"option after the URL", []string{"ab", testURL, "-n", "3"}, 22, "", "ab: wrong number of arguments\n" + usage},
		{"lone dash is an argument", []string{"ab", "-", testURL}, 22, "", "ab: wrong number of arguments\n" + usage},
		{"-- then options", []string{"ab", "--", "-n", "1", testURL}, 22, "", "ab: wrong number of arguments\n" + usage},
		{"-n 0", []string{"ab", "-n", "0", testURL}, 1, "", "Invalid number of requests\n\n"},
		{"-n takes the next word", []string{"ab", "-n", "-k", testURL}, 1, "", "Invalid number of requests\n\n"},
		{"-n with letters attached", []string{"ab", "-knx", testURL}, 1, "", "Invalid number of requests\n\n"},
		{"missing argument", []string{"ab", "-k", "-n"}, 22, "", "ab: option requires an argument -- n\nab: wrong number of arguments\n" + usage},
		{"illegal option first", []string{"ab", "-Y", "-n", "3", testURL}, 22, "", "ab: illegal option -- Y\nab: wrong number of arguments\n" + usage},
		{"illegal option mid-cluster", []string{"ab", "-n", "2", "-Yk", testURL}, 22, "", "ab: illegal option -- Y\nab: wrong number of arguments\n" + usage},
		{"illegal option alone", []string{"ab", "-n", "1", "-Y"}, 22, "", "ab: illegal option -- Y\nab: wrong number of arguments\n" + usage},
		{"argv[0] verbatim, getopt uses its basename", []string{"/opt/x/ab", "-Y", testURL, "x"}, 22, "",
			"ab: illegal option -- Y\n/opt/x/ab: wrong number of arguments\n" + usageOf("/opt/x/ab")},
		{"invalid URL", []string{"ab", "-n", "3", "http://127.0.0.1:18080"}, 22, "", "ab: invalid URL\n" + usage},
		{"URL is checked before concurrency", []string{"ab", "-c", "3", "-n", "2", "http://x"}, 22, "", "ab: invalid URL\n" + usage},
		{"negative concurrency", []string{"ab", "-c", "-1", testURL}, 22, "", "ab: Invalid Concurrency [Range 0..200000]\n" + usage},
		{"too much concurrency", []string{"ab", "-n", "300000", "-c", "200001", testURL}, 22, "", "ab: Invalid Concurrency [Range 0..200000]\n" + usage},
		{"c > n", []string{"ab", "-n", "2", "-c", "5", testURL}, 22, "", "ab: Cannot use concurrency level greater than total number of requests\n" + usage},
		{"c > n after -t then -n", []string{"ab", "-c", "5", "-t", "1", "-n", "3", testURL}, 22, "", "ab: Cannot use concurrency level greater than total number of requests\n" + usage},
		{"HEAD after POST", []string{"ab", "-p", "testdata/golden/post.data", "-i", testURL}, 1, "", "Cannot mix HEAD with other methods\n\n"},
		{"POST after HEAD", []string{"ab", "-i", "-p", "testdata/golden/post.data", testURL}, 1, "", "Cannot mix POST with other methods\n\n"},
		{"PUT after POST", []string{"ab", "-p", "testdata/golden/post.data", "-u", "/nonexistent", testURL}, 1, "", "Cannot mix PUT with other methods\n\n"},
		{"HEAD after -m", []string{"ab", "-m", "FOO", "-i", testURL}, 1, "", "Cannot mix HEAD with other methods\n\n"},
		{"POST twice", []string{"ab", "-p", "testdata/golden/post.data", "-p", "testdata/golden/post.data", testURL}, 1, "", "Cannot mix POST with other methods\n\n"},
		{"missing post file", []string{"ab", "-p", "/nonexistent/post.data", testURL}, 1, "",
			"ab: Could not open POST data file (/nonexistent/post.data): No such file or directory\n"},
		{"post file is a directory", []string{"ab", "-u", dir, testURL}, 1, "", "ab: Could not read POST data file: Is a directory\n"},
		{"credentials too long", []string{"ab", "-A", strings.Repeat("a", 766), testURL}, 1, "", "Authentication credentials too long\n\n"},
		{"proxy credentials too long", []string{"ab", "-P", strings.Repeat("a", 766), testURL}, 1, "", "Proxy credentials too long\n\n"},
		{"-V", []string{"ab", "-V", "-n", "0"}, 0, "This is ApacheBench, Version 2.3 <$Revision$>\n" +
			"Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/\n" +
			"Licensed to The Apache Software Foundation, http://www.apache.org/\n\n", ""},
		{"-V after -x is HTML", []string{"ab", "-x", "border=1", "-V"}, 0, "<p>\n" +
			" This is ApacheBench, Version 2.3 <i>&lt;$Revision$&gt;</i><br>\n" +
			" Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/<br>\n" +
			" Licensed to The Apache Software Foundation, http://www.apache.org/<br>\n</p>\n<p>\n", ""},
		{"--version", []string{"ab", "-n", "0", "--version"}, 0, "gab " + version + "\n", ""},
		{"-X with --http2", []string{"ab", "--http2", "-X", "p:3128", testURL}, 22, "", "gab: -X cannot be used with --http2\n"},
		{"-X with --cgi", []string{"ab", "--cgi", "x", "-X", "p:3128", testURL}, 22, "", "gab: -X cannot be used with --cgi\n"},
		{"-w with --format json", []string{"ab", "-w", "--format", "json", testURL}, 22, "", "gab: -w (and -x, -y, -z) cannot be used with --format json\n"},
		{"-w with --extended", []string{"ab", "-w", "--extended", testURL}, 22, "", "gab: --extended prints text tables and cannot be used with -w (or -x, -y, -z)\n"},
		{"-x with --percentiles", []string{"ab", "-x", "border=1", "--percentiles", "50,99", testURL}, 22, "", "gab: --percentiles prints a text table and cannot be used with -w (or -x, -y, -z)\n"},
		{"--streams without --http2", []string{"ab", "--streams", "10", testURL}, 22, "", "gab: --streams needs --http2 or --http3 (HTTP/1 sends one request at a time per connection)\n"},
		{"--cgi-env without --cgi", []string{"ab", "--cgi-env", "A=b", testURL}, 22, "", "gab: --cgi-env needs --cgi\n"},
		{"--rate 0", []string{"ab", "--rate", "0", testURL}, 22, "", "gab: --rate must be a positive number of requests per second\n"},
		{"--cpus 0", []string{"ab", "--cpus", "0", testURL}, 22, "", "gab: --cpus must be from 1 to 1024, not 0\n"},
		{"--sample-limit 0", []string{"ab", "--sample-limit", "0", testURL}, 22, "", "gab: --sample-limit must be at least 1, not 0\n"},
		{"--request-timeout 0", []string{"ab", "--request-timeout", "0", testURL}, 22, "", "gab: --request-timeout must be positive (leave it out for no per-request timeout)\n"},
		{"bad --fail-if", []string{"ab", "--fail-if", "p99<50", testURL}, 22, "", "gab: --fail-if \"p99<50\": p99 needs a unit: us, ms or s (e.g. p99<50ms)\n"},
		{"bad --warmup", []string{"ab", "--warmup", "0", testURL}, 22, "", "gab: --warmup \"0\": a number of requests from 1 to 2147483647\n"},
		{"bad --percentiles", []string{"ab", "--percentiles", "50,101", testURL}, 22, "", "gab: --percentiles \"50,101\": percentile \"101\" is not a number from 0 to 100\n"},
		{"unknown long option", []string{"ab", "--bogus", testURL}, 22, "", "gab: unknown option --bogus\n"},
		{"long option without its value", []string{"ab", testURL, "--streams"}, 22, "", "gab: --streams needs a value\n"},
		{"--cpus above the limit", []string{"ab", "--cpus", "100000", testURL}, 22, "", "gab: --cpus must be from 1 to 1024, not 100000\n"},
		{"--streams above ab's concurrency", []string{"ab", "--http2", "--streams", "2000000000", testURL}, 22, "",
			"gab: --streams 2000000000 with -c 1 is more than 200000 requests in flight (ab's -c limit)\n"},
		{"--no-cap without -t", []string{"ab", "--no-cap", "-n", "5", testURL}, 22, "", "gab: --no-cap needs -t (it lifts the 50000 requests that -t implies)\n"},
		{"an empty path", []string{"ab", "--json", "", testURL}, 22, "", "gab: --json needs a value (an empty one would leave it without effect)\n"},
		{"--server-pid twice", []string{"ab", "--server-pid", "1", "--server-pid", "web=2", testURL}, 22, "",
			"gab: --server-pid is given 2 times: a run measures one server (list all its processes: --server-pid [LABEL=]PID,PID)\n"},
		{"--server-pid with a bad label", []string{"ab", "--server-pid", "a b=1", testURL}, 22, "",
			"gab: --server-pid: \"a b\" is not a label (letters, digits, '.', '_', '-') in \"a b=1\"\n"},
		{"bad --streams", []string{"ab", "--streams", "0", testURL}, 22, "", "gab: --streams must be at least 1, not 0\n"},
		{"bad --format", []string{"ab", "--format", "xml", testURL}, 22, "", "gab: --format must be text or json, not \"xml\"\n"},
		{"bad --cgi-env", []string{"ab", "--cgi", "x", "--cgi-env", "NOVALUE", testURL}, 22, "", "gab: --cgi-env wants NAME=VALUE, not \"NOVALUE\"\n"},
		{"bad --rate", []string{"ab", "--rate", "-1", testURL}, 22, "", "gab: --rate must be a positive number of requests per second\n"},
		{"--http2 with --http1.1", []string{"ab", "--http2", "--http1.1", testURL}, 22, "", "gab: --http2, --http1.1 and --cgi exclude each other\n"},
		{"--demo with a URL", []string{"ab", "--demo", testURL}, 22, "", "gab: --demo benchmarks its own server and takes no URL (" + testURL + ")\n"},
		{"--tls-resume on http://", []string{"ab", "--tls-resume", testURL}, 22, "", "gab: --tls-resume needs an https:// URL (and no --cgi)\n"},
		{"--tls-resume with --demo", []string{"ab", "--tls-resume", "--demo"}, 22, "", "gab: --tls-resume needs an https:// URL (and no --cgi)\n"},
		{"--tls-resume with --cgi", []string{"ab", "--tls-resume", "--cgi", "x", testTLSURL}, 22, "", "gab: --tls-resume needs an https:// URL (and no --cgi)\n"},
		{"--verify-tls on http://", []string{"ab", "--verify-tls", testURL}, 22, "", "gab: --verify-tls needs an https:// URL (and no --cgi)\n"},
		{"--verify-tls with --cgi", []string{"ab", "--verify-tls", "--cgi", "x", testTLSURL}, 22, "", "gab: --verify-tls needs an https:// URL (and no --cgi)\n"},
	}
	for _, tc := range tests {
		_, status, done, stdout, stderr := parse(t, tc.argv...)
		if !done || status != tc.status || stdout != tc.stdout || stderr != tc.stderr {
			t.Errorf("%s: parseArgs(%q) = status %d (done %v)\nstdout %q\nstderr %q\nwant status %d\nstdout %q\nstderr %q",
				tc.name, tc.argv, status, done, stdout, stderr, tc.status, tc.stdout, tc.stderr)
		}
	}
}

func TestParseBadLongValues(t *testing.T) {
	for _, argv := range [][]string{
		{"ab", "--request-timeout", "soon", testURL},
		{"ab", "--request-timeout=-1s", testURL},
		{"ab", "--percentiles", "50,101", testURL},
		{"ab", "--percentiles", "x", testURL},
		{"ab", "--percentiles", "-1", testURL},
		{"ab", "--cpus", "-2", testURL},
		{"ab", "--sample-limit", "-5", testURL},
		{"ab", "--streams", "many", testURL},
	} {
		_, status, done, stdout, stderr := parse(t, argv...)
		if !done || status != exitUsage || stdout != "" || !strings.HasPrefix(stderr, "gab: ") {
			t.Errorf("parseArgs(%q) = status %d (done %v), stdout %q, stderr %q; want a gab: error and status 22", argv, status, done, stdout, stderr)
		}
	}
}

func TestHelpIsABUsagePlusLongOptions(t *testing.T) {
	_, status, done, stdout, stderr := parse(t, "ab", "-n", "2", "-h", "-Q")
	if !done || status != exitUsage || stdout != "" {
		t.Fatalf("-h: status %d done %v stdout %q", status, done, stdout)
	}
	usage := usageOf("ab")
	if !strings.HasPrefix(stderr, usage+"\n") {
		t.Fatalf("-h output does not start with ab's usage and a blank line:\n%s", stderr)
	}
	for _, name := range []string{"--http2", "--http3", "--http1.1", "--streams", "--cgi", "--cgi-env", "--request-timeout", "--cpus",
		"--no-cap", "--sample-limit", "--demo", "--version", "--verify-tls", "--tls-resume", "--format", "--json", "--percentiles", "--extended", "--rate",
		"--warmup", "--fail-if", "--help"} {
		if !strings.Contains(stderr[len(usage):], name+" ") {
			t.Errorf("-h does not list %s", name)
		}
	}
}

// --help is the full help on stdout (ab's usage, then gab's options, then
// the subcommands) and exit 0.
func TestLongHelp(t *testing.T) {
	_, status, done, stdout, stderr := parse(t, "ab", "--help")
	if !done || status != exitOK || stderr != "" {
		t.Fatalf("--help: status %d done %v stderr %q", status, done, stderr)
	}
	_, _, _, _, dashH := parse(t, "ab", "-h")
	var list strings.Builder
	writeCommands(&list, "ab")
	if stdout != dashH+list.String() {
		t.Errorf("--help on stdout is not -h's text on stderr and the subcommands:\n%s\n---\n%s", stdout, dashH)
	}
	if !strings.HasPrefix(stdout, usageOf("ab")) || !strings.Contains(stdout, "--fail-if EXPR") || !strings.Contains(stdout, "--warmup N|DURATION") {
		t.Errorf("--help is not ab's usage plus gab's options:\n%s", stdout)
	}
}

func TestWarmupAndFailIfOptions(t *testing.T) {
	o, _, done, _, stderr := parse(t, "ab", "--warmup", "500", "--fail-if", "p99<50ms", "--fail-if=failed<1%", testURL)
	if done {
		t.Fatalf("rejected: %s", stderr)
	}
	if o.Config.WarmupRequests != 500 || o.Config.WarmupTime != 0 || len(o.FailIf) != 2 || o.FailIf[0].Key != "p99" || o.FailIf[1].Expr != "failed<1%" {
		t.Errorf("warm-up %d/%v, thresholds %+v", o.Config.WarmupRequests, o.Config.WarmupTime, o.FailIf)
	}
	o, _, done, _, stderr = parse(t, "ab", "--warmup", "1.5s", testURL)
	if done || o.Config.WarmupTime != 1500*time.Millisecond || o.Config.WarmupRequests != 0 {
		t.Errorf("--warmup 1.5s: %v %d %s", o.Config.WarmupTime, o.Config.WarmupRequests, stderr)
	}
	for _, bad := range []string{"-3", "1.5", "0s", "soon", "-1s"} {
		if _, status, done, _, _ := parse(t, "ab", "--warmup", bad, testURL); !done || status != exitUsage {
			t.Errorf("--warmup %s: status %d done %v, want a usage error", bad, status, done)
		}
	}
	// A --fail-if figure that needs a setting (the catalog's Needs) is a
	// usage error without it, and shows what --apdex measures.
	for args, want := range map[string]string{
		"--fail-if apdex>0.9":                      "apdex needs --apdex T",
		"--fail-if server_cpu_us_per_request<50us": "server_cpu_us_per_request needs --server-pid",
	} {
		_, status, done, _, stderr := parse(t, append(append([]string{"ab"}, strings.Fields(args)...), testURL)...)
		if !done || status != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("%s: status %d done %v %q, want a usage error with %q", args, status, done, stderr, want)
		}
	}
	if o, _, done, _, stderr := parse(t, "ab", "--apdex", "50ms", "--fail-if", "apdex>0.9", testURL); done || o.Apdex == nil {
		t.Errorf("--apdex with --fail-if apdex: refused (%s)", stderr)
	}
}

func TestSplitLongOptions(t *testing.T) {
	var lo longOptions
	fs := newLongFlagSet(&lo)
	w := splitArgs(strings.Fields("-n 3 --streams 4 -H --http2 -kX p:1 --http2 URL --json=f -- --demo"), fs)
	if got, want := strings.Join(w.short, " "), "-n 3 -H --http2 -kX p:1 URL -- --demo"; got != want {
		t.Errorf("short words = %q, want %q", got, want)
	}
	if got, want := strings.Join(w.long, " "), "--streams 4 --http2 --json=f"; got != want {
		t.Errorf("long words = %q, want %q", got, want)
	}
	if w.jsonFormat || len(w.secrets) != 0 {
		t.Errorf("jsonFormat %v, secrets %v: want none", w.jsonFormat, w.secrets)
	}
	for _, tc := range []struct {
		args string
		json bool
	}{
		{"--format json URL", true},
		{"URL --format=json", true},
		{"--format text URL", false},
		{"-H --format=json URL", false}, // the header's value, not an option
		{"-- --format=json", false},
	} {
		if got := splitArgs(strings.Fields(tc.args), fs).jsonFormat; got != tc.json {
			t.Errorf("%q: jsonFormat %v, want %v", tc.args, got, tc.json)
		}
	}
}

func TestLooksLikeIPAddress(t *testing.T) {
	for in, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "fe80::1": true, "10": true, "10.1": true, "10.1.2.": true,
		"localhost": false, "example.org:99": false, "256.1": false, "1.2.3.4.5": false, "": false, "fe80::1%lo": false, "1..2": false,
	} {
		if got := looksLikeIPAddress(in); got != want {
			t.Errorf("looksLikeIPAddress(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestReadPostFileEmpty(t *testing.T) {
	name := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(name, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o, status, done, _, stderr := parse(t, "ab", "-u", name, testURL)
	if done || status != 0 {
		t.Fatalf("-u empty file: status %d: %s", status, stderr)
	}
	if !bytes.Contains(o.Config.Request, []byte("PUT /f100.txt HTTP/1.0\r\nContent-length: 0\r\nContent-type: text/plain\r\n")) {
		t.Errorf("request for an empty body: %q", o.Config.Request)
	}
}

// TestRequestsMatchABCaptures parses each captured ab command line and checks
// the request bytes against what the real ab sent.
func TestRequestsMatchABCaptures(t *testing.T) {
	raw, err := os.ReadFile("testdata/golden/request-capture.raw")
	if err != nil {
		t.Fatal(err)
	}
	blocks := bytes.Split(raw, []byte("\n=====\n"))
	n := 0
	for _, block := range blocks {
		if len(block) == 0 {
			continue
		}
		nl := bytes.IndexByte(block, '\n')
		argv := shellWords(strings.TrimPrefix(string(block[:nl]), "# cmd: "))
		for i, a := range argv {
			if a == "post.data" {
				argv[i] = "testdata/golden/post.data"
			}
		}
		o, status, done, _, stderr := parse(t, argv...)
		if done {
			t.Errorf("%q: status %d: %s", argv, status, stderr)
			continue
		}
		if want := block[nl+1:]; !bytes.Equal(o.Config.Request, want) {
			t.Errorf("%q:\n got %q\nwant %q", argv, o.Config.Request, want)
		}
		n++
	}
	if n != 12 {
		t.Errorf("checked %d captures, want 12", n)
	}
}

// shellWords splits a command line written with single quotes, as the golden
// files record them.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{
		"-n 3 -c 2 http://127.0.0.1:18080/f100.txt",
		"-kq -n100 -t 1 -H Host:\x20x https://h/",
		"-Q -n 3 http://h/",
		"-n 2 -Qk http://h/",
		"--http2 --streams 4 -X p:1 http://h/",
		"-n",
		"-- -V",
		"-x a -V",
		"-A user:pass -P x -C c -m X -i http://[::1]:80/",
		"-t 5 --no-cap -c 10 h:/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		argv := append([]string{"ab"}, strings.Split(line, " ")...)
		for _, w := range argv[1:] {
			// -p and -u read files: keep the fuzzer away from the file system.
			if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.ContainsAny(w, "pu") {
				return
			}
			if strings.HasPrefix(w, "--cpus") {
				return // changes GOMAXPROCS only in run, but keep inputs simple
			}
		}
		var out, errb bytes.Buffer
		o, status, done := parseArgs(argv, &out, &errb)
		if done {
			if status == 0 && errb.Len() > 0 {
				t.Fatalf("%q: status 0 but stderr %q", argv, errb.String())
			}
			if status != 0 && errb.Len() == 0 {
				t.Fatalf("%q: status %d with nothing on stderr", argv, status)
			}
			return
		}
		c := o.Config
		if status != 0 || c.Requests < 1 || c.Concurrency < 0 || c.Concurrency > maxConcurrency || c.Concurrency > c.Requests {
			t.Fatalf("%q: accepted n=%d c=%d (status %d)", argv, c.Requests, c.Concurrency, status)
		}
		if !o.Demo {
			if _, err := client.ParseURL(o.URL); err != nil {
				t.Fatalf("%q: accepted invalid URL %q", argv, o.URL)
			}
			if !bytes.HasPrefix(c.Request, []byte(c.Spec.Method+" ")) || c.HeadLen != len(c.Request) {
				t.Fatalf("%q: bad request %q", argv, c.Request)
			}
		}
	})
}

func TestReadPostFileTooBig(t *testing.T) {
	name := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(targets.MaxPostFile + 1); err != nil { // sparse: no disk space used
		t.Fatal(err)
	}
	f.Close()
	_, status, done, _, stderr := parse(t, "ab", "-p", name, testURL)
	if !done || status != exitError || stderr != "ab: Could not allocate POST data buffer\n" {
		t.Errorf("huge post file: status %d (done %v), stderr %q", status, done, stderr)
	}
}

// GAB_NETPOLL is read by the command line, into Config.Portable; the engine
// never reads the environment.
func TestNetpollEnvironmentSetsPortable(t *testing.T) {
	for env, want := range map[string]bool{"go": true, "": false, "epoll": false} {
		t.Setenv("GAB_NETPOLL", env)
		o, _, done, _, stderr := parse(t, "ab", "-n", "2", testURL)
		if done || o.Config.Portable != want {
			t.Errorf("GAB_NETPOLL=%q: Portable %v (done %v, stderr %q), want %v", env, o.Config.Portable, done, stderr, want)
		}
	}
}

// badLongValues gives each of gab's long options a value it refuses, or the
// combination in which it would have no effect.
var badLongValues = map[string][]string{
	"http2":            {"--http2=maybe"},
	"http1.1":          {"--http1.1=maybe"},
	"http3":            {"--http3=maybe"},
	"urls":             {"--urls", "/nonexistent/urls.txt"},
	"url-order":        {"--url-order", "shuffled"},
	"seed":             {"--seed", "x"},
	"targets":          {"--targets", "/nonexistent/targets.txt"},
	"targets-format":   {"--targets-format", "yaml"},
	"replay":           {"--replay", "/nonexistent/access.log"},
	"replay-speed":     {"--replay-speed", "0"},
	"early-data":       {"--early-data"},
	"streams":          {"--streams", "0"},
	"pipeline":         {"--pipeline", "0"},
	"cgi":              {"--cgi", ""},
	"cgi-env":          {"--cgi-env", "NOVALUE"},
	"request-timeout":  {"--request-timeout", "soon"},
	"engine":           {"--engine", "io_uring"},
	"cpus":             {"--cpus", "0"},
	"no-cap":           {"--no-cap"},
	"sample-limit":     {"--sample-limit", "0"},
	"demo":             {"--demo=maybe"},
	"version":          {"--version=maybe"},
	"verify-tls":       {"--verify-tls"},
	"tls-resume":       {"--tls-resume"},
	"format":           {"--format", "xml"},
	"json":             {"--json", ""},
	"percentiles":      {"--percentiles", "50,101"},
	"extended":         {"--extended=maybe"},
	"rate":             {"--rate", "0"},
	"interval":         {"--interval", "1ms"},
	"hlog":             {"--hlog", ""},
	"server-pid":       {"--server-pid", "x"},
	"plot":             {"--plot", "x.txt"},
	"html":             {"--html", ""},
	"histogram":        {"--histogram=maybe"},
	"progress":         {"--progress", "sometimes"},
	"shard":            {"--shard", "x"},
	"shards":           {"--shards", "3"},
	"run-id":           {"--run-id", ""},
	"start-at":         {"--start-at", "soon"},
	"start-at-force":   {"--start-at-force"},
	"warmup":           {"--warmup", "0"},
	"fail-if":          {"--fail-if", "p99<50"},
	"step":             {"--step", "10s"},
	"apdex":            {"--apdex", "0"},
	"ranges":           {"--ranges", "2ms,1ms", "--html", "x.html"},
	"help":             {"--help=maybe"},
	"live":             {"--live", ""},
	"metrics":          {"--metrics", ":x"},
	"metrics-linger":   {"--metrics-linger", "1s"},
	"remote-write":     {"--remote-write", "ftp://127.0.0.1/"},
	"dashboard":        {"--dashboard", "8080"},
	"dashboard-linger": {"--dashboard-linger", "1s"},
}

// oneLineNaming reports whether a usage error is one line (prefix: gab: or
// gab sweep:) that names the option.
func oneLineNaming(stderr, prefix, option string) bool {
	return strings.HasPrefix(stderr, prefix) && strings.HasSuffix(stderr, "\n") &&
		strings.Count(stderr, "\n") == 1 && strings.Contains(stderr, option)
}

// Every long option given a bad value is one line that names it, exit 22 (no
// usage text after it): the table must cover every option there is.
func TestEveryLongOptionErrorIsOneLine(t *testing.T) {
	newLongFlagSet(new(longOptions)).VisitAll(func(f *pflag.Flag) {
		bad, ok := badLongValues[f.Name]
		if !ok {
			t.Errorf("--%s has no bad value in badLongValues", f.Name)
			return
		}
		argv := append(append([]string{"ab"}, bad...), testURL)
		_, status, done, stdout, stderr := parse(t, argv...)
		if !done || status != exitUsage || stdout != "" || !oneLineNaming(stderr, "gab: ", "--"+f.Name) {
			t.Errorf("%q: status %d (done %v), stdout %q, stderr %q; want one line naming --%s, status 22",
				argv, status, done, stdout, stderr, f.Name)
		}
	})
}

// --server-pid LABEL=PID on a single run: the label names the server.
func TestServerPIDLabel(t *testing.T) {
	o, status, done, _, stderr := parse(t, "ab", "--server-pid", "nginx-1.27=12,34", testURL)
	if done || status != exitOK || o.ServerLabel != "nginx-1.27" || len(o.ServerPIDs) != 2 || o.ServerPIDs[1] != 34 {
		t.Fatalf("labelled: status %d done %v label %q pids %v, stderr %q", status, done, o.ServerLabel, o.ServerPIDs, stderr)
	}
	o, _, done, _, _ = parse(t, "ab", "--server-pid", "56", testURL)
	if done || o.ServerLabel != "" || len(o.ServerPIDs) != 1 || o.ServerPIDs[0] != 56 {
		t.Fatalf("unlabelled: label %q pids %v", o.ServerLabel, o.ServerPIDs)
	}
}
