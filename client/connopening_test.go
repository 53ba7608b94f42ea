package client

import (
	"testing"
	"time"
)

// TestConnsInTime is ConnOpening's rule: W = max(100 ms, a tenth of the
// run); the connections asked for by min(W, run − W) (the first at the start,
// the others once the first head arrived, or along --ramp-up), and those
// established within W after that.
func TestConnsInTime(t *testing.T) {
	ms := func(v ...int) []int64 {
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x) * int64(time.Millisecond)
		}
		return out
	}
	const s = int64(time.Second)
	m := int64(time.Millisecond)
	serial := ms(50, 100, 150, 200, 250, 300, 350, 400, 450, 500) // one every 50 ms
	for _, c := range []struct {
		name                string
		opened              []int64
		total               int64
		conns               int
		rampAt, rampUp, end int64
		asked, inTime       int
		window              time.Duration
	}{
		{"prompt", ms(1, 2, 2, 2, 3, 3, 3, 3, 4, 4), 10, 10, 2 * m, 0, 2 * s, 10, 10, 200 * time.Millisecond},
		{"one every 50 ms", serial, 10, 10, 51 * m, 0, 2 * s, 10, 8, 200 * time.Millisecond},
		{"short run: W is 100 ms", serial, 10, 10, 51 * m, 0, 500 * m, 10, 4, 100 * time.Millisecond},
		{"long run: W is a tenth", serial, 10, 10, 51 * m, 0, 10 * s, 10, 10, time.Second},
		{"no head yet: one asked", ms(50), 1, 10, 0, 0, 2 * s, 1, 1, 200 * time.Millisecond},
		{"first head late: one asked, late", ms(450), 1, 10, 451 * m, 0, 2 * s, 1, 0, 200 * time.Millisecond},
		{"slots left without a request", ms(1, 1, 2), 3, 10, 1 * m, 0, 2 * s, 3, 3, 200 * time.Millisecond},
		{"reconnects count", ms(1, 1, 1, 1), 5000, 4, 1 * m, 0, 2 * s, 4, 4, 200 * time.Millisecond},
		{"ramp-up: slots 0 to 3 by 300 ms", ms(1, 101, 201, 301, 401), 10, 10, 0, s, 3 * s, 4, 4, 300 * time.Millisecond},
		{"ramp-up, slow", ms(1, 700, 800, 900), 10, 10, 0, s, 3 * s, 4, 1, 300 * time.Millisecond},
		{"under W: nothing judged", ms(1), 1, 1, 0, 0, 90 * m, 0, 0, 100 * time.Millisecond},
		{"no connection", nil, 0, 10, 1 * m, 0, 2 * s, 0, 0, 200 * time.Millisecond},
	} {
		got := connsInTime(c.opened, c.total, c.conns, c.rampAt, c.rampUp, c.end)
		if got.Asked != c.asked || got.Opened != c.inTime || got.Window != c.window {
			t.Errorf("%s: %+v, want %d asked, %d opened, W %v", c.name, got, c.asked, c.inTime, c.window)
		}
	}
}

// TestConnOpeningPrompt: connections to a server that accepts at once open
// within the window on the event loops and on the portable path (the figure
// counts both): every one of -c 20 asked for is opened in time. Without
// Config.Extended there is no figure.
func TestConnOpeningPrompt(t *testing.T) {
	srv := newFaultServer(t, keepAliveCloseAfter(1<<30))
	for _, portable := range []bool{false, true} {
		cfg := h1Config(srv.port(), 1<<30, 20, true)
		cfg.TimeLimit, cfg.SampleLimit, cfg.Extended, cfg.Portable = time.Second, 1000, true, portable
		res, err := h1Run(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if o := res.Opening; o == nil || o.Asked != 20 || o.Opened != 20 {
			t.Errorf("portable %v: %+v, want 20 of 20 opened in time", portable, o)
		}
	}
	cfg := h1Config(srv.port(), 100, 20, true)
	if res, err := h1Run(t, cfg); err != nil || res.Opening != nil {
		t.Errorf("without Extended: %+v %v", res.Opening, err)
	}
}

// TestConnOpeningNotInRateMode: a --rate schedule asks for connections as it
// needs them, not at once: no figure.
func TestConnOpeningNotInRateMode(t *testing.T) {
	srv := newFaultServer(t, keepAliveCloseAfter(1<<30))
	cfg := h1Config(srv.port(), 5, 5, true)
	cfg.Extended, cfg.Rate = true, 50
	res, err := h1Run(t, cfg)
	if err != nil || res.Opening != nil {
		t.Errorf("rate mode: %+v %v", res.Opening, err)
	}
}
