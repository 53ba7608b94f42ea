package client

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// TestConnectDelayOpensConnectionsApart: with ConnectDelay (-R) the k-th
// connection the server accepts arrives no earlier than k delays after the
// run began, although the first response head (ab's signal to open the
// others) arrives well before the first delay has passed.
func TestConnectDelayOpensConnectionsApart(t *testing.T) {
	const (
		delay = 400 * time.Millisecond
		serve = 250 * time.Millisecond // each answer's delay: slot 0 alone cannot take every ticket
	)
	var mu sync.Mutex
	var accepted []time.Time
	srv := newFaultServer(t, func(fc *faultConn) {
		mu.Lock()
		accepted = append(accepted, time.Now())
		mu.Unlock()
		for {
			if _, ok := fc.readRequest(); !ok {
				return
			}
			time.Sleep(serve)
			fc.write(respond100(true))
		}
	})
	defer srv.close()
	cfg := h1Config(srv.port(), 9, 3, true)
	cfg.ConnectDelay = delay
	before := time.Now()
	res, err := h1Run(t, cfg)
	if err != nil || res.Complete != 9 || res.Failed.Total != 0 {
		t.Fatalf("complete %d failed %d err %v, want 9 complete", res.Complete, res.Failed.Total, err)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(accepted, func(a, b time.Time) int { return a.Compare(b) })
	// Slot 0 takes at most 2 tickets before the first delay (answers take
	// 250 ms) and slots 0 and 1 at most 6 before the second: all 3 connect.
	if len(accepted) != 3 {
		t.Fatalf("%d connections, want 3", len(accepted))
	}
	for k, at := range accepted {
		if early := before.Add(time.Duration(k) * delay).Sub(at); early > 0 {
			t.Errorf("connection %d accepted %v before %d delays of %v had passed", k, early, k, delay)
		}
	}
}
