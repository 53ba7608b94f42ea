package shard

import (
	"errors"
	"fmt"

	"gab/client"
)

// Apply checks that the run cfg describes can be split into p's shards and
// makes cfg this shard's share of it: its part of -n (unless -n is uncapped,
// the count that stands for no limit), of -c and of --rate, and its own
// place in a --urls or --targets list (client.URLList.SetShare: its offset
// in turn, its own values at random) or a --replay log (every n-th line from
// line i, at its own time: client.ReplayShare), so that the shards together
// send the list or the log as one run does rather than each its first
// lines. json says the
// run writes its JSON document (--json FILE or --format json), which gab
// merge combines. An error is the one line to print after "gab: "; cfg is
// then unchanged. p.Count 0 (not a shard) changes nothing.
func (p Plan) Apply(cfg *client.Config, json bool, uncapped int) error {
	if p.Count == 0 {
		return nil
	}
	i, n := p.Index, p.Count
	switch {
	case !json:
		return errors.New("--shard needs --json FILE (or --format json): gab merge combines the shards' JSON documents")
	case len(cfg.RateSchedule) > 0:
		return errors.New("--shard cannot split a --rate schedule (a ramp or steps); give each machine its own --rate")
	case cfg.Concurrency < n:
		return fmt.Errorf("--shard %d/%d: -c %d is below the %d shards: every shard needs at least one connection", i, n, cfg.Concurrency, n)
	case cfg.URLs != nil && len(cfg.URLs.Origins) > cfg.Concurrency/n:
		// Every shard alike: the smallest share must hold a connection per
		// origin.
		m := len(cfg.URLs.Origins)
		return fmt.Errorf("--shard %d/%d: -c %d leaves a shard %d connections for the list's %d origins (scheme, host, port): each connection keeps to one origin, so -c must be at least %d",
			i, n, cfg.Concurrency, cfg.Concurrency/n, m, n*m)
	}
	if cfg.Requests != uncapped {
		cfg.Requests = Share(cfg.Requests, n, i)
	}
	cfg.Concurrency = Share(cfg.Concurrency, n, i)
	if cfg.Rate > 0 {
		cfg.Rate = RateShare(cfg.Rate, n, i)
	}
	if cfg.URLs != nil {
		cfg.URLs.SetShare(i, n)
		if cfg.URLs.Replay {
			cfg.Replay = client.ReplayShare(cfg.Replay, i, n)
		}
	}
	return nil
}
