package plot

import (
	"fmt"
	"gab/report"
	"strings"

	"gab/internal/chart"
)

// sizePanels are the charts against size, a line per target (and
// concurrency, with several): bandwidth in the direction that grows with
// the size (received for --sizes, sent for --post-sizes), min and p50
// latency, and CPU per request: the client's, the --server-pid processes'
// and the whole host's (each where measured).
func sizePanels(d *report.SweepDocument, ax *sweepAxis) []chart.Panel {
	bw, lat, cpu, host := sizeAxes(d)
	post := d.Settings.SizeOption == "--post-sizes"
	_, _, bwCol := bandwidthAxis(d.Settings.SizeOption)
	for k, s := range ax.series {
		b := chart.Line{Title: s.label, Style: chart.ErrorBars, Columns: []string{"size_bytes", bwCol, "ci95_low", "ci95_high"}, Color: k + 1,
			Note: bwWhiskers}
		minL := chart.Line{Title: s.label, Style: chart.Lines, Columns: []string{"size_bytes", "min_ms"}, Color: k + 1, Note: "min of " + s.label}
		p50 := chart.Line{Style: chart.Lines, Columns: []string{"size_bytes", "p50_ms"}, Color: k + 1, Dashed: true, Note: "p50 of " + s.label}
		cli := chart.Line{Title: s.label, Style: chart.Lines, Columns: []string{"size_bytes", "client_cpu_us_per_request"}, Color: k + 1, Note: "client CPU of " + s.label}
		srv := chart.Line{Style: chart.Lines, Columns: []string{"size_bytes", "server_cpu_us_per_request"}, Color: k + 1, Dashed: true, Note: "server CPU of " + s.label}
		h := chart.Line{Title: s.label, Style: chart.Lines, Columns: []string{"size_bytes", "host_busy_us_per_request"}, Color: k + 1}
		for _, p := range s.points {
			x := max(sizeOf(&p), 1) // a size of 0 bytes is drawn at 1 on the log axis
			b.Rows = append(b.Rows, bandwidthRow(x, bandwidth(&p, post), &p))
			if latencyCounted(&p) {
				minL.Rows = append(minL.Rows, []float64{x, figure(&p, "min")})
				p50.Rows = append(p50.Rows, []float64{x, figure(&p, "p50")})
			}
			if v, ok := p.Figure("client_cpu_us_per_request"); ok {
				cli.Rows = append(cli.Rows, []float64{x, v})
			}
			if v, ok := p.Figure("server_cpu_us_per_request"); ok {
				srv.Rows = append(srv.Rows, []float64{x, v})
			}
			if v, ok := hostBusy(&p); ok {
				h.Rows = append(h.Rows, []float64{x, v})
			}
		}
		if len(cli.Rows) == 0 { // the server's line names the series then
			srv.Title = s.label
		}
		bw.Lines = append(bw.Lines, b)
		lat.Lines = append(lat.Lines, minL, p50)
		cpu.Lines = appendDrawn(cpu.Lines, cli, srv)
		host.Lines = appendDrawn(host.Lines, h)
	}
	return finishSizePanels(d, bw, lat, cpu, host)
}

// appendDrawn appends the lines that have rows.
func appendDrawn(to []chart.Line, ls ...chart.Line) []chart.Line {
	for _, l := range ls {
		if len(l.Rows) > 0 {
			to = append(to, l)
		}
	}
	return to
}

// bandwidthAxis is the bandwidth panel's title, y label and data column
// for a sweep's size option.
func bandwidthAxis(sizeOption string) (title, label, column string) {
	title, label, column = "Received bandwidth against size (mean over the runs)", "received (Mbit/s)", "received_mbit_per_s"
	switch sizeOption {
	case "--post-sizes":
		title, label, column = "Sent bandwidth against size (request bodies; mean over the runs)", "sent (Mbit/s)", "sent_mbit_per_s"
	case sizeOptionMixed:
		title, label, column = "Bandwidth against size (received for --sizes sweeps, sent for --post-sizes ones; mean over the runs)", "Mbit/s", "mbit_per_s"
	}
	return strings.Replace(title, "(", "(whiskers: 95 % interval; ", 1), label, column
}

// sizeAxes are the empty panels against size: bandwidth, latency, CPU per
// request and the host's CPU per request.
func sizeAxes(d *report.SweepDocument) (bw, lat, cpu, host chart.Panel) {
	var tics []chart.Tic
	for _, s := range d.Settings.Sizes {
		tics = append(tics, chart.Tic{Label: s.Text, At: float64(max(s.Bytes, 1))})
	}
	xl := "size (" + d.Settings.SizeOption + ", bytes)"
	bwTitle, bwLabel, _ := bandwidthAxis(d.Settings.SizeOption)
	bw = chart.Panel{Title: bwTitle, XLabel: xl, YLabel: bwLabel, LogX: true, XTics: tics, YFromZero: true}
	lat = chart.Panel{Title: "Latency against size (min: solid, p50: dashed in the same colour; every request of every run)", XLabel: xl,
		YLabel: "latency (ms)", LogX: true, XTics: tics, YFromZero: true}
	cpu = chart.Panel{Title: "CPU per request against size (client: solid; --server-pid: dashed in the same colour)", XLabel: xl,
		YLabel: "CPU per request (µs)", LogX: true, XTics: tics, YFromZero: true}
	host = chart.Panel{Title: "Whole host's CPU per request against size (/proc/stat: user, system, irq, softirq; 10 ms ticks)", XLabel: xl,
		YLabel: "host CPU per request (µs)", LogX: true, XTics: tics, YFromZero: true}
	return bw, lat, cpu, host
}

// finishSizePanels marks the points' verdicts on the panels against size,
// leaves out the CPU panels with nothing drawn, fixes the x ranges and puts
// latency and CPU on a log axis where they span decades.
func finishSizePanels(d *report.SweepDocument, bw, lat, cpu, host chart.Panel) []chart.Panel {
	post := d.Settings.SizeOption == "--post-sizes"
	sizeX := func(p *report.SweepPoint) float64 { return max(sizeOf(p), 1) }
	addFlags(&bw, d.Points, func(p *report.SweepPoint) (float64, float64, bool) {
		return sizeX(p), bandwidth(p, post), true
	})
	addFlags(&lat, d.Points, func(p *report.SweepPoint) (float64, float64, bool) {
		return sizeX(p), figure(p, "p50"), latencyCounted(p)
	})
	if len(cpu.Lines) > 0 {
		addFlags(&cpu, d.Points, func(p *report.SweepPoint) (float64, float64, bool) {
			return cpuMark(p, sizeX(p))
		})
	}
	if len(host.Lines) > 0 {
		addFlags(&host, d.Points, func(p *report.SweepPoint) (float64, float64, bool) {
			v, ok := hostBusy(p)
			return sizeX(p), v, ok
		})
	}
	out := []chart.Panel{bw, lat}
	for _, p := range []chart.Panel{cpu, host} {
		if len(p.Lines) > 0 {
			out = append(out, p)
		}
	}
	for i := range out {
		out[i].TicRange()
		if i > 0 { // latency and CPU; bandwidth grows with size by design
			out[i].LogIfDecades()
		}
	}
	return out
}

// bwWhiskers says where a bandwidth's whiskers come from.
const bwWhiskers = "bandwidth and its 95 % interval: the requests per second's interval scaled to the bandwidth (the bytes per request are the point's own)"

// bandwidthRow is a bandwidth v at x with its 95 % interval: the requests
// per second's relative half-width (at one point the bytes per request are
// fixed, so the bandwidth varies as the rate), stopped at zero.
func bandwidthRow(x, v float64, p *report.SweepPoint) []float64 {
	h, m := 0.0, rpsMean(p)
	if m > 0 {
		h = v * rpsCI95(p) / m
	}
	return []float64{x, v, max(v-h, 0), v + h}
}

// paramPanels are the charts against --param's values (in their order, one
// tic each), a line per target (and size and concurrency, with several):
// requests per second with its interval, p50 latency, bandwidth with its
// interval, and CPU per request (client and --server-pid) where measured.
func paramPanels(d *report.SweepDocument, ax *sweepAxis) []chart.Panel {
	at := map[string]float64{}
	for _, v := range d.Settings.Param.Values {
		at[v] = ax.x(&report.SweepPoint{ParamValue: v})
	}
	series, tics := ax.series, ax.tics
	rps, lat := paramRatePanels(d, series, at, tics)
	bw, cpu := paramBandwidthPanels(d, series, at, tics)
	out := []chart.Panel{rps, lat, bw}
	if len(cpu.Lines) > 0 {
		out = append(out, cpu)
	}
	for i := range out {
		out[i].TicRange()
		if i == 1 || i == 3 {
			out[i].LogIfDecades()
		}
	}
	return out
}

// paramRatePanels are requests per second (with its interval) and p50
// latency against --param's values (at: each value's place), flagged.
func paramRatePanels(d *report.SweepDocument, series []sweepSeries, at map[string]float64, tics []chart.Tic) (rps, lat chart.Panel) {
	q := d.Settings.Param
	xl := q.Name + " (--param)"
	rps = chart.Panel{Title: fmt.Sprintf("Requests per second against %s (mean of %d runs; bars: 95 %% confidence interval)", q.Name, d.Settings.Repeat),
		XLabel: xl, YLabel: "requests per second", XTics: tics, YFromZero: true}
	lat = chart.Panel{Title: "p50 latency against " + q.Name + " (every request of every run)", XLabel: xl, YLabel: "latency (ms)", XTics: tics, YFromZero: true}
	for k, s := range series {
		l := chart.Line{Title: s.label, Style: chart.ErrorBars, Color: k + 1, Columns: []string{"param_number", "rps_mean", "ci95_low", "ci95_high"}}
		p50 := chart.Line{Title: s.label, Style: chart.Lines, Color: k + 1, Columns: []string{"param_number", "p50_ms"}}
		for _, p := range s.points {
			x := at[p.ParamValue]
			l.Rows = append(l.Rows, rpsRow(x, &p))
			if latencyCounted(&p) {
				p50.Rows = append(p50.Rows, []float64{x, figure(&p, "p50")})
			}
		}
		rps.Lines = append(rps.Lines, l)
		lat.Lines = append(lat.Lines, p50)
	}
	addFlags(&rps, d.Points, func(p *report.SweepPoint) (float64, float64, bool) { return at[p.ParamValue], rpsMean(p), true })
	addFlags(&lat, d.Points, func(p *report.SweepPoint) (float64, float64, bool) {
		return at[p.ParamValue], figure(p, "p50"), latencyCounted(p)
	})
	return rps, lat
}

// paramBandwidthPanels are the bandwidth (in the direction that grows with
// a size: sent for --post-sizes) and CPU per request (client solid,
// --server-pid dashed) against --param's values, flagged: a setting that
// saves CPU or packs more bytes shows here, not in the rate.
func paramBandwidthPanels(d *report.SweepDocument, series []sweepSeries, at map[string]float64, tics []chart.Tic) (bw, cpu chart.Panel) {
	q := d.Settings.Param
	xl := q.Name + " (--param)"
	post := d.Settings.SizeOption == "--post-sizes"
	bwLabel, bwCol := "received (Mbit/s)", "received_mbit_per_s"
	if post {
		bwLabel, bwCol = "sent (Mbit/s)", "sent_mbit_per_s"
	}
	bw = chart.Panel{Title: "Bandwidth against " + q.Name + " (mean over the runs; whiskers: 95 % interval)", XLabel: xl, YLabel: bwLabel, XTics: tics, YFromZero: true}
	cpu = chart.Panel{Title: "CPU per request against " + q.Name + " (client: solid; --server-pid: dashed in the same colour)", XLabel: xl,
		YLabel: "CPU per request (µs)", XTics: tics, YFromZero: true}
	for k, s := range series {
		b := chart.Line{Title: s.label, Style: chart.ErrorBars, Color: k + 1, Columns: []string{"param_number", bwCol, "ci95_low", "ci95_high"}, Note: bwWhiskers}
		cli := chart.Line{Title: s.label, Style: chart.Lines, Color: k + 1, Columns: []string{"param_number", "client_cpu_us_per_request"}, Note: "client CPU of " + s.label}
		srv := chart.Line{Style: chart.Lines, Color: k + 1, Dashed: true, Columns: []string{"param_number", "server_cpu_us_per_request"}, Note: "server CPU of " + s.label}
		for _, p := range s.points {
			x := at[p.ParamValue]
			b.Rows = append(b.Rows, bandwidthRow(x, bandwidth(&p, post), &p))
			if v, ok := p.Figure("client_cpu_us_per_request"); ok {
				cli.Rows = append(cli.Rows, []float64{x, v})
			}
			if v, ok := p.Figure("server_cpu_us_per_request"); ok {
				srv.Rows = append(srv.Rows, []float64{x, v})
			}
		}
		if len(cli.Rows) == 0 {
			srv.Title = s.label
		}
		bw.Lines = append(bw.Lines, b)
		cpu.Lines = appendDrawn(cpu.Lines, cli, srv)
	}
	addFlags(&bw, d.Points, func(p *report.SweepPoint) (float64, float64, bool) {
		return at[p.ParamValue], bandwidth(p, post), true
	})
	if len(cpu.Lines) > 0 {
		addFlags(&cpu, d.Points, func(p *report.SweepPoint) (float64, float64, bool) {
			return cpuMark(p, at[p.ParamValue])
		})
	}
	return bw, cpu
}
