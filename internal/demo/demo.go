// Package demo is gab's built-in local server (gab --demo, gab sweep
// --demo, gab capacity --demo, and gab calibrate's in-process target).
package demo

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gab/internal/bytesize"
)

// body is the demo server's document: 100 bytes, like ab's usual test file.
var body = []byte(strings.Repeat("a", 99) + "\n")

// maxSize caps /bytes/N, and maxBody the request bodies read.
const (
	maxSize = 1 << 30
	maxBody = 1 << 30
)

// chunk is what /bytes/N is written from.
var chunk = []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789\n", 1772)) // 65564 bytes

// handler serves / (body) and /bytes/N (N bytes; N as --sizes reads
// it, e.g. 100, 10k, 1m), for any method; a request body is read and dropped.
func handler(server string, w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, maxBody)) // an error means the client went away or sent too much
	h := w.Header()
	h.Set("Server", server)
	h.Set("Content-Type", "text/plain")
	b, n := body, int64(len(body))
	if rest, ok := strings.CutPrefix(r.URL.Path, "/bytes/"); ok {
		v, err := bytesize.Parse(rest)
		if err != nil || v > maxSize {
			http.Error(w, "want /bytes/N with N a size up to 1g (100, 10k, 1m)", http.StatusNotFound)
			return
		}
		b, n = nil, v
	}
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	if r.Method == http.MethodHead {
		return
	}
	if b != nil {
		w.Write(b) // a failed write means the client went away
		return
	}
	for n > 0 {
		c := chunk
		if int64(len(c)) > n {
			c = c[:n]
		}
		if _, err := w.Write(c); err != nil {
			return
		}
		n -= int64(len(c))
	}
}

// Start starts the demo server on a free loopback port and returns its base
// URL (http://127.0.0.1:PORT, or https:// with tlsConf) and the function that
// shuts it down; server is its Server header.
func Start(tlsConf *tls.Config, server string) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	base = "http://" + ln.Addr().String()
	if tlsConf != nil {
		ln, base = tls.NewListener(ln, tlsConf), "https://"+ln.Addr().String()
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler(server, w, r) }),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	// Also speak HTTP/2 with prior knowledge, so that --demo --http2 works.
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return base, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close() // connections still busy after the grace period
		}
		<-served // Serve returns http.ErrServerClosed once shut down
	}, nil
}
