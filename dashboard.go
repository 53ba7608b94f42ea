package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"gab/client"
	"gab/internal/dashboard"
	"gab/report"
)

// This file is --dashboard ADDR: the HTML report (--html's page) served by
// gab while the run goes on, refreshed at each interval of the timeline, and
// when the run ends the finished report itself, byte for byte the page
// --html writes; --dashboard-linger D keeps serving it for D after the run.
//
// The timeline's collector hands each finished interval on (a call that only
// queues it: the collector never waits for a page); a goroutine of its own
// adds the queued intervals to the record of the run so far (report.Live)
// and renders the page once for all of them, so a slow render skips pages,
// never intervals, and the engine's workers never see the dashboard. The
// server (internal/dashboard) serves the last page rendered.

// dashRun is the dashboard of one run.
type dashRun struct {
	srv     *dashboard.Server
	linger  time.Duration
	title   string // the page's title and the figure's, as htmlPage's
	figure  string
	charts  report.ChartOptions
	refresh time.Duration
	errw    io.Writer

	live *report.Live // the renderer's alone

	mu     sync.Mutex
	queue  []client.Interval
	wake   chan struct{} // one pending wake-up at most
	stop   chan struct{}
	done   chan struct{}
	failed bool // an interval was refused: the page stays at the last good one
}

// startDashboard listens on --dashboard's address before the run, so that a
// taken port is an error before the first request, and says where the page
// is on stderr.
func startDashboard(o *cliOptions, argv []string, errw io.Writer) (*dashRun, error) {
	srv, err := dashboard.Listen(o.Dashboard)
	if err != nil {
		return nil, err
	}
	d := &dashRun{srv: srv, linger: o.DashboardLinger, title: htmlTitle(o), figure: commandTitle(argv),
		charts: chartOptions(o, htmlPointLimit), errw: errw,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	// The page's script asks for the state about twice an interval, at
	// most 4 times a second.
	d.refresh = max(timelineInterval(o)/2, 250*time.Millisecond)
	fmt.Fprintf(errw, "gab: dashboard at %s\n", srv.URL())
	return d, nil
}

// begin starts the renderer for a run that starts now.
func (d *dashRun) begin(o *cliOptions, argv []string, interval time.Duration) {
	lo := report.LiveOptions{Report: reportOptions(o, argv, report.CPUUsage{}, nil), Start: time.Now(), Interval: interval}
	if len(o.Config.RateSchedule) == 0 {
		lo.TargetPerS = o.Config.Rate
	}
	d.live = report.NewLive(lo)
	d.render()
	go d.loop()
}

// interval queues a finished interval (client.Config.OnInterval: the
// timeline's collector calls it). It never waits for the renderer.
func (d *dashRun) interval(iv client.Interval) {
	d.mu.Lock()
	d.queue = append(d.queue, iv)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// loop renders a page whenever intervals were queued, until stop.
func (d *dashRun) loop() {
	defer close(d.done)
	for {
		select {
		case <-d.stop:
			return
		case <-d.wake:
		}
		d.mu.Lock()
		q := d.queue
		d.queue = nil
		d.mu.Unlock()
		for _, iv := range q {
			if d.failed {
				break
			}
			if err := d.live.Add(iv); err != nil {
				fmt.Fprintf(d.errw, "gab: --dashboard: %v (the page stays as it was until the run ends)\n", err)
				d.failed = true
			}
		}
		if !d.failed {
			d.render()
		}
	}
}

// render publishes the page of the run so far.
func (d *dashRun) render() {
	l := d.live
	page := l.Page(d.title, d.figure, d.charts)
	seq := d.srv.NextSeq()
	page.Live = &report.PageLive{
		Note: fmt.Sprintf("Live: the run so far (%.1f s, %d intervals finished); this page follows it and becomes the finished report when the run ends.",
			l.Elapsed().Seconds(), l.Intervals()),
		Seq: seq, RefreshMs: int(d.refresh.Milliseconds()), PagePath: "/", StatePath: "/state",
	}
	var b bytes.Buffer
	if err := report.WriteHTMLPage(&b, page); err != nil {
		return // the template's own error: the page stays as it was
	}
	d.srv.Publish(b.Bytes(), dashboard.State{Complete: l.Complete(), Failed: l.Failed(), ElapsedS: l.Elapsed().Seconds()})
}

// finish stops the renderer and serves the finished report (page: --html's
// bytes; nil when the run made none, and the last live page stays).
func (d *dashRun) finish(page []byte, res *client.Result) {
	d.halt()
	if page == nil {
		return
	}
	st := dashboard.State{Final: true}
	if res != nil {
		st.Complete, st.Failed, st.ElapsedS = int64(res.Complete), int64(res.Failed.Total), res.Elapsed.Seconds()
	}
	d.srv.Publish(page, st)
}

// halt stops the renderer (once a run began; idempotent).
func (d *dashRun) halt() {
	if d.live == nil {
		return
	}
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
	<-d.done
}

// close keeps the finished report up for --dashboard-linger (less if ctx
// ends: Ctrl-C), then stops serving.
func (d *dashRun) close(ctx context.Context, lingering bool) {
	d.halt()
	if lingering && d.linger > 0 {
		fmt.Fprintf(d.errw, "gab: dashboard: serving the finished report at %s for %v (Ctrl-C ends it)\n", d.srv.URL(), d.linger)
		_ = d.srv.Linger(ctx, d.linger)
		return
	}
	_ = d.srv.Close()
}
