package client

import (
	"context"
	"errors"
)

// multiOrigin runs a URL list that names several origins: one transport per
// origin, each with its share of the -c connections (so that a connection
// keeps to one origin on every protocol), sharing the run's tickets: -n
// counts the requests of all of them.
type multiOrigin struct {
	subs  []transport
	first []int // first[i]: the run's slot of subs[i]'s slot 0 (set by slots)
}

// originConfig is cfg for origin oi of its URL list, with conns connections.
func originConfig(cfg *Config, oi, conns int) *Config {
	sub := *cfg
	o := cfg.URLs.Origins[oi]
	sub.Target = o.Target
	sub.TLS.ServerName = o.ServerName
	sub.Spec.Host = o.Target.HostField() // a -H Host: line still wins when the request is built
	sub.Spec.Target = o.Target.Path
	sub.Request, sub.HeadLen = BuildRequest(sub.Spec)
	sub.Concurrency = conns
	sub.urlOrigin, sub.perOrigin = oi, true
	return &sub
}

func newMultiOrigin(cfg *Config) (transport, error) {
	n := len(cfg.URLs.Origins)
	if cfg.Concurrency < n {
		return nil, errors.New("--urls names more origins than -c connections")
	}
	m := &multiOrigin{}
	for oi := 0; oi < n; oi++ {
		conns := cfg.Concurrency / n
		if oi < cfg.Concurrency%n {
			conns++
		}
		sub := originConfig(cfg, oi, conns)
		tr, err := newTransport(sub)
		if err != nil {
			return nil, err
		}
		m.subs = append(m.subs, tr)
	}
	return m, nil
}

func (m *multiOrigin) prepare(ctx context.Context, r *run) error {
	for _, s := range m.subs {
		if err := s.prepare(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

func (m *multiOrigin) slots() int {
	m.first = m.first[:0]
	n := 0
	for _, s := range m.subs {
		m.first = append(m.first, n)
		n += s.slots()
	}
	return n
}

func (m *multiOrigin) work(r *run, slot int, t *tally) {
	i := len(m.first) - 1
	for i > 0 && m.first[i] > slot {
		i--
	}
	m.subs[i].work(r, slot-m.first[i], t)
}
