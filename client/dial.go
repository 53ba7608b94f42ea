package client

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"syscall"
)

// dialer holds what ab resolves once per run: the target's (or proxy's)
// addresses and the -B local address. HTTP/1 and HTTP/2 share it.
type dialer struct {
	addrs   []net.IPAddr
	port    int
	current atomic.Int32 // index into addrs; moves on while no connection has worked (ab's fallback)
	local   *net.TCPAddr
	dial    DialFunc
	bufSize int
	// worked: a connection has been established, so ab's address fallback is over.
	worked atomic.Bool
}

// resolve looks up the host the way ab does, once, after the banner. With -B
// the local address is resolved first and the target in its family.
func resolve(ctx context.Context, cfg *Config) (*dialer, error) {
	res := cfg.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	host, port := cfg.Target.Host, cfg.Target.Port
	if cfg.Proxy || cfg.ProxyHost != "" {
		host, port = cfg.ProxyHost, cfg.ProxyPort
	}
	d := &dialer{port: port, dial: cfg.Dial, bufSize: cfg.SocketBuffer}
	family := 0 // 0 any, 4 or 6
	if cfg.LocalAddr != "" {
		ips, err := lookup(ctx, res, cfg.LocalAddr)
		if err != nil {
			return nil, resolveError(cfg.LocalAddr, err)
		}
		d.local = &net.TCPAddr{IP: ips[0].IP, Zone: ips[0].Zone}
		family = 6
		if ips[0].IP.To4() != nil {
			family = 4
		}
	}
	ips, err := lookup(ctx, res, host)
	if err != nil {
		return nil, resolveError(host, err)
	}
	for _, ip := range ips {
		is4 := ip.IP.To4() != nil
		if family == 0 || (family == 4) == is4 {
			d.addrs = append(d.addrs, ip)
		}
	}
	if len(d.addrs) == 0 {
		return nil, resolveError(host, &net.DNSError{Err: "no address in the family of -B", Name: host, IsNotFound: true})
	}
	if d.dial == nil {
		// KeepAlive -1: no SO_KEEPALIVE/TCP_KEEPIDLE/INTVL/CNT setsockopt calls on
		// every connection (ab sets none; they are 4 of ~17 syscalls per request).
		nd := &net.Dialer{LocalAddr: d.local, KeepAlive: -1}
		if d.bufSize != 0 {
			size := d.bufSize
			nd.Control = func(_, _ string, c syscall.RawConn) error {
				var serr error
				err := c.Control(func(fd uintptr) { serr = setBuffers(fd, size) })
				if err != nil {
					return err
				}
				return serr
			}
		}
		d.dial = nd.DialContext
	}
	return d, nil
}

// lookup resolves host; literal addresses are not sent to the resolver.
func lookup(ctx context.Context, res Resolver, host string) ([]net.IPAddr, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IPAddr{{IP: ip}}, nil
	}
	ips, err := res.LookupIPAddr(ctx, host)
	if err == nil && len(ips) == 0 {
		err = &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	if err != nil {
		return nil, err
	}
	// getaddrinfo lists IPv6 first for names such as localhost; keep that order.
	out := make([]net.IPAddr, 0, len(ips))
	for _, ip := range ips {
		if ip.IP.To4() == nil {
			out = append(out, ip)
		}
	}
	for _, ip := range ips {
		if ip.IP.To4() != nil {
			out = append(out, ip)
		}
	}
	return out, nil
}

// address is the host:port to connect to now.
func (d *dialer) address() string {
	ip := d.addrs[int(d.current.Load())%len(d.addrs)]
	h := ip.IP.String()
	if ip.Zone != "" {
		h += "%" + ip.Zone
	}
	return net.JoinHostPort(h, strconv.Itoa(d.port))
}

// connect opens a TCP connection, moving on to the next resolved address
// after a failure as fallback allows.
func (d *dialer) connect(ctx context.Context) (net.Conn, error) {
	for {
		idx := d.current.Load()
		c, err := d.dial(ctx, "tcp", d.address())
		if err == nil {
			return c, nil
		}
		if d.fallback(idx, ctx.Err() != nil) {
			continue
		}
		return nil, err
	}
}

// fallback moves on from address idx, which failed, to the next resolved
// one while no connection has ever worked and the run goes on (ab's ::1 →
// 127.0.0.1 for localhost); false when that is over or there is no next.
func (d *dialer) fallback(idx int32, stopping bool) bool {
	if stopping || d.worked.Load() || int(idx)+1 >= len(d.addrs) {
		return false
	}
	d.current.CompareAndSwap(idx, idx+1)
	return true
}

// markWorked notes a TCP connection established at now (for r's
// ConnOpening; r nil: not counted) and ends the address fallback.
func (d *dialer) markWorked(r *run, now int64) {
	if r != nil {
		r.opens.established(now)
	}
	if !d.worked.Load() {
		d.worked.Store(true)
	}
}
