package main

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gab/client"
	"gab/internal/sweep"
)

// demoBody is the demo server's document: 100 bytes, like ab's usual test file.
var demoBody = []byte(strings.Repeat("a", 99) + "\n")

// demoMaxSize caps /bytes/N, and demoMaxBody the request bodies read.
const (
	demoMaxSize = 1 << 30
	demoMaxBody = 1 << 30
)

// demoChunk is what /bytes/N is written from.
var demoChunk = []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789\n", 1772)) // 65564 bytes

// demoHandler serves / (demoBody) and /bytes/N (N bytes; N as --sizes reads
// it, e.g. 100, 10k, 1m), for any method; a request body is read and dropped.
func demoHandler(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, demoMaxBody)) // an error means the client went away or sent too much
	h := w.Header()
	h.Set("Server", "gab-demo/"+version)
	h.Set("Content-Type", "text/plain")
	body, n := demoBody, int64(len(demoBody))
	if rest, ok := strings.CutPrefix(r.URL.Path, "/bytes/"); ok {
		v, err := sweep.ParseSize(rest)
		if err != nil || v > demoMaxSize {
			http.Error(w, "want /bytes/N with N a size up to 1g (100, 10k, 1m)", http.StatusNotFound)
			return
		}
		body, n = nil, v
	}
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	if r.Method == http.MethodHead {
		return
	}
	if body != nil {
		w.Write(body) // a failed write means the client went away
		return
	}
	for n > 0 {
		chunk := demoChunk
		if int64(len(chunk)) > n {
			chunk = chunk[:n]
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
		n -= int64(len(chunk))
	}
}

// startDemoServer starts the demo server on a free loopback port and returns
// its base URL (http://127.0.0.1:PORT, or https:// with tlsConf) and the
// function that shuts it down.
func startDemoServer(tlsConf *tls.Config) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	base = "http://" + ln.Addr().String()
	if tlsConf != nil {
		ln, base = tls.NewListener(ln, tlsConf), "https://"+ln.Addr().String()
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(demoHandler),
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

// startDemo starts --demo's server, points o at it (http://127.0.0.1:PORT/),
// and returns the function that shuts it down.
func startDemo(o *cliOptions) (stop func(), err error) {
	base, stop, err := startDemoServer(nil)
	if err != nil {
		return nil, err
	}
	url := base + "/"
	t, err := client.ParseURL(url)
	if err != nil {
		stop()
		return nil, err
	}
	o.URL = url
	o.setTarget(t)
	o.Config.NoSpin = true // the server runs on gab's own cores
	return stop, nil
}
