package sweep

import (
	"strings"
	"testing"
	"time"
)

// TestOptionsSettings: the options as given become the sweep's settings,
// each refusal naming its option; the defaults (-c 1, interleaved, pooled)
// hold without them.
func TestOptionsSettings(t *testing.T) {
	base := Options{Repeat: "3", CI: "5%", MaxCVPercent: 5, Order: OrderInterleaved, Deviation: DeviationPooled, Targets: 1}
	s, err := base.Settings()
	if err != nil || s.Repeat != 3 || s.CI != 0.05 || s.MaxCV != 0.05 || len(s.Concurrency) != 1 || s.Concurrency[0] != 1 || s.Seed != 0 {
		t.Fatalf("%+v %v", s, err)
	}
	o := base
	o.Concurrency, o.Sizes, o.Order, o.Param, o.Before = "1,8", "1k,10k", OrderRandom, "w=1,2", "echo {w}"
	if s, err := o.Settings(); err != nil || len(s.Concurrency) != 2 || len(s.Sizes) != 2 || s.SizeOption != "--sizes" || s.Seed == 0 || s.Param == nil {
		t.Errorf("lists: %+v %v", s, err)
	}
	for _, c := range []struct {
		set  func(o *Options)
		want string
	}{
		{func(o *Options) { o.Pause = 2 * time.Hour }, "--pause must be at most"},
		{func(o *Options) { o.MaxCVPercent = 1001 }, "--max-cv must be"},
		{func(o *Options) { o.Order = "sorted" }, "--order must be"},
		{func(o *Options) { o.Seed = 7 }, "--seed is --order random's seed"},
		{func(o *Options) { o.Deviation = "mad" }, "--deviation must be"},
		{func(o *Options) { o.RequestsPerConn, o.NOrT = 10, true }, "--requests-per-conn sets each point's -n"},
		{func(o *Options) { o.Param = "w=1,2" }, "--param w needs --before"},
		{func(o *Options) { o.Param, o.Before = "w=1,2", "true" }, "--before's command holds no {w}"},
		{func(o *Options) { o.Sizes, o.PostSizes = "1k", "1k" }, "--sizes and --post-sizes exclude each other"},
		{func(o *Options) { o.Demo = true }, "--demo sweeps the built-in server: no TARGET"},
		{func(o *Options) { o.Demo, o.Targets, o.ServerPIDs = true, 0, 1 }, "--server-pid cannot be used with --demo"},
		{func(o *Options) { o.Concurrency = "0" }, "-c: 0 is out of range"},
	} {
		o := base
		c.set(&o)
		if _, err := o.Settings(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}
