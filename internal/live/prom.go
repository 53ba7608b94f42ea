package live

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// This file is --metrics: Prometheus's text exposition format (0.0.4), or
// OpenMetrics 1.0 when the scrape's Accept header asks for it (Prometheus
// does), written by hand: both are a few lines per series.

// Content types of the two formats.
const (
	TextContentType        = "text/plain; version=0.0.4; charset=utf-8"
	OpenMetricsContentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"
)

// WriteText writes the families in Prometheus's text format, or in
// OpenMetrics's when openMetrics (which names counters without _total in
// its TYPE lines, states units and ends with "# EOF").
func WriteText(b *bytes.Buffer, fams []family, openMetrics bool) {
	for _, f := range fams {
		if len(f.samples) == 0 {
			continue
		}
		name := f.name
		if !openMetrics && f.typ == "counter" {
			name += "_total"
		}
		b.WriteString("# HELP ")
		b.WriteString(name)
		b.WriteByte(' ')
		writeHelp(b, f.help, openMetrics)
		b.WriteString("\n# TYPE ")
		b.WriteString(name)
		b.WriteByte(' ')
		b.WriteString(f.typ)
		b.WriteByte('\n')
		if openMetrics && f.unit != "" {
			b.WriteString("# UNIT ")
			b.WriteString(name)
			b.WriteByte(' ')
			b.WriteString(f.unit)
			b.WriteByte('\n')
		}
		for _, s := range f.samples {
			b.WriteString(s.name)
			if len(s.labels) > 0 {
				b.WriteByte('{')
				for i := 0; i+1 < len(s.labels); i += 2 {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(s.labels[i])
					b.WriteString(`="`)
					writeLabelValue(b, s.labels[i+1])
					b.WriteByte('"')
				}
				b.WriteByte('}')
			}
			b.WriteByte(' ')
			b.WriteString(formatValue(s.value))
			b.WriteByte('\n')
		}
	}
	if openMetrics {
		b.WriteString("# EOF\n")
	}
}

// writeLabelValue escapes a label value: backslash, double quote and line
// feed, as both formats want; invalid UTF-8 becomes U+FFFD.
func writeLabelValue(b *bytes.Buffer, v string) {
	for _, r := range strings.ToValidUTF8(v, "\uFFFD") {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
}

// writeHelp escapes a help text: backslash and line feed, and in
// OpenMetrics double quotes too (the text format allows no other escape).
func writeHelp(b *bytes.Buffer, v string, openMetrics bool) {
	for _, r := range v {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '"' && openMetrics:
			b.WriteString(`\"`)
		default:
			b.WriteRune(r)
		}
	}
}

// wantsOpenMetrics reports whether an Accept header asks for OpenMetrics.
func wantsOpenMetrics(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(mt), "application/openmetrics-text") {
			// A q=0 refuses it.
			for _, p := range strings.Split(params, ";") {
				k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "q") && strings.Trim(v, "0.") == "" {
					return false
				}
			}
			return true
		}
	}
	return false
}

// Handler serves m at /metrics (and nothing else: 404).
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		om := wantsOpenMetrics(r.Header.Get("Accept"))
		var b bytes.Buffer
		WriteText(&b, m.snapshot(), om)
		if om {
			w.Header().Set("Content-Type", OpenMetricsContentType)
		} else {
			w.Header().Set("Content-Type", TextContentType)
		}
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(b.Bytes()) // a scraper that went away
	})
}

// Server is --metrics's HTTP server.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
	err  error
	mu   sync.Mutex
}

// maxScrapeConns bounds the connections served at once: a client that
// opens more waits in the listen queue until a connection ends (a silent
// one after ReadHeaderTimeout, an idle one after IdleTimeout).
const maxScrapeConns = 32

// Listen opens addr for m: "PORT" or ":PORT" listens on loopback
// (127.0.0.1), "HOST:PORT" on that host ("0.0.0.0:PORT" or "[::]:PORT"
// for every interface). The server starts at once.
func Listen(addr string, m *Metrics) (*Server, error) {
	hostPort, err := ListenAddress(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", hostPort)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, done: make(chan struct{})}
	s.srv = &http.Server{
		Handler:           m.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second, // a scraper that does not read
		IdleTimeout:       15 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          nil,
	}
	go func() {
		defer close(s.done)
		err := s.srv.Serve(netutil.LimitListener(ln, maxScrapeConns))
		if !errors.Is(err, http.ErrServerClosed) {
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
		}
	}()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server: the scrapes under way get until wait to finish.
func (s *Server) Close(wait time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// ListenAddress is the host:port that --metrics ADDR listens on: a bare
// port or ":PORT" is on loopback.
func ListenAddress(addr string) (string, error) {
	if addr == "" {
		return "", errors.New("an empty address")
	}
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if port == "" {
		return "", errors.New("no port")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", errors.New("the port must be a number from 0 to 65535, not " + strconv.Quote(port))
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}
