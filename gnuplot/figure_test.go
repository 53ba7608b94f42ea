package gnuplot

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gab/internal/chart"
	"gab/internal/testtool"
)

var update = flag.Bool("update", false, "rewrite the chart scripts' golden files in testdata")

// testRun is a small, fixed run: 12 requests over 3 s, one slow outlier.
func testRun(label string, scale float64) *chart.Data {
	d := &chart.Data{Label: label, Stored: 12, Recorded: 12, ElapsedS: 3.2,
		PerSecond: []int64{5, 4, 3}, CurvePrecision: "exact (µs)"}
	for i := 0; i < 12; i++ {
		us := uint32(scale * float64(800+37*i))
		if i == 7 {
			us = uint32(scale * 12500)
		}
		d.Latency = append(d.Latency, chart.LatencyPoint{StartS: float64(i) * 0.25, LatencyUs: us})
	}
	for _, c := range []chart.CurvePoint{{Percent: 0, Us: 800}, {Percent: 50, Us: 1020}, {Percent: 90, Us: 1207}, {Percent: 99, Us: 12500}, {Percent: 100, Us: 12500}} {
		c.Us = int64(scale * float64(c.Us))
		d.Curve = append(d.Curve, c)
	}
	return d
}

// withIntervals gives d a timeline: three 1 s intervals and a short last one,
// with failures in the second.
func withIntervals(d *chart.Data) *chart.Data {
	d.Intervals = []chart.Interval{
		{StartS: 0, LengthS: 1, Requests: 5, P50Us: 900, P99Us: 1100, MaxUs: 1100},
		{StartS: 1, LengthS: 1, Requests: 4, Failures: 2, P50Us: 1000, P99Us: 12500, MaxUs: 12500},
		{StartS: 2, LengthS: 1, Requests: 3, P50Us: 1200, P99Us: 1300, MaxUs: 1300},
		{StartS: 3, LengthS: 0.2, Requests: 0},
	}
	return d
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./gnuplot -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./gnuplot -run %s -update to accept):\n%s", name, t.Name(), got)
	}
}

// TestChartScriptsGolden pins the scripts and data files people edit: one
// run (every panel) and two runs overlaid, for each terminal.
func TestChartScriptsGolden(t *testing.T) {
	one := chart.RunFigure("gab -n 12 http://127.0.0.1/", []*chart.Data{testRun("", 1)})
	two := chart.RunFigure("gab plot a.json b.json", []*chart.Data{testRun("before", 1), testRun("after", 0.5)})
	two.Panels = two.Panels[1:] // as from saved documents: no per-request times
	for _, tc := range []struct {
		name  string
		fig   *chart.Figure
		image string
	}{
		{"run", one, "run.png"},
		{"run-svg", one, "run.svg"},
		{"run-pdf", one, "run.pdf"},
		{"overlay", two, "cmp.png"},
		{"timeline", chart.RunFigure("gab -t 3 --json x.json", []*chart.Data{withIntervals(testRun("", 1))}), "tl.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term, err := TerminalFor(tc.image)
			if err != nil {
				t.Fatal(err)
			}
			var gp, dat bytes.Buffer
			data, _ := Companions(tc.image)
			if err := WriteScript(&gp, tc.fig, term, data, tc.image); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.name+".gp", gp.Bytes())
			if !strings.HasSuffix(tc.name, "-svg") && !strings.HasSuffix(tc.name, "-pdf") {
				if err := WriteData(&dat, tc.fig); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, tc.name+".dat", dat.Bytes())
			}
		})
	}
}

func needGnuplot(t *testing.T) string { return testtool.Need(t, "gnuplot", "gnuplot-nox") }

// TestDrawEveryChart renders the run figure and the overlay with Debian's
// gnuplot in each format and checks that each image is valid and that every
// panel has something drawn in it.
func TestDrawEveryChart(t *testing.T) {
	needGnuplot(t)
	dir := t.TempDir()
	figs := map[string]*chart.Figure{
		"run":      chart.RunFigure("gab -n 12 http://127.0.0.1/", []*chart.Data{testRun("", 1)}),
		"overlay":  chart.RunFigure("gab plot a.json b.json", []*chart.Data{testRun("before", 1), testRun("after", 0.5)}),
		"timeline": chart.RunFigure("gab -t 3 --json x.json", []*chart.Data{withIntervals(testRun("", 1))}),
	}
	for name, fig := range figs {
		for _, ext := range []string{".png", ".svg", ".pdf"} {
			img := filepath.Join(dir, name+ext)
			if err := Draw(context.Background(), img, fig); err != nil {
				t.Fatalf("%s: %v", img, err)
			}
			b, err := os.ReadFile(img)
			if err != nil {
				t.Fatal(err)
			}
			switch ext {
			case ".png":
				checkPNG(t, img, b, len(fig.Panels))
			case ".svg":
				checkSVG(t, img, b, fig)
			case ".pdf":
				if !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.Contains(b[len(b)-32:], []byte("%%EOF")) || len(b) < 5000 {
					t.Errorf("%s: %d bytes, not a complete PDF", img, len(b))
				}
			}
		}
	}
}

// drawPNG draws fig with gnuplot into a PNG and returns the decoded image.
func drawPNG(t *testing.T, fig *chart.Figure) image.Image {
	t.Helper()
	img := filepath.Join(t.TempDir(), "fig.png")
	if err := Draw(context.Background(), img, fig); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	pic, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return pic
}

// checkPNG decodes the image and checks that each panel's band (the image cut
// into equal horizontal bands, one per panel) has a fair share of drawn pixels:
// a blank or half-drawn chart fails.
func checkPNG(t *testing.T, name string, b []byte, panels int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	r := img.Bounds()
	if r.Dx() < 400 || r.Dy() < 300*panels {
		t.Errorf("%s: %v is too small for %d panels", name, r, panels)
	}
	band := r.Dy() / panels
	for p := 0; p < panels; p++ {
		sub := image.Rect(r.Min.X, r.Min.Y+p*band, r.Max.X, r.Min.Y+(p+1)*band)
		if ink := inkFraction(img, sub); ink < 0.02 {
			t.Errorf("%s: panel %d has %.1f%% drawn pixels: blank", name, p+1, ink*100)
		}
	}
}

// inkFraction is the share of pixels in r that are not white.
func inkFraction(img image.Image, r image.Rectangle) float64 {
	ink, all := 0, 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cr < 0xf000 || cg < 0xf000 || cb < 0xf000 {
				ink++
			}
			all++
		}
	}
	return float64(ink) / float64(all)
}

// checkSVG parses the SVG and checks it has the figure's titles and drawn
// paths for its data.
func checkSVG(t *testing.T, name string, b []byte, fig *chart.Figure) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	paths, texts := 0, ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not well-formed XML: %v", name, err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			if v.Name.Local == "path" || v.Name.Local == "use" {
				paths++
			}
		case xml.CharData:
			texts += string(v)
		}
	}
	if paths < 50 {
		t.Errorf("%s: %d paths, not a drawn chart", name, paths)
	}
	for _, p := range fig.Panels {
		if !strings.Contains(texts, p.YLabel) {
			t.Errorf("%s: no text %q", name, p.YLabel)
		}
	}
}

// TestDrawWithoutGnuplot: the script and data are written, no image, and
// the error says gnuplot is missing.
func TestDrawWithoutGnuplot(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	img := filepath.Join(dir, "x.png")
	err := Draw(context.Background(), img, chart.RunFigure("t", []*chart.Data{testRun("", 1)}))
	if !errors.Is(err, ErrNoGnuplot) {
		t.Fatalf("got %v, want ErrNoGnuplot", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "x.png.dat x.png.gp" {
		t.Errorf("directory holds %v, want x.png.dat x.png.gp", names)
	}
}

// TestGnuplotFailureLeavesNoImage: a script gnuplot rejects is an error
// with gnuplot's complaint.
func TestGnuplotFailureLeavesNoImage(t *testing.T) {
	bin := needGnuplot(t)
	var out bytes.Buffer
	err := render(context.Background(), bin, t.TempDir(), []byte("set terminal pngcairo\nset output\nplot 'missing.dat'\n"), &out)
	if err == nil || !strings.Contains(err.Error(), "missing.dat") {
		t.Errorf("got %v, want gnuplot's complaint about missing.dat", err)
	}
}

func TestCheckImagePath(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	for _, tc := range []struct{ name, want string }{
		{filepath.Join(dir, "ok.png"), ""},
		{filepath.Join(dir, "ok.SVG"), ""},
		{filepath.Join(dir, "x.jpg"), `unknown image type ".jpg" (want .png, .svg or .pdf)`},
		{filepath.Join(dir, "x"), `unknown image type ""`},
		{filepath.Join(dir, "no", "such", "x.png"), "cannot write there"},
		{filepath.Join(ro, "x.pdf"), "cannot write there"},
	} {
		err := CheckImagePath(tc.name)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if os.Geteuid() == 0 && strings.HasPrefix(tc.name, ro) {
			continue // root writes anywhere
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the checks left files behind: %v", entries)
	}
}

// TestFlaggedPoints: a Flagged line is drawn as gnuplot labels with a ring
// (its legend's sample) at each of its rows, its mark a quoted string
// offset by its slot; gnuplot draws it, the marks in the image.
func TestFlaggedPoints(t *testing.T) {
	fig := &chart.Figure{Title: "sweep", Panels: []chart.Panel{{Title: "rps", XLabel: "c", YLabel: "requests per second", Lines: []chart.Line{
		{Title: "demo", Style: chart.ErrorBars, Columns: []string{"c", "rps", "lo", "hi"}, Rows: [][]float64{{1, 10, 8, 12}, {4, 20, 18, 22}}},
		{Title: "flag C: client-bound", Style: chart.Flagged, Color: 11, Mark: "C", Columns: []string{"c", "rps"}, Rows: [][]float64{{1, 10}, {4, 20}}},
		{Title: "flag B: busy machine", Style: chart.Flagged, Color: 11, Mark: "B", MarkSlot: 1, Columns: []string{"c", "rps"}, Rows: [][]float64{{4, 20}}},
		// A kind of a document from elsewhere is its own mark: text, never
		// a command.
		{Title: "flag x", Style: chart.Flagged, Color: 11, Mark: "`touch pwned`'\")", MarkSlot: 2, Columns: []string{"c", "rps"}, Rows: [][]float64{{4, 20}}},
	}}}}
	var gp bytes.Buffer
	term, _ := TerminalFor("s.svg")
	if err := WriteScript(&gp, fig, term, "s.svg.dat", "s.svg"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"'' index 1 using 1:2:('C') with labels textcolor rgb '#000000' offset char 1,-1 point pointtype 6 pointsize 2 linecolor rgb '#000000' title 'flag C: client-bound'",
		"'' index 2 using 1:2:('B') with labels textcolor rgb '#000000' offset char 2,-1 point pointtype 6 pointsize 2 linecolor rgb '#000000' title 'flag B: busy machine'",
	} {
		if !strings.Contains(gp.String(), want) {
			t.Errorf("script lacks %q:\n%s", want, gp.String())
		}
	}
	needGnuplot(t)
	dir := t.TempDir()
	img := filepath.Join(dir, "s.svg")
	if err := Draw(context.Background(), img, fig); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("a mark ran a command")
	}
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">C<", ">B<", "flag C: client-bound", "flag B: busy machine"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the image lacks %q", want)
		}
	}
}
