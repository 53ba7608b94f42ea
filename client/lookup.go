package client

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// lookupTimer wraps the resolver to time name resolution (the extended
// report's DNS figure). Literal addresses never reach it.
type lookupTimer struct {
	inner Resolver
	total atomic.Int64 // ns
	count atomic.Int64
}

func (l *lookupTimer) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	start := time.Now()
	ips, err := l.inner.LookupIPAddr(ctx, host)
	l.total.Add(int64(time.Since(start)))
	l.count.Add(1)
	return ips, err
}

// timeLookups installs a lookupTimer in cfg when extra figures are wanted.
func timeLookups(cfg *Config) *lookupTimer {
	if !cfg.Extended && cfg.Rate <= 0 {
		return nil
	}
	inner := cfg.Resolver
	if inner == nil {
		inner = net.DefaultResolver
	}
	l := &lookupTimer{inner: inner}
	cfg.Resolver = l
	return l
}
