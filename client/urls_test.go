package client

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go/quicvarint"
	"golang.org/x/net/http2/hpack"
)

// urlList is a list of n URLs on port's origin, /u0 ... /u(n-1).
func urlList(tb testing.TB, port, n int) *URLList {
	tb.Helper()
	l := NewURLList(0)
	for i := range n {
		t, err := ParseURL(fmt.Sprintf("http://127.0.0.1:%d/u%d", port, i))
		if err != nil {
			tb.Fatal(err)
		}
		if err := l.Add(t, t.Path, func(Target) string { return "" }); err != nil {
			tb.Fatal(err)
		}
	}
	return l
}

func TestURLListHoldsTargetsAndOrigins(t *testing.T) {
	l := NewURLList(0)
	for _, u := range []string{"http://a:1/x", "https://a:1/y", "http://a:1/z?q", "http://b/w"} {
		tg, err := ParseURL(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Add(tg, tg.Path, func(o Target) string { return "sni-" + o.Host }); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for i := range l.Len() {
		got = append(got, fmt.Sprintf("%s@%d", l.RequestTarget(i), l.OriginOf(i)))
	}
	if strings.Join(got, " ") != "/x@0 /y@1 /z?q@0 /w@2" {
		t.Errorf("targets and origins %v", got)
	}
	if len(l.Origins) != 3 || l.Origins[1].ServerName != "sni-a" || !l.Origins[1].Target.TLS || l.Origins[2].Target.Port != 80 {
		t.Errorf("origins %+v", l.Origins)
	}
	p := l.pickerFor(0)
	var seq []int
	for range 5 {
		seq = append(seq, p.pick(nil))
	}
	if fmt.Sprint(seq) != "[0 2 0 2 0]" {
		t.Errorf("origin 0's URLs in turn: %v, want [0 2 0 2 0]", seq)
	}
}

// The random order is the seed's: the same picks for the same seed.
func TestURLPickerRandomIsSeeded(t *testing.T) {
	l := urlList(t, 80, 50)
	l.Random = true
	picks := func(seed uint64) string {
		l.Seed = seed
		p := l.pickerFor(0)
		var b strings.Builder
		for range 100 {
			fmt.Fprint(&b, p.pick(nil), " ")
		}
		return b.String()
	}
	if picks(1) != picks(1) || picks(1) == picks(2) {
		t.Errorf("seed 1: %s\nseed 2: %s", picks(1), picks(2))
	}
}

// A shard's share of the list (SetShare): in turn, shard i of n starts each
// origin's m URLs at floor(i*m/n), wrapping around, so the shards' first
// picks cover the list once; at random, shard 0 draws what a run without
// shards draws and shard 1 another sequence, the same for the same seed.
func TestURLPickerShareStartsAtItsOffset(t *testing.T) {
	picks := func(l *URLList, oi, count int) string {
		p := l.pickerFor(oi)
		var seq []int
		for range count {
			seq = append(seq, p.pick(nil))
		}
		return fmt.Sprint(seq)
	}
	for _, c := range []struct {
		i, n, count int
		want        string
	}{
		{0, 2, 5, "[0 1 2 3 4]"}, {1, 2, 6, "[5 6 7 8 9 0]"},
		{0, 3, 3, "[0 1 2]"}, {1, 3, 4, "[3 4 5 6]"}, {2, 3, 5, "[6 7 8 9 0]"},
		{0, 1, 3, "[0 1 2]"}, {3, 4, 2, "[7 8]"},
	} {
		l := urlList(t, 80, 10)
		l.SetShare(c.i, c.n)
		if got := picks(l, 0, c.count); got != c.want {
			t.Errorf("shard %d/%d of 10 URLs: %s, want %s", c.i, c.n, got, c.want)
		}
	}
	// Two origins, each its own URLs' offset: origin 0 has URLs 0, 2, 4, 6
	// (shard 1 of 2 starts at its third), origin 1 has 1, 3, 5.
	l := NewURLList(0)
	for i := range 7 {
		tg, err := ParseURL(fmt.Sprintf("http://127.0.0.1:%d/u%d", 80+i%2, i))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Add(tg, tg.Path, func(Target) string { return "" }); err != nil {
			t.Fatal(err)
		}
	}
	l.SetShare(1, 2)
	if a, b := picks(l, 0, 3), picks(l, 1, 3); a != "[4 6 0]" || b != "[3 5 1]" {
		t.Errorf("shard 1/2 of two origins: %s and %s, want [4 6 0] and [3 5 1]", a, b)
	}
	random := func(i, n int) string {
		l := urlList(t, 80, 50)
		l.Random, l.Seed = true, 7
		if n > 0 {
			l.SetShare(i, n)
		}
		return picks(l, 0, 20)
	}
	whole, s0, s1 := random(0, 0), random(0, 2), random(1, 2)
	if s0 != whole || s1 == whole || s1 != random(1, 2) {
		t.Errorf("at random: whole run %s, shard 0 %s, shard 1 %s", whole, s0, s1)
	}
}

// A replay's shard i of n sends entries i, i+n, ... at their own due times:
// slot k is entry i+k*n, and the shards' schedules together are the log's.
func TestReplayShareInterleaves(t *testing.T) {
	due := []int64{0, 10, 20, 30, 40, 50, 60}
	for _, c := range []struct {
		i, n       int
		want, urls string
	}{{0, 1, "[0 10 20 30 40 50 60]", "[0 1 2 3 4 5 6]"}, {0, 3, "[0 30 60]", "[0 3 6]"}, {1, 3, "[10 40]", "[1 4]"}, {2, 3, "[20 50]", "[2 5]"}} {
		l := urlList(t, 80, len(due))
		l.Replay = true
		l.SetShare(c.i, c.n)
		share := ReplayShare(due, c.i, c.n)
		p := l.pickerFor(0)
		var urls []int
		for k := range share {
			urls = append(urls, p.pick(&tally{slot: int64(k)}))
		}
		if fmt.Sprint(share) != c.want || fmt.Sprint(urls) != c.urls {
			t.Errorf("shard %d/%d: due %v and entries %v, want %s and %s", c.i, c.n, share, urls, c.want, c.urls)
		}
	}
}

// With --urls the keep-alive loop still allocates nothing per request, on
// both HTTP/1 paths: each request's bytes are assembled in its connection's
// buffer.
func TestURLsLoopDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few thousand loopback requests")
	}
	for _, path := range []string{"epoll", "go"} {
		t.Run(path, func(t *testing.T) {
			usePath(t, path)
			srv := newBenchServer(t, true)
			list := urlList(t, srv.port(), 1000)
			cfg := h1Config(srv.port(), 0, 2, true)
			cfg.URLs = list
			wantFlatAllocations(t, h1KeptAllocations(t, cfg, 100), isCrypto)
		})
	}
}

// BenchmarkURLs compares one URL with a list of 1000 (--urls), on both
// HTTP/1 paths, keep-alive, 100-byte responses:
//
//	go test -run '^$' -bench 'BenchmarkURLs' -benchmem -count 5 ./client
//
// Both must report 0 allocs/op, and the list's ns/op stay within a few
// percent of the single URL's (a request's bytes are a copy of about 100
// bytes into the connection's buffer).
func BenchmarkURLs(b *testing.B) {
	for _, path := range []string{"epoll", "go"} {
		for _, urls := range []int{0, 1000} {
			b.Run(fmt.Sprintf("%s/urls%d", path, urls), func(b *testing.B) {
				usePath(b, path)
				benchmarkRunWith(b, true, 8, false, func(cfg *Config) {
					if urls > 0 {
						cfg.URLs = urlList(b, cfg.Target.Port, urls)
					}
				})
			})
		}
	}
}

// Each HTTP/2 block that --urls assembles decodes to the fields of the
// single-URL block with that URL's :path (short paths and one longer than
// 127 bytes, whose length takes HPACK's continuation bytes).
func TestURLsHTTP2Blocks(t *testing.T) {
	cfg := urlConfig(t, "http://127.0.0.1:8080/first", 1, 1, HTTP2)
	cfg.Spec.Headers = []string{"X-Trace: 7"}
	long := "/" + strings.Repeat("p", 300) + "?q=1"
	l := NewURLList(0)
	for _, p := range []string{"/a", long, "/c%20d"} {
		tg, _ := ParseURL("http://127.0.0.1:8080" + p)
		if err := l.Add(tg, tg.Path, func(Target) string { return "" }); err != nil {
			t.Fatal(err)
		}
	}
	cfg.URLs = l
	u, err := newH2URLs(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for _, want := range []string{"/a", long, "/c%20d", "/a"} {
		buf, _ = u.block(buf, nil)
		fields, err := hpack.NewDecoder(4096, nil).DecodeFull(buf)
		if err != nil {
			t.Fatalf("block for %.20s: %v", want, err)
		}
		one := cfg
		one.Spec.Target = want
		wantFields := h2Fields(&one)
		if len(fields) != len(wantFields) {
			t.Fatalf("%d fields, want %d: %v", len(fields), len(wantFields), fields)
		}
		for i := range fields {
			if fields[i].Name != wantFields[i].Name || fields[i].Value != wantFields[i].Value {
				t.Errorf("field %d: %s: %.40s, want %s: %.40s", i, fields[i].Name, fields[i].Value, wantFields[i].Name, wantFields[i].Value)
			}
		}
		if len(buf) > u.maxLen() {
			t.Errorf("block of %d bytes, above maxLen %d", len(buf), u.maxLen())
		}
	}
}

// BenchmarkURLsHTTP2 is BenchmarkURLs for --http2 (h2c, 2 connections × 10
// streams, the in-process Framer server).
func BenchmarkURLsHTTP2(b *testing.B) {
	for _, urls := range []int{0, 1000} {
		b.Run(fmt.Sprintf("urls%d", urls), func(b *testing.B) {
			s := startRawH2(b, &rawH2Server{})
			cfg := h2TestConfig(b, s.url(), 0, 2, 10)
			if urls > 0 {
				cfg.URLs = urlList(b, cfg.Target.Port, urls)
			}
			benchThousand(b, cfg)
		})
	}
}

// With --urls the HTTP/2 loop allocates nothing per request in gab's code
// (the in-process server's allocations are left out), as without.
func TestURLsHTTP2LoopDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few thousand loopback requests")
	}
	s := startRawH2(t, &rawH2Server{})
	base := h2TestConfig(t, s.url(), 0, 2, 4)
	base.URLs = urlList(t, base.Target.Port, 1000)
	run := func(n int) map[string]int64 {
		cfg := base
		cfg.Requests = n
		var res *Result
		var err error
		own := gabAllocations(func() { res, err = runH2(t, cfg) })
		if err != nil || res.Complete != n {
			t.Fatalf("run of %d: %v, %d complete", n, err, res.Complete)
		}
		return own
	}
	isXNet := func(fn string) bool { return strings.HasPrefix(fn, "golang.org/x/net/") }
	small, large := wantFlatAllocations(t, run, func(fn string) bool { return isCrypto(fn) || isXNet(fn) })
	// x/net's Framer allocates one HeadersFrame per response, with or without --urls.
	if more, grew := allocGrowth(small, large, func(fn string) bool { return !isXNet(fn) }); more > 4000+40 {
		t.Errorf("4000 more requests cost %d more allocations in x/net, want one per response (by function: %v)", more, grew)
	}
}

// Each HTTP/3 request that --urls assembles is a HEADERS frame whose field
// section decodes (quic-go's QPACK decoder) to the single-URL request's
// fields with that URL's :path, and then the body's DATA frame.
func TestURLsHTTP3Requests(t *testing.T) {
	cfg := urlConfig(t, "https://127.0.0.1:8443/first", 1, 1, HTTP3)
	cfg.Spec.Headers = []string{"X-Trace: 7"}
	cfg.Spec.Method, cfg.Spec.Body, cfg.Spec.HasBody = "POST", []byte("body!"), true
	long := "/" + strings.Repeat("q", 200)
	l := NewURLList(0)
	for _, p := range []string{"/a", long} {
		tg, _ := ParseURL("https://127.0.0.1:8443" + p)
		if err := l.Add(tg, tg.Path, func(Target) string { return "" }); err != nil {
			t.Fatal(err)
		}
	}
	cfg.URLs = l
	u, err := newH3URLs(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for _, want := range []string{"/a", long, "/a"} {
		buf, _ = u.request(buf, nil)
		one := cfg
		one.Spec.Target = want
		single, err := h3Request(&one)
		if err != nil {
			t.Fatal(err)
		}
		got, wantFields := h3Decoded(t, buf), h3Decoded(t, single)
		if got != wantFields || !strings.Contains(got, "\n:path: "+want+"\n") || !strings.Contains(got, "x-trace: 7\n") || !strings.HasSuffix(got, "frame 0: \"body!\"\n") {
			t.Errorf("path %.20s: request decodes to\n%s\nwant\n%s", want, got, wantFields)
		}
		if len(buf) > u.maxLen() {
			t.Errorf("request of %d bytes, above maxLen %d", len(buf), u.maxLen())
		}
	}
}

// h3Decoded is a request's frames as text: the HEADERS frame's fields, then
// every other frame's type and payload.
func h3Decoded(t *testing.T, b []byte) string {
	t.Helper()
	var out strings.Builder
	for len(b) > 0 {
		typ, n, err := quicvarint.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		b = b[n:]
		size, n, err := quicvarint.Parse(b)
		if err != nil || uint64(len(b)-n) < size {
			t.Fatalf("frame length: %v", err)
		}
		payload := b[n : n+int(size)]
		b = b[n+int(size):]
		if typ != h3FrameHeaders {
			fmt.Fprintf(&out, "frame %d: %q\n", typ, payload)
			continue
		}
		next := qpack.NewDecoder().Decode(payload)
		for {
			f, err := next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("QPACK: %v", err)
			}
			fmt.Fprintf(&out, "%s: %s\n", f.Name, f.Value)
		}
	}
	return out.String()
}

// The results per target add up to the run's: Complete, Non-2xx and bytes,
// each row's counts and total-time sums; past MaxTargetRows distinct URLs
// the rest share the "other" row.
func TestTargetResultsAddUp(t *testing.T) {
	srv := newBenchServer(t, true)
	for _, c := range []struct {
		name     string
		urls     int
		n        int
		wantRows int
	}{
		{"three URLs", 3, 300, 3},
		{"past the row limit", MaxTargetRows + 5, 2 * (MaxTargetRows + 5), MaxTargetRows + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := h1Config(srv.port(), c.n, 2, true)
			cfg.URLs = urlList(t, srv.port(), c.urls)
			res, err := h1Run(t, cfg)
			if err != nil || res.Complete != c.n {
				t.Fatalf("run: %v, %d complete", err, res.Complete)
			}
			if len(res.Targets) != c.wantRows {
				t.Fatalf("%d rows, want %d", len(res.Targets), c.wantRows)
			}
			var complete, count, body, sum int64
			for i, r := range res.Targets {
				complete += r.Complete
				count += r.Hist.TotalCount()
				body += r.BodyBytes
				sum += r.SumUs
				if i < MaxTargetRows && (r.Other || r.Method != "GET" || r.URL != fmt.Sprintf("http://127.0.0.1:%d/u%d", srv.port(), i)) {
					t.Errorf("row %d: %s %s other %v", i, r.Method, r.URL, r.Other)
				}
				if r.Count != r.Complete || r.MaxUs < r.MinUs {
					t.Errorf("row %d: count %d complete %d min %d max %d", i, r.Count, r.Complete, r.MinUs, r.MaxUs)
				}
			}
			if complete != int64(c.n) || count != int64(c.n) || body != res.BodyRead {
				t.Errorf("rows add up to %d complete, %d in histograms, %d body bytes; the run: %d, %d", complete, count, body, c.n, res.BodyRead)
			}
			if c.urls == 3 {
				for _, r := range res.Targets {
					if r.Complete != 100 {
						t.Errorf("%s: %d complete, want 100", r.URL, r.Complete)
					}
				}
			} else if last := res.Targets[len(res.Targets)-1]; !last.Other || last.Complete != 10 {
				t.Errorf("the other row: %+v, want 10 complete (5 URLs twice)", last)
			}
		})
	}
}

// BenchmarkURLsPerRequestWork is what --urls adds to a request on the
// client's side, alone: pick the next of 1000 URLs, assemble its bytes into
// the connection's buffer, and account for it in its target's row. A
// keep-alive request costs the client about 15 µs of CPU against nginx
// (BENCHMARKS.md); this is the difference between --urls and one URL.
func BenchmarkURLsPerRequestWork(b *testing.B) {
	cfg := h1Config(8080, 1, 1, true)
	cfg.URLs = urlList(b, 8080, 1000)
	u, err := newH1URLs(&cfg)
	if err != nil {
		b.Fatal(err)
	}
	ts := newTargetStats(&cfg)
	buf := make([]byte, 0, u.maxLen())
	var o outcome
	b.ReportAllocs()
	for b.Loop() {
		var i int
		buf, i = u.request(buf, nil)
		o = outcome{Status: 200, Body: 100, entry: int32(i + 1)}
		ts.add(&o, true, 250)
	}
}
