// Package dashboard serves a run's HTML report while the run goes on (gab
// --dashboard): GET / is the page as last published, complete on each load
// (no script needed to see it), and GET /state a small JSON object that the
// page's script polls to know when to read the page again. The pages are
// rendered elsewhere, once per published state, and kept as bytes: a request
// costs writing them, whatever the number of readers. Nothing the page needs
// comes from anywhere else, and the Content-Security-Policy says so to the
// browser.
//
// A browser on the same machine can be made to send requests to a loopback
// port by any web page it opens (DNS rebinding): on a loopback address the
// server answers only requests whose Host names a loopback address or
// localhost.
package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/netutil"
)

// MaxConns is the most connections the server holds at once; more wait in
// the kernel's accept queue.
const MaxConns = 32

// State is what /state says: the page's sequence number (it grows with each
// page published), the run's counts so far, and whether the page is the
// finished report.
type State struct {
	Seq      uint64  `json:"seq"`
	Complete int64   `json:"complete"`
	Failed   int64   `json:"failed"`
	ElapsedS float64 `json:"elapsed_s"`
	Final    bool    `json:"final"`
}

// Server is a dashboard listening on an address.
type Server struct {
	ln       net.Listener
	srv      *http.Server
	loopback bool

	cur  atomic.Pointer[published]
	seq  atomic.Uint64
	done chan struct{} // closed when Serve returns
	once sync.Once
}

type published struct {
	page, state []byte
}

// ListenAddr is the address to listen on for ADDR: a port alone (":8080")
// listens on 127.0.0.1, an address that names a host on that host.
func ListenAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%q is not HOST:PORT or :PORT", addr)
	}
	if port == "" {
		return "", fmt.Errorf("%q has no port", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Listen binds addr (ListenAddr's rule) and starts serving: until the first
// Publish, / says the run is starting.
func Listen(addr string) (*Server, error) {
	a, err := ListenAddr(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, done: make(chan struct{})}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		s.loopback = tcp.IP.IsLoopback()
	}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      60 * time.Second, // a final page of a few MB to a slow reader
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    8 << 10,
		ErrorLog:          log.New(io.Discard, "", 0), // a reader's errors are not gab's to print
	}
	s.Publish([]byte(startingPage), State{})
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(netutil.LimitListener(ln, MaxConns)) // ends with Close
	}()
	return s, nil
}

// startingPage is / before the first interval of the run finished.
const startingPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>gab: starting</title><link rel="icon" href="data:,"></head>
<body><p id="live" data-seq="0">gab is starting the run; reload when its first interval has finished. Complete requests: <span id="complete">0</span></p></body></html>
`

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL is the page's address.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/" }

// NextSeq is the sequence number of the next page to publish (the page
// carries it, so that its script knows what it shows).
func (s *Server) NextSeq() uint64 { return s.seq.Load() + 1 }

// Publish makes page the page served, with st as its state (st.Seq is set
// to the page's sequence number, NextSeq). Safe for concurrent use with
// the server; publishers must not overlap.
func (s *Server) Publish(page []byte, st State) {
	st.Seq = s.seq.Add(1)
	raw, _ := json.Marshal(st) // a struct of numbers and a bool: no error
	s.cur.Store(&published{page: page, state: append(raw, '\n')})
}

// Close stops serving: the listener closes and open connections end.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		err = s.srv.Close()
		<-s.done
	})
	return err
}

// Linger keeps serving for d, or until ctx ends, then closes the server.
func (s *Server) Linger(ctx context.Context, d time.Duration) error {
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	return s.Close()
}

// ServeHTTP answers GET and HEAD of / and /state.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if s.loopback && !loopbackHost(r.Host) {
		http.Error(w, "this dashboard answers only requests to a loopback address or localhost", http.StatusMisdirectedRequest)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	p := s.cur.Load()
	switch r.URL.Path {
	case "/":
		// The page loads nothing from anywhere: inline styles and scripts,
		// inline SVG, and requests to this server only.
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("Content-Type", "text/html; charset=utf-8")
		write(w, r, p.page)
	case "/state":
		h.Set("Content-Type", "application/json")
		write(w, r, p.state)
	default:
		http.NotFound(w, r)
	}
}

func write(w http.ResponseWriter, r *http.Request, b []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(b) // a failed write means the reader went away
}

// loopbackHost reports whether a Host header names localhost or a loopback
// address (with any port, or none).
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") || strings.EqualFold(host, "localhost.") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
