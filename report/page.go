package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"

	"gab/internal/chart"
)

// This file is the self-contained HTML report (--html FILE, gab plot -o
// FILE.html): the command lines and environment, ab's figures, the charts as
// inline SVG drawn by Go, the percentile tables, and, for several runs, a
// comparison ranked by requests per second. No script and nothing loaded from
// elsewhere: the page reads the same offline as online.

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
}

// PageTable is a titled table.
type PageTable struct {
	Title string
	Note  string
	Rows  [][]string
}

// panelSize is each chart's size in pixels.
const panelWidth, panelHeight = 960, 320

// PageRow is a named value.
type PageRow struct{ Name, Value string }

type pageRunView struct {
	Label, Command, Ending, Error string
	Verdicts                      template.HTML // verdictBanner
	Env                           []PageRow
	Figures                       []PageRow
	Times                         [][]string // Connection Times rows
	Catalog                       [][]string // the catalog's figures (catalog.go)
	Percentiles                   [][]string
	Precision                     string
}

type pageView struct {
	Title   string
	Command string
	Env     []PageRow
	Tables  []PageTable
	Charts  []template.HTML
	Runs    []pageRunView
	Compare [][]string // header row first
}

// WriteHTMLPage writes the page.
func WriteHTMLPage(w io.Writer, p *Page) error {
	v := pageView{Title: p.Title, Command: strings.Join(p.Command, " "), Env: p.Environment, Tables: p.Tables}
	if p.Figure != nil {
		for i := range p.Figure.Panels {
			var b bytes.Buffer
			if err := chart.WriteSVG(&b, &p.Figure.Panels[i], panelWidth, panelHeight); err != nil {
				return err
			}
			v.Charts = append(v.Charts, template.HTML(b.String())) // drawn by WriteSVG, which escapes every text
		}
	}
	for _, r := range p.Runs {
		v.Runs = append(v.Runs, runView(r))
	}
	if len(p.Runs) > 1 {
		v.Compare = compareRows(p.Runs)
	}
	return pageTemplate.Execute(w, v)
}

func runView(r PageRun) pageRunView {
	d := r.Doc
	v := pageRunView{Label: r.Label, Command: strings.Join(d.CommandLine, " "), Ending: d.Ending, Verdicts: verdictBanner(d)}
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
		f := func(name, value string) { v.Figures = append(v.Figures, PageRow{name, value}) }
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
		f("Complete requests", strconv.Itoa(rp.CompleteRequests))
		fl := rp.Failures
		f("Failed requests", fmt.Sprintf("%d (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)",
			rp.FailedRequests, fl.Connect, fl.Receive, fl.Length, fl.Exceptions))
		if rp.WriteErrors > 0 {
			f("Write errors", strconv.Itoa(rp.WriteErrors))
		}
		f("Non-2xx responses", strconv.Itoa(rp.Non2xxResponses))
		f("Keep-Alive requests", strconv.Itoa(rp.KeepAliveReqs))
		f("Total transferred", fmt.Sprintf("%d bytes", rp.TotalTransferredBytes))
		f("HTML transferred", fmt.Sprintf("%d bytes", rp.HTMLTransferredBytes))
		f("Requests per second", fmt.Sprintf("%.2f [#/sec] (mean)", rp.RequestsPerSecond))
		f("Time per request", fmt.Sprintf("%.3f [ms] (mean)", rp.TimePerRequestMs))
		f("Time per request", fmt.Sprintf("%.3f [ms] (mean, across all concurrent requests)", rp.TimePerRequestAllMs))
		f("Transfer rate", fmt.Sprintf("%.2f [Kbytes/sec] received", rp.TransferReceivedKBPerS))
		if ct := rp.ConnectionTimes; ct != nil {
			v.Times = append(v.Times, []string{"", "min", "mean", "[+/-sd]", "median", "max"})
			for _, c := range []struct {
				name string
				col  columnStats
			}{{"Connect", ct.Connect}, {"Processing", ct.Processing}, {"Waiting", ct.Waiting}, {"Total", ct.Total}} {
				v.Times = append(v.Times, []string{c.name, ms3(float64(c.col.MinUs)), ms3(float64(c.col.MeanUs)),
					fmt.Sprintf("%.3f", c.col.SDUs/1000), ms3(float64(c.col.MedianUs)), ms3(float64(c.col.MaxUs))})
			}
		}
	}
	v.Catalog = catalogRows(d)
	if r.Chart != nil && len(r.Chart.Table) > 0 {
		v.Precision = r.Chart.CurvePrecision
		v.Percentiles = append(v.Percentiles, []string{"percentile", "total (ms)"})
		for _, c := range r.Chart.Table {
			name := strconv.FormatFloat(c.Percent, 'f', -1, 64) + "%"
			if c.Percent == 100 {
				name += " (longest request)"
			}
			v.Percentiles = append(v.Percentiles, []string{name, ms3(float64(c.Us))})
		}
	}
	return v
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
.note { color: #555; font-size: .9em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Command}}<h2>Command line</h2>
<pre>{{.Command}}</pre>
<table class="figures">{{range .Env}}<tr><td>{{.Name}}</td><td>{{.Value}}</td></tr>{{end}}</table>{{end}}
{{if .Compare}}<h2>Comparison (ranked by requests per second)</h2>
<table class="compare">{{range $i, $row := .Compare}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>{{end}}
{{if .Charts}}<h2>Charts</h2>
{{range .Charts}}{{.}}
{{end}}{{end}}
{{range .Tables}}<h2>{{.Title}}</h2>
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
<table>{{range $i, $row := .Rows}}<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>
{{end}}</table>
{{end}}
{{range .Runs}}<h2>{{if .Label}}{{.Label}}{{else}}Run{{end}}</h2>
<h3>Command line</h3>
<pre>{{.Command}}</pre>
{{if .Error}}<p class="error">Ended with an error: {{.Error}}</p>{{end}}
<table class="figures">{{range .Env}}<tr><td>{{.Name}}</td><td>{{.Value}}</td></tr>{{end}}
<tr><td>Ending</td><td>{{.Ending}}</td></tr></table>{{.Verdicts}}
{{if .Figures}}<h3>ab's figures</h3>
<table class="figures">{{range .Figures}}<tr><td>{{.Name}}:</td><td>{{.Value}}</td></tr>
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
</body>
</html>
`))
