package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// errWriter formats to a buffered writer and keeps the first error, so the
// writers read as the printf sequences they reproduce.
type errWriter struct {
	w   *bufio.Writer
	err error
}

func newErrWriter(w io.Writer) *errWriter { return &errWriter{w: bufio.NewWriter(w)} }

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func (e *errWriter) flush() error {
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

// decimal is v in the fewest decimal digits that read back as v, without
// an exponent (rates, cores, percents).
func decimal(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// port16 prints the port as ab's %hu does.
func port16(p int) uint16 { return uint16(p) }

// WriteText writes ab's text report (the figures, then the Connection Times
// and percentile tables), starting with "\n\n" and
// ending after the last table line.
func WriteText(w io.Writer, r *Run) error {
	rp := r.Report
	if rp == nil {
		return nil
	}
	e := newErrWriter(w)
	e.printf("\n\n")
	e.printf("Server Software:        %s\n", rp.ServerSoftware)
	e.printf("Server Hostname:        %s\n", rp.ServerHostname)
	e.printf("Server Port:            %d\n", port16(rp.ServerPort))
	if rp.Protocol == "h3" {
		e.printf("Protocol:               HTTP/3 (QUIC)%s\n", h2Layout(rp))
	} else if rp.Protocol != "" {
		e.printf("Protocol:               HTTP/2 (%s)%s\n", rp.Protocol, h2Layout(rp))
	}
	if t := rp.TLS; t != nil {
		if t.Protocol != "" {
			e.printf("SSL/TLS Protocol:       %s,%s,%d,%d\n", t.Protocol, t.Cipher, t.PeerKeyBits, t.CipherBits)
		}
		if t.ServerTempKey != "" {
			e.printf("Server Temp Key:        %s\n", t.ServerTempKey)
		}
		if t.ServerName != "" {
			e.printf("TLS Server Name:        %s\n", t.ServerName)
		}
	}
	e.printf("\n")
	e.printf("Document Path:          %s\n", rp.DocumentPath)
	if rp.VariableLength {
		e.printf("Document Length:        Variable\n")
	} else {
		e.printf("Document Length:        %d bytes\n", rp.DocumentLengthBytes)
	}
	e.printf("\n")
	e.printf("Concurrency Level:      %d\n", rp.ConcurrencyLevel)
	e.printf("Time taken for tests:   %.3f seconds\n", rp.TimeTakenS)
	e.printf("Complete requests:      %d\n", rp.CompleteRequests)
	e.printf("Failed requests:        %d\n", rp.FailedRequests)
	if f := rp.Failures; rp.FailedRequests > 0 {
		e.printf("   (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)\n",
			f.Connect, f.Receive, f.Length, f.Exceptions)
	}
	if rp.WriteErrors > 0 {
		e.printf("Write errors:           %d\n", rp.WriteErrors)
	}
	if rp.Non2xxResponses > 0 {
		e.printf("Non-2xx responses:      %d\n", rp.Non2xxResponses)
	}
	if r.local.keepAlive {
		e.printf("Keep-Alive requests:    %d\n", rp.KeepAliveReqs)
	}
	e.printf("Total transferred:      %d bytes\n", rp.TotalTransferredBytes)
	if r.local.bodySent {
		e.printf("Total body sent:        %d\n", rp.TotalBodySentBytes)
	}
	e.printf("HTML transferred:       %d bytes\n", rp.HTMLTransferredBytes)
	if rp.TimeTakenS > 0 && rp.CompleteRequests > 0 {
		e.printf("Requests per second:    %.2f [#/sec] (mean)\n", rp.RequestsPerSecond)
		e.printf("Time per request:       %.3f [ms] (mean)\n", rp.TimePerRequestMs)
		e.printf("Time per request:       %.3f [ms] (mean, across all concurrent requests)\n", rp.TimePerRequestAllMs)
		e.printf("Transfer rate:          %.2f [Kbytes/sec] received\n", rp.TransferReceivedKBPerS)
		if r.local.bodySent {
			e.printf("                        %.2f kb/s sent\n", rp.TransferSentKBPerS)
			e.printf("                        %.2f kb/s total\n", rp.TransferTotalKBPerS)
		}
	}
	if ct := rp.ConnectionTimes; rp.CompleteRequests > 0 && ct != nil {
		writeTimesTable(e, ct, r.local.noConfidence)
		if !r.local.noPercentiles && r.local.count > 1 {
			e.printf("\nPercentage of the requests served within a certain time (ms)\n")
			for _, p := range rp.PercentageServed {
				if p.Percent >= 100 {
					e.printf(" 100%%  %5d (longest request)\n", p.TotalMs)
				} else {
					e.printf("  %d%%  %5d\n", int(p.Percent), p.TotalMs)
				}
			}
		}
		if r.local.precision != "" {
			e.printf("%s\n", r.local.precision)
		} else if rp.StatisticsFromHistogram {
			e.printf("Statistics from 1 ms histograms past the first %d requests (medians and percentiles to the nearest ms).\n",
				rp.ExactSamples)
		}
	}
	return e.flush()
}

// tableRows pairs each column with its label in ab's order.
func tableRows(ct *connectionTimes) [4]struct {
	label, what string
	stats       *columnStats
} {
	return [4]struct {
		label, what string
		stats       *columnStats
	}{
		{"Connect:    ", "the initial connection time", &ct.Connect},
		{"Processing: ", "the processing time", &ct.Processing},
		{"Waiting:    ", "the waiting time", &ct.Waiting},
		{"Total:      ", "the total time", &ct.Total},
	}
}

func writeTimesTable(e *errWriter, ct *connectionTimes, noConfidence bool) {
	e.printf("\nConnection Times (ms)\n")
	rows := tableRows(ct)
	if noConfidence {
		e.printf("              min   avg   max\n")
		for _, r := range rows {
			// ab's -S format has no space before the last column.
			e.printf("%s%5d %5d%5d\n", r.label, r.stats.MinMs, r.stats.MeanMs, r.stats.MaxMs)
		}
		return
	}
	e.printf("              min  mean[+/-sd] median   max\n")
	for _, r := range rows {
		c := r.stats
		e.printf("%s%5d %4d %5.1f %6d %7d\n", r.label, c.MinMs, c.MeanMs, c.SDMs, c.MedianMs, c.MaxMs)
	}
	for _, r := range rows {
		switch r.stats.Confidence {
		case moreThanTwiceApart:
			e.printf("ERROR: The median and mean for %s are more than twice the standard\n"+
				"       deviation apart. These results are NOT reliable.\n", r.what)
		case notWithinDeviation:
			e.printf("WARNING: The median and mean for %s are not within a normal deviation\n"+
				"        These results are probably not that reliable.\n", r.what)
		}
	}
}

// h2Layout says how the HTTP/2 requests in flight are carried: ", 10
// connections × 10 streams" ("" when the report does not know).
func h2Layout(rp *abReport) string {
	if rp.Connections <= 0 || rp.StreamsPerConnection <= 0 {
		return ""
	}
	plural := func(n int, word string) string {
		if n == 1 {
			return "1 " + word
		}
		return fmt.Sprintf("%d %ss", n, word)
	}
	return ", " + plural(rp.Connections, "connection") + " × " + plural(rp.StreamsPerConnection, "stream")
}
