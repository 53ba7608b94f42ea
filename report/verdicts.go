package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	"gab/client"
	"gab/internal/hoststat"
	"gab/internal/printable"
)

// This file holds the run's verdicts: after a run gab checks whether its
// figures can be trusted as the server's and states what it found with the
// evidence. They are the record's "verdicts" section, the last block of
// --extended (writeVerdicts), the HTML report's banner (verdictBanner),
// sweep points' flags and gab sweep's stderr lines.
//
//   - client_bound: ClientBound's rule (clientbound.go) over gab's CPU, the
//     time its threads waited for a CPU, rate mode's schedule, and how
//     promptly its connections opened (client.ConnOpening; not when
//     connects failed or the kernel dropped or resent SYNs, the server's or
//     the network's doing), and cores gab shares with the server that were
//     busy with both (SharedCores).
//   - busy_machine: CPU that processes other than gab and the server (--server-pid's,
//     or the processes listening on a loopback URL's port) used during the run (the host's /proc/stat minus the measured processes) at
//     or above BusyOthersShare of the machine's cores, or steal time at or
//     above BusyStealShare; the load average before and after is evidence.
//   - kernel_drops: the kernel's TCP counters over the run (listen queue
//     overflows and drops, SYN retransmissions, failed connection attempts,
//     and retransmitted segments or resets above KernelShare of the
//     requests), local port exhaustion (connects failing with "cannot assign
//     requested address"); with requests that waited TailConnect or more to
//     connect beside SYN retransmissions or listen overflows, the verdict
//     says the server's accept queue overflowed and what to change.
//   - too_short: a run under ShortRun, whose CPU figures are a few clock
//     ticks.
//   - too_few: a percentile the run reports (the catalog's p99 and p99.9,
//     --percentiles) that no request lies above: p needs 100/(100-p)
//     requests (p99.9: 1000).
//
// The counters and the host's CPU are the machine's (and the network
// namespace's): other programs' work shows in them, which is the point of
// busy_machine and a caveat of kernel_drops.

// Thresholds of the verdicts (docs: README's "Verdicts").
const (
	busyOthersShare = 0.10 // of the machine's cores, used by other processes
	busyStealShare  = 0.05 // of the machine's CPU time, stolen by the hypervisor
	kernelShare     = 0.01 // retransmitted segments or resets per request
	shortRun        = time.Second
	tailConnect     = 900 * time.Millisecond
)

// BusyOthersShare is busy_machine's threshold: other processes' CPU as a
// share of the machine's cores (gab calibrate applies it too).
const BusyOthersShare = busyOthersShare

// The verdicts' kinds.
const (
	verdictClientBound = "client_bound"
	verdictBusyMachine = "busy_machine"
	verdictKernelDrops = "kernel_drops"
	verdictTooShort    = "too_short"
	verdictTooFew      = "too_few"
)

// verdictsSection is the record's "verdicts": what the checks found, and
// what could not be checked on this system.
type verdictsSection struct {
	Found []verdict `json:"found"`
	// NotChecked says what could not be checked and why ("busy_machine:
	// /proc/stat unreadable").
	NotChecked []string `json:"not_checked,omitempty"`
}

// verdict is one finding: its kind, a sentence with the evidence, what to
// change (if anything), and the evidence's figures by name.
type verdict struct {
	Kind     string             `json:"kind"`
	Message  string             `json:"message"`
	Advice   string             `json:"advice,omitempty"`
	Evidence map[string]float64 `json:"evidence,omitempty"`
}

// Verdicts are the kinds of the run's verdicts, in order (none when the run
// was not judged).
func (r *Run) VerdictKinds() []string {
	if r.Verdicts == nil {
		return nil
	}
	var k []string
	for _, v := range r.Verdicts.Found {
		k = append(k, v.Kind)
	}
	return k
}

// VerdictLines are the verdicts as one line each ("client-bound: ...").
func (r *Run) VerdictLines() []string {
	if r.Verdicts == nil {
		return nil
	}
	var out []string
	for _, v := range r.Verdicts.Found {
		out = append(out, v.line())
	}
	return out
}

func (v verdict) line() string {
	s := strings.ReplaceAll(v.Kind, "_", "-") + ": " + v.Message
	if v.Advice != "" {
		s += " " + v.Advice
	}
	return s
}

// judgeInputs are what the checks read beyond the record.
type judgeInputs struct {
	host    *hoststat.Delta // nil: not judged
	ceiling float64         // calibrated req/s per core (0: none)
	// inProcess: the server runs inside gab (Options.InProcessServer)
	inProcess bool
	cpu       CPUUsage
	server    *ServerCPU
	connect   *client.ExtraResult
	opening   *client.ConnOpening
	percents  []float64
}

// judge computes the verdicts of a measured run.
func (r *Run) judge(in judgeInputs) {
	if in.host == nil || r.Report == nil {
		return
	}
	vs := &verdictsSection{Found: []verdict{}}
	wall := r.local.elapsed
	rp := r.Report
	requests := rp.CompleteRequests + rp.FailedRequests

	load := r.clientLoad(in)
	if v, ok := clientBoundVerdict(load); ok {
		vs.Found = append(vs.Found, v)
	}

	// busy_machine
	h := in.host
	if !h.Checked(hoststat.FileStat) || h.Cores == 0 || h.Elapsed <= 0 {
		vs.NotChecked = append(vs.NotChecked, verdictBusyMachine+": "+hoststat.FileStat+" unreadable")
	} else if v, ok := busyMachineVerdict(in, load.CPU); ok {
		vs.Found = append(vs.Found, v)
	}

	// kernel_drops
	if !h.Checked(hoststat.FileNetstat) || !h.Checked(hoststat.FileSNMP) {
		vs.NotChecked = append(vs.NotChecked, verdictKernelDrops+": "+hoststat.FileNetstat+" or "+hoststat.FileSNMP+" unreadable")
	} else if v, ok := kernelVerdict(h, requests, in.connect, r.Extended); ok {
		vs.Found = append(vs.Found, v)
	}

	// too_short
	if wall < shortRun {
		vs.Found = append(vs.Found, verdict{Kind: verdictTooShort,
			Message: fmt.Sprintf("the run took %.3f s: its CPU figures (gab's, the server's, the machine's) are a few clock ticks.", wall.Seconds()),
			Advice:  "Run for a second or more (-n, -t).", Evidence: map[string]float64{"wall_s": wall.Seconds()}})
	}

	if v, ok := tooFewVerdict(rp.CompleteRequests, in.percents); ok {
		vs.Found = append(vs.Found, v)
	}
	r.Verdicts = vs
}

// clientLoad is what client_bound judges: the run's wall time, gab's CPU,
// the machine's wait for a CPU, the schedule's lateness in rate mode, the
// connections that opened slowly, and the cores gab shared with the server.
func (r *Run) clientLoad(in judgeInputs) ClientLoad {
	wall := r.local.elapsed
	rp := r.Report
	load := ClientLoad{Wall: wall, Cores: Cores(), Waited: in.host.RunDelay, RPS: rp.RequestsPerSecond, Ceiling: in.ceiling, InProcessServer: in.inProcess}
	if in.cpu.Known {
		load.CPU = in.cpu.User + in.cpu.Sys
	}
	if rr := r.Rate; rr != nil && rr.Sent > 0 {
		load.Sent, load.Behind = rr.Sent, rr.DueButNotSent
		load.LateShare = float64(rr.Sent-rr.OnSchedule) / float64(rr.Sent)
		load.Busy = BusyShare(r.inFlightTime(), rp.ConcurrencyLevel, wall)
	}
	// Connections that failed to open, or SYNs the kernel dropped or sent
	// again, are the server's or the network's doing, not a slow client's.
	if o := in.opening; o != nil && rp.Failures.Connect == 0 && in.host.TCP.SynRetrans == 0 &&
		in.host.TCP.ListenOverflows == 0 && in.host.TCP.ListenDrops == 0 {
		load.ConnsAsked, load.ConnsOpened, load.ConnsWindow = o.Asked, o.Opened, o.Window
	}
	if srv := in.server; srv != nil {
		load.Shared = NewSharedCores(in.host.AllowedCPUs, srv.CPUs, in.host.PerCore, in.host.Cores, in.host.Elapsed, load.CPU, srv.CPU)
	}
	return load
}

// clientBoundVerdict is the client_bound verdict, ok when ClientBound finds
// the load gab's limit.
func clientBoundVerdict(load ClientLoad) (verdict, bool) {
	cb := ClientBound(load)
	if !cb.Bound {
		return verdict{}, false
	}
	ev := map[string]float64{"cpu_s": load.CPU.Seconds(), "waited_s": load.Waited.Seconds(), "wall_s": load.Wall.Seconds(), "cores": load.Cores}
	if load.ConnsAsked > 0 {
		ev["conns_asked"], ev["conns_opened"], ev["conns_window_s"] = float64(load.ConnsAsked), float64(load.ConnsOpened), load.ConnsWindow.Seconds()
	}
	advice := "The figures are gab's limit, not the server's: give gab more cores (--cpus, another machine, gab --shard) or ask for less."
	if c := load.Shared; c.contended() {
		ev["shared_cores"], ev["shared_busy_share"], ev["shared_gab_share"], ev["shared_server_share"] = float64(len(c.CPUs)), c.Busy, c.Gab, c.Server
		advice = "The figures are gab's limit, not the server's: pin gab and the server to different cores (taskset -c), give gab more cores, or ask for less."
	}
	return verdict{Kind: verdictClientBound, Message: strings.Join(cb.Reasons, "; ") + ".",
		Advice: advice, Evidence: ev}, true
}

// busyMachineVerdict is the busy_machine verdict (in.host's CPU times
// read), ok when processes other than gab (gabCPU) and the server took
// busyOthersShare of the machine's cores, or steal busyStealShare.
func busyMachineVerdict(in judgeInputs, gabCPU time.Duration) (verdict, bool) {
	h := in.host
	others := h.CPU.Busy() - gabCPU
	if in.server != nil {
		others -= in.server.CPU
	}
	others = max(others, 0)
	othersCores := others.Seconds() / h.Elapsed.Seconds()
	share := othersCores / float64(h.Cores)
	steal := 0.0
	if t := h.CPU.Total(); t > 0 {
		steal = h.CPU.Steal.Seconds() / t.Seconds()
	}
	if share < busyOthersShare && steal < busyStealShare {
		return verdict{}, false
	}
	who := "processes other than gab"
	switch {
	case in.server != nil && in.server.Found != "":
		who += " and the server (PID " + pidList(in.server.PIDs) + ", " + in.server.Found + ")"
	case in.server != nil:
		who += " and --server-pid's"
	case in.inProcess:
		// the server is gab's own: nothing else to name
	default:
		who += " (the server among them: --server-pid names it)"
	}
	return verdict{Kind: verdictBusyMachine,
		Message: fmt.Sprintf("%s used %.2f of the machine's %d cores (%.0f %%) during the run; steal %.1f %%; load average %.2f before, %.2f after.",
			who, othersCores, h.Cores, 100*share, 100*steal, h.LoadBefore[0], h.LoadAfter[0]),
		Advice: "Timings and rates include waiting for a CPU: repeat on a quiet machine or pin gab and the server to their own cores.",
		Evidence: map[string]float64{"others_cores": othersCores, "others_share": share, "steal_share": steal,
			"load_before": h.LoadBefore[0], "load_after": h.LoadAfter[0], "cores": float64(h.Cores)}}, true
}

// tooFewVerdict is the too_few verdict: ok when n complete requests are
// fewer than p99's, p99.9's or a --percentiles entry's minRequestsFor.
func tooFewVerdict(n int, percents []float64) (verdict, bool) {
	if n <= 0 {
		return verdict{}, false
	}
	seen := map[float64]bool{}
	var few []string
	for _, p := range append([]float64{99, 99.9}, percents...) {
		if seen[p] || p >= 100 || p <= 0 {
			continue
		}
		seen[p] = true
		if need := minRequestsFor(p); n < need {
			few = append(few, fmt.Sprintf("p%s needs %d", decimal(p), need))
		}
	}
	if len(few) == 0 {
		return verdict{}, false
	}
	return verdict{Kind: verdictTooFew,
		Message: fmt.Sprintf("%d requests: %s (below that the percentile is the slowest request).", n, strings.Join(few, ", ")),
		Advice:  "Send more requests (-n) for those percentiles.", Evidence: map[string]float64{"requests": float64(n)}}, true
}

// inFlightTime is the time the run's requests spent on their connections:
// the completed ones' total times (exact from the extended Total phase,
// else ab's mean times the count) and the ages of those still in flight at
// the stop.
func (r *Run) inFlightTime() time.Duration {
	var us float64
	rp := r.Report
	if x := r.Extended; x != nil && x.Phases.Total.Count == int64(rp.CompleteRequests) {
		us = float64(x.Phases.Total.SumUs)
	} else if ct := rp.ConnectionTimes; ct != nil {
		us = float64(ct.Total.MeanUs) * float64(rp.CompleteRequests)
	}
	if o := r.Outstanding; o != nil {
		us += float64(o.Age.SumUs)
	}
	return time.Duration(us * 1e3)
}

// minRequestsFor is the fewest requests with one above the percentile p:
// 100/(100-p), rounded up.
func minRequestsFor(p float64) int {
	return int(math.Ceil(100/(100-p) - 1e-9))
}

// kernelVerdict states the TCP counters' deltas that mean lost or refused
// connections, and the connect tail they explain.
func kernelVerdict(h *hoststat.Delta, requests int, x *client.ExtraResult, ext *extendedFigures) (verdict, bool) {
	t := h.TCP
	ev := map[string]float64{
		"listen_overflows": float64(t.ListenOverflows), "listen_drops": float64(t.ListenDrops),
		"syn_retransmissions": float64(t.SynRetrans), "retransmitted_segments": float64(t.RetransSegs),
		"resets_sent": float64(t.OutRsts), "established_resets": float64(t.EstabResets),
		"failed_connection_attempts": float64(t.AttemptFails),
	}
	var parts []string
	add := func(n uint64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(t.ListenOverflows, "listen queue overflows")
	add(t.ListenDrops, "listen drops")
	add(t.SynRetrans, "SYN retransmissions")
	add(t.AttemptFails, "failed connection attempts")
	per := float64(max(requests, 1))
	if float64(t.RetransSegs)/per >= kernelShare {
		add(t.RetransSegs, "retransmitted segments")
	}
	if float64(t.OutRsts)/per >= kernelShare {
		add(t.OutRsts, "resets sent")
	}
	if float64(t.EstabResets)/per >= kernelShare {
		add(t.EstabResets, "established connections reset")
	}
	exhausted := false
	if ext != nil {
		if fc, ok := ext.FailuresByClass["connect"]; ok && fc.Count > 0 && strings.Contains(fc.FirstError, "cannot assign requested address") {
			exhausted = true
			parts = append(parts, fmt.Sprintf("%d connects failed for want of a local port", fc.Count))
			ev["port_exhaustion_failures"] = float64(fc.Count)
		}
	}
	if len(parts) == 0 {
		return verdict{}, false
	}
	v := verdict{Kind: verdictKernelDrops, Evidence: ev,
		Message: "the kernel counted " + strings.Join(parts, ", ") + " during the run (the network namespace's counters: other programs' connections count too)."}
	tail, near1, near3, maxUs := connectTail(x)
	ev["slow_connects"] = float64(tail)
	var advice []string
	if tail > 0 && (t.SynRetrans > 0 || t.ListenOverflows > 0 || t.ListenDrops > 0) {
		share := float64(tail) / per
		ev["slow_connect_share"] = share
		v.Message += fmt.Sprintf(" %d requests (%.1f %%) waited %.1f s or more to connect (%d near 1 s, %d near 3 s, the slowest %.3f s):"+
			" SYNs the listener dropped and the client sent again after 1 s, 3 s, ...; the server's accept queue overflowed.",
			tail, 100*share, tailConnect.Seconds(), near1, near3, float64(maxUs)/1e6)
		somax := ""
		if h.Somaxconn > 0 {
			somax = fmt.Sprintf(" (now %d)", h.Somaxconn)
		}
		advice = append(advice, "Raise the server's listen backlog and net.core.somaxconn"+somax+", or accept faster; fewer new connections (-k) avoid it.")
	}
	if exhausted {
		advice = append(advice, "Use keep-alive (-k), fewer connections, or widen net.ipv4.ip_local_port_range.")
	}
	v.Advice = strings.Join(advice, " ")
	return v, true
}

// connectTail counts the requests whose Connect column reached TailConnect,
// those near 1 s (up to 2.5 s) and near 3 s (2.5 s to 6 s), and the slowest.
func connectTail(x *client.ExtraResult) (tail, near1, near3, maxUs int64) {
	if x == nil || x.Connect.Hist == nil {
		return
	}
	from := tailConnect.Microseconds()
	for _, b := range x.Connect.Hist.Distribution() {
		if b.Count == 0 || b.From < from {
			continue
		}
		tail += b.Count
		switch {
		case b.From < 2500000:
			near1 += b.Count
		case b.From < 6000000:
			near3 += b.Count
		}
	}
	return tail, near1, near3, x.Connect.Max
}

// writeVerdicts writes the verdicts block (nothing when the run was not
// judged): one line per verdict, then what could not be checked, each made
// printable (a decoded document's text reaches a terminal).
func writeVerdicts(w io.Writer, r *Run) error {
	vs := r.Verdicts
	if vs == nil {
		return nil
	}
	e := newErrWriter(w)
	e.printf("\nVerdicts (gab: can these figures be trusted as the server's?)\n")
	if len(vs.Found) == 0 {
		e.printf("  none: not client-bound, machine quiet, no kernel drops, long and large enough\n")
	}
	for _, v := range vs.Found {
		e.printf("  %s\n", printable.String(v.line()))
	}
	for _, n := range vs.NotChecked {
		e.printf("  not checked: %s\n", printable.String(n))
	}
	return e.flush()
}

// verdictBanner is the HTML report's banner of a run's verdicts, every text
// escaped (empty when the run was not judged or nothing was found and
// everything was checked).
func verdictBanner(r *Run) template.HTML {
	vs := r.Verdicts
	if vs == nil || len(vs.Found)+len(vs.NotChecked) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<div class="verdicts" style="border:2px solid #c60;background:#fff4e0;padding:.3em .8em;margin:.6em 0">` + "\n")
	if len(vs.Found) > 0 {
		b.WriteString("<p><strong>Can these figures be trusted as the server's?</strong></p>\n<ul>\n")
	}
	for _, v := range vs.Found {
		fmt.Fprintf(&b, `<li data-kind="%s"><strong>%s</strong>: %s`, template.HTMLEscapeString(v.Kind),
			template.HTMLEscapeString(strings.ReplaceAll(v.Kind, "_", "-")), template.HTMLEscapeString(v.Message))
		if v.Advice != "" {
			fmt.Fprintf(&b, " <em>%s</em>", template.HTMLEscapeString(v.Advice))
		}
		b.WriteString("</li>\n")
	}
	if len(vs.Found) > 0 {
		b.WriteString("</ul>\n")
	}
	for _, n := range vs.NotChecked {
		fmt.Fprintf(&b, "<p class=\"note\">Not checked: %s</p>\n", template.HTMLEscapeString(n))
	}
	b.WriteString("</div>")
	return template.HTML(b.String())
}
