package gnuplot

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"gab/internal/chart"
	"gab/internal/outfile"
	"gab/internal/printable"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file writes gab's charts (--plot, gab plot) as gnuplot input: a data
// file of whitespace-separated columns in blocks (gnuplot's "index N"), and a
// commented script that draws every panel of a chart.Figure into one image. The
// script and data are kept beside the image so that people can edit them and
// run gnuplot again themselves.

// Terminal is gnuplot's output device for an image file.
type Terminal struct {
	Ext  string // ".png", ".svg", ".pdf"
	Line string // the set terminal command
	// PanelHeight is one panel's height in the terminal's units.
	Width, PanelHeight float64
	Unit               string // "" (pixels) or "in"
}

var terminals = []Terminal{
	{Ext: ".png", Line: "pngcairo noenhanced font \"sans,9\"", Width: 900, PanelHeight: 300},
	{Ext: ".svg", Line: "svg noenhanced dynamic font \"sans,9\"", Width: 900, PanelHeight: 300},
	{Ext: ".pdf", Line: "pdfcairo noenhanced font \"sans,8\"", Width: 7, PanelHeight: 2.6, Unit: "in"},
}

// TerminalFor returns the terminal for an image file name, by its extension
// (.png, .svg or .pdf, any case).
func TerminalFor(name string) (Terminal, error) {
	ext := strings.ToLower(filepath.Ext(name))
	for _, t := range terminals {
		if t.Ext == ext {
			return t, nil
		}
	}
	return Terminal{}, fmt.Errorf("%s: unknown image type %q (want .png, .svg or .pdf)", name, filepath.Ext(name))
}

// Companions returns the names of the data file and script written beside
// image: the image's whole name with .dat and .gp added (run.png.dat,
// run.png.gp), so that images of other types drawn beside it (run.svg) keep
// their own.
func Companions(image string) (data, script string) {
	return image + ".dat", image + ".gp"
}

// WriteData writes the figure's data file: every Line of every Panel as one
// block, in order, blocks separated by two blank lines (gnuplot's index).
func WriteData(w io.Writer, f *chart.Figure) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# gab chart data: %s\n", comment(f.Title))
	fmt.Fprintf(bw, "# Blocks are separated by two blank lines; gnuplot selects one with \"index N\".\n")
	block := 0
	var num []byte
	for _, p := range f.Panels {
		for _, l := range p.Lines {
			if block > 0 {
				bw.WriteString("\n\n")
			}
			head := p.Title
			if l.Title != "" {
				head += " — " + l.Title
			}
			fmt.Fprintf(bw, "# index %d: %s\n", block, comment(head))
			if l.Note != "" {
				fmt.Fprintf(bw, "# %s\n", comment(l.Note))
			}
			cols := make([]string, len(l.Columns))
			for i, c := range l.Columns {
				cols[i] = printable.String(c)
			}
			fmt.Fprintf(bw, "# %s\n", strings.Join(cols, "\t"))
			if len(l.Rows) == 0 {
				// An empty block would make gnuplot stop with an error; a
				// row of missing values draws nothing.
				bw.WriteString(strings.TrimSuffix(strings.Repeat("?\t", max(len(l.Columns), 2)), "\t") + "\n")
			}
			for _, row := range l.Rows {
				if allMissing(row) {
					// A break in a line: gnuplot does not join the points
					// either side of a blank line.
					bw.WriteString("\n")
					continue
				}
				num = num[:0]
				for i, v := range row {
					if i > 0 {
						num = append(num, '\t')
					}
					num = appendNumber(num, v)
				}
				num = append(num, '\n')
				bw.Write(num)
			}
			block++
		}
	}
	return bw.Flush()
}

// allMissing says every value of row is NaN or infinite (a break in a line).
func allMissing(row []float64) bool {
	for _, v := range row {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return false
		}
	}
	return len(row) > 0
}

// appendNumber formats v with as many digits as it needs and no more than
// 6 decimals (µs in ms, fractions of a percent); NaN is gnuplot's missing "?".
func appendNumber(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, '?')
	}
	return strconv.AppendFloat(b, math.Round(v*1e6)/1e6, 'f', -1, 64)
}

// WriteScript writes the gnuplot script that draws the figure from dataName
// into imageName with terminal t (the script Draw keeps beside the image).
// Relative names are relative to the directory gnuplot runs in. Every name,
// title and label is written so that gnuplot reads it as one string and
// nothing else: names exactly (see quoteName), text as printable.String text
// in single quotes (see quote).
func WriteScript(w io.Writer, f *chart.Figure, t Terminal, dataName, imageName string) error {
	return writeScript(w, f, t, dataName, imageName, false)
}

// writeScript is WriteScript; toStdout writes the image to gnuplot's standard
// output instead of imageName (Draw's own run).
func writeScript(w io.Writer, f *chart.Figure, t Terminal, dataName, imageName string, toStdout bool) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("# gab charts: %s\n", comment(f.Title))
	p("#\n# Written by gab with its data in %s (one block per data set,\n", printable.String(dataName))
	p("# described there). Edit freely and draw again with:  gnuplot %s\n\n", comment(ShellWord(filepath.Base(imageName)+".gp")))
	// Panels row after row, f.Cols() a row; a figure with columns is wider.
	cols := f.Cols()
	n := (len(f.Panels) + cols - 1) / cols
	// and each row taller (its legends under the plots).
	width, height := t.Width, t.PanelHeight
	if cols > 1 {
		width, height = t.Width*float64(cols)/2, t.PanelHeight*1.4
	}
	p("set terminal %s size %s,%s\n", t.Line, fmtSize(width, t.Unit), fmtSize(height*float64(n)+headingHeight(t), t.Unit))
	if toStdout {
		p("set output\n")
	} else {
		p("set output %s\n", quoteName(imageName))
	}
	p("set datafile missing '?'\n")
	p("set grid\nset key top left\nset boxwidth 1 absolute\n")
	p("set multiplot layout %d,%d title %s\n", n, cols, quote(f.Title))
	block := 0
	keyOutside := false
	for i, pn := range f.Panels {
		p("\n# %d. %s\n", i+1, comment(pn.Title))
		// A long legend goes right of the plot, where it covers no data; in
		// a figure with columns every legend goes under its plot. The title
		// is centred on the plot, which starts after a left margin of 60
		// pixels or more: beside a legend it fits when no wider than the
		// image less the legend, plus that margin.
		outside := cols == 1 && (pn.Titled() > chart.MaxLegendInside || pn.LegendOutside)
		titleWidth := 900 * width / t.Width / float64(cols)
		if outside {
			titleWidth = max(titleWidth-keyWidth(&pn)+60, titleWidth/4)
		}
		p("set title %s\n", titleLines(pn.Title, titleWidth))
		if cols > 1 {
			if i == 0 {
				p("set key outside below horizontal\n")
			}
		} else if outside != keyOutside {
			keyOutside = outside
			if outside {
				p("set key outside right top vertical\n")
			} else {
				p("set key inside top left\n")
			}
		}
		writeAxes(bw, &pn)
		var plots []string
		for j := range pn.Lines {
			src := "''"
			if j == 0 {
				src = quoteName(dataName)
			}
			plots = append(plots, plotClause(src, block, &pn.Lines[j], j))
			block++
		}
		if len(plots) == 0 {
			switch {
			case cols > 1 && pn.Title != "":
				// A panel with nothing to draw (a search interrupted before
				// its first step) still shows its title, on empty axes.
				p("set yrange [0:1]\nplot NaN notitle\n")
			case cols > 1:
				p("set multiplot next\n") // the panel's place stays empty
			}
			continue
		}
		p("plot %s\n", strings.Join(plots, ", \\\n     "))
	}
	p("\nunset multiplot\n")
	return bw.Flush()
}

// writeAxes sets a panel's axes: their labels, scales, tics and ranges.
func writeAxes(bw *bufio.Writer, pn *chart.Panel) {
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("set xlabel %s\nset ylabel %s\n", quote(pn.XLabel), quote(pn.YLabel))
	if pn.LogX {
		p("set logscale x\n")
	} else {
		p("unset logscale x\n")
	}
	if pn.LogY {
		p("set logscale y\n")
	} else {
		p("unset logscale y\n")
	}
	if len(pn.XTics) > 0 {
		var tics []string
		for _, tc := range pn.XTics {
			// A tic label is a format string: % is written %%.
			tics = append(tics, quote(strings.ReplaceAll(tc.Label, "%", "%%"))+" "+string(appendNumber(nil, tc.At)))
		}
		p("set xtics (%s)\n", strings.Join(tics, ", "))
	} else {
		p("set xtics autofreq\n")
	}
	if pn.XMax > pn.XMin {
		p("set xrange [%s:%s]\n", appendNumber(nil, pn.XMin), appendNumber(nil, pn.XMax))
	} else {
		p("set xrange [%s:*]\n", fromZero(pn.XFromZero))
	}
	if top, ok := stackTop(pn); ok {
		// gnuplot's autoscale does not reach a boxxyerror's top.
		p("set yrange [0:%s]\n", appendNumber(nil, top*1.05))
	} else {
		p("set yrange [%s:*]\n", fromZero(pn.YFromZero && !pn.LogY))
	}
}

// plotClause is the plot command's clause that draws l, the j-th data set
// of its panel, from block of src.
func plotClause(src string, block int, l *chart.Line, j int) string {
	using, with := "1:2", ""
	switch l.Style {
	case chart.Points:
		with = "points pointtype 7 pointsize 0.25"
	case chart.Stacked:
		// x, top, width, base: a box from base to top.
		using, with = "1:(($2+$4)/2):($1-$3/2):($1+$3/2):4:2", "boxxyerror fill transparent solid 0.6 noborder"
	case chart.Marks:
		with = "points pointtype 7 pointsize 1.5"
	case chart.Flagged:
		// The mark below right of a ring, slot characters further
		// right; the ring is the legend's sample.
		using = "1:2:(" + quote(l.Mark) + ")"
		with = fmt.Sprintf("labels textcolor rgb %s offset char %s,-1 point pointtype 6 pointsize 2",
			quote(chart.LookOf(l, j).Color), appendNumber(nil, 1+float64(l.MarkSlot)))
	case chart.Lines:
		with = "lines linewidth 1.5"
	case chart.Bars:
		with = "boxes"
		if len(l.Columns) >= 3 {
			using = "1:2:3" // the third column is the bar's width
		}
	case chart.ErrorBars:
		using, with = "1:2:3:4", "yerrorlines linewidth 1.5 pointtype 7 pointsize 0.6"
	}
	title := "notitle"
	if l.Title != "" {
		title = "title " + quote(l.Title)
	}
	lk := chart.LookOf(l, j)
	if l.Style == chart.Flagged {
		with += fmt.Sprintf(" linecolor rgb %s", quote(lk.Color)) // labels take no dashtype
	} else {
		with += fmt.Sprintf(" linecolor rgb %s dashtype %s", quote(lk.Color), lk.GnuplotDash)
	}
	if l.Style == chart.Points || l.Style == chart.Marks {
		with = strings.Replace(with, "pointtype 7", fmt.Sprintf("pointtype %d", lk.PointType), 1)
	}
	if l.Style == chart.Bars {
		with += " fill transparent solid 0.35 border"
	}
	return fmt.Sprintf("%s index %d using %s with %s %s", src, block, using, with, title)
}

// titleLines is a panel's title as a gnuplot string, wrapped onto lines
// that fit a panel of width pixels of a 900-pixel-wide image (a title wider
// than its panel is clipped): its printable.String lines joined by newlines, which
// gpString writes escaped.
func titleLines(title string, width float64) string {
	return gpString(strings.Join(chart.WrapText(printable.String(title), width, 12), "\n"))
}

// keyWidth is an upper estimate of the width of p's legend right of its
// plot, in pixels of a 900-pixel-wide image: its longest entry (at the
// titles' size, chart.TextWidth) and the sample beside it.
func keyWidth(p *chart.Panel) float64 {
	w := 0.0
	for _, l := range p.Lines {
		if l.Title != "" {
			w = max(w, chart.TextWidth(printable.String(l.Title), 12))
		}
	}
	return w + 60
}

// stackTop is the highest top of p's Stacked data sets, if it has any.
func stackTop(p *chart.Panel) (float64, bool) {
	top, ok := 0.0, false
	for _, l := range p.Lines {
		if l.Style != chart.Stacked {
			continue
		}
		for _, r := range l.Rows {
			if len(r) >= 2 && !math.IsNaN(r[1]) && !math.IsInf(r[1], 0) {
				top, ok = max(top, r[1]), true
			}
		}
	}
	return top, ok && top > 0
}

func fromZero(on bool) string {
	if on {
		return "0"
	}
	return "*"
}

func headingHeight(t Terminal) float64 {
	if t.Unit == "in" {
		return 0.3
	}
	return 30
}

func fmtSize(v float64, unit string) string {
	return strconv.FormatFloat(v, 'f', -1, 64) + unit
}

// quote is text as a gnuplot string: printable.String, so that no newline
// ends the command, written by gpString.
func quote(s string) string { return gpString(printable.String(s)) }

// comment is text for the end of a # line: printable.String, and a backslash at its
// end written \x5c, since gnuplot joins a line that ends in one with the next
// (a comment would swallow the command after it).
func comment(s string) string {
	s = printable.String(s)
	if strings.HasSuffix(s, `\`) {
		s = s[:len(s)-1] + `\x5c`
	}
	return s
}

// quoteName is a file name as a gnuplot string that names exactly that file.
// A name gnuplot would read as something else (<cmd and |cmd run a command,
// - is inline data, + and ++ pseudo-files, $name a datablock, ~ the home
// directory) is made ./name, which is the same file; here any name that does
// not start with a letter, digit or _ is.
func quoteName(name string) string {
	if name == "" || !isNameStart(name[0]) {
		name = "./" + name
	}
	return gpString(name)
}

func isNameStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// gpString is s as a gnuplot string that gnuplot reads back as exactly s,
// byte for byte. Printable text without a quote (most text) is single-quoted
// as it is: gnuplot takes every byte in single quotes as text. Any other s is
// double-quoted, with a four-digit octal escape (\0ooo, which gnuplot reads
// as one byte whatever follows) for every byte of a control, of a C1 control
// and that is not UTF-8, and for " \ and ` (which runs a command in double
// quotes). Single quotes are not used for a quote: gnuplot reads ” as one
// only after another character of the string.
func gpString(s string) string {
	if !strings.Contains(s, "'") && printable.String(s) == s {
		return "'" + s + "'"
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, '"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '"' || r == '\\' || r == '`' || printable.String(s[i:i+size]) != s[i:i+size] {
			for _, c := range []byte(s[i : i+size]) {
				b = append(b, '\\', '0', '0'+c>>6, '0'+c>>3&7, '0'+c&7)
			}
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(append(b, '"'))
}

// ShellWord is a file name as one word of a POSIX shell command line (for
// the lines gab prints that say how to draw an image by hand): as it is when
// it needs no quoting, else in single quotes; a name with bytes that are not
// printable text is written $'...' with \xNN escapes (bash, zsh, ksh and
// POSIX.1-2024 shells), so the line stays one line of printable text. A name
// that starts with - is made ./name, which no command takes for an option.
func ShellWord(name string) string {
	if strings.HasPrefix(name, "-") {
		name = "./" + name
	}
	if name != "" && strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return name
	}
	if printable.String(name) == name {
		return "'" + strings.ReplaceAll(name, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	const hex = "0123456789abcdef"
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// ErrNoGnuplot is returned by Draw when gnuplot is not on PATH; the script and
// data were written.
var ErrNoGnuplot = errors.New("gnuplot is not on PATH")

// CheckImagePath checks, before a run, that the image, data and script can be
// written where asked (the extension is known and the directory is
// writable), without leaving any file behind.
func CheckImagePath(image string) error {
	if _, err := TerminalFor(image); err != nil {
		return err
	}
	data, script := Companions(image)
	for _, name := range []string{image, data, script} {
		if err := outfile.CheckWritable(name); err != nil {
			return err
		}
	}
	return nil
}

// Draw writes the figure's data and script beside image (see Companions),
// each with outfile.WriteAtomic, and runs gnuplot to draw image. Without
// gnuplot on PATH it returns ErrNoGnuplot, with the data and script written.
// gnuplot reads the same script from its standard input with the image sent
// to its standard output, which Draw writes to image with
// outfile.WriteAtomic: gnuplot opens no output file itself, and if it fails,
// image is left as it was (the error carries gnuplot's message).
func Draw(ctx context.Context, image string, f *chart.Figure) error {
	t, err := TerminalFor(image)
	if err != nil {
		return err
	}
	dataPath, scriptPath := Companions(image)
	// The script names its files relative to its own directory, so that it
	// can be run again from there.
	dataName, imageName := filepath.Base(dataPath), filepath.Base(image)
	if err := outfile.WriteAtomic(dataPath, func(w io.Writer) error { return WriteData(w, f) }); err != nil {
		return err
	}
	if err := outfile.WriteAtomic(scriptPath, func(w io.Writer) error { return WriteScript(w, f, t, dataName, imageName) }); err != nil {
		return err
	}
	bin, err := exec.LookPath("gnuplot")
	if err != nil {
		return ErrNoGnuplot
	}
	var script bytes.Buffer
	if err := writeScript(&script, f, t, dataName, imageName, true); err != nil {
		return err
	}
	return outfile.WriteAtomic(image, func(w io.Writer) error {
		return render(ctx, bin, filepath.Dir(image), script.Bytes(), w)
	})
}

// render runs gnuplot in dir on script (its standard input) and copies the
// image it writes to its standard output into out. A failure of gnuplot, or
// an empty image, is an error with gnuplot's message.
func render(ctx context.Context, bin, dir string, script []byte, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(script)
	img := &countingWriter{w: out}
	cmd.Stdout = img
	stderr := &cappedBuffer{max: 64 << 10}
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second // a child of gnuplot holding its pipes
	err := cmd.Run()
	if err == nil && img.n == 0 {
		err = errors.New("empty image")
	}
	if err == nil {
		return nil
	}
	// gnuplot's messages on one line, at most 300 bytes of them.
	var lines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" && !strings.HasPrefix(l, "^") {
			lines = append(lines, l)
		}
	}
	msg := strings.Join(lines, "; ")
	if len(msg) > 300 {
		msg = strings.ToValidUTF8(msg[:300], "") + "..."
	}
	if msg != "" {
		return fmt.Errorf("gnuplot: %v: %s", err, printable.String(msg))
	}
	return fmt.Errorf("gnuplot: %v", err)
}

// countingWriter counts what it passes on.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// cappedBuffer keeps the first max bytes written to it and drops the rest.
type cappedBuffer struct {
	bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
