package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gab/internal/testsrv"
	"gab/internal/testtool"
	"gab/report"
)

// saveRuns makes two saved run documents (-c 1 and -c 4) and returns their paths.
func saveRuns(t *testing.T, dir string) (a, b string) {
	t.Helper()
	srv, err := testsrv.NewNginx()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a, b = filepath.Join(dir, "one.json"), filepath.Join(dir, "four.json")
	for _, r := range []struct{ c, file string }{{"1", a}, {"4", b}} {
		got := runInProcess([]string{"ab", "-q", "-n", "200", "-c", r.c, "--json", r.file, srv.URL() + "/f100.txt"}, runHooks{})
		if got.Exit != 0 {
			t.Fatalf("exit %d: %s", got.Exit, got.Stderr)
		}
	}
	return a, b
}

// TestPlotSavedRuns: gab plot overlays saved runs, labelled by LABEL= or by
// file name, as an image (gnuplot) and as an HTML page with a ranking.
func TestPlotSavedRuns(t *testing.T) {
	testtool.Need(t, "gnuplot", "gnuplot-nox")
	dir := t.TempDir()
	a, b := saveRuns(t, dir)
	img := filepath.Join(dir, "cmp.png")
	got := runInProcess([]string{"gab", "plot", "-o", img, "c1=" + a, b}, runHooks{})
	if got.Exit != 0 || got.Stderr != "" {
		t.Fatalf("exit %d: %s", got.Exit, got.Stderr)
	}
	raw, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	pic, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if pic.Bounds().Dy() < 300 {
		t.Errorf("image %v: too small for a panel", pic.Bounds())
	}
	gp, _ := os.ReadFile(filepath.Join(dir, "cmp.png.gp"))
	// The documents' timelines give the rates and latency per interval.
	for _, want := range []string{"title 'c1'", "title 'four'", "Latency percentile distribution",
		"Requests and failures per second per interval", "title 'c1 failures'", "title 'four p99'"} {
		if !strings.Contains(string(gp), want) {
			t.Errorf("script lacks %q:\n%s", want, gp)
		}
	}
	if strings.Contains(string(gp), "Latency of each request over time") {
		t.Error("a saved document has no per-request times, yet the script draws them")
	}

	page := filepath.Join(dir, "cmp.html")
	got = runInProcess([]string{"gab", "plot", "-o", page, "c1=" + a, b}, runHooks{})
	if got.Exit != 0 {
		t.Fatalf("exit %d: %s", got.Exit, got.Stderr)
	}
	testtool.WantInFile(t, page, "Comparison (ranked by requests per second)", "<td>c1</td>", "<td>four</td>", "<svg", "99.99%")
}

// TestPlotBadInput: each mistake is one line, a non-zero exit, and nothing
// is written.
func TestPlotBadInput(t *testing.T) {
	dir := t.TempDir()
	in := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(in, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	notJSON := write("notes.json", "hello")
	other := write("other.json", `{"tool": "wrk", "schema_version": 1}`)
	newer := write("newer.json", `{"tool": "gab", "schema_version": 99, "command_line": []}`)
	newerSweep := write("sweep.json", `{"schema": "gab-sweep", "tool": "gab", "schema_version": 7}`)
	never := write("never.json", `{"schema_version": 1, "tool": "gab", "command_line": ["ab"], "start_time": "2026-01-01T00:00:00Z", "ending": "not_started"}`)
	out := filepath.Join(dir, "x.png")
	for _, tc := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{notJSON}, exitError, "gab plot: " + notJSON + ": not a gab JSON document (gab --json FILE or gab sweep --json FILE writes one)"},
		{[]string{other}, exitError, "gab plot: " + other + ": not a gab JSON document (gab --json FILE or gab sweep --json FILE writes one)"},
		{[]string{newer}, exitError, "gab plot: " + newer + ": schema_version 99 is newer than this gab's " + strconv.Itoa(report.SchemaVersion) + ": use the gab that wrote it"},
		{[]string{newerSweep}, exitError, "gab plot: " + newerSweep + ": sweep schema_version 7 is newer than this gab's " + strconv.Itoa(report.SweepSchemaVersion) + ": use the gab that wrote it"},
		{[]string{never}, exitError, "gab plot: " + never + ": the run did not start: nothing to draw"},
		{[]string{filepath.Join(in, "missing.json")}, exitError, "gab plot: " + filepath.Join(in, "missing.json") + ": no such file"},
		{[]string{"-o", filepath.Join(dir, "x.jpg"), never}, exitUsage, `gab plot: ` + dir + `/x.jpg: unknown image type ".jpg" (want .png, .svg or .pdf) (or .html)`},
		{[]string{"-o", filepath.Join(dir, "no", "x.html"), never}, exitError, "gab plot: " + dir + "/no/x.html: cannot write there: no such file or directory"},
		{[]string{}, exitUsage, "gab plot: no document given"},
	} {
		argv := append([]string{"gab", "plot"}, tc.args...)
		if len(tc.args) > 0 && tc.args[0] != "-o" {
			argv = append([]string{"gab", "plot", "-o", out}, tc.args...)
		}
		got := runInProcess(argv, runHooks{})
		checkOneLineFailure(t, tc.args, got, tc.exit, tc.want)
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%v: left %v behind", tc.args, entries)
		}
	}
}

// TestPlotSweep: a sweep document's charts (req/s with confidence intervals
// and latency against concurrency, bandwidth and latency against size) as
// an image and as a page with the points and rankings.
func TestPlotSweep(t *testing.T) {
	testtool.Need(t, "gnuplot", "gnuplot-nox")
	dir := t.TempDir()
	doc := filepath.Join(dir, "s.json")
	status, _, stderr := runArgs(t, t.Context(), "ab", "sweep", "--demo", "-q", "-n", "30", "-c", "1,2,4", "--sizes", "10,1k",
		"--repeat", "2", "--json", doc, "--plot", filepath.Join(dir, "direct.png"), "--html", filepath.Join(dir, "direct.html"))
	if status != 0 {
		t.Fatalf("sweep: status %d: %s", status, stderr)
	}
	// gab sweep --plot and --html draw what gab plot draws from its document.
	if l := listDir(t, dir); l != "direct.html direct.png direct.png.dat direct.png.gp s.json" {
		t.Errorf("the sweep wrote %q", l)
	}
	status, _, stderr = runArgs(t, t.Context(), "ab", "sweep", "--demo", "-n", "30", "-c", "1,2", "--plot", filepath.Join(dir, "x.gif"))
	if status != exitUsage || stderr != "ab sweep: --plot "+dir+"/x.gif: unknown image type \".gif\" (want .png, .svg or .pdf)\n" {
		t.Errorf("--plot x.gif: status %d, stderr %q", status, stderr)
	}
	img := filepath.Join(dir, "s.svg")
	got := runInProcess([]string{"gab", "plot", "-o", img, doc}, runHooks{})
	if got.Exit != 0 {
		t.Fatalf("exit %d: %s", got.Exit, got.Stderr)
	}
	gp, _ := os.ReadFile(filepath.Join(dir, "s.svg.gp"))
	for _, want := range []string{
		"Requests per second against concurrency (mean of 2 runs; bars: 95 % confidence interval)",
		"yerrorlines", "title 'demo 10'", "Received bandwidth against size", "Latency against size",
		"set xtics ('1' 1, '2' 2, '4' 4)", "set xtics ('10' 10, '1k' 1024)",
	} {
		if !strings.Contains(string(gp), want) {
			t.Errorf("script lacks %q:\n%s", want, gp)
		}
	}
	// The p99 line, dashed in its p50's colour, has no legend entry; the
	// data file names it.
	if dat, _ := os.ReadFile(filepath.Join(dir, "s.svg.dat")); !bytes.Contains(dat, []byte("# p99 of demo 10\n")) {
		t.Errorf("the data file does not name the p99 line:\n%s", dat)
	}
	if svg, _ := os.ReadFile(img); !bytes.Contains(svg, []byte("<svg")) {
		t.Error("no SVG drawn")
	}
	page := filepath.Join(dir, "s.html")
	if got := runInProcess([]string{"gab", "plot", "-o", page, doc}, runHooks{}); got.Exit != 0 {
		t.Fatalf("exit %d: %s", got.Exit, got.Stderr)
	}
	testtool.WantInFile(t, page, "<h2>Points</h2>", "<td>1k</td>", "± 95 % CI", "<svg")
}

// TestPlotHostileNames: a --plot image and a document named to run a command
// (gab plot writes names into its script), and a LABEL= that would end a
// string: every image lands at exactly its name, nothing runs, and without
// gnuplot the line that says how to draw by hand is one line with the names
// quoted for a shell.
func TestPlotHostileNames(t *testing.T) {
	testtool.Need(t, "gnuplot", "gnuplot-nox")
	dir := t.TempDir()
	pwned := func() {
		t.Helper()
		if _, err := os.Lstat(filepath.Join(dir, "PWNED")); err == nil {
			t.Fatal("a command in a name ran: PWNED exists")
		}
	}
	isPNG := func(name string) {
		t.Helper()
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	img := filepath.Join(dir, "img\nsystem(\"touch PWNED\")\n#'`touch PWNED`\xff.png")
	doc := filepath.Join(dir, "x\nsystem(\"touch PWNED\")\n#.json")
	got := runInProcess([]string{"ab", "--demo", "-n", "20", "--json", doc, "--plot", img}, runHooks{})
	pwned()
	if got.Exit != 0 || got.Stderr != "" {
		t.Fatalf("--plot: exit %d: %q", got.Exit, got.Stderr)
	}
	isPNG(img)

	got = runInProcess([]string{"gab", "plot", doc}, runHooks{})
	pwned()
	if got.Exit != 0 || got.Stderr != "" {
		t.Fatalf("gab plot: exit %d: %q", got.Exit, got.Stderr)
	}
	isPNG(doc + ".png")

	label := "it's\nsystem(\"touch PWNED\")\n#\\"
	out := filepath.Join(dir, "labelled.png")
	got = runInProcess([]string{"gab", "plot", "-o", out, label + "=" + doc, doc}, runHooks{})
	pwned()
	if got.Exit != 0 || got.Stderr != "" {
		t.Fatalf("gab plot LABEL=: exit %d: %q", got.Exit, got.Stderr)
	}
	isPNG(out)
	gp, _ := os.ReadFile(out + ".gp")
	// The label as printable.String shows it (it's\x0asystem(...)...), each
	// " and \ of that written as gnuplot's octal escape.
	if !strings.Contains(string(gp), `title "it's\0134x0asystem(\0042touch PWNED\0042)\0134x0a#\0134"`) {
		t.Errorf("the label is not in the script as one string:\n%s", gp)
	}
	if l := listDir(t, dir); l != listNames(doc, doc+".png", doc+".png.dat", doc+".png.gp", img, img+".dat", img+".gp",
		out, out+".dat", out+".gp") {
		t.Errorf("directory holds %q", l)
	}

	t.Setenv("PATH", t.TempDir())
	got = runInProcess([]string{"gab", "plot", doc}, runHooks{})
	want := `gab plot: gnuplot is not on PATH: wrote ` + dir + `/x\x0asystem("touch PWNED")\x0a#.json.png.gp and ` + dir +
		`/x\x0asystem("touch PWNED")\x0a#.json.png.dat; draw ` + dir + `/x\x0asystem("touch PWNED")\x0a#.json.png with: cd ` + dir +
		` && gnuplot $'x\x0asystem("touch PWNED")\x0a#.json.png.gp'`
	checkOneLineFailure(t, []string{doc}, got, exitError, want)
}

// listNames is the base names of paths as listDir shows them.
func listNames(paths ...string) string {
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// TestPlotNamesDoNotCollide: --plot a.png and --plot a.svg keep their own
// script and data, and gab plot run.json draws run.json.png beside the
// run.png that --plot drew (every request's latency, which a document does
// not hold), leaving run.png as it was.
func TestPlotNamesDoNotCollide(t *testing.T) {
	testtool.Need(t, "gnuplot", "gnuplot-nox")
	dir := t.TempDir()
	img, svg, doc := filepath.Join(dir, "run.png"), filepath.Join(dir, "run.svg"), filepath.Join(dir, "run.json")
	for _, argv := range [][]string{
		{"ab", "--demo", "-n", "20", "--json", doc, "--plot", img},
		{"ab", "--demo", "-n", "20", "--plot", svg},
		{"gab", "plot", doc},
	} {
		before, _ := os.ReadFile(img)
		if got := runInProcess(argv, runHooks{}); got.Exit != 0 || got.Stderr != "" {
			t.Fatalf("%q: exit %d: %q", argv, got.Exit, got.Stderr)
		}
		if after, _ := os.ReadFile(img); before != nil && !bytes.Equal(before, after) {
			t.Errorf("%q rewrote run.png", argv)
		}
	}
	if l := listDir(t, dir); l != "run.json run.json.png run.json.png.dat run.json.png.gp run.png run.png.dat run.png.gp run.svg run.svg.dat run.svg.gp" {
		t.Errorf("directory holds %q", l)
	}
	for name, want := range map[string]string{"run.png.gp": "set output 'run.png'", "run.svg.gp": "set output 'run.svg'",
		"run.json.png.gp": "set output 'run.json.png'"} {
		if gp, _ := os.ReadFile(filepath.Join(dir, name)); !strings.Contains(string(gp), want) {
			t.Errorf("%s lacks %q", name, want)
		}
	}
	if gp, _ := os.ReadFile(filepath.Join(dir, "run.png.gp")); !strings.Contains(string(gp), "Latency of each request over time") {
		t.Error("run.png.gp is not the run's own script")
	}
}
