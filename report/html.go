package report

import (
	"html"
	"io"
)

// WriteHTML writes ab's -w report with the -x/-y/-z attributes (Options.HTML).
func WriteHTML(w io.Writer, r *Run) error {
	s := r.Report
	if s == nil {
		return nil
	}
	e := newErrWriter(w)
	a := r.local.htmlAttrs
	tr, td := a.Row, a.Cell
	row := func(label, format string, args ...any) {
		e.printf("<tr %s><th colspan=2 %s>%s</th><td colspan=2 %s>", tr, td, label, td)
		e.printf(format, args...)
		e.printf("</td></tr>\n")
	}
	e.printf("\n\n<table %s>\n", a.Table)
	// The Server header is the peer's text: escaped, unlike ab, so that it
	// cannot put markup or script into a page people open in a browser.
	row("Server Software:", "%s", html.EscapeString(s.ServerSoftware))
	row("Server Hostname:", "%s", s.ServerHostname)
	row("Server Port:", "%d", port16(s.ServerPort))
	row("Document Path:", "%s", s.DocumentPath)
	if s.VariableLength {
		row("Document Length:", "Variable")
	} else {
		row("Document Length:", "%d bytes", s.DocumentLengthBytes)
	}
	row("Concurrency Level:", "%d", s.ConcurrencyLevel)
	row("Time taken for tests:", "%.3f seconds", s.TimeTakenS)
	row("Complete requests:", "%d", s.CompleteRequests)
	row("Failed requests:", "%d", s.FailedRequests)
	if s.FailedRequests > 0 {
		// ab's HTML breakdown has no Receive count and a space before '>'.
		e.printf("<tr %s><td colspan=4 %s >   (Connect: %d, Length: %d, Exceptions: %d)</td></tr>\n",
			tr, td, s.Failures.Connect, s.Failures.Length, s.Failures.Exceptions)
	}
	if s.Non2xxResponses > 0 {
		row("Non-2xx responses:", "%d", s.Non2xxResponses)
	}
	if r.local.keepAlive {
		row("Keep-Alive requests:", "%d", s.KeepAliveReqs)
	}
	row("Total transferred:", "%d bytes", s.TotalTransferredBytes)
	if r.local.bodySent {
		row("Total body sent:", "%d", s.TotalBodySentBytes)
	}
	row("HTML transferred:", "%d bytes", s.HTMLTransferredBytes)
	if s.TimeTakenS > 0 {
		row("Requests per second:", "%.2f", s.RequestsPerSecond)
		row("Transfer rate:", "%.2f kb/s received", s.TransferReceivedKBPerS)
		if r.local.bodySent {
			e.printf("<tr %s><td colspan=2 %s>&nbsp;</td><td colspan=2 %s>%.2f kb/s sent</td></tr>\n",
				tr, td, td, s.TransferSentKBPerS)
			e.printf("<tr %s><td colspan=2 %s>&nbsp;</td><td colspan=2 %s>%.2f kb/s total</td></tr>\n",
				tr, td, td, s.TransferTotalKBPerS)
		}
	}
	if r.local.count > 0 {
		h := r.local.html
		e.printf("<tr %s><th %s colspan=4>Connection Times (ms)</th></tr>\n", tr, td)
		e.printf("<tr %s><th %s>&nbsp;</th> <th %s>min</th>   <th %s>avg</th>   <th %s>max</th></tr>\n",
			tr, td, td, td, td)
		cells := func(label string, lo, avg, hi int64) {
			e.printf("<tr %s><th %s>%s</th><td %s>%5d</td><td %s>%5d</td><td %s>%5d</td></tr>\n",
				tr, td, label, td, lo, td, avg, td, hi)
		}
		cells("Connect:", h.ConnectMin, h.ConnectAvg, h.ConnectMax)
		cells("Processing:", h.ProcessingMin, h.ProcessingAvg, h.ProcessingMax)
		cells("Total:", h.TotalMin, h.TotalAvg, h.TotalMax)
	}
	e.printf("</table>\n")
	return e.flush()
}
