package calibrate

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"

	"gab/internal/selfsigned"
)

// The minimal responder's answers (ab's requests are HTTP/1.0; -k asks for
// keep-alive).
var (
	responderBody  = strings.Repeat("a", 99) + "\n"
	responderKeep  = []byte("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 100\r\n\r\n" + responderBody)
	responderClose = []byte("HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\n" + responderBody)
)

// Serve is gab calibrate --responder: an echo port, a minimal HTTP/1
// responder and the same over TLS, on loopback; it prints their ports and
// serves until stdin ends.
func Serve(stdin io.Reader, stdout io.Writer) error {
	cert, err := selfsigned.Cert()
	if err != nil {
		return err
	}
	var lns []net.Listener
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		lns = append(lns, ln)
	}
	go acceptEach(lns[0], func(c net.Conn) { io.Copy(c, c) })
	go acceptEach(lns[1], respond)
	go acceptEach(tls.NewListener(lns[2], &tls.Config{Certificates: []tls.Certificate{cert}}), respond)
	fmt.Fprintf(stdout, "%d %d %d\n", lns[0].Addr().(*net.TCPAddr).Port, lns[1].Addr().(*net.TCPAddr).Port, lns[2].Addr().(*net.TCPAddr).Port)
	io.Copy(io.Discard, stdin)
	return nil
}

func acceptEach(ln net.Listener, serve func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			serve(c)
		}()
	}
}

// respond answers each request head (up to its blank line) as it arrives;
// a head over 8 KiB ends the connection.
func respond(c net.Conn) {
	buf := make([]byte, 16<<10)
	have := 0
	for {
		n, err := c.Read(buf[have:])
		have += n
		for {
			end := bytes.Index(buf[:have], []byte("\r\n\r\n"))
			if end < 0 {
				break
			}
			keep := bytes.Contains(bytes.ToLower(buf[:end]), []byte("keep-alive"))
			have = copy(buf, buf[end+4:have])
			if !keep {
				c.Write(responderClose)
				return
			}
			if _, err := c.Write(responderKeep); err != nil {
				return
			}
		}
		if err != nil || have > 8<<10 {
			return
		}
	}
}
