package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"gab/client"
	"gab/internal/live"
	"gab/report"
)

// This file is --dashboard ADDR's run: the HTML report (--html's page)
// served while the run goes on, refreshed at each interval of the timeline,
// and when the run ends the finished report itself, byte for byte the page
// --html writes; --dashboard-linger D keeps serving it for D after the run.
//
// The run is a sink of the live outputs' Hub (live.Outputs.Attach): the
// timeline's collector only queues each finished interval (the hub's bounded
// queue, Depth), and the sink's goroutine adds the intervals to the record of
// the run so far (report.Live) and renders the page once none is left
// queued, so a slow render skips pages, not intervals, and the engine's
// workers never see the dashboard. An interval the full queue dropped leaves
// the page as it was until the run ends (the finished report is whole).

// Depth is the run's queue of intervals (a render slower than that many
// intervals drops some): at 1 KiB to a few KiB an interval, a few MiB.
const Depth = 1024

// RunConfig is what the dashboard of one run shows, and where.
type RunConfig struct {
	Addr   string        // --dashboard's address
	Linger time.Duration // --dashboard-linger
	// Title and Figure are the page's title and its figure's, as --html's.
	Title, Figure string
	Charts        report.ChartOptions
	// Refresh is how often the page's script asks for the state.
	Refresh time.Duration
	Stderr  io.Writer
}

// Run is the dashboard of one run.
type Run struct {
	c   RunConfig
	srv *Server
	sub *live.Sub

	mu      sync.Mutex // held while an interval is added or a page published
	live    *report.Live
	dropped int64
	failed  bool // an interval was refused or dropped: the page stays at the last good one
	halted  bool // the finished report (or the end) is published: the sink does nothing more
}

// Start listens on the dashboard's address before the run, so that a taken
// port is an error before the first request, and says where the page is on
// stderr.
func Start(c RunConfig) (*Run, error) {
	srv, err := Listen(c.Addr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c.Stderr, "gab: dashboard at %s\n", srv.URL())
	return &Run{c: c, srv: srv}, nil
}

// Attach makes d a sink of lo's hub (before the run's stream begins).
func (d *Run) Attach(lo *live.Outputs) {
	d.sub = lo.Attach("--dashboard", Depth, d.handle)
}

// Begin publishes the first page of a run that starts now (lo: the
// record's options).
func (d *Run) Begin(lo report.LiveOptions) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.live = report.NewLive(lo)
	d.render()
}

// handle is the hub's sink: it adds each interval to the record and
// renders the page once no interval is left queued.
func (d *Run) handle(ev *live.Event, dropped int64) {
	if ev.Final {
		return // the finished report comes from Finish
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted || d.live == nil || d.failed {
		return
	}
	if dropped > d.dropped {
		fmt.Fprintf(d.c.Stderr, "gab: --dashboard: %d intervals dropped (the page fell behind; it stays as it was until the run ends)\n", dropped-d.dropped)
		d.dropped, d.failed = dropped, true
		return
	}
	if err := d.live.Add(ev.Interval); err != nil {
		fmt.Fprintf(d.c.Stderr, "gab: --dashboard: %v (the page stays as it was until the run ends)\n", err)
		d.failed = true
		return
	}
	if d.sub == nil || d.sub.Queued() == 0 {
		d.render()
	}
}

// render publishes the page of the run so far.
func (d *Run) render() {
	l := d.live
	page := l.Page(d.c.Title, d.c.Figure, d.c.Charts)
	seq := d.srv.NextSeq()
	page.Live = &report.PageLive{
		Note: fmt.Sprintf("Live: the run so far (%.1f s, %d intervals finished); this page follows it and becomes the finished report when the run ends.",
			l.Elapsed().Seconds(), l.Intervals()),
		Seq: seq, RefreshMs: int(d.c.Refresh.Milliseconds()), PagePath: "/", StatePath: "/state",
	}
	var b bytes.Buffer
	if err := report.WriteHTMLPage(&b, page); err != nil {
		return // the template's own error: the page stays as it was
	}
	d.srv.Publish(b.Bytes(), State{Complete: l.Complete(), Failed: l.Failed(), ElapsedS: l.Elapsed().Seconds()})
}

// Finish stops the live pages and serves the finished report (page:
// --html's bytes; nil when the run made none, and the last live page
// stays).
func (d *Run) Finish(page []byte, res *client.Result) {
	d.halt()
	if page == nil {
		return
	}
	st := State{Final: true}
	if res != nil {
		st.Complete, st.Failed, st.ElapsedS = int64(res.Complete), int64(res.Failed.Total), res.Elapsed.Seconds()
	}
	d.srv.Publish(page, st)
}

// halt stops the live pages, once a page being published is out.
func (d *Run) halt() {
	d.mu.Lock()
	d.halted = true
	d.mu.Unlock()
}

// Close keeps the finished report up for --dashboard-linger (less if ctx
// ends: Ctrl-C) when lingering, then stops serving.
func (d *Run) Close(ctx context.Context, lingering bool) {
	d.halt()
	if lingering && d.c.Linger > 0 {
		fmt.Fprintf(d.c.Stderr, "gab: dashboard: serving the finished report at %s for %v (Ctrl-C ends it)\n", d.srv.URL(), d.c.Linger)
		_ = d.srv.Linger(ctx, d.c.Linger)
		return
	}
	_ = d.srv.Close()
}
