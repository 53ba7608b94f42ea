package client

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gab/internal/testtool"
)

// A TLS 1.3 server may send any number of session tickets after the
// handshake (OpenSSL's num_tickets); ab reads past them all. crypto/tls gives
// up after 16 post-handshake messages in a row ("too many non-advancing
// records"), a limit of its own that gab cannot lift: such a connection fails
// as a receive failure counted whatever -r says, and the run goes on with a
// new connection, as ab's run goes on after an SSL_read failure. crypto/tls
// bounds what a ticket flood costs (the connection ends at the 17th), so
// memory stays flat.

// ticketServerPy is an HTTP/1.1 and h2 (by ALPN) server over TLS that sends
// argv[3] session tickets after each handshake. It prints its port, answers
// each HTTP/1.1 request with "ok" and a close (close_notify first) and each h2
// request with a 200 and "ok", and exits when its stdin closes (the test, or
// its process, has ended) or after 60 s without a new connection.
const ticketServerPy = `
import os, socket, ssl, sys, threading
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
ctx.num_tickets = int(sys.argv[3])
ctx.set_alpn_protocols(["h2", "http/1.1"])
ls = socket.create_server(("127.0.0.1", 0))
ls.settimeout(60)
print(ls.getsockname()[1], flush=True)
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()

def h2(c):
    buf = b""
    def need(n):
        nonlocal buf
        while len(buf) < n:
            d = c.recv(65536)
            if not d:
                raise EOFError
            buf += d
    need(24)
    buf = buf[24:]
    c.sendall(b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
    while True:
        need(9)
        size, typ, flags = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
        sid = buf[5:9]
        need(9 + size)
        buf = buf[9 + size:]
        if typ == 4 and not flags & 1:
            c.sendall(b"\x00\x00\x00\x04\x01\x00\x00\x00\x00")
        elif typ == 1:
            c.sendall(b"\x00\x00\x01\x01\x04" + sid + b"\x88" + b"\x00\x00\x02\x00\x01" + sid + b"ok")

def serve(raw):
    try:
        raw.settimeout(30)
        with ctx.wrap_socket(raw, server_side=True) as c:
            if c.selected_alpn_protocol() == "h2":
                h2(c)
                return
            req = b""
            while b"\r\n\r\n" not in req:
                d = c.recv(4096)
                if not d:
                    return
                req += d
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            c.unwrap()
    except Exception:
        pass

while True:
    try:
        raw, _ = ls.accept()
    except socket.timeout:
        os._exit(0)
    threading.Thread(target=serve, args=(raw,), daemon=True).start()
`

// startTicketServer runs ticketServerPy sending tickets tickets and returns
// its port; python3 must be installed under CI.
func startTicketServer(t *testing.T, tickets int) int {
	t.Helper()
	python := testtool.Need(t, "python3", "python3")
	dir := t.TempDir()
	cert, key, _ := selfSigned(t)
	script := filepath.Join(dir, "tickets.py")
	if err := os.WriteFile(script, []byte(ticketServerPy), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, script, writePEM(t, dir, "cert.pem", cert), writePEM(t, dir, "key.pem", key), strconv.Itoa(tickets))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close() // the server exits
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	port, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("the ticket server did not start: %q %v", line, err)
	}
	return port
}

// 16 tickets are read past; 17 end each connection before its answer: every
// request fails, and the run completes, with its report, on
// both paths, over HTTP/1 and h2.
func TestTLSSessionTickets(t *testing.T) {
	for _, tickets := range []int{16, 17} {
		port := startTicketServer(t, tickets)
		onBothProtocols(t, fmt.Sprintf("%d tickets", tickets), func(t *testing.T, h2 bool) {
			cfg := hostileConfig(t, port, 6, 2, h2)
			rn, err := newRunner(t, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := rn.Run(ctx)
			if err != nil {
				t.Fatalf("Run: %v, want the report", err)
			}
			if tickets <= 16 {
				wantCounts(t, res, 6, Failures{})
			} else {
				// The connection ends in its reader, at the 17th
				// ticket; a request whose HEADERS were written first
				// is a receive failure. One whose write came after
				// that end did not leave: it is sent again on a new
				// connection and, when that loses the same race
				// every time, ends as a write error (ab's class for a
				// request that could not be sent) or as refused too
				// often. Which one is the scheduler's choice; that
				// every request ends in one of them, none answered,
				// is not.
				f := res.Failed
				if res.Complete != 6 || f.Connect != 0 || f.Length != 0 ||
					f.Receive+f.Exceptions+res.WriteErrors != 6 || f.Total != f.Receive+f.Exceptions {
					t.Errorf("Complete %d, Failed %+v, write errors %d: want 6 requests, each a receive failure, a write error or an exception (first errors %v)",
						res.Complete, f, res.WriteErrors, res.FirstError)
				}
				if res.StatusCounts[200] != 0 {
					t.Errorf("%d answers, want none: no answer follows the 17th ticket", res.StatusCounts[200])
				}
			}
			if res.TLS == nil || res.TLS.Protocol != "TLSv1.3" {
				t.Errorf("TLS %+v, want TLS 1.3", res.TLS)
			}
		})
	}
}
