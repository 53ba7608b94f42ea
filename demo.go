package main

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"gab/client"
)

// demoBody is the demo server's document: 100 bytes, like ab's usual test file.
var demoBody = []byte(strings.Repeat("a", 99) + "\n")

// startDemo starts --demo's server on a free loopback port, points o at it
// (http://127.0.0.1:PORT/), and returns the function that shuts it down.
func startDemo(o *cliOptions) (stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	length := strconv.Itoa(len(demoBody))
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Server", "gab-demo/"+version)
			h.Set("Content-Type", "text/plain")
			h.Set("Content-Length", length)
			if r.Method != http.MethodHead {
				w.Write(demoBody) // a failed write means the client went away
			}
		}),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	// Also speak HTTP/2 with prior knowledge, so that --demo --http2 works.
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	url := "http://" + ln.Addr().String() + "/"
	t, err := client.ParseURL(url)
	if err != nil {
		srv.Close()
		return nil, err
	}
	o.URL = url
	o.setTarget(t)
	o.Config.NoSpin = true // the server runs on gab's own cores
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close() // connections still busy after the grace period
		}
		<-served // Serve returns http.ErrServerClosed once shut down

	}, nil
}
