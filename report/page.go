package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"

	"gab/internal/chart"
)

// This file is the self-contained HTML report (--html FILE, gab plot -o
// FILE.html): first a run's summary (requests per second, p50 and p99,
// errors, objectives) and its verdicts (of several runs, the verdicts of
// those that have some), then the command lines and environment, ab's figures, the charts as
// inline SVG drawn by Go (each in an element with its panel's id), the
// percentile, status code, error, response-time range and --fail-if tables
// (ids NAME-N for the N-th run), and, for several runs, a comparison ranked
// by requests per second. Nothing is loaded from elsewhere. A small inline
// script adds hover and time-axis zoom to the latency scatter; without it
// the page shows the same charts and tables.

// PageRun is one run on the page.
type PageRun struct {
	Label string
	Doc   *Run        // its record: ab's figures, environment, ending
	Chart *chart.Data // its chart data (Table: the percentile table)
}

// Page is a whole HTML report.
type Page struct {
	Title string
	// Command and Environment head the page (a sweep's; runs carry their own).
	Command     []string
	Environment []PageRow
	Runs        []PageRun
	Figure      *chart.Figure
	// Tables follow the charts (a sweep's points and rankings); each table's
	// first row is its header.
	Tables []PageTable
	// Live, when set, makes the page a view of a run in progress (gab
	// --dashboard): a line that says so and a small script that keeps the
	// page current. Without it the page is the finished report.
	Live *PageLive
}

// PageLive is what a live page says and how its script keeps it current:
// every RefreshMs it reads StatePath, a JSON object with the page's Seq and
// whether the run is Final, and when Seq changed it reads the page again
// from PagePath and puts its body in place; when the run is final it loads
// the page anew (the finished report).
type PageLive struct {
	Note                string
	Seq                 uint64
	RefreshMs           int
	PagePath, StatePath string
}

// PageTable is a titled table.
type PageTable struct {
	Title string
	Note  string
	Rows  [][]string
	// Compact draws a wide table in a smaller font with narrower cells (a
	// sweep's points: it fits a 1400 px window).
	Compact bool
}

// panelSize is each chart's size in pixels; columnWidth and columnHeight
// a chart's in a figure with columns.
const (
	panelWidth, panelHeight   = 960, 320
	columnWidth, columnHeight = 440, 380
)

// PageRow is a named value.
type PageRow struct{ Name, Value string }

type pageRunView struct {
	Label, Command, Ending, Error string
	Env                           []PageRow
	Figures                       []figureRow
	Times                         [][]string // Connection Times rows
	Catalog                       [][]string // the catalog's figures (catalog.go)
	Percentiles                   [][]string
	Precision                     string
	N                             int        // the run's place on the page (element ids)
	Status                        [][]string // responses per status code
	Errors                        [][]string // failures per class
	Ranges                        [][]string // response-time ranges
	Targets                       [][]string // results per target (--urls, --targets)
	Objectives                    [][]string // --fail-if verdicts
	Apdex                         [][]string // --apdex
	IntervalNote                  string
}

// figureRow is a row of ab's figures; ID, when set, is its value's element id.
type figureRow struct{ Name, Value, ID string }

type pageChart struct {
	ID  string
	SVG template.HTML
}

// pageSummary heads the page for a run: its requests per second, p50 and
// p99, errors, objectives and verdicts (the banner, verdictBanner), before
// the charts, so that what limits trust in the figures is read first.
type pageSummary struct {
	Label    string
	N        int // the run's place on the page (element ids)
	Rows     []figureRow
	Verdicts template.HTML
}

type pageView struct {
	Title   string
	Command string
	Summary []pageSummary
	Env     []PageRow
	Tables  []PageTable
	Charts  []pageChart
	Columns int // charts a row (0: one)
	Runs    []pageRunView
	Compare [][]string // header row first
	Live    *PageLive
}

// WriteHTMLPage writes the page.
func WriteHTMLPage(w io.Writer, p *Page) error {
	v := pageView{Title: p.Title, Command: strings.Join(p.Command, " "), Env: p.Environment, Tables: p.Tables, Live: p.Live}
	if p.Figure != nil {
		// A figure with columns: its panels side by side, narrower (the
		// legend then under each plot), on a page as wide as they are.
		w, h := panelWidth, panelHeight
		if c := p.Figure.Cols(); c > 1 {
			w, h, v.Columns = columnWidth, columnHeight, c
		}
		for i := range p.Figure.Panels {
			var b bytes.Buffer
			if err := chart.WriteSVG(&b, &p.Figure.Panels[i], w, h); err != nil {
				return err
			}
			// Drawn by WriteSVG, which escapes every text.
			v.Charts = append(v.Charts, pageChart{ID: p.Figure.Panels[i].ID, SVG: template.HTML(b.String())})
		}
	}
	for i, r := range p.Runs {
		rv := runView(r, len(p.Runs) == 1)
		rv.N = i + 1
		v.Runs = append(v.Runs, rv)
		if sv := summaryView(r, i+1, len(p.Runs) == 1); len(sv.Rows) > 0 {
			v.Summary = append(v.Summary, sv)
		}
	}
	if len(p.Runs) > 1 {
		v.Compare = compareRows(p.Runs)
	}
	return pageTemplate.Execute(w, v)
}

// runView is a run's part of the page; alone, its complete count's element
// has the id "complete" (a page's script or test finds it).
func runView(r PageRun, alone bool) pageRunView {
	d := r.Doc
	v := pageRunView{Label: r.Label, Command: strings.Join(d.CommandLine, " "), Ending: d.Ending}
	if d.Error != nil {
		v.Error = fmt.Sprintf("%s (exit status %d)", d.Error.Message, d.Error.ExitCode)
	}
	v.Env = append(v.Env, PageRow{"Started", d.StartTime})
	if e := d.Environment; e != nil {
		v.Env = append(v.Env,
			PageRow{"gab", e.GabVersion + " (" + e.GoVersion + ")"},
			PageRow{"System", strings.TrimSpace(e.Kernel + " " + e.OS + "/" + e.Arch)},
			PageRow{"Cores", fmt.Sprintf("%d (gab used %d)", e.Cores, e.GOMAXPROCS)})
	}
	if rp := d.Report; rp != nil {
		f := func(name, value string) { v.Figures = append(v.Figures, figureRow{Name: name, Value: value}) }
		complete := func() {
			f("Complete requests", strconv.Itoa(rp.CompleteRequests))
			if alone {
				v.Figures[len(v.Figures)-1].ID = "complete"
			}
		}
		if d.local.live {
			// What the timeline's intervals carry; the rest comes with the
			// finished report.
			f("Server Hostname", rp.ServerHostname)
			f("Server Port", strconv.Itoa(rp.ServerPort))
			f("Document Path", rp.DocumentPath)
			f("Concurrency Level", strconv.Itoa(rp.ConcurrencyLevel))
			f("Time so far", fmt.Sprintf("%.3f seconds (the intervals finished)", rp.TimeTakenS))
			complete()
			f("Failed requests", fmt.Sprintf("%d (by class when the run ends)", rp.FailedRequests))
			f("Total transferred", fmt.Sprintf("%d bytes", rp.TotalTransferredBytes))
			if d.local.bodySent {
				f("Total body sent", strconv.FormatInt(rp.TotalBodySentBytes, 10))
			}
			f("Requests per second", fmt.Sprintf("%.2f [#/sec] (mean so far)", rp.RequestsPerSecond))
			f("Transfer rate", fmt.Sprintf("%.2f [Kbytes/sec] received", rp.TransferReceivedKBPerS))
			return chartTables(r, v)
		}
		f("Server Software", rp.ServerSoftware)
		f("Server Hostname", rp.ServerHostname)
		f("Server Port", strconv.Itoa(rp.ServerPort))
		if rp.Protocol != "" {
			f("Protocol", rp.Protocol)
		}
		if t := rp.TLS; t != nil {
			f("SSL/TLS Protocol", t.Protocol+", "+t.Cipher)
		}
		f("Document Path", rp.DocumentPath)
		if rp.VariableLength {
			f("Document Length", "Variable")
		} else {
			f("Document Length", fmt.Sprintf("%d bytes", rp.DocumentLengthBytes))
		}
		f("Concurrency Level", strconv.Itoa(rp.ConcurrencyLevel))
		f("Time taken for tests", fmt.Sprintf("%.3f seconds", rp.TimeTakenS))
		complete()
		fl := rp.Failures
		f("Failed requests", fmt.Sprintf("%d (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)",
			rp.FailedRequests, fl.Connect, fl.Receive, fl.Length, fl.Exceptions))
		if rp.WriteErrors > 0 {
			f("Write errors", strconv.Itoa(rp.WriteErrors))
		}
		f("Non-2xx responses", strconv.Itoa(rp.Non2xxResponses))
		f("Keep-Alive requests", strconv.Itoa(rp.KeepAliveReqs))
		f("Total transferred", fmt.Sprintf("%d bytes", rp.TotalTransferredBytes))
		if d.local.bodySent {
			f("Total body sent", strconv.FormatInt(rp.TotalBodySentBytes, 10))
		}
		f("HTML transferred", fmt.Sprintf("%d bytes", rp.HTMLTransferredBytes))
		f("Requests per second", fmt.Sprintf("%.2f [#/sec] (mean)", rp.RequestsPerSecond))
		f("Time per request", fmt.Sprintf("%.3f [ms] (mean)", rp.TimePerRequestMs))
		f("Time per request", fmt.Sprintf("%.3f [ms] (mean, across all concurrent requests)", rp.TimePerRequestAllMs))
		f("Transfer rate", fmt.Sprintf("%.2f [Kbytes/sec] received", rp.TransferReceivedKBPerS))
		if ct := rp.ConnectionTimes; ct != nil {
			v.Times = timesRows(ct)
		}
	}
	v.Catalog = catalogRows(d)
	v.Status, v.Errors = statusRows(d), errorRows(d)
	v.Targets = targetRows(d)
	if t := d.Thresholds; t != nil {
		v.Objectives = objectiveRows(t)
	}
	if a := d.Apdex; a != nil && a.Requests > 0 {
		v.Apdex = [][]string{{"APDEX", "T (satisfied)", "F (tolerating)", "requests"},
			{fmt.Sprintf("%.3f%s", a.Score, a.boundNote()), ms3(float64(a.SatisfiedUs)) + " ms", ms3(float64(a.ToleratedUs)) + " ms", a.counts()}}
	}
	return chartTables(r, v)
}

// timesRows is the page's timing table: ab's columns in ms to the µs.
func timesRows(ct *connectionTimes) [][]string {
	rows := [][]string{{"", "min", "mean", "[+/-sd]", "median", "max"}}
	for _, c := range []struct {
		name string
		col  columnStats
	}{{"Connect", ct.Connect}, {"Processing", ct.Processing}, {"Waiting", ct.Waiting}, {"Total", ct.Total}} {
		rows = append(rows, []string{c.name, ms3(float64(c.col.MinUs)), ms3(float64(c.col.MeanUs)),
			fmt.Sprintf("%.3f", c.col.SDUs/1000), ms3(float64(c.col.MedianUs)), ms3(float64(c.col.MaxUs))})
	}
	return rows
}

// objectiveRows is the page's --fail-if table: each objective, its
// measured value in its unit (µs as ms) and whether it was met.
func objectiveRows(t *thresholdVerdicts) [][]string {
	rows := [][]string{{"objective", "measured", "verdict"}}
	for _, c := range t.Checks {
		val, verdict := "no data", "missed"
		switch {
		case c.Value != nil && c.Unit == "us":
			val = ms3(*c.Value) + " ms"
		case c.Value != nil:
			val = decimal(*c.Value) + " " + c.Unit
		}
		if c.Passed {
			verdict = "met"
		}
		rows = append(rows, []string{c.Expression, val, verdict})
	}
	return rows
}

// summaryView is a run's summary (pageSummary): what it measured in brief
// and its verdicts, each row present where the run has the figure. Of
// several runs (alone false; the comparison table has their figures) only
// a run with verdicts has one, of its verdicts.
func summaryView(r PageRun, n int, alone bool) pageSummary {
	d := r.Doc
	v := pageSummary{Label: r.Label, N: n, Verdicts: verdictBanner(d)}
	if !alone {
		if vs := d.Verdicts; vs != nil && len(vs.Found) > 0 {
			v.Rows = append(v.Rows, figureRow{Name: "Verdicts", Value: verdictList(d) + " (below)"})
		}
		return v
	}
	f := func(name, value string) { v.Rows = append(v.Rows, figureRow{Name: name, Value: value}) }
	rp := d.Report
	if rp == nil {
		f("Requests", "none measured")
		return v
	}
	so := ""
	if d.local.live {
		so = " so far"
	}
	f("Requests per second", fmt.Sprintf("%.2f [#/sec] (mean%s)", rp.RequestsPerSecond, so))
	var lat []string
	for _, key := range []string{"p50", "p99"} {
		if fig, ok := FigureByKey(key); ok {
			if x, ok := fig.Value(d); ok {
				lat = append(lat, key+" "+fig.Format(x)+" ms")
			}
		}
	}
	if len(lat) > 0 {
		f("Latency (total time)", strings.Join(lat, ", "))
	}
	errs := fmt.Sprintf("%d failed of %d requests", rp.FailedRequests, rp.CompleteRequests+rp.FailedRequests)
	if rp.Non2xxResponses > 0 {
		errs += fmt.Sprintf("; %d non-2xx responses", rp.Non2xxResponses)
	}
	if d.Error != nil {
		errs += "; ended with an error: " + strings.TrimSpace(d.Error.Message)
	}
	f("Errors", errs)
	if t := d.Thresholds; t != nil && len(t.Checks) > 0 {
		met := 0
		var missed []string
		for _, c := range t.Checks {
			if c.Passed {
				met++
			} else {
				missed = append(missed, c.Expression)
			}
		}
		text := fmt.Sprintf("%d of %d met (--fail-if)", met, len(t.Checks))
		if len(missed) > 0 {
			text += "; missed: " + strings.Join(missed, ", ")
		}
		f("Objectives", text)
	}
	switch vs := d.Verdicts; {
	case vs == nil && d.local.live:
		f("Verdicts", "with the finished report")
	case vs == nil:
		f("Verdicts", "not judged")
	case len(vs.Found) == 0:
		f("Verdicts", "none: not client-bound, machine quiet, no kernel drops, long and large enough")
	default:
		f("Verdicts", verdictList(d)+" (below)")
	}
	return v
}

// verdictList names the run's verdicts: "client-bound, busy-machine".
func verdictList(d *Run) string {
	var kinds []string
	for _, k := range d.VerdictKinds() {
		kinds = append(kinds, strings.ReplaceAll(k, "_", "-"))
	}
	return strings.Join(kinds, ", ")
}

// chartTables adds a run's tables from its chart data: the timeline's note,
// the response-time ranges and the percentile table.
func chartTables(r PageRun, v pageRunView) pageRunView {
	c := r.Chart
	if c == nil {
		return v
	}
	v.IntervalNote = c.IntervalNote
	if len(c.Ranges) > 0 {
		v.Ranges = rangeRows(c)
	}
	if len(c.Table) > 0 {
		v.Precision = cmp.Or(c.TablePrecision, c.CurvePrecision)
		v.Percentiles = append(v.Percentiles, []string{"percentile", "total (ms)"})
		for _, p := range c.Table {
			name := percentLabel(p.Percent)
			if p.Percent == 100 {
				name += " (longest request)"
			}
			v.Percentiles = append(v.Percentiles, []string{name, ms3(float64(p.Us))})
		}
	}
	return v
}

// statusRows counts the run's responses per status code (header first; none
// without the extended figures).
func statusRows(d *Run) [][]string {
	x := d.Extended
	if x == nil || len(x.StatusCounts) == 0 {
		return nil
	}
	rows := [][]string{{"status", "class", "responses"}}
	for _, c := range statusCodes(x.StatusCounts) {
		rows = append(rows, []string{fmt.Sprintf("%03d", c), fmt.Sprintf("%dxx", c/100), strconv.Itoa(x.StatusCounts[strconv.Itoa(c)])})
	}
	return rows
}

// errorRows are the run's failures by class with the first error of each
// (header first; none without a failure).
func errorRows(d *Run) [][]string {
	x := d.Extended
	if x == nil {
		return nil
	}
	names := make([]string, 0, len(x.FailuresByClass))
	for name, f := range x.FailuresByClass {
		if f.Count > 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	rows := [][]string{{"class", "failures", "first error", "at (s)"}}
	for _, name := range names {
		f := x.FailuresByClass[name]
		at := ""
		if f.FirstAtS != nil {
			at = strconv.FormatFloat(*f.FirstAtS, 'f', 3, 64)
		}
		rows = append(rows, []string{name, strconv.Itoa(f.Count), OneLine(f.FirstError), at})
	}
	return rows
}

// rangeRows is the response-time ranges' table (header first).
func rangeRows(c *chart.Data) [][]string {
	rows := [][]string{{"range", "requests", "share"}}
	total := int64(0)
	for _, n := range c.Ranges {
		total += n
	}
	share := func(n int64) string {
		if total == 0 {
			return ""
		}
		return fmt.Sprintf("%.2f%%", 100*float64(n)/float64(total))
	}
	names := chart.RangeNames(c.RangeEdgesMs)
	for i, n := range c.Ranges {
		rows = append(rows, []string{names[i], strconv.FormatInt(n, 10), share(n)})
	}
	return append(rows, []string{"failed (ab's Failed requests, also counted above)", strconv.Itoa(c.Failed), share(int64(c.Failed))})
}

// catalogRows is a run's table of the catalog's figures (header first;
// none without a figure).
func catalogRows(d *Run) [][]string {
	rows := [][]string{{"figure", "value", "key"}}
	for i := range Catalog {
		f := &Catalog[i]
		if v, ok := f.Value(d); ok {
			rows = append(rows, []string{f.Label(), f.Format(v), f.Key})
		}
	}
	if len(rows) == 1 {
		return nil
	}
	return rows
}

// compareRows is the comparison table: runs ranked by requests per second,
// with requests per second against the best and each figure of the catalog
// that a run has.
func compareRows(runs []PageRun) [][]string {
	type ranked struct {
		label  string
		rps    float64
		values []string // the catalog's figures ("" where the run lacks one)
	}
	var rs []ranked
	shown := make([]bool, len(Catalog))
	for _, r := range runs {
		rk := ranked{label: r.Label}
		if r.Doc.Report != nil {
			rk.rps = r.Doc.Report.RequestsPerSecond
		}
		for i := range Catalog {
			v, ok := Catalog[i].Value(r.Doc)
			rk.values = append(rk.values, "")
			if ok {
				rk.values[i], shown[i] = Catalog[i].Format(v), true
			}
		}
		rs = append(rs, rk)
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].rps > rs[j].rps })
	head := []string{"rank", "run", "vs best"}
	for i := range Catalog {
		if shown[i] {
			head = append(head, Catalog[i].Label())
		}
	}
	rows := [][]string{head}
	best := rs[0].rps
	for i, r := range rs {
		row := []string{strconv.Itoa(i + 1), r.label, ""}
		if best > 0 {
			row[2] = fmt.Sprintf("%.1f%%", 100*r.rps/best)
		}
		for j, v := range r.values {
			if shown[j] {
				row = append(row, v)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<link rel="icon" href="data:,">
<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1000px; color: #222; padding: 0 1em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; }
pre { background: #f4f4f4; padding: .5em; white-space: pre-wrap; word-break: break-all; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { border: 1px solid #ccc; padding: .2em .6em; text-align: right; }
td:first-child, th:first-child { text-align: left; }
.figures td:last-child { text-align: left; }
.error { color: #a00; }
svg { display: block; margin: .8em 0; max-width: 100%; height: auto; }
figure { margin: 0; }
.columns { display: grid; gap: 0 12px; }
body.wide { max-width: 1360px; }
.note { color: #555; font-size: .9em; }
table.compact { font-size: .8em; } table.compact td, table.compact th { padding: .15em .2em; }
</style>
</head>
<body{{if .Columns}} class="wide"{{end}}>
<h1>{{.Title}}</h1>
{{if .Live}}<p class="note" id="live" data-seq="{{.Live.Seq}}">{{.Live.Note}}</p>
{{end}}{{if .Command}}<h2>Command line</h2>
<pre>{{.Command}}</pre>
<table class="figures">{{range .Env}}<tr><td>{{.Name}}</td><td>{{.Value}}</td></tr>{{end}}</table>{{end}}
{{range .Summary}}<h2 id="summary-{{.N}}">Summary{{if .Label}}: {{.Label}}{{end}}</h2>
<table class="figures">{{range .Rows}}<tr><td>{{.Name}}:</td><td>{{.Value}}</td></tr>
{{end}}</table>{{.Verdicts}}
{{end}}{{if .Compare}}<h2>Comparison (ranked by requests per second)</h2>
<table class="compare">{{range $i, $row := .Compare}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{if .Charts}}<h2>Charts</h2>
{{if .Columns}}<div class="columns" style="grid-template-columns: repeat({{.Columns}}, 440px)">{{end}}{{range .Charts}}<figure{{if .ID}} id="{{.ID}}"{{end}}>{{.SVG}}</figure>
{{end}}{{if .Columns}}</div>{{end}}{{end}}
{{range .Tables}}<h2>{{.Title}}</h2>
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
<table{{if .Compact}} class="compact"{{end}}>{{range $i, $row := .Rows}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>
{{end}}
{{range .Runs}}<h2>{{if .Label}}{{.Label}}{{else}}Run{{end}}</h2>
<h3>Command line</h3>
<pre>{{.Command}}</pre>
{{if .Error}}<p class="error">Ended with an error: {{.Error}}</p>{{end}}
<table class="figures">{{range .Env}}<tr><td>{{.Name}}</td><td>{{.Value}}</td></tr>{{end}}
<tr><td>Ending</td><td>{{.Ending}}</td></tr></table>
{{if .Figures}}<h3>ab's figures</h3>
<table class="figures">{{range .Figures}}<tr><td>{{.Name}}:</td><td{{if .ID}} id="{{.ID}}"{{end}}>{{.Value}}</td></tr>
{{end}}</table>{{end}}
{{if .IntervalNote}}<p class="note">Timeline: {{.IntervalNote}} (--interval sets them).</p>{{end}}
{{if .Apdex}}<h3>APDEX</h3>
<table id="apdex-{{.N}}">{{range $i, $row := .Apdex}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{if .Objectives}}<h3>Objectives (--fail-if)</h3>
<table id="objectives-{{.N}}">{{range $i, $row := .Objectives}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{if .Status}}<h3>Status codes</h3>
<table id="status-codes-{{.N}}">{{range $i, $row := .Status}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{if .Errors}}<h3>Errors</h3>
<p class="note">Failures per class with the first error of each and when it ended (since the start); failures over time are in the requests and failures chart.</p>
<table id="errors-{{.N}}">{{range $i, $row := .Errors}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{if .Targets}}<h3>Per target</h3>
<p class="note">Each distinct method and URL of the run's list (at most 1000, then "other"); total times in ms, percentiles within 1 %.</p>
<table id="targets-{{.N}}">{{range $i, $row := .Targets}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{if .Ranges}}<h3>Response-time ranges</h3>
<table id="ranges-{{.N}}">{{range $i, $row := .Ranges}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{if .Catalog}}<h3>Figures</h3>
<table>{{range $i, $row := .Catalog}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{if .Times}}<h3>Connection Times (ms, from exact µs)</h3>
<table>{{range $i, $row := .Times}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{if .Percentiles}}<h3>Percentage of the requests served within a certain time</h3>
<p class="note">Total time, {{.Precision}}.</p>
<table>{{range $i, $row := .Percentiles}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{end}}
<p class="note">Made by gab. This page is self-contained: it loads nothing from anywhere.</p>
<script>` + pageScript + `</script>
{{if .Live}}<script>` + liveScript + `</script>
{{end}}</body>
</html>
`))

// liveScript keeps a live page current (PageLive): it reads the state every
// RefreshMs and, when the page changed, the page, whose body it puts in
// place (the new body's scripts removed: this one goes on); when the run is
// final it loads the page anew, the finished report. It stops at the first
// error (gab stopped serving) and says so in the page's live line.
const liveScript = `(function () {
  var every = {{.Live.RefreshMs}}, pagePath = {{.Live.PagePath}}, statePath = {{.Live.StatePath}};
  var seq = document.getElementById("live").dataset.seq, busy = false, timer;
  var text = function (r) {
    if (!r.ok) throw new Error("HTTP " + r.status);
    return r.text();
  };
  var tick = function () {
    if (busy) return;
    busy = true;
    fetch(statePath, {cache: "no-store"}).then(text).then(function (t) {
      var s = JSON.parse(t);
      if (s.final) { clearInterval(timer); location.reload(); return; }
      if (String(s.seq) === seq) return;
      return fetch(pagePath, {cache: "no-store"}).then(text).then(function (t) {
        var doc = new DOMParser().parseFromString(t, "text/html"), mark = doc.getElementById("live");
        if (!mark) { clearInterval(timer); location.reload(); return; }
        doc.querySelectorAll("script").forEach(function (e) { e.remove(); });
        seq = mark.dataset.seq;
        document.title = doc.title;
        document.body.replaceWith(document.adoptNode(doc.body));
      });
    }).catch(function () {
      clearInterval(timer);
      var mark = document.getElementById("live");
      if (mark) mark.textContent = "gab no longer answers: this is the last state it served.";
    }).then(function () { busy = false; });
  };
  timer = setInterval(tick, every);
})();`

// pageScript adds hover (a point's time and latency) and zoom on the time axis
// (drag across it; double-click to reset) to the latency scatter. It reads
// the points from the SVG path and the axes from the svg's data-x and data-y.
const pageScript = `(function () {
  var fig = document.getElementById("latency-scatter");
  if (!fig) return;
  var svg = fig.querySelector("svg"), plot = svg.querySelector("g.plot");
  if (!svg.dataset.x || !plot) return;
  var ax = svg.dataset.x.split(" "), ay = svg.dataset.y.split(" ");
  var val = function (a, px) {
    var v = +a[2] + (px - a[0]) / a[1] * (a[3] - a[2]);
    return a[4] === "true" ? Math.pow(10, v) : v;
  };
  var pts = [], re = /M([-0-9.]+) ([-0-9.]+)h0/g, m;
  plot.querySelectorAll("path").forEach(function (p) {
    var d = p.getAttribute("d") || "";
    while ((m = re.exec(d)) !== null) pts.push([+m[1], +m[2]]);
  });
  var ns = "http://www.w3.org/2000/svg";
  var tip = document.createElementNS(ns, "text");
  tip.setAttribute("x", svg.viewBox.baseVal.width - 20);
  tip.setAttribute("y", 44);
  tip.setAttribute("text-anchor", "end");
  svg.appendChild(tip);
  var scale = 1, shift = 0, from = null;
  var local = function (e) {
    var p = svg.createSVGPoint();
    p.x = e.clientX; p.y = e.clientY;
    return p.matrixTransform(svg.getScreenCTM().inverse());
  };
  svg.addEventListener("mousemove", function (e) {
    var p = local(e), best = -1, bd = 100;
    var x = (p.x - shift) / scale;
    for (var i = 0; i < pts.length; i++) {
      var dx = (pts[i][0] - x) * scale, dy = pts[i][1] - p.y, dd = dx * dx + dy * dy;
      if (dd < bd) { bd = dd; best = i; }
    }
    tip.textContent = best < 0 ? "" : "t = " + val(ax, pts[best][0]).toFixed(3) + " s, " + val(ay, pts[best][1]).toFixed(3) + " ms";
  });
  svg.addEventListener("mousedown", function (e) { from = local(e).x; e.preventDefault(); });
  svg.addEventListener("mouseup", function (e) {
    var to = local(e).x;
    if (from === null || Math.abs(to - from) < 5) { from = null; return; }
    var a = (Math.min(from, to) - shift) / scale, b = (Math.max(from, to) - shift) / scale;
    scale = +ax[1] / (b - a); shift = +ax[0] - scale * a;
    plot.setAttribute("transform", "translate(" + shift + " 0) scale(" + scale + " 1)");
    tip.textContent = "showing " + val(ax, a).toFixed(3) + " s to " + val(ax, b).toFixed(3) + " s (double-click: all)";
    from = null;
  });
  svg.addEventListener("dblclick", function () {
    scale = 1; shift = 0; plot.removeAttribute("transform"); tip.textContent = "";
  });
})();`
