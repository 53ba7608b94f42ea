package gnuplot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"gab/internal/chart"
	"gab/internal/printable"
)

// This file checks that nothing a name, title or label holds can do more in
// a generated script than be one string: unit checks of the quoting, a
// reader of scripts by gnuplot's rules (with a fuzz target over it), and
// real gnuplot drawing figures with hostile names and labels.

// allControls is every C0 control byte and DEL.
var allControls = func() string {
	var b []byte
	for c := 0; c < 0x20; c++ {
		b = append(b, byte(c))
	}
	return string(append(b, 0x7f))
}()

// hostileTexts are titles and labels that would run a command, end one, or
// send a terminal an escape sequence if written as they are.
func hostileTexts(marker string) []string {
	return []string{
		"x\nsystem(\"touch " + marker + "\")\n#",
		"'; system('touch " + marker + "'); '",
		`"; system("touch ` + marker + `"); "`,
		"`touch " + marker + "`",
		"@M macro and a trailing backslash \\",
		"%s %d %% format",
		"controls " + allControls + " end",
		"not UTF-8 \xff\xfe\x80 and C1 \u0085\u009b",
		"\r\nset output '" + marker + "'\r\n",
	}
}

// hostileFigure is a figure with a in every title and label, b in the
// panel's own, and c in tic labels and column names.
func hostileFigure(a, b, c string) *chart.Figure {
	return &chart.Figure{Title: a, Panels: []chart.Panel{{
		Title: b, XLabel: a, YLabel: c, LogX: true,
		XTics: []chart.Tic{{Label: c, At: 1}, {Label: "10", At: 10}}, XMin: 0.5, XMax: 20,
		Lines: []chart.Line{
			{Title: a, Note: b, Style: chart.Lines, Columns: []string{c, b}, Rows: [][]float64{{1, 2}, {10, 3}}},
			{Title: c, Note: c, Style: chart.ErrorBars, Columns: []string{"x", a, "lo", "hi"}, Rows: [][]float64{{1, 2, 1, 3}}},
			{Style: chart.Bars, Columns: []string{"x", "y"}, Rows: [][]float64{{2, 1}}},
		},
	}}}
}

// gpScript is a script as gnuplot reads it: commands (lines joined where one
// ends in a backslash), each with its string literals replaced by S and its
// comment by #, and the literals' values.
type gpScript struct {
	skeleton []string
	literals []string
}

// readScript reads a script by gnuplot's rules: a line that ends in a
// backslash goes on in the next, wherever that backslash is (in a comment
// too); # outside a string starts a comment; '...' has ” as its only escape;
// "..." takes backslash escapes (octal among them); a backquote outside
// single quotes runs a command and @ outside strings expands a macro, which
// gab's scripts never use. It fails on what gnuplot would not read as gab
// meant: an unterminated string, a ` or @, a control byte.
func readScript(script string) (gpScript, error) {
	var s gpScript
	if !utf8.ValidString(script) {
		return s, errors.New("not UTF-8")
	}
	lines := strings.Split(strings.TrimSuffix(script, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + lines[i]
		}
		var sk strings.Builder
		for j := 0; j < len(line); {
			c := line[j]
			switch {
			case c < 0x20 && c != '\t' || c == 0x7f:
				return s, fmt.Errorf("line %q: control byte %#x", line, c)
			case c == '`' || c == '@':
				return s, fmt.Errorf("line %q: %c outside a single-quoted string", line, c)
			case c == '#':
				sk.WriteString("#")
				j = len(line)
			case c == '\'':
				var v strings.Builder
				j++
				for {
					if j >= len(line) {
						return s, fmt.Errorf("line %q: unterminated '", line)
					}
					if line[j] == '\'' {
						if j+1 < len(line) && line[j+1] == '\'' {
							v.WriteByte('\'')
							j += 2
							continue
						}
						j++
						break
					}
					v.WriteByte(line[j])
					j++
				}
				sk.WriteString("S")
				s.literals = append(s.literals, v.String())
			case c == '"':
				var v []byte
				j++
				for {
					if j >= len(line) {
						return s, fmt.Errorf("line %q: unterminated \"", line)
					}
					d := line[j]
					if d == '`' {
						return s, fmt.Errorf("line %q: ` in double quotes", line)
					}
					if d == '"' {
						j++
						break
					}
					if d != '\\' {
						v = append(v, d)
						j++
						continue
					}
					if j+1 < len(line) && isOctal(line[j+1]) {
						// As gnuplot: up to four digits after \0, else three.
						k, most := j+1, 3
						if line[k] == '0' {
							most = 4
						}
						for k < len(line) && k < j+1+most && isOctal(line[k]) {
							k++
						}
						n, _ := strconv.ParseUint(line[j+1:k], 8, 32)
						v = append(v, byte(n))
						j = k
						continue
					}
					if j+1 < len(line) && (line[j+1] == '\\' || line[j+1] == '"') {
						v = append(v, line[j+1])
						j += 2
						continue
					}
					return s, fmt.Errorf("line %q: escape gab does not write", line)
				}
				sk.WriteString("S")
				s.literals = append(s.literals, string(v))
			default:
				sk.WriteByte(c)
				j++
			}
		}
		s.skeleton = append(s.skeleton, sk.String())
	}
	return s, nil
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

// checkScript writes the script for hostileFigure(a, b, c) into image,
// reads it as gnuplot does, and checks that it is the script of the same
// figure with harmless strings (same commands, same strings in the same
// places), that the output and data names are exactly image and its data
// file, and that the heading is a as printable.String shows it.
func checkScript(t *testing.T, a, b, c, image string) {
	t.Helper()
	fig := hostileFigure(a, b, c)
	term, _ := TerminalFor(".png")
	data, _ := Companions(image)
	var gp bytes.Buffer
	if err := WriteScript(&gp, fig, term, data, image); err != nil {
		t.Fatal(err)
	}
	got, err := readScript(gp.String())
	if err != nil {
		t.Fatalf("%v\nscript:\n%s", err, gp.Bytes())
	}
	harmless := func(s string) string {
		if s == "" {
			return ""
		}
		return "x"
	}
	plain := hostileFigure(harmless(a), harmless(b), harmless(c))
	var ref bytes.Buffer
	WriteScript(&ref, plain, term, "x.png.dat", "x.png")
	want, err := readScript(ref.String())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.skeleton, want.skeleton) {
		t.Fatalf("the script's commands differ from a harmless figure's:\n%q\nwant\n%q", got.skeleton, want.skeleton)
	}
	// Literals in order: terminal font, output, missing, multiplot title,
	// panel title, xlabel, ylabel, ...
	if l := got.literals[1]; l != image && l != "./"+image {
		t.Errorf("set output names %q, want %q", l, image)
	}
	if l := got.literals[3]; l != printable.String(fig.Title) {
		t.Errorf("the heading is %q, want %q", l, printable.String(fig.Title))
	}
	dataRefs := 0
	for i, l := range want.literals {
		if l == "x.png.dat" {
			dataRefs++
			if g := got.literals[i]; g != data && g != "./"+data {
				t.Errorf("plot reads %q, want %q", g, data)
			}
		}
	}
	if dataRefs == 0 {
		t.Fatal("no data file in the harmless script")
	}
}

// checkData checks that every line of the figure's data file is a comment,
// a blank line or a row of numbers, with as many rows as the figure has.
func checkData(t *testing.T, fig *chart.Figure) {
	t.Helper()
	var dat bytes.Buffer
	if err := WriteData(&dat, fig); err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(dat.Bytes()) {
		t.Fatal("data file is not UTF-8")
	}
	rows, want := 0, 0
	for _, p := range fig.Panels {
		for _, l := range p.Lines {
			want += max(len(l.Rows), 1)
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(dat.String(), "\n"), "\n") {
		if line == "" || line[0] == '#' {
			if strings.ContainsFunc(line, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
				t.Fatalf("comment %q holds a control byte", line)
			}
			continue
		}
		for _, f := range strings.Split(line, "\t") {
			if _, err := strconv.ParseFloat(f, 64); err != nil && f != "?" {
				t.Fatalf("row %q: %v", line, err)
			}
		}
		rows++
	}
	if rows != want {
		t.Errorf("%d rows, want %d:\n%s", rows, want, dat.Bytes())
	}
}

// fileName makes s a file name (no / or NUL) of an image.
func fileName(s string) string {
	return strings.NewReplacer("/", "_", "\x00", "_").Replace(s) + ".png"
}

// TestScriptStringsAreStrings: every hostile text in every place, and
// hostile file names, leave the script's commands as they are.
func TestScriptStringsAreStrings(t *testing.T) {
	texts := hostileTexts("PWNED")
	for _, a := range texts {
		for _, b := range texts[:3] {
			checkScript(t, a, b, a, "x.png")
			checkData(t, hostileFigure(a, b, a))
		}
		checkScript(t, "a", "b", "c", fileName(a))
	}
	for _, name := range []string{"|touch PWNED.png", "<touch PWNED.png", "-.png", "~x.png", "$x.png", "+.png", " x.png", "é.png"} {
		checkScript(t, "a", "b", "c", name)
	}
}

func TestQuoteName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"run.png", `'run.png'`},
		{"a b_c-1,2=3:4+5.png", `'a b_c-1,2=3:4+5.png'`},
		{"|cmd.png", `'./|cmd.png'`},
		{"<cmd.dat", `'./<cmd.dat'`},
		{"-", `'./-'`},
		{"~x.png", `'./~x.png'`},
		{".hidden.png", `'./.hidden.png'`},
		{"é `@$%.png", "'./é `@$%.png'"},
		{"it's.png", `"it's.png"`},
		{"a\nb'\"\\`1.png", `"a\0012b'\0042\0134\01401.png"`},
		{"\xff\x01é\u0085", `"./\0377\0001é\0302\0205"`},
	} {
		if got := quoteName(tc.name); got != tc.want {
			t.Errorf("quoteName(%q) = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestShellWord(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"run.png.gp", "run.png.gp"},
		{"/tmp/x-1/a_b@c%d+e=f:g,h", "/tmp/x-1/a_b@c%d+e=f:g,h"},
		{"-x.gp", "./-x.gp"},
		{"a b.gp", "'a b.gp'"},
		{"it's $(id).gp", `'it'\''s $(id).gp'`},
		{"é.gp", "'é.gp'"},
		{"a\nb'\\\xff.gp", `$'a\x0ab\'\\\xff.gp'`},
		{"", "''"},
	} {
		if got := ShellWord(tc.name); got != tc.want {
			t.Errorf("ShellWord(%q) = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestCommentEndsWithoutBackslash(t *testing.T) {
	for in, want := range map[string]string{`a\`: `a\x5c`, `a\\`: `a\\x5c`, "a\n\\": `a\x0a\x5c`, `a\b`: `a\b`} {
		if got := comment(in); got != want {
			t.Errorf("comment(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzScriptStrings: whatever the titles, labels and file name, the script
// reads as the same commands as a harmless figure's, names exactly its files
// and heads with the title as printable.String shows it; the data file holds only
// comments and the figure's rows.
func FuzzScriptStrings(f *testing.F) {
	texts := hostileTexts("PWNED")
	for i, s := range texts {
		f.Add(s, texts[(i+1)%len(texts)], texts[(i+2)%len(texts)], s)
	}
	f.Fuzz(func(t *testing.T, a, b, c, name string) {
		checkScript(t, a, b, c, fileName(name))
		checkData(t, hostileFigure(a, b, c))
	})
}

// hostileNames are image file names that would run a command or write
// another file if written into a script as they are.
var hostileNames = []string{
	"x\nsystem(\"touch PWNED\")\n#.png",
	"'\"\\`touch PWNED`$HOME@x %s.png",
	"|touch PWNED.png",
	"<touch PWNED;.png",
	"-e.svg",
	"~ x.png",
	"c" + strings.ReplaceAll(allControls, "\x00", "") + "\xff\xfe\x80.png",
}

// TestHostileNamesRunNothing draws figures with hostile titles and labels
// into hostile file names with real gnuplot, then runs the kept script again
// by hand as a user would: no command runs (no PWNED file appears), and each
// time the image lands at exactly its name, beside exactly its .dat and .gp.
func TestHostileNamesRunNothing(t *testing.T) {
	bin := needGnuplot(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "PWNED")
	texts := hostileTexts(marker)
	for i, name := range hostileNames {
		img := filepath.Join(dir, name)
		fig := hostileFigure(texts[i%len(texts)], texts[(i+1)%len(texts)], texts[(i+2)%len(texts)])
		err := Draw(context.Background(), img, fig)
		noMarker(t, dir)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		checkImage(t, img)
		data, script := Companions(img)
		wantFiles(t, dir, img, data, script)
		os.Remove(img)
		cmd := exec.Command(bin, "./"+filepath.Base(script))
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		noMarker(t, dir)
		if err != nil {
			t.Fatalf("%q: gnuplot on the kept script: %v: %s", name, err, out)
		}
		checkImage(t, img)
		wantFiles(t, dir, img, data, script)
		for _, f := range []string{img, data, script} {
			os.Remove(f)
		}
	}
}

// noMarker fails the test at once if a command of a hostile string ran.
func noMarker(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(dir, "PWNED")); err == nil {
		t.Fatal("a command in a name or label ran: PWNED exists")
	}
}

func checkImage(t *testing.T, img string) {
	t.Helper()
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatalf("%q: %v", img, err)
	}
	if strings.HasSuffix(img, ".svg") {
		if !bytes.Contains(b, []byte("</svg>")) {
			t.Errorf("%q: not an SVG", img)
		}
		return
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Errorf("%q: %v", img, err)
	}
}

// wantFiles checks that dir holds exactly the files named.
func wantFiles(t *testing.T, dir string, paths ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var got, want []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	for _, p := range paths {
		want = append(want, filepath.Base(p))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("directory holds %q, want %q", got, want)
	}
}

// fakeGnuplot puts a gnuplot on PATH that reads its script, says oops and
// fails.
func fakeGnuplot(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "gnuplot"), []byte("#!/bin/sh\nwhile read -r _; do :; done\necho oops >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
}

// fifoWithEnds makes a FIFO dir/name and opens a reader and then a writer of
// the test's own on it: opening it never blocks, and its reader sees no end
// of file before w is closed. Both are closed when the test ends.
func fifoWithEnds(t *testing.T, dir, name string) (fifo string, r, w *os.File) {
	t.Helper()
	fifo = filepath.Join(dir, name)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	w, err = os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return fifo, r, w
}

// TestFailedDrawLeavesOutputAsItWas: when gnuplot fails, an image already at
// the path keeps its bytes, and a FIFO given as the image stays a FIFO.
func TestFailedDrawLeavesOutputAsItWas(t *testing.T) {
	fakeGnuplot(t)
	dir := t.TempDir()
	fig := hostileFigure("a", "b", "c")
	old := filepath.Join(dir, "old.png")
	os.WriteFile(old, []byte("earlier image"), 0o644)
	if err := Draw(context.Background(), old, fig); err == nil || !strings.Contains(err.Error(), "oops") {
		t.Errorf("got %v, want gnuplot's oops", err)
	}
	if b, _ := os.ReadFile(old); string(b) != "earlier image" {
		t.Errorf("the earlier image now holds %q", b)
	}

	fifo, _, _ := fifoWithEnds(t, dir, "fifo.png")
	if err := Draw(context.Background(), fifo, fig); err == nil || !strings.Contains(err.Error(), "oops") {
		t.Errorf("got %v, want gnuplot's oops", err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v (%v)", fi, err)
	}
}

// TestDrawIntoFIFO: an image drawn into a FIFO goes through it to its
// reader, and the FIFO stays.
func TestDrawIntoFIFO(t *testing.T) {
	needGnuplot(t)
	fifo, r, keep := fifoWithEnds(t, t.TempDir(), "pipe.png")
	got := make(chan []byte, 1)
	go func() {
		var b bytes.Buffer
		b.ReadFrom(r) // until every writer, keep last, has closed
		got <- b.Bytes()
	}()
	err := Draw(context.Background(), fifo, hostileFigure("a", "b", "c"))
	keep.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(<-got)); err != nil {
		t.Errorf("the FIFO's reader got no PNG: %v", err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v (%v)", fi, err)
	}
}
