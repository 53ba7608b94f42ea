package client

import (
	"context"
	"net"
	"testing"
	"time"
)

// fixedPhases answers every request with the same phase lengths (in µs):
// TCP 300, TLS 200, write 10, wait 1500, body 90 → total 2100; the k-th request
// ends k×100 ms after the start, so requests fall ten to a second.
func fixedPhases(r *run, k int64, sent int64) outcome {
	us := int64(time.Microsecond)
	start := k * int64(100*time.Millisecond)
	return outcome{
		Start:     start,
		TCPDone:   start + 300*us,
		Connect:   start + 500*us,
		WriteEnd:  start + 510*us,
		FirstByte: start + 2010*us,
		End:       start + 2100*us,
		Status:    200,
	}
}

func TestExtendedPhaseBreakdown(t *testing.T) {
	res := runScript(t, Config{Requests: 25, Concurrency: 3, Extended: true}, fixedPhases)
	if res.Extra == nil {
		t.Fatal("Result.Extra is nil with Extended set")
	}
	want := map[Phase]int64{PhaseTCP: 300, PhaseTLS: 200, PhaseWrite: 10, PhaseWait: 1500, PhaseBody: 90, PhaseTotal: 2100}
	for p, us := range want {
		d := &res.Extra.Phases[p]
		if d.Count != 25 || d.Min != us || d.Max != us || d.Mean() != float64(us) || d.SD() != 0 {
			t.Errorf("%v: count %d min %d max %d mean %v sd %v, want 25 × %d µs", p, d.Count, d.Min, d.Max, d.Mean(), d.SD(), us)
		}
		if got := d.Percentile(50); got != us {
			t.Errorf("%v: median %d, want %d", p, got, us)
		}
		if d.Hist.TotalCount() != 25 {
			t.Errorf("%v: histogram holds %d values", p, d.Hist.TotalCount())
		}
	}
	// Ends at k×100 ms + 2.1 ms: ten in each of seconds 0 and 1, five in second 2.
	got := res.Extra.PerSecond
	if len(got) != 3 || got[0] != 10 || got[1] != 10 || got[2] != 5 {
		t.Errorf("PerSecond = %v, want [10 10 5]", got)
	}
	if res.Extra.Rate != nil {
		t.Error("Rate result outside rate mode")
	}
	if res.Extra.DNS != 0 || res.Extra.DNSLookups != 0 {
		t.Errorf("DNS %v over %d lookups with nothing resolved", res.Extra.DNS, res.Extra.DNSLookups)
	}
}

func TestNoExtraByDefault(t *testing.T) {
	res := runScript(t, Config{Requests: 5, Concurrency: 1}, fixedPhases)
	if res.Extra != nil {
		t.Fatal("Result.Extra set although no extension asked for it")
	}
	if res.Complete != 5 {
		t.Fatalf("complete %d, want 5", res.Complete)
	}
}

type slowResolver struct{ delay time.Duration }

func (s slowResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	time.Sleep(s.delay)
	return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
}

func TestExtendedDNSTime(t *testing.T) {
	cfg := Config{Requests: 2, Concurrency: 1, Extended: true, Resolver: slowResolver{20 * time.Millisecond}}
	cfg.Target.Host, cfg.Target.Port = "bench.invalid", 80
	res := runScript(t, cfg, fixedPhases)
	if res.Extra.DNSLookups != 1 || res.Extra.DNS < 20*time.Millisecond {
		t.Fatalf("DNS %v over %d lookups, want ≥ 20ms over 1", res.Extra.DNS, res.Extra.DNSLookups)
	}
	// A literal address is never resolved.
	cfg.Target.Host = "127.0.0.1"
	res = runScript(t, cfg, fixedPhases)
	if res.Extra.DNSLookups != 0 || res.Extra.DNS != 0 {
		t.Fatalf("literal address: DNS %v over %d lookups, want none", res.Extra.DNS, res.Extra.DNSLookups)
	}
}

// BenchmarkExtraObserve is the cost --extended adds to each recorded request,
// with every core recording at once.
func BenchmarkExtraObserve(b *testing.B) {
	e := newExtraStats(false, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		t := &tally{}
		o := outcome{Start: 1000, TCPDone: 50_000, Connect: 60_000, WriteEnd: 70_000, FirstByte: 900_000, End: 1_200_000, Status: 200}
		for pb.Next() {
			o.End += 997
			e.observe(t, &o)
		}
	})
}
