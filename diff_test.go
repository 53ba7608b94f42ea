package main

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gab/internal/testsrv"
	"gab/internal/testsrv/golden"
)

// The differential suite runs the real ab and gab (built, linked as "ab")
// on the same command lines, each against its own fresh test servers (so
// request counters match), and compares what they print, the files they
// write and the request bytes they send (every request the Py server
// receives is captured), with timings masked as in the golden suite.

type diffMode int

const (
	diffExact diffMode = iota // masked stdout, stderr, exit status, files and captured requests equal
	diffShape                 // timing-dependent counts: golden.Shape equal, exit status equal
	diffFixed                 // gab differs from ab on purpose: only check runs, on gab's result
)

type diffCase struct {
	name string
	args []string // after argv[0]; placeholders are expanded by expandArgs
	mode diffMode
	// check, if set, asserts on gab's result (and is the only comparison for diffFixed).
	check func(t *testing.T, got golden.Result, outDir string)
}

// Placeholders: {N} {P} {S} {SI} are the nginx, pysrv and TLS (by name and
// by address) base URLs, {NP} {PP} {SP} {RP} their bare ports (RP refused),
// {DATA} the POST file, {CERT} a PEM certificate and key for -E, {OUT} the
// output directory.
func expandArgs(args []string, s *golden.Servers, data, cert, out string) []string {
	p := s.Ports
	r := strings.NewReplacer(
		"{N}", "http://127.0.0.1:"+strconv.Itoa(p.Nginx),
		"{P}", "http://127.0.0.1:"+strconv.Itoa(p.Py),
		"{SI}", "https://127.0.0.1:"+strconv.Itoa(p.TLS),
		"{S}", "https://localhost:"+strconv.Itoa(p.TLS),
		"{NP}", strconv.Itoa(p.Nginx),
		"{PP}", strconv.Itoa(p.Py),
		"{SP}", strconv.Itoa(p.TLS),
		"{RP}", strconv.Itoa(p.Refused),
		"{DATA}", data,
		"{CERT}", cert,
		"{OUT}", out,
	)
	argv := []string{"ab"}
	for _, a := range args {
		argv = append(argv, r.Replace(a))
	}
	return argv
}

func words(s string) []string { return strings.Fields(s) }

var diffCases = []diffCase{
	// Normal runs and output options.
	{name: "plain", args: words("-n 100 -c 10 {N}/f100.txt")},
	{name: "n1", args: words("-n 1 {N}/f100.txt")},
	{name: "progress", args: words("-n 300 -c 4 {N}/f10k.txt")},
	{name: "big", args: words("-n 20 -c 2 {N}/f1m.txt")},
	{name: "keepalive", args: words("-k -n 300 -c 10 {N}/f10k.txt")},
	{name: "head", args: words("-i -n 20 -c 2 {N}/f100.txt")},
	{name: "head-keepalive", args: words("-i -k -n 20 -c 2 {N}/f100.txt")},
	{name: "post", args: words("-p {DATA} -T application/x-www-form-urlencoded -n 20 -c 2 {N}/post")},
	{name: "post-keepalive", args: words("-k -p {DATA} -n 20 {N}/post")},
	{name: "put", args: words("-u {DATA} -n 10 {P}/put")},
	{name: "method", args: words("-m DELETE -n 5 {P}/del")},
	{name: "no-percentiles", args: words("-d -n 20 {N}/f100.txt")},
	{name: "no-confidence", args: words("-S -n 20 {N}/f100.txt")},
	{name: "no-confidence-no-percentiles", args: words("-S -d -n 20 {N}/f100.txt")},
	{name: "quiet", args: words("-q -n 200 {N}/f100.txt")},
	{name: "cluster", args: words("-kq -n200 -c2 {N}/f100.txt")},
	{name: "verbose2", args: words("-v 2 -n 2 {N}/f100.txt")},
	{name: "verbose3", args: words("-v 3 -n 2 {N}/notfound")},
	{name: "verbose4", args: words("-v 4 -n 2 -k {N}/notfound")},
	{name: "html", args: words("-w -n 10 {N}/f100.txt")},
	{name: "html-attrs", args: []string{"-w", "-x", "border=1", "-y", "class=row", "-z", "bgcolor=#eee", "-k", "-p", "{DATA}", "-n", "10", "{N}/post"}},
	{name: "html-404", args: words("-x border=1 -n 10 {N}/notfound")},
	{name: "files", args: words("-n 20 -g {OUT}/g.tsv -e {OUT}/e.csv {N}/f100.txt")},
	{name: "non2xx-404", args: words("-n 50 -c 5 {N}/notfound")},
	{name: "non2xx-500", args: words("-n 10 {P}/status500")},
	{name: "varlen", args: words("-n 30 {P}/var")},
	{name: "varlen-l", args: words("-l -n 30 {P}/var")},
	{name: "html-varlen", args: words("-w -n 20 {P}/var")},
	{name: "no-server-header", args: words("-n 3 {P}/noserver")},
	{name: "server-header-nospace", args: words("-n 3 {P}/oddserver")},
	{name: "proxy", args: words("-X 127.0.0.1:{PP} -n 5 http://example.com/proxied")},
	{name: "localhost-fallback", args: words("-n 5 http://localhost:{NP}/f100.txt")},
	{name: "socket-buffer", args: words("-b 65536 -n 5 {N}/f100.txt")},
	{name: "bind", args: words("-B 127.0.0.1 -n 5 {N}/f100.txt")},
	{name: "median", args: words("-n 4 -g {OUT}/m.tsv {P}/us/0/20000/2")},
	{name: "jitter", args: words("-n 8 -c 2 {P}/jitter")},
	// TLS.
	{name: "https-sni", args: words("-n 20 {S}/f100.txt")},
	{name: "https-ip", args: words("-n 5 -c 2 {SI}/f1m.txt")},
	{name: "https-tls12", args: words("-n 10 -f TLS1.2 {S}/f100.txt")},
	{name: "https-tls13-cipher", args: words("-n 10 -f TLS1.3 -Z TLS_AES_128_GCM_SHA256 {S}/f100.txt")},
	{name: "https-no-sni", args: words("-I -n 5 {S}/f100.txt")},
	{name: "https-client-cert", args: words("-E {CERT} -n 3 {S}/f100.txt")},
	{name: "https-host-header-sni", args: []string{"-H", "Host: localhost", "-n", "3", "{SI}/f100.txt"}},
	// Ends of runs.
	{name: "timeout-hang", args: words("-s 1 -n 3 {P}/hang")},
	{name: "timeout-after-some", args: words("-s 1 -n 6 {P}/sometimes")},
	{name: "bigheader-abort", args: words("-s 3 -n 20 {P}/bigheader")},
	{name: "sane-error", args: words("-n 30 {P}/us/0/900/3"), mode: diffShape},
	{name: "sane-warning", args: words("-n 30 {P}/us/0/1100/3"), mode: diffShape},
	{name: "timelimit", args: words("-t 1 -c 2 {P}/slow"), mode: diffShape},
	{name: "n-then-timelimit", args: words("-n 3 -t 1 {P}/slow"), mode: diffShape},
	// Errors.
	{name: "refused", args: words("-n 5 http://127.0.0.1:{RP}/")},
	{name: "ipv6-refused", args: words("-n 3 http://[::1]:{NP}/f100.txt")},
	{name: "help", args: words("-h"), mode: diffFixed, check: goldenTable["err-help"].check},
	{name: "version", args: words("-V")},
	{name: "version-html", args: words("-w -V")},
	{name: "no-args", args: nil},
	{name: "too-many-args", args: words("-n 3 {N}/f100.txt extra")},
	{name: "url-noslash", args: words("-n 3 http://127.0.0.1:{NP}")},
	{name: "url-port", args: words("-n 3 http://127.0.0.1:99999/")},
	{name: "n-zero", args: words("-n 0 {N}/f100.txt")},
	{name: "c-zero", args: words("-n 5 -c 0 {N}/f100.txt")},
	{name: "c-gt-n", args: words("-n 2 -c 5 {N}/f100.txt")},
	{name: "c-negative", args: words("-c -1 {N}/f100.txt")},
	{name: "missing-postfile", args: words("-p /nonexistent/post.data {N}/post")},
	{name: "mix-post-put", args: words("-p {DATA} -u {DATA} {N}/post")},
	{name: "mix-head-post", args: words("-i -p {DATA} {N}/post")},
	{name: "illegal-first", args: words("-Y -n 3 {N}/f100.txt")}, // -Y: illegal in both (gab takes the next ab's -Q)
	{name: "illegal-last", args: words("-n 3 -Y {N}/f100.txt")},
	{name: "missing-optarg", args: words("-n")},
	{name: "bad-protocol", args: words("-n 1 -f SSL2 {S}/f100.txt")},
	{name: "csv-unwritable", args: words("-n 2 -e /nonexistent/dir/e.csv {N}/f100.txt")},
	// gab's deliberate fixes: asserted on gab only.
	{name: "fix-refused-r", args: words("-r -n 10 http://127.0.0.1:{RP}/"), mode: diffFixed, check: checkRefusedR},
	{name: "fix-ka-chunked", args: words("-k -n 4 {P}/chunked"), mode: diffFixed, check: goldenTable["ka-chunked"].check},
	{name: "fix-ka-server-closes", args: words("-k -n 6 {P}/kaclose"), mode: diffFixed, check: goldenTable["ka-server-closes"].check},
	{name: "fix-bigheader-stall", args: words("-s 2 -n 3 {P}/bigheader"), mode: diffFixed, check: goldenTable["bigheader-stall"].check},
	{name: "fix-https-on-plain-port", args: words("-n 2 {SI}/f100.txt"), mode: diffFixed, check: goldenTable["https-on-plain-port"].check},
	{name: "fix-csv-clamp", args: words("-n 10 -e {OUT}/csv-n10.csv {P}/var"), mode: diffFixed, check: goldenTable["csv-n10"].check},
}

// captureCases are the request-capture.raw command lines: the bytes each
// program sends are compared, as captured by the Py server.
func captureCases(t *testing.T) []diffCase {
	caps, err := golden.LoadCaptures(filepath.Join(goldenDir, "request-capture.raw"))
	if err != nil {
		t.Fatal(err)
	}
	var out []diffCase
	for i, c := range caps {
		args := make([]string, 0, len(c.Args)-1)
		for _, a := range c.Args[1:] {
			a = strings.ReplaceAll(a, "18081", "{PP}")
			if a == "post.data" {
				a = "{DATA}"
			}
			args = append(args, a)
		}
		// The request bytes must be equal; the report only in layout, because
		// for capture8 (-i against a server that wrongly sends a body with its
		// HEAD answer) ab counts that body and gab does not.
		out = append(out, diffCase{name: "capture" + strconv.Itoa(i+1), args: args, mode: diffShape})
	}
	return out
}

// distinctRequests reduces a capture log to its distinct requests, sorted.
func distinctRequests(log string) string {
	seen := map[string]bool{}
	var out []string
	for _, block := range strings.SplitAfter(log, "\n=====\n") {
		if block != "" && !seen[block] {
			seen[block] = true
			out = append(out, block)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "")
}

type sideResult struct {
	res      golden.Result
	ports    golden.Ports
	captured string
	files    map[string]string
	outDir   string
}

// runSide runs one program on a case with its own fresh servers.
func runSide(t *testing.T, bin string, dc diffCase, data, cert string) sideResult {
	t.Helper()
	srv, err := golden.StartServers()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Py.CaptureAll()
	out := t.TempDir()
	res, err := golden.RunBinary(context.Background(), bin, expandArgs(dc.args, srv, data, cert, out), out, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := sideResult{res: res, ports: srv.Ports, captured: srv.Ports.Unrewrite(string(srv.Py.Captured())), files: map[string]string{}}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(out, e.Name()))
		s.files[e.Name()] = string(b)
	}
	s.outDir = out
	return s
}

func TestDiffAgainstAb(t *testing.T) {
	ab := realAB(t)
	gab := buildGab(t)
	data, err := filepath.Abs(filepath.Join(goldenDir, "post.data"))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := testsrv.WriteCertificateAndKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cases := append(append([]diffCase(nil), diffCases...), captureCases(t)...)
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, dc := range cases {
		if dc.name == "ipv6-refused" && !golden.IPv6Loopback() {
			continue // without ::1 the connect fails otherwise than "refused"
		}
		t.Run(dc.name, func(t *testing.T) {
			t.Parallel()
			g := runSide(t, gab, dc, data, cert)
			if dc.check != nil {
				dc.check(t, g.res, g.outDir)
			}
			if dc.mode == diffFixed {
				return
			}
			a := runSide(t, ab, dc, data, cert)
			if a.res.Exit != g.res.Exit {
				t.Errorf("exit: ab %d, gab %d\nab stderr: %s\ngab stderr: %s", a.res.Exit, g.res.Exit, a.res.Stderr, g.res.Stderr)
			}
			mask := golden.Mask
			if dc.mode == diffShape {
				mask = golden.Shape
			}
			norm := func(s sideResult, text string) string { return mask(golden.MaskTLS(s.ports.Unrewrite(text))) }
			if d := golden.Diff(norm(a, a.res.Stdout), norm(g, g.res.Stdout)); d != "" {
				t.Errorf("stdout (- ab, + gab): %s", d)
			}
			if d := golden.Diff(norm(a, a.res.Stderr), norm(g, g.res.Stderr)); d != "" {
				t.Errorf("stderr (- ab, + gab): %s", d)
			}
			ac, gc := a.captured, g.captured
			if dc.mode == diffShape {
				// How many requests a timed run sends varies; which ones must not.
				ac, gc = distinctRequests(ac), distinctRequests(gc)
			}
			if d := golden.Diff(ac, gc); d != "" {
				t.Errorf("request bytes (- ab, + gab): %s", d)
			}
			for name, af := range a.files {
				gf, ok := g.files[name]
				if !ok {
					t.Errorf("gab wrote no %s", name)
					continue
				}
				if d := golden.Diff(golden.MaskTSV(golden.MaskCSV(af)), golden.MaskTSV(golden.MaskCSV(gf))); d != "" {
					t.Errorf("%s (- ab, + gab): %s", name, d)
				}
			}
			if len(g.files) != len(a.files) {
				t.Errorf("files: ab wrote %d, gab %d", len(a.files), len(g.files))
			}
		})
	}
}
