package client

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The HTTP/1 behaviours that matter over TLS, on both paths and with TLS 1.3
// and TLS 1.2: every figure is the plain-HTTP one (ab counts the plaintext
// bytes of the responses, not the records that carried them).

// tlsRun is the run of one behaviour: n requests at concurrency c against a
// TLS fault server, with the protocol version o.Protocol.
func tlsRun(t *testing.T, o TLSOptions, script func(fc *faultConn), n, c int, ka bool, tweak func(*Config)) (*Result, *faultServer) {
	t.Helper()
	srv := newTLSFaultServer(t, nil, script)
	cfg := tlsConfigFor(srv.port(), n, ka, o)
	cfg.Concurrency = c
	if tweak != nil {
		tweak(&cfg)
	}
	res, err := h1Run(t, cfg)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.TLS == nil || res.TLS.Protocol != "TLSv"+strings.TrimPrefix(o.Protocol, "TLS") {
		t.Errorf("TLS info %+v, want %s", res.TLS, o.Protocol)
	}
	return res, srv
}

// closeWithoutNotify ends the connection with a TCP FIN and no close_notify.
func closeWithoutNotify(fc *faultConn) { _ = fc.Conn.(*tls.Conn).NetConn().Close() }

// answerThenCloseNotify answers one request with keep-alive and closes the
// connection at once (close_notify, then FIN), before the next request.
func answerThenCloseNotify(fc *faultConn) {
	if _, ok := fc.readRequest(); ok {
		fc.write(respond100(true))
		_ = fc.Conn.Close()
	}
}

func TestTLSHTTP1Behaviours(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	resp := respond100(false)
	kaResp := respond100(true)
	postBody := bytes.Repeat([]byte("0123456789abcdef"), 100000/16) // several TLS records
	tests := []struct {
		name string
		run  func(t *testing.T, o TLSOptions)
	}{
		{"close", func(t *testing.T, o TLSOptions) {
			var sent int
			res, srv := tlsRun(t, o, answerOnce(resp), 10, 2, false, func(c *Config) { sent = len(c.Request) })
			wantCounts(t, res, 10, Failures{})
			if res.TotalRead != int64(10*len(resp)) || res.BodyRead != 1000 || res.TotalSent != int64(10*sent) {
				t.Errorf("read %d body %d sent %d, want %d 1000 %d", res.TotalRead, res.BodyRead, res.TotalSent, 10*len(resp), 10*sent)
			}
			if res.DocLength != 100 || res.ServerSoftware != "fault/1.0" || res.KeepAlive != 0 || res.StatusCounts[200] != 10 || srv.accepted.Load() != 10 {
				t.Errorf("doclen %d server %q keepalive %d statuses %v conns %d", res.DocLength, res.ServerSoftware, res.KeepAlive, res.StatusCounts, srv.accepted.Load())
			}
		}},
		{"keep-alive", func(t *testing.T, o TLSOptions) {
			res, srv := tlsRun(t, o, answerEach(kaResp), 20, 2, true, nil)
			wantCounts(t, res, 20, Failures{})
			if res.KeepAlive != 20 || res.TotalRead != int64(20*len(kaResp)) || res.BodyRead != 2000 || srv.accepted.Load() > 2 {
				t.Errorf("keepalive %d read %d body %d conns %d", res.KeepAlive, res.TotalRead, res.BodyRead, srv.accepted.Load())
			}
		}},
		{"HEAD", func(t *testing.T, o TLSOptions) {
			head := "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: keep-alive\r\n\r\n"
			res, srv := tlsRun(t, o, answerEach(head), 5, 1, true, func(c *Config) {
				c.Request = h1Request("HEAD", "/x", c.Target.Port, true)
				c.HeadLen = len(c.Request)
				c.Spec.Method, c.Spec.HeadMethod = "HEAD", true
			})
			wantCounts(t, res, 5, Failures{})
			if res.DocLength != 0 || res.KeepAlive != 5 || res.TotalRead != int64(5*len(head)) || srv.accepted.Load() != 1 {
				t.Errorf("doclen %d keepalive %d read %d conns %d", res.DocLength, res.KeepAlive, res.TotalRead, srv.accepted.Load())
			}
		}},
		{"chunked keep-alive", func(t *testing.T, o TLSOptions) {
			res, _ := tlsRun(t, o, answerEach(chunkedResponse), 8, 2, true, nil)
			wantCounts(t, res, 8, Failures{})
			if res.DocLength != 100 || res.BodyRead != 800 || res.TotalRead != int64(8*len(chunkedResponse)) || res.KeepAlive != 8 {
				t.Errorf("doclen %d body %d read %d keepalive %d", res.DocLength, res.BodyRead, res.TotalRead, res.KeepAlive)
			}
		}},
		{"chunked close", func(t *testing.T, o TLSOptions) {
			res, _ := tlsRun(t, o, answerOnce(chunkedResponse), 8, 2, false, nil)
			wantCounts(t, res, 8, Failures{})
			if res.DocLength != 100 || res.BodyRead != 800 || res.TotalRead != int64(8*len(chunkedResponse)) || res.KeepAlive != 0 {
				t.Errorf("doclen %d body %d read %d keepalive %d", res.DocLength, res.BodyRead, res.TotalRead, res.KeepAlive)
			}
		}},
		// The body ends when the server closes: with close_notify (the fault
		// server's tls.Conn.Close), and with a bare FIN.
		{"until close_notify", func(t *testing.T, o TLSOptions) {
			r := "HTTP/1.0 200 OK\r\n\r\n" + strings.Repeat("u", 100)
			res, _ := tlsRun(t, o, answerOnce(r), 6, 2, false, nil)
			wantCounts(t, res, 6, Failures{})
			if res.DocLength != 100 || res.BodyRead != 600 || res.TotalRead != int64(6*len(r)) {
				t.Errorf("doclen %d body %d read %d", res.DocLength, res.BodyRead, res.TotalRead)
			}
		}},
		{"until FIN without close_notify", func(t *testing.T, o TLSOptions) {
			r := "HTTP/1.0 200 OK\r\n\r\n" + strings.Repeat("u", 100)
			res, _ := tlsRun(t, o, func(fc *faultConn) {
				if _, ok := fc.readRequest(); ok {
					fc.write(r)
					closeWithoutNotify(fc)
				}
			}, 6, 2, false, nil)
			wantCounts(t, res, 6, Failures{})
			if res.DocLength != 100 || res.BodyRead != 600 || res.TotalRead != int64(6*len(r)) {
				t.Errorf("doclen %d body %d read %d", res.DocLength, res.BodyRead, res.TotalRead)
			}
		}},
		// A kept connection closed when the next request arrives: the request
		// is sent again on a new connection, exactly as on plain HTTP.
		{"kept connection closed, request retried", func(t *testing.T, o TLSOptions) {
			res, srv := tlsRun(t, o, oneAnswerThenClose, 10, 1, true, nil)
			wantCounts(t, res, 10, Failures{})
			if res.Retries != 9 || res.KeepAlive != 10 || srv.accepted.Load() != 10 {
				t.Errorf("retries %d keepalive %d conns %d; want 9 10 10", res.Retries, res.KeepAlive, srv.accepted.Load())
			}
		}},
		{"kept connection dropped without close_notify, request retried", func(t *testing.T, o TLSOptions) {
			res, srv := tlsRun(t, o, func(fc *faultConn) {
				if _, ok := fc.readRequest(); !ok {
					return
				}
				fc.write(kaResp)
				if _, ok := fc.readRequest(); ok {
					closeWithoutNotify(fc)
				}
			}, 10, 1, true, nil)
			wantCounts(t, res, 10, Failures{})
			if res.Retries != 9 || res.KeepAlive != 10 || srv.accepted.Load() != 10 {
				t.Errorf("retries %d keepalive %d conns %d; want 9 10 10", res.Retries, res.KeepAlive, srv.accepted.Load())
			}
		}},
		// close_notify right after a kept response: the next request goes on
		// a new connection (at once, or after a retry), never counted as failed.
		{"close_notify after a kept response", func(t *testing.T, o TLSOptions) {
			res, srv := tlsRun(t, o, answerThenCloseNotify, 10, 1, true, nil)
			wantCounts(t, res, 10, Failures{})
			if res.KeepAlive != 10 || srv.accepted.Load() != 10 || srv.requests.Load() != 10 || res.Retries > 9 {
				t.Errorf("keepalive %d conns %d server read %d requests (retries %d)", res.KeepAlive, srv.accepted.Load(), srv.requests.Load(), res.Retries)
			}
		}},
		{"1 MiB with length, keep-alive", func(t *testing.T, o TLSOptions) {
			r := "HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\nConnection: keep-alive\r\n\r\n" + big
			res, _ := tlsRun(t, o, answerEach(r), 4, 2, true, nil)
			wantCounts(t, res, 4, Failures{})
			if res.DocLength != 1<<20 || res.BodyRead != 4<<20 || res.TotalRead != int64(4*len(r)) || res.KeepAlive != 4 {
				t.Errorf("doclen %d body %d read %d keepalive %d", res.DocLength, res.BodyRead, res.TotalRead, res.KeepAlive)
			}
		}},
		{"1 MiB until close", func(t *testing.T, o TLSOptions) {
			r := "HTTP/1.0 200 OK\r\n\r\n" + big
			res, _ := tlsRun(t, o, answerOnce(r), 4, 2, false, nil)
			wantCounts(t, res, 4, Failures{})
			if res.DocLength != 1<<20 || res.BodyRead != 4<<20 || res.TotalRead != int64(4*len(r)) {
				t.Errorf("doclen %d body %d read %d", res.DocLength, res.BodyRead, res.TotalRead)
			}
		}},
		{"1 MiB chunked", func(t *testing.T, o TLSOptions) {
			r := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n" + big + "\r\n0\r\n\r\n"
			res, _ := tlsRun(t, o, answerOnce(r), 4, 2, false, nil)
			wantCounts(t, res, 4, Failures{})
			if res.DocLength != 1<<20 || res.BodyRead != 4<<20 || res.TotalRead != int64(4*len(r)) {
				t.Errorf("doclen %d body %d read %d", res.DocLength, res.BodyRead, res.TotalRead)
			}
		}},
		// -p: a 100 000-byte body, many records, arrives intact.
		{"POST body", func(t *testing.T, o TLSOptions) {
			var intact atomic.Int64
			var sent int
			res, srv := tlsRun(t, o, func(fc *faultConn) {
				for {
					req, ok := fc.readRequest()
					if !ok {
						return
					}
					if bytes.HasPrefix(req, []byte("POST /x HTTP/1.0\r\n")) && bytes.HasSuffix(req, []byte("\r\n\r\n"+string(postBody))) {
						intact.Add(1)
					}
					fc.write(kaResp)
				}
			}, 6, 2, true, func(c *Config) {
				head := fmt.Sprintf("POST /x HTTP/1.0\r\nConnection: Keep-Alive\r\nContent-length: %d\r\nContent-type: text/plain\r\nHost: 127.0.0.1\r\n\r\n", len(postBody))
				c.Request = append([]byte(head), postBody...)
				c.HeadLen = len(head)
				c.Spec = RequestSpec{Method: "POST", HasBody: true, Body: postBody, KeepAlive: true}
				sent = len(c.Request)
			})
			wantCounts(t, res, 6, Failures{})
			if intact.Load() != 6 || srv.requests.Load() != 6 || res.TotalSent != int64(6*sent) || res.KeepAlive != 6 {
				t.Errorf("server read %d requests, %d intact; sent %d bytes, want %d; keepalive %d",
					srv.requests.Load(), intact.Load(), res.TotalSent, 6*sent, res.KeepAlive)
			}
		}},
		// -v 2 reports each handshake once: one per connection.
		{"-v 2 handshake events", func(t *testing.T, o TLSOptions) {
			for _, ka := range []bool{false, true} {
				ev := &h1Events{}
				script := answerOnce(resp)
				if ka {
					script = answerEach(kaResp)
				}
				res, srv := tlsRun(t, o, script, 4, 1, ka, func(c *Config) { c.Events, c.Verbosity = ev, 2 })
				wantCounts(t, res, 4, Failures{})
				conns := srv.accepted.Load()
				if want := map[bool]int64{false: 4, true: 1}[ka]; conns != want || ev.tlsOK.Load() != conns {
					t.Errorf("keepalive %v: %d handshake events for %d connections, want %d", ka, ev.tlsOK.Load(), conns, want)
				}
				ev.mu.Lock()
				if got := strings.Count(strings.Join(ev.heads, ""), "HTTP/1.1 200 OK\r\n"); got != 4 {
					t.Errorf("keepalive %v: header events %q", ka, ev.heads)
				}
				ev.mu.Unlock()
			}
		}},
	}
	for _, proto := range []string{"TLS1.3", "TLS1.2"} {
		t.Run(proto, func(t *testing.T) {
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					h1TLSPaths(t, func(t *testing.T) {
						checkGoroutines(t)
						tc.run(t, TLSOptions{Protocol: proto})
					})
				})
			}
		})
	}
}

// The response arrives one byte per TLS record (the server writes each byte
// with its own tls.Conn.Write): thousands of records per run, the result exact.
func TestTLSOneByteRecords(t *testing.T) {
	for _, ka := range []bool{true, false} {
		conn := map[bool]string{true: "keep-alive", false: "close"}[ka]
		r := "HTTP/1.1 200 OK\r\nServer: trickle\r\nContent-Length: 100\r\nConnection: " + conn + "\r\n\r\n" + strings.Repeat("r", 100)
		perByte := func(fc *faultConn) {
			for {
				if _, ok := fc.readRequest(); !ok {
					return
				}
				fc.inChunks(r, 1)
				if !ka {
					return
				}
			}
		}
		t.Run(fmt.Sprint("keepalive=", ka), func(t *testing.T) {
			h1TLSPaths(t, func(t *testing.T) {
				checkGoroutines(t)
				checkEngineLeaks(t)
				begin := time.Now()
				res, srv := tlsRun(t, TLSOptions{Protocol: "TLS1.3"}, perByte, 6, 2, ka, nil)
				wantCounts(t, res, 6, Failures{})
				want := 0
				if ka {
					want = 6
				}
				if res.DocLength != 100 || res.TotalRead != int64(6*len(r)) || res.ServerSoftware != "trickle" || res.KeepAlive != want {
					t.Errorf("doclen %d read %d server %q keepalive %d", res.DocLength, res.TotalRead, res.ServerSoftware, res.KeepAlive)
				}
				if ka && srv.accepted.Load() > 2 || !ka && srv.accepted.Load() != 6 {
					t.Errorf("%d connections", srv.accepted.Load())
				}
				if took := time.Since(begin); took > 5*time.Second {
					t.Errorf("took %v", took)
				}
			})
		})
	}
}

// cryptoTLSReadAllocs is what crypto/tls allocates per response read on a
// kept connection: (*tls.Conn).Read takes new bytes from the network through
// readFromUntil, whose &atLeastReader{} escapes to the heap (Go 1.26), once
// per read that finds the record buffer short, i.e. once per response that
// arrives in one read. No engine can avoid it without a fork of crypto/tls.
const cryptoTLSReadAllocs = 1

// Keep-alive requests on a TLS connection allocate nothing of gab's own: 4000
// more requests cost no more than crypto/tls's allocation per response read,
// give or take a small constant (the handshakes of each run are the same
// whatever the number of requests), and none in gab's code (checked under
// -race too). The server allocates nothing per request.
func TestTLSKeepAliveLoopDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few thousand loopback requests")
	}
	srv := newBenchServerTLS(t, true, tlsServerConfig(t))
	h1TLSPaths(t, func(t *testing.T) { keepAliveLoopAllocations(t, srv, true, cryptoTLSReadAllocs) })
}
