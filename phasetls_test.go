package main

import (
	"context"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/gnuplot"
	"gab/internal/chart"
	"gab/internal/runcmd"
	"gab/report"
)

// TestPhaseChartTLS: the chart of phase means per interval of a TLS run
// (without keep-alive: a handshake per request) has the TLS handshake apart
// from the TCP connect, its mean above 0, and connect + TLS + waiting + rest
// make each interval's mean total (of the requests that ended in it) within
// rounding; the run's JSON intervals carry the handshakes and their time. A
// plain run has no TLS line and no TLS figures in its intervals.
func TestPhaseChartTLS(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("p", 100))
	})
	secure := httptest.NewUnstartedServer(handler)
	secure.Config.ErrorLog = log.New(io.Discard, "", 0)
	secure.StartTLS()
	t.Cleanup(secure.Close)
	plain := httptest.NewServer(handler)
	t.Cleanup(plain.Close)

	measure := func(url string) (*chart.Data, *report.Run, *client.Result) {
		t.Helper()
		argv := []string{"ab", "-q", "-n", "300", "-c", "3", "--interval", "100ms", "--extended", url + "/"}
		o, status, done := parseArgs(argv, io.Discard, io.Discard)
		if done || status != 0 {
			t.Fatalf("%v: status %d", argv, status)
		}
		o.Config.Extended, o.Config.Interval = true, runcmd.TimelineInterval(&o.Options)
		runner, err := client.New(o.Config)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := runner.Run(ctx)
		if err != nil || res.Complete != 300 {
			t.Fatalf("%v: %v, %d complete", argv, err, res.Complete)
		}
		sum := report.Summarize(res, runcmd.ReportOptions(&o.Options, argv, report.CPUUsage{}, nil))
		return report.RunChartData(sum, res, runcmd.ChartOptions(&o.Options, runcmd.HTMLPointLimit)), sum, res
	}
	phaseLines := func(d *chart.Data) []string {
		t.Helper()
		f := chart.RunFigure("t", []*chart.Data{d})
		for _, p := range f.Panels {
			if p.ID == chart.PanelPhases {
				var titles []string
				for _, l := range p.Lines {
					titles = append(titles, l.Title)
				}
				return titles
			}
		}
		t.Fatal("no phase panel")
		return nil
	}

	d, run, res := measure(secure.URL)
	if !d.HasPhases || !d.HasTLS {
		t.Fatalf("TLS run: phases %v, TLS %v", d.HasPhases, d.HasTLS)
	}
	if got := strings.Join(phaseLines(d), "|"); got != "connect|TLS|waiting|rest" {
		t.Errorf("TLS run's phase lines %s", got)
	}
	// Each interval's mean total, from the run's exact samples, each in the
	// interval of its end time.
	stored := run.Report.CompleteRequests
	sums, counts := make([]float64, len(d.Intervals)), make([]float64, len(d.Intervals))
	for _, s := range res.Samples.Exact() {
		end := float64(s.Start)/1000 + float64(s.Total)/1e6
		i := 0
		for i < len(d.Intervals)-1 && d.Intervals[i].StartS+d.Intervals[i].LengthS <= end {
			i++
		}
		sums[i] += float64(s.Total)
		counts[i]++
	}
	var handshakes int64
	for _, iv := range run.Timeline.Intervals {
		handshakes += iv.TLSHandshakes
		if iv.TLSHandshakes > 0 && iv.TLSHandshakeUs <= 0 {
			t.Errorf("interval at %d µs: %d handshakes of %d µs", iv.StartUs, iv.TLSHandshakes, iv.TLSHandshakeUs)
		}
	}
	if handshakes != int64(stored) {
		t.Errorf("the JSON intervals count %d handshakes, want one per request (%d)", handshakes, stored)
	}
	withTLS := 0
	for i, iv := range d.Intervals {
		if iv.Requests == 0 {
			continue
		}
		if iv.TLSUs > 0 {
			withTLS++
		}
		total := iv.ConnectUs + iv.TLSUs + iv.WaitUs + iv.RestUs
		want := sums[i] / counts[i]
		if math.Abs(total-want) > 0.5 || iv.ConnectUs < 0 {
			t.Errorf("interval %d: connect %.1f + TLS %.1f + waiting %.1f + rest %.1f = %.1f µs, mean total %.1f µs",
				i, iv.ConnectUs, iv.TLSUs, iv.WaitUs, iv.RestUs, total, want)
		}
	}
	if withTLS == 0 {
		t.Error("no interval has a TLS mean above 0")
	}
	// The gnuplot script (--plot) and the HTML report (--html) draw the line.
	f := chart.RunFigure("t", []*chart.Data{d})
	var script, page strings.Builder
	if err := gnuplot.WriteScript(&script, f, gnuplot.Terminal{}, "x.dat", "x.png"); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTMLPage(&page, &report.Page{Title: "t", Runs: []report.PageRun{{Doc: run, Chart: d}}, Figure: f}); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	phases := html[strings.Index(html, `id="`+chart.PanelPhases+`"`):]
	phases = phases[:strings.Index(phases, `id="`+chart.PanelScatter+`"`)]
	if !strings.Contains(script.String(), "title 'TLS'") {
		t.Errorf("the gnuplot script has no TLS line:\n%s", script.String())
	}
	if !strings.Contains(phases, ">TLS<") {
		t.Errorf("the HTML report's phase chart has no TLS line:\n%s", phases)
	}

	d, run, _ = measure(plain.URL)
	if !d.HasPhases || d.HasTLS {
		t.Fatalf("plain run: phases %v, TLS %v", d.HasPhases, d.HasTLS)
	}
	if got := strings.Join(phaseLines(d), "|"); got != "connect|waiting|rest" {
		t.Errorf("plain run's phase lines %s", got)
	}
	for _, iv := range run.Timeline.Intervals {
		if iv.TLSHandshakes != 0 || iv.TLSHandshakeUs != 0 {
			t.Errorf("plain run's interval at %d µs: %d handshakes of %d µs", iv.StartUs, iv.TLSHandshakes, iv.TLSHandshakeUs)
		}
	}
}
