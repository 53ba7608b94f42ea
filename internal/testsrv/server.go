// Package testsrv holds the loopback servers the golden and differential
// tests run ab and gab against: Py (a Go port of the Python harness server
// that produced the ab goldens), Nginx (static responses laid out exactly as
// nginx 1.22.1 lays them out) and NginxTLS.
//
// Every server listens on 127.0.0.1 port 0, keeps its own request counter and
// stops, with all its connections and sleeping handlers, when Close is called.
package testsrv

import (
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"
)

// base is the accept loop and connection bookkeeping shared by the servers.
type base struct {
	ln     net.Listener
	quit   chan struct{}
	handle func(net.Conn)

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
	once   sync.Once
}

func (b *base) start(tlsConfig *tls.Config, handle func(net.Conn)) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	b.ln = ln
	b.quit = make(chan struct{})
	b.conns = make(map[net.Conn]struct{})
	b.handle = handle
	b.wg.Add(1)
	go b.acceptLoop()
	return nil
}

func (b *base) acceptLoop() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		if !b.track(c) {
			c.Close()
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer b.untrack(c)
			b.handle(c)
		}()
	}
}

func (b *base) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.conns[c] = struct{}{}
	return true
}

func (b *base) untrack(c net.Conn) {
	b.mu.Lock()
	delete(b.conns, c)
	b.mu.Unlock()
	closeConn(c)
}

// closeConn mirrors Python socketserver's shutdown_request: FIN first, then close.
func closeConn(c net.Conn) {
	switch cc := c.(type) {
	case *net.TCPConn:
		cc.CloseWrite()
	case *tls.Conn:
		cc.CloseWrite()
	}
	c.Close()
}

// Close stops accepting, ends every connection and sleeping handler, and
// waits for all of them to return.
func (b *base) Close() error {
	b.once.Do(func() {
		b.mu.Lock()
		b.closed = true
		for c := range b.conns {
			c.Close()
		}
		b.mu.Unlock()
		close(b.quit)
		b.ln.Close()
	})
	b.wg.Wait()
	return nil
}

// sleep waits for d and reports false if the server was closed meanwhile.
func (b *base) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-b.quit:
		return false
	}
}

// Addr is the listening address, "127.0.0.1:port".
func (b *base) Addr() string { return b.ln.Addr().String() }

// Port is the listening port.
func (b *base) Port() int { return b.ln.Addr().(*net.TCPAddr).Port }

// HostPort is "127.0.0.1:port" (the same as Addr, named for URL building).
func (b *base) HostPort() string { return "127.0.0.1:" + strconv.Itoa(b.Port()) }
