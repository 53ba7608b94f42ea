package report

import (
	"bufio"
	"fmt"
	"io"
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

// port16 prints the port as ab's %hu does.
func port16(p int) uint16 { return uint16(p) }

// WriteText writes ab's text report (the figures, then the Connection Times
// and percentile tables), starting with "\n\n" and
// ending after the last table line.
func WriteText(w io.Writer, s *Summary) error {
	e := newErrWriter(w)
	e.printf("\n\n")
	e.printf("Server Software:        %s\n", s.ServerSoftware)
	e.printf("Server Hostname:        %s\n", s.Host)
	e.printf("Server Port:            %d\n", port16(s.Port))
	if s.Protocol == "h3" {
		e.printf("Protocol:               HTTP/3 (QUIC)%s\n", h2Layout(s))
	} else if s.Protocol != "" {
		e.printf("Protocol:               HTTP/2 (%s)%s\n", s.Protocol, h2Layout(s))
	}
	if t := s.TLS; t != nil {
		if t.Protocol != "" {
			e.printf("SSL/TLS Protocol:       %s,%s,%d,%d\n", t.Protocol, t.Cipher, t.PeerKeyBits, t.CipherBits)
		}
		if t.TempKey != "" {
			e.printf("Server Temp Key:        %s\n", t.TempKey)
		}
		if t.ServerName != "" {
			e.printf("TLS Server Name:        %s\n", t.ServerName)
		}
	}
	e.printf("\n")
	e.printf("Document Path:          %s\n", s.Path)
	if s.VariableLength {
		e.printf("Document Length:        Variable\n")
	} else {
		e.printf("Document Length:        %d bytes\n", s.DocLength)
	}
	e.printf("\n")
	e.printf("Concurrency Level:      %d\n", s.Concurrency)
	e.printf("Time taken for tests:   %.3f seconds\n", s.Seconds)
	e.printf("Complete requests:      %d\n", s.Complete)
	e.printf("Failed requests:        %d\n", s.Failed.Total)
	if s.Failed.Total > 0 {
		e.printf("   (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)\n",
			s.Failed.Connect, s.Failed.Receive, s.Failed.Length, s.Failed.Exceptions)
	}
	if s.WriteErrors > 0 {
		e.printf("Write errors:           %d\n", s.WriteErrors)
	}
	if s.Non2xx > 0 {
		e.printf("Non-2xx responses:      %d\n", s.Non2xx)
	}
	if s.KeepAlive {
		e.printf("Keep-Alive requests:    %d\n", s.KeepAliveRequests)
	}
	e.printf("Total transferred:      %d bytes\n", s.TotalRead)
	if s.BodySent {
		e.printf("Total body sent:        %d\n", s.TotalSent)
	}
	e.printf("HTML transferred:       %d bytes\n", s.BodyRead)
	if s.Seconds > 0 && s.Complete > 0 {
		r := s.Rates
		e.printf("Requests per second:    %.2f [#/sec] (mean)\n", r.RequestsPerSecond)
		e.printf("Time per request:       %.3f [ms] (mean)\n", r.TimePerRequest)
		e.printf("Time per request:       %.3f [ms] (mean, across all concurrent requests)\n", r.TimePerRequestAll)
		e.printf("Transfer rate:          %.2f [Kbytes/sec] received\n", r.ReceivedKBps)
		if s.BodySent {
			e.printf("                        %.2f kb/s sent\n", r.SentKBps)
			e.printf("                        %.2f kb/s total\n", r.TotalKBps)
		}
	}
	if s.Complete > 0 && s.Count > 0 {
		writeTimesTable(e, s)
		if !s.NoPercentiles && s.Count > 1 {
			e.printf("\nPercentage of the requests served within a certain time (ms)\n")
			for _, p := range s.Percentiles {
				if p.Percent >= 100 {
					e.printf(" 100%%  %5d (longest request)\n", p.Ms)
				} else {
					e.printf("  %d%%  %5d\n", p.Percent, p.Ms)
				}
			}
		}
		if s.Precision != "" {
			e.printf("%s\n", s.Precision)
		} else if s.FromHistograms {
			e.printf("Statistics from 1 ms histograms past the first %d requests (medians and percentiles to the nearest ms).\n",
				s.ExactSamples)
		}
	}
	return e.flush()
}

// tableRows pairs each column with its label in ab's order.
func (s *Summary) tableRows() [4]struct {
	label, what string
	stats       *ColumnStats
} {
	return [4]struct {
		label, what string
		stats       *ColumnStats
	}{
		{"Connect:    ", "the initial connection time", &s.Connect},
		{"Processing: ", "the processing time", &s.Processing},
		{"Waiting:    ", "the waiting time", &s.Waiting},
		{"Total:      ", "the total time", &s.Total},
	}
}

func writeTimesTable(e *errWriter, s *Summary) {
	e.printf("\nConnection Times (ms)\n")
	rows := s.tableRows()
	if s.NoConfidence {
		e.printf("              min   avg   max\n")
		for _, r := range rows {
			// ab's -S format has no space before the last column.
			e.printf("%s%5d %5d%5d\n", r.label, r.stats.Min, r.stats.Mean, r.stats.Max)
		}
		return
	}
	e.printf("              min  mean[+/-sd] median   max\n")
	for _, r := range rows {
		c := r.stats
		e.printf("%s%5d %4d %5.1f %6d %7d\n", r.label, c.Min, c.Mean, c.SD, c.Median, c.Max)
	}
	for _, r := range rows {
		switch r.stats.Confidence {
		case MoreThanTwiceApart:
			e.printf("ERROR: The median and mean for %s are more than twice the standard\n"+
				"       deviation apart. These results are NOT reliable.\n", r.what)
		case NotWithinDeviation:
			e.printf("WARNING: The median and mean for %s are not within a normal deviation\n"+
				"        These results are probably not that reliable.\n", r.what)
		}
	}
}

// h2Layout says how the HTTP/2 requests in flight are carried: ", 10
// connections × 10 streams" ("" when the summary does not know).
func h2Layout(s *Summary) string {
	if s.Connections <= 0 || s.Streams <= 0 {
		return ""
	}
	plural := func(n int, word string) string {
		if n == 1 {
			return "1 " + word
		}
		return fmt.Sprintf("%d %ss", n, word)
	}
	return ", " + plural(s.Connections, "connection") + " × " + plural(s.Streams, "stream")
}
