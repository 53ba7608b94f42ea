package gnuplot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"gab/internal/chart"
	"gab/internal/outfile"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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
// image: the image's name with .dat and .gp in place of its extension.
func Companions(image string) (data, script string) {
	base := strings.TrimSuffix(image, filepath.Ext(image))
	return base + ".dat", base + ".gp"
}

// WriteData writes the figure's data file: every Line of every Panel as one
// block, in order, blocks separated by two blank lines (gnuplot's index).
func WriteData(w io.Writer, f *chart.Figure) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# gab chart data: %s\n", oneLine(f.Title))
	fmt.Fprintf(bw, "# Blocks are separated by two blank lines; gnuplot selects one with \"index N\".\n")
	block := 0
	var num []byte
	for _, p := range f.Panels {
		for _, l := range p.Lines {
			if block > 0 {
				bw.WriteString("\n\n")
			}
			fmt.Fprintf(bw, "# index %d: %s", block, oneLine(p.Title))
			if l.Title != "" {
				fmt.Fprintf(bw, " — %s", oneLine(l.Title))
			}
			bw.WriteString("\n")
			if l.Note != "" {
				fmt.Fprintf(bw, "# %s\n", oneLine(l.Note))
			}
			fmt.Fprintf(bw, "# %s\n", strings.Join(l.Columns, "\t"))
			if len(l.Rows) == 0 {
				// An empty block would make gnuplot stop with an error; a
				// row of missing values draws nothing.
				bw.WriteString(strings.TrimSuffix(strings.Repeat("?\t", max(len(l.Columns), 2)), "\t") + "\n")
			}
			for _, row := range l.Rows {
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

// appendNumber formats v with as many digits as it needs and no more than
// 6 decimals (µs in ms, fractions of a percent); NaN is gnuplot's missing "?".
func appendNumber(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, '?')
	}
	return strconv.AppendFloat(b, math.Round(v*1e6)/1e6, 'f', -1, 64)
}

// WriteScript writes the gnuplot script that draws the figure from dataName
// into imageName with terminal t. Names are written as given (relative names
// are relative to the directory gnuplot runs in).
func WriteScript(w io.Writer, f *chart.Figure, t Terminal, dataName, imageName string) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("# gab charts: %s\n", oneLine(f.Title))
	p("#\n# Written by gab with its data in %s (one block per data set, described\n", dataName)
	p("# there). Edit freely and draw again with:  gnuplot %s\n\n", filepath.Base(imageName[:len(imageName)-len(filepath.Ext(imageName))])+".gp")
	n := len(f.Panels)
	p("set terminal %s size %s,%s\n", t.Line, fmtSize(t.Width, t.Unit), fmtSize(t.PanelHeight*float64(n)+headingHeight(t), t.Unit))
	p("set output %s\n", quote(imageName))
	p("set datafile missing '?'\n")
	p("set grid\nset key top left\nset boxwidth 1 absolute\n")
	p("set multiplot layout %d,1 title %s\n", n, quote(f.Title))
	block := 0
	for i, pn := range f.Panels {
		p("\n# %d. %s\n", i+1, oneLine(pn.Title))
		p("set title %s\n", quote(pn.Title))
		p("set xlabel %s\nset ylabel %s\n", quote(pn.XLabel), quote(pn.YLabel))
		if pn.LogX {
			p("set logscale x\n")
		} else {
			p("unset logscale x\n")
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
		p("set yrange [%s:*]\n", fromZero(pn.YFromZero))
		var plots []string
		for j, l := range pn.Lines {
			src := "''"
			if j == 0 {
				src = quote(dataName)
			}
			using, with := "1:2", ""
			switch l.Style {
			case chart.Points:
				with = "points pointtype 7 pointsize 0.25"
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
			with += fmt.Sprintf(" linecolor %d", l.ColorOf(j))
			if l.Dashed {
				with += " dashtype 2"
			}
			if l.Style == chart.Bars {
				with += " fill transparent solid 0.35 border"
			}
			plots = append(plots, fmt.Sprintf("%s index %d using %s with %s %s", src, block, using, with, title))
			block++
		}
		if len(plots) == 0 {
			continue
		}
		p("plot %s\n", strings.Join(plots, ", \\\n     "))
	}
	p("\nunset multiplot\n")
	return bw.Flush()
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

// quote is a gnuplot single-quoted string (” stands for a quote).
func quote(s string) string { return "'" + strings.ReplaceAll(oneLine(s), "'", "''") + "'" }

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
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
// each atomically (a temporary file renamed into place), and runs gnuplot to
// draw image. Without gnuplot on PATH it returns ErrNoGnuplot, with the data
// and script written. If gnuplot fails, no image is left behind and the error
// carries gnuplot's message.
func Draw(ctx context.Context, image string, f *chart.Figure) error {
	t, err := TerminalFor(image)
	if err != nil {
		return err
	}
	dataPath, scriptPath := Companions(image)
	dir := filepath.Dir(image)
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
	return render(ctx, bin, dir, filepath.Base(scriptPath), image)
}

// render runs gnuplot on script in dir; if gnuplot fails, whatever it wrote
// of the image is removed.
func render(ctx context.Context, bin, dir, script, image string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, script)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(image); err == nil && fi.Size() == 0 {
			err = errors.New("empty image")
		}
	}
	if err != nil {
		os.Remove(image)
		// gnuplot's messages on one line, at most 300 bytes of them.
		var lines []string
		for _, l := range strings.Split(stderr.String(), "\n") {
			if l = oneLine(l); l != "" && !strings.HasPrefix(l, "^") {
				lines = append(lines, l)
			}
		}
		msg := strings.Join(lines, "; ")
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		if msg != "" {
			return fmt.Errorf("gnuplot %s: %v: %s", script, err, msg)
		}
		return fmt.Errorf("gnuplot %s: %v", script, err)
	}
	return nil
}
