// Package plot is what `gab plot` draws from saved JSON documents (gab
// --json, gab sweep --json): several runs overlaid, each labelled, or a
// sweep's figure and HTML report (several sweeps joined as configurations
// of one study). It builds figures and pages; the command writes them
// (gnuplot, the HTML page). gab sweep's --plot and --html draw a sweep
// through SweepFigure and SweepPage.
package plot

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"gab/internal/capacity"
	"gab/internal/chart"
	"gab/internal/printable"
	"gab/report"
)

// Input is one document named on the command line: a run's, a sweep's or
// a capacity search's (Decode sets one of them).
type Input struct {
	Label, Path string
	Run         *report.Run
	Sweep       *report.SweepDocument
	Capacity    *report.CapacityDocument
}

// Decode reads the document raw of the file path and checks it as gab
// merge and gab compare do (report.DecodeDocument, report.DecodeSweep,
// capacity.Decode): its strings made printable, every figure consistent.
// Errors start with the file's name.
func Decode(path string, raw []byte) (Input, error) {
	in := Input{Path: path}
	name := printable.String(path)
	var head struct {
		Tool          string `json:"tool"`
		Schema        string `json:"schema"`
		SchemaVersion *int   `json:"schema_version"`
	}
	if json.Unmarshal(raw, &head) != nil || head.Tool != "gab" || head.SchemaVersion == nil {
		return in, fmt.Errorf("%s: not a gab JSON document (gab --json FILE or gab sweep --json FILE writes one)", name)
	}
	var err error
	switch head.Schema {
	case "gab-sweep":
		in.Sweep, err = report.DecodeSweep(path, raw)
	case capacity.Schema:
		if in.Capacity, err = capacity.Decode(raw); err != nil {
			err = fmt.Errorf("%s: %v", name, err)
		}
	default:
		in.Run, err = report.DecodeDocument(path, raw)
	}
	return in, err
}

// Output is what gab plot writes: a figure (drawn by gnuplot) or an HTML
// page.
type Output struct {
	Figure *chart.Figure
	Page   *report.Page
}

// usageError is a mistake in what the command line asks for (ab's usage
// exit status), not in a document.
type usageError struct{ error }

// IsUsage says err is a mistake in what the command line asks for.
func IsUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// Build is gab plot of the run and sweep documents ins (capacity documents
// are drawn by gab capacity's own code): the runs overlaid, or the sweep's
// figure, or the sweeps as configurations of one study; as an HTML page
// when html. command is the command line, for the runs' title.
func Build(ins []Input, command []string, html bool) (Output, error) {
	sweeps := 0
	for _, in := range ins {
		if in.Sweep != nil {
			sweeps++
		}
	}
	if sweeps > 0 && sweeps < len(ins) {
		return Output{}, usageError{errors.New("a sweep document is drawn with other sweeps (as configurations), not with runs")}
	}
	if sweeps == 0 {
		return runs(ins, command, html)
	}
	d := ins[0].Sweep
	if sweeps > 1 {
		var err error
		if d, err = Configurations(ins); err != nil {
			return Output{}, usageError{err}
		}
	}
	if html {
		return Output{Page: SweepPage(d)}, nil
	}
	return Output{Figure: SweepFigure(d)}, nil
}

// runs is the figure of saved runs overlaid (chart.RunFigure), or their
// HTML page with the comparison.
func runs(ins []Input, command []string, html bool) (Output, error) {
	var data []*chart.Data
	var runs []report.PageRun
	for _, in := range ins {
		d, err := report.DocumentChartData(in.Run)
		if err != nil {
			return Output{}, fmt.Errorf("%s: %v", in.Path, err)
		}
		d.Label = in.Label
		data = append(data, d)
		runs = append(runs, report.PageRun{Label: in.Label, Doc: in.Run, Chart: d})
	}
	title := runsTitle(ins, command)
	fig := chart.RunFigure(title, data)
	if !html {
		return Output{Figure: fig}, nil
	}
	page := &report.Page{Title: title, Runs: runs, Figure: fig}
	if title != strings.Join(command, " ") {
		page.Command = command
	}
	return Output{Page: page}, nil
}

// maxTitleWidth is the widest a figure's title may be (chart.TextWidth at
// 12 points, an upper estimate): a 900-pixel image's, with a margin.
const maxTitleWidth = 860

// runsTitle is the title of runs overlaid: the command line when it fits
// above the charts, else how many runs and the first labels (the HTML page
// shows the command line).
func runsTitle(ins []Input, command []string) string {
	title := strings.Join(command, " ")
	if chart.TextWidth(printable.String(title), 12) <= maxTitleWidth {
		return title
	}
	var labels []string
	for i, in := range ins {
		if i == maxTitleTargets {
			labels = append(labels, fmt.Sprintf("+%d more", len(ins)-i))
			break
		}
		labels = append(labels, in.Label)
	}
	title = fmt.Sprintf("gab plot of %d runs: %s", len(ins), strings.Join(labels, ", "))
	if chart.TextWidth(printable.String(title), 12) > maxTitleWidth {
		title = fmt.Sprintf("gab plot of %d runs", len(ins))
	}
	return title
}
