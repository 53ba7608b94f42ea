package plot

import "gab/report"

// A sweep point's figures as the charts read them: catalog figures through
// report.SweepPoint.Figure (the point's "figures", or a version 1 document's fixed
// fields); the point's own statistics that are no catalog figure (req/s's
// spread across its runs, the latency deviation by the sweep's estimator,
// the host's CPU) from its fixed fields (report.SweepPoint.Fixed).

// figure is the point's catalog figure of that key, 0 where it has none.
func figure(p *report.SweepPoint, key string) float64 {
	v, _ := p.Figure(key)
	return v
}

// rpsOf is the point's mean req/s across its runs and the half-width of its
// 95 % interval (0 for one run).
func rpsOf(p *report.SweepPoint) (mean, ci95 float64) {
	mean, _ = p.Fixed("requests_per_second", "mean_per_s")
	ci95, _ = p.Fixed("requests_per_second", "ci95_half_width_per_s")
	return mean, ci95
}

// rpsMean is rpsOf's mean.
func rpsMean(p *report.SweepPoint) float64 {
	m, _ := rpsOf(p)
	return m
}

// latencyCounted says whether the point counted latencies.
func latencyCounted(p *report.SweepPoint) bool {
	n, _ := p.Fixed("latency", "count")
	return n > 0
}

// deviationMs is the point's latency deviation by the sweep's estimator.
func deviationMs(p *report.SweepPoint) float64 {
	v, _ := p.Fixed("latency", "deviation_ms")
	return v
}

// hostBusy is the whole host's busy CPU time per request (ok false: not read).
func hostBusy(p *report.SweepPoint) (float64, bool) {
	return p.Fixed("host_cpu", "busy_us_per_request")
}

// bandwidth is the point's received Mbit/s, or its sent for a --post-sizes sweep.
func bandwidth(p *report.SweepPoint, post bool) float64 {
	if post {
		return figure(p, "sent_mbit_per_s")
	}
	return figure(p, "received_mbit_per_s")
}

// rpsRow is the point's mean req/s at x with its 95 % interval, stopped at
// zero.
func rpsRow(x float64, p *report.SweepPoint) []float64 {
	m, h := rpsOf(p)
	return []float64{x, m, max(m-h, 0), m + h}
}

// rpsCI95 is rpsOf's half-width.
func rpsCI95(p *report.SweepPoint) float64 {
	_, h := rpsOf(p)
	return h
}

// rpsCV is the coefficient of variation of the point's req/s across its runs.
func rpsCV(p *report.SweepPoint) float64 {
	v, _ := p.Fixed("requests_per_second", "cv")
	return v
}

// cpuMark is where a point's flags go on a CPU panel: at its client CPU per
// request, or its server's without it (ok false: neither measured).
func cpuMark(p *report.SweepPoint, x float64) (float64, float64, bool) {
	if v, ok := p.Figure("client_cpu_us_per_request"); ok {
		return x, v, true
	}
	v, ok := p.Figure("server_cpu_us_per_request")
	return x, v, ok
}
