package report

import (
	"gab/internal/samples"

	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gab/client"
)

var update = flag.Bool("update", false, "rewrite the gab-generated golden files in testdata/gab")

// The ab golden cases rebuilt from a client.Result. testdata/ab/<case>.txt is
// the real ab's output (copied from the captured goldens); the counts and
// bytes of the Result come from that text and its command line, and
// testdata/samples/<case>.samples holds per-request times chosen (by a search
// run once, outside the tests) so that ab's arithmetic prints the same tables.
var textCases = []string{
	"median-odd", "median-even", "gnuplot-csv", "csv-n10", "plain-n1", "plain-100b", "keepalive",
	"post-form", "sane-S", "sane-error", "sane-warning", "no-percentiles", "no-confidence",
	"no-confidence-no-percentiles", "refused-r", "https-sni", "non2xx-404", "varlen-l",
}

var htmlCases = []string{"html", "html-xyz", "html-404", "html-varlen"}

func TestGoldenText(t *testing.T) {
	for _, name := range textCases {
		t.Run(name, func(t *testing.T) {
			gc := loadGoldenCase(t, name)
			var out bytes.Buffer
			if err := WriteText(&out, Summarize(gc.res, gc.opts)); err != nil {
				t.Fatal(err)
			}
			compareText(t, name, out.String(), gc.report)
		})
	}
}

func TestGoldenHTML(t *testing.T) {
	for _, name := range htmlCases {
		t.Run(name, func(t *testing.T) {
			gc := loadGoldenCase(t, name)
			var out bytes.Buffer
			if err := WriteHTML(&out, Summarize(gc.res, gc.opts)); err != nil {
				t.Fatal(err)
			}
			compareText(t, name, out.String(), gc.report)
		})
	}
}

// TestGoldenCSV rebuilds the -e files of gnuplot-csv (done = 20) and csv-n10
// (done = 10). Where ab's row index floor(0.5 + done·i/100) equals done
// (rows 98–99 and 95–99), ab reads one element past its data and prints
// garbage (0.257); gab prints the last sample there. Every other row must be
// ab's byte for byte; the whole file is also compared with gab's own golden.
func TestGoldenCSV(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pastTheData []int
	}{
		{"gnuplot-csv", []int{98, 99}},
		{"csv-n10", []int{95, 96, 97, 98, 99}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gc := loadGoldenCase(t, tc.name)
			var out bytes.Buffer
			if err := WriteCSV(&out, Summarize(gc.res, gc.opts)); err != nil {
				t.Fatal(err)
			}
			checkGab(t, tc.name+".csv", out.Bytes())
			got := strings.Split(out.String(), "\n")
			want := strings.Split(readFile(t, "testdata/ab/"+tc.name+".csv"), "\n")
			if len(got) != 103 || len(want) != 103 || got[0] != want[0] {
				t.Fatalf("got %d lines starting %q, ab has %d; want a header, 101 rows and a final newline",
					len(got)-1, got[0], len(want)-1)
			}
			last := strings.SplitN(got[101], ",", 2)[1]
			for row := 0; row <= 100; row++ {
				g, w := got[row+1], want[row+1]
				if slices.Contains(tc.pastTheData, row) {
					if w != fmt.Sprintf("%d,0.257", row) {
						t.Errorf("ab's row %d is %q; expected its garbage 0.257", row, w)
					}
					if g != fmt.Sprintf("%d,%s", row, last) {
						t.Errorf("row %d = %q, want the last sample %s", row, g, last)
					}
					continue
				}
				if g != w {
					t.Errorf("row %d = %q, want ab's %q", row, g, w)
				}
			}
		})
	}
}

type goldenCase struct {
	res    *client.Result
	opts   Options
	report string // ab's report, from its leading "\n\n" on
}

// loadGoldenCase builds the Result and Options of an ab golden case from its
// command line, its report text and its samples file.
func loadGoldenCase(t *testing.T, name string) goldenCase {
	t.Helper()
	text := readFile(t, "testdata/ab/"+name+".txt")
	cmd, _, _ := strings.Cut(strings.TrimPrefix(text, "# cmd: "), "\n")
	// The report follows "..done" or, with progress lines on stderr,
	// "(be patient)".
	_, report, ok := strings.Cut(text, "..done\n")
	if !ok {
		_, report, ok = strings.Cut(text, "(be patient)\n")
	}
	if !ok {
		t.Fatalf("%s: no end of the Benchmarking line", name)
	}
	gc := goldenCase{report: report}
	gc.opts.HTML = HTMLAttrs{Cell: "bgcolor=white"}
	args := strings.Fields(cmd)[1:]
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-k":
			gc.opts.KeepAlive = true
		case "-l":
			gc.opts.VariableLength = true
		case "-S":
			gc.opts.NoConfidence = true
		case "-d":
			gc.opts.NoPercentiles = true
		case "-p", "-u":
			gc.opts.BodySent = true
			i++
		case "-x":
			gc.opts.HTML.Table = args[i+1]
			i++
		case "-y":
			gc.opts.HTML.Row = args[i+1]
			i++
		case "-z":
			gc.opts.HTML.Cell = args[i+1]
			i++
		case "-n", "-c", "-T", "-g", "-e":
			i++
		case "-w", "-r":
		default:
			u, err := url.Parse(a)
			if err != nil || u.Host == "" {
				t.Fatalf("%s: unexpected argument %q", name, a)
			}
			gc.opts.Host = u.Hostname()
			gc.opts.Port, _ = strconv.Atoi(u.Port())
			gc.opts.Path = u.RequestURI()
			gc.opts.TLS = u.Scheme == "https"
		}
	}
	samples, elapsedUs := readSamples(t, "testdata/samples/"+name+".samples")
	res := &client.Result{Elapsed: time.Duration(elapsedUs) * time.Microsecond, Samples: samples}
	field := func(label string) string {
		// text lines "Label:   value" or HTML rows "<th …>Label:</th><td …>value</td>"
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(label) + ` +(.*)$|>` + regexp.QuoteMeta(label) + `</th><td[^>]*>([^<]*)<`)
		m := re.FindStringSubmatch(report)
		if m == nil {
			return ""
		}
		return m[1] + m[2]
	}
	number := func(label string) int64 {
		v := field(label)
		if v == "" {
			return 0
		}
		n, err := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		if err != nil {
			t.Fatalf("%s: %s %q: %v", name, label, v, err)
		}
		return n
	}
	res.ServerSoftware = field("Server Software:")
	gc.opts.Concurrency = int(number("Concurrency Level:"))
	if !gc.opts.VariableLength {
		res.DocLength = number("Document Length:")
	}
	res.Complete = int(number("Complete requests:"))
	res.Failed.Total = int(number("Failed requests:"))
	if m := regexp.MustCompile(`\(Connect: (\d+), (?:Receive: (\d+), )?Length: (\d+), Exceptions: (\d+)\)`).FindStringSubmatch(report); m != nil {
		res.Failed.Connect, _ = strconv.Atoi(m[1])
		res.Failed.Receive, _ = strconv.Atoi(m[2])
		res.Failed.Length, _ = strconv.Atoi(m[3])
		res.Failed.Exceptions, _ = strconv.Atoi(m[4])
	}
	res.WriteErrors = int(number("Write errors:"))
	res.Non2xx = int(number("Non-2xx responses:"))
	res.KeepAlive = int(number("Keep-Alive requests:"))
	res.TotalRead = number("Total transferred:")
	res.TotalSent = number("Total body sent:")
	res.BodyRead = number("HTML transferred:")
	if p := field("SSL/TLS Protocol:"); p != "" {
		f := strings.Split(p, ",")
		peer, _ := strconv.Atoi(f[2])
		bits, _ := strconv.Atoi(f[3])
		res.TLS = &client.TLSInfo{Protocol: f[0], Cipher: f[1], PeerKeyBits: peer, CipherBits: bits,
			TempKey: field("Server Temp Key:"), ServerName: field("TLS Server Name:")}
	}
	if res.Complete != samples.Len() {
		t.Fatalf("%s: %d samples for %d complete requests", name, samples.Len(), res.Complete)
	}
	gc.res = res
	return gc
}

// readSamples reads a samples file: "# elapsed_us N" and lines of
// "start connect wait total" in µs, in recording order (start from the run's
// start, which is taken to fall on a whole millisecond).
func readSamples(t *testing.T, path string) (*samples.Store, int64) {
	t.Helper()
	var rows []samples.Sample
	var elapsed int64 = -1
	sc := bufio.NewScanner(strings.NewReader(readFile(t, path)))
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "# elapsed_us "); ok {
			elapsed, _ = strconv.ParseInt(v, 10, 64)
			continue
		}
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		var start, connect, wait, total uint32
		if _, err := fmt.Sscan(line, &start, &connect, &wait, &total); err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		rows = append(rows, samples.Sample{Start: start / 1000, Connect: connect, Wait: wait, Total: total})
	}
	if elapsed < 0 {
		t.Fatalf("%s: no elapsed_us line", path)
	}
	s := samples.New(len(rows), 0)
	for _, r := range rows {
		s.Put(s.Len(), r, nil)
	}
	return s, elapsed
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// compareText fails with the first differing line.
func compareText(t *testing.T, name, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("%s: line %d\n got: %q\nwant: %q", name, i+1, gl, wl)
			return
		}
	}
	t.Errorf("%s: outputs differ (got %d bytes, want %d)", name, len(got), len(want))
}

// checkGab compares got with testdata/gab/<name>, a file gab generated
// (rewritten with -update).
func checkGab(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "gab", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	compareText(t, path, string(got), readFile(t, path))
}
