package client

import (
	"bytes"
	"errors"
	"math/bits"
	"strings"
	"sync/atomic"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go/quicvarint"
	"golang.org/x/net/http2/hpack"
)

// Many URLs in one run (--urls): the URLs' request targets are held
// compactly, back to back in one arena (a 1,000,000-line file costs its
// paths plus 4 bytes of offset and 2 of origin per line), and every request
// assembles its bytes from the origin's prefix and suffix, built once, and its
// path, into a buffer of its connection's: no allocation per request.
//
// Each connection keeps to one origin (scheme, host, port): a list that names
// several origins runs as one transport per origin (multiTransport), each
// with its share of the -c connections, taking that origin's URLs in turn.

// MaxOrigins bounds the origins one URL list may name.
const MaxOrigins = 1000

// Origin is one of a URL list's origins and the TLS server name (SNI) its
// connections send ("" for none).
type Origin struct {
	Target     Target // the first URL of the origin (its Path is not used)
	ServerName string
}

// URLList is --urls: the URLs of a run, in the file's order.
type URLList struct {
	arena   []byte   // every URL's request target, back to back
	ends    []uint32 // ends[i]: where URL i's target ends in arena
	origin  []uint16 // origin of URL i (nil while every URL has origin 0)
	Origins []Origin
	// Random picks every request's URL at random (--url-order random) from
	// a sequence that Seed fixes; else the URLs are taken in turn.
	Random bool
	Seed   uint64
	// Part and Parts are a sharded run's share of the list (SetShare;
	// Parts 0: the whole list).
	Part, Parts int
	// Replay: request k sends URL k (Config.Replay's slot; one origin;
	// a shard's: SetShare).
	Replay bool
	// maxTarget is the longest request target.
	maxTarget int
	// specs are --targets' methods, headers and bodies, by URL (nil for
	// --urls).
	specs []TargetSpec
}

// NewURLList returns an empty list whose arena holds sizeHint bytes before
// it grows (the file's size, when known).
func NewURLList(sizeHint int) *URLList {
	return &URLList{arena: make([]byte, 0, max(sizeHint, 0))}
}

var errTooManyOrigins = errors.New("more than 1000 origins (scheme, host and port)")

// Add appends a URL: target is its request target, t its parsed URL. A new
// origin gets the next index, and serverName(t) is its TLS server name. Add
// keeps copies of what it keeps, so t and target may be read from a buffer
// that the caller reuses.
func (l *URLList) Add(t Target, target string, serverName func(Target) string) error {
	oi := -1
	for i := range l.Origins {
		if o := l.Origins[i].Target; o.TLS == t.TLS && o.Port == t.Port && o.Host == t.Host {
			oi = i
			break
		}
	}
	if oi < 0 {
		if len(l.Origins) >= MaxOrigins {
			return errTooManyOrigins
		}
		oi = len(l.Origins)
		t.Raw, t.Host, t.Path = strings.Clone(t.Raw), strings.Clone(t.Host), strings.Clone(t.Path)
		l.Origins = append(l.Origins, Origin{Target: t, ServerName: serverName(t)})
		if oi > 0 && l.origin == nil {
			l.origin = make([]uint16, len(l.ends), cap(l.ends))
		}
	}
	if len(l.arena)+len(target) > 1<<32-1 {
		return errors.New("the URLs' paths add up to more than 4 GiB")
	}
	l.arena = append(l.arena, target...)
	l.ends = append(l.ends, uint32(len(l.arena)))
	if l.origin != nil {
		l.origin = append(l.origin, uint16(oi))
	}
	l.maxTarget = max(l.maxTarget, len(target))
	return nil
}

// Trim gives back the arena's room beyond the URLs (NewURLList's size hint
// is the file's size, of which the paths are a part): call it once the list
// is complete.
func (l *URLList) Trim() {
	if cap(l.arena) > len(l.arena)+len(l.arena)/8 {
		l.arena = append([]byte(nil), l.arena...)
	}
	if cap(l.ends) > len(l.ends)+len(l.ends)/8 {
		l.ends = append([]uint32(nil), l.ends...)
	}
	if l.origin != nil && cap(l.origin) > len(l.origin)+len(l.origin)/8 {
		l.origin = append([]uint16(nil), l.origin...)
	}
}

// Len is the number of URLs.
func (l *URLList) Len() int { return len(l.ends) }

// RequestTarget is URL i's request target.
func (l *URLList) RequestTarget(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = l.ends[i-1]
	}
	return l.arena[start:l.ends[i]:l.ends[i]]
}

// OriginOf is URL i's origin index.
func (l *URLList) OriginOf(i int) int {
	if l.origin == nil {
		return 0
	}
	return int(l.origin[i])
}

// shardStream is how far apart in the random order's sequence two shards
// start (SetShare): 2^40 requests, for 2^24 shards.
const shardStream = 1 << 40

// SetShare makes the list shard i of n's (--shard i/n), so that the shards
// together take the list as one run does. In turn, each origin's m URLs
// start at URL floor(i*m/n) of them, wrapping around (shard 0 at the first,
// as a run without shards). At random, shard i draws the seed's sequence
// from its (i*2^40)th value on: shard 0 draws what a run without shards
// draws, and every shard its own values. A replay's slot k sends entry
// i+k*n (the shard's schedule is the entries' due times: ReplayShare).
func (l *URLList) SetShare(i, n int) {
	l.Part, l.Parts = i, n
	if l.Random {
		l.Seed += uint64(i) * shardStream
	}
}

// urlPicker hands out one origin's URLs, in turn or at random, to the
// requests of the connections that keep to it.
type urlPicker struct {
	list   *URLList
	idx    []uint32 // the origin's URLs (nil: every URL of the list)
	start  uint64   // the first URL in turn (SetShare's offset)
	stride int64    // a replay's slot k sends entry start+k*stride
	next   atomic.Uint64
}

// pickerFor is the picker of origin oi's URLs.
func (l *URLList) pickerFor(oi int) *urlPicker {
	p := &urlPicker{list: l}
	if len(l.Origins) > 1 {
		for i := range l.ends {
			if int(l.origin[i]) == oi {
				p.idx = append(p.idx, uint32(i))
			}
		}
	}
	if l.Replay {
		p.start, p.stride = uint64(l.Part), int64(max(l.Parts, 1))
		return p
	}
	if l.Parts > 1 && l.Part > 0 && l.Part < l.Parts {
		m := uint64(l.Len())
		if p.idx != nil {
			m = uint64(len(p.idx))
		}
		hi, lo := bits.Mul64(uint64(l.Part), m) // Part < Parts, so hi < Parts
		p.start, _ = bits.Div64(hi, lo, uint64(l.Parts))
	}
	return p
}

// pick is the URL of the origin's next request, claimed by t's worker.
func (p *urlPicker) pick(t *tally) int {
	if p.list.Replay {
		return int(min(int64(p.start)+t.slot*p.stride, int64(p.list.Len()-1)))
	}
	k := p.next.Add(1) - 1
	n := uint64(p.list.Len())
	if p.idx != nil {
		n = uint64(len(p.idx))
	}
	j := (p.start + k) % n
	if p.list.Random {
		j = splitmix64(p.list.Seed+k) % n
	}
	if p.idx != nil {
		return int(p.idx[j])
	}
	return int(j)
}

// splitmix64 is Vigna's SplitMix64 finaliser: the k-th value of the random
// order, the same for the same --seed.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// h1URLs builds one origin's HTTP/1 requests: ab's request for the origin
// with the request target cut out, so that a request is prefix, its URL's
// target and suffix (head rest and body).
type h1URLs struct {
	*urlPicker
	prefix, suffix []byte
}

// targetMark stands for the request target while the request is built; it
// cannot occur in a request ab's options build (-H values hold no NUL).
const targetMark = "\x00gab-target\x00"

func newH1URLs(cfg *Config) (*h1URLs, error) {
	spec := cfg.Spec
	spec.Target = targetMark
	req, _ := BuildRequest(spec)
	i := bytes.Index(req, []byte(targetMark))
	if i < 0 || bytes.Count(req, []byte(targetMark)) != 1 {
		return nil, errors.New("gab: --urls: a header holds the request target's placeholder")
	}
	return &h1URLs{urlPicker: cfg.URLs.pickerFor(cfg.urlOrigin), prefix: req[:i:i], suffix: req[i+len(targetMark):]}, nil
}

// request assembles the next request's bytes into buf (grown once to the
// longest request) and returns them.
func (u *h1URLs) request(buf []byte, t *tally) ([]byte, int) {
	i := u.pick(t)
	target := u.list.RequestTarget(i)
	return append(append(append(buf[:0], u.prefix...), target...), u.suffix...), i
}

// maxLen is the longest request's length.
func (u *h1URLs) maxLen() int { return len(u.prefix) + u.list.maxTarget + len(u.suffix) }

// h2URLs builds one origin's HTTP/2 header blocks: the fields before :path
// and after it encoded once (never-indexed literals, as h2HeaderBlock
// encodes them, so that no block depends on another), and each request's
// :path a literal of its own, without Huffman coding.
type h2URLs struct {
	*urlPicker
	prefix, suffix []byte
}

func newH2URLs(cfg *Config) (*h2URLs, error) {
	fields := h2Fields(cfg)
	if len(fields) < 4 || fields[3].Name != ":path" {
		return nil, errors.New("gab: --urls: the request has no :path")
	}
	var pre, suf bytes.Buffer
	for i, f := range fields {
		if i == 3 {
			continue
		}
		f.Sensitive = true
		enc := hpack.NewEncoder(&suf)
		if i < 3 {
			enc = hpack.NewEncoder(&pre)
		}
		if err := enc.WriteField(f); err != nil {
			return nil, err
		}
	}
	return &h2URLs{urlPicker: cfg.URLs.pickerFor(cfg.urlOrigin), prefix: pre.Bytes(), suffix: suf.Bytes()}, nil
}

// block assembles the next request's header block into buf.
func (u *h2URLs) block(buf []byte, t *tally) ([]byte, int) {
	i := u.pick(t)
	path := u.list.RequestTarget(i)
	buf = append(buf[:0], u.prefix...)
	buf = append(buf, 0x14)                    // never-indexed literal, name :path (static index 4)
	buf = appendHpackInt(buf, 0, 7, len(path)) // string length, not Huffman-coded
	buf = append(buf, path...)
	return append(buf, u.suffix...), i
}

// maxLen is the longest block's length.
func (u *h2URLs) maxLen() int { return len(u.prefix) + 1 + 6 + u.list.maxTarget + len(u.suffix) }

// appendHpackInt appends v as an HPACK integer with an n-bit prefix whose
// other bits are first (RFC 7541, 5.1).
func appendHpackInt(b []byte, first byte, n uint, v int) []byte {
	limit := 1<<n - 1
	if v < limit {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(limit))
	v -= limit
	for v >= 128 {
		b = append(b, byte(v&0x7f|0x80))
		v >>= 7
	}
	return append(b, byte(v))
}

// h3URLs builds one origin's HTTP/3 requests: the HEADERS frame's field
// section is the fields before :path (with the section's prefix) and after it
// encoded once, as h3Request encodes them, and each request's :path a literal
// with the static table's name; the body's DATA frame follows as built once.
type h3URLs struct {
	*urlPicker
	prefix, suffix, tail []byte
}

func newH3URLs(cfg *Config) (*h3URLs, error) {
	fields := h2Fields(cfg)
	if len(fields) < 4 || fields[3].Name != ":path" {
		return nil, errors.New("gab: --urls: the request has no :path")
	}
	encode := func(fs []hpack.HeaderField) ([]byte, error) {
		var b bytes.Buffer
		enc := qpack.NewEncoder(&b)
		for _, f := range fs {
			if err := enc.WriteField(qpack.HeaderField{Name: f.Name, Value: f.Value}); err != nil {
				return nil, err
			}
		}
		return b.Bytes(), nil
	}
	pre, err := encode(fields[:3])
	if err != nil {
		return nil, err
	}
	suf, err := encode(fields[4:])
	if err != nil {
		return nil, err
	}
	// Each section starts with the prefix of a section without dynamic
	// table references (Required Insert Count 0, Base 0): the suffix's goes.
	if len(suf) > 0 && (len(suf) < 2 || suf[0] != 0 || suf[1] != 0) {
		return nil, errors.New("gab: --urls: an unexpected QPACK section prefix")
	}
	if len(suf) >= 2 {
		suf = suf[2:]
	}
	var tail []byte
	if cfg.Spec.HasBody && len(cfg.Spec.Body) > 0 {
		tail = quicvarint.Append(tail, h3FrameData)
		tail = quicvarint.Append(tail, uint64(len(cfg.Spec.Body)))
		tail = append(tail, cfg.Spec.Body...)
	}
	return &h3URLs{urlPicker: cfg.URLs.pickerFor(cfg.urlOrigin), prefix: pre, suffix: suf, tail: tail}, nil
}

// request assembles the next request into buf.
func (u *h3URLs) request(buf []byte, t *tally) ([]byte, int) {
	i := u.pick(t)
	path := u.list.RequestTarget(i)
	var lenBuf [8]byte
	pathLen := appendHpackInt(lenBuf[:0], 0, 7, len(path))
	section := len(u.prefix) + 1 + len(pathLen) + len(path) + len(u.suffix)
	buf = quicvarint.Append(buf[:0], h3FrameHeaders)
	buf = quicvarint.Append(buf, uint64(section))
	buf = append(buf, u.prefix...)
	buf = append(buf, 0x51) // literal with the static name :path (index 1), may be indexed
	buf = append(buf, pathLen...)
	buf = append(buf, path...)
	buf = append(buf, u.suffix...)
	return append(buf, u.tail...), i
}

// maxLen is the longest request's length.
func (u *h3URLs) maxLen() int {
	return 16 + len(u.prefix) + 1 + 8 + u.list.maxTarget + len(u.suffix) + len(u.tail)
}

// TargetSpec is what a target of --targets sets besides its URL: its method,
// its own header lines ("Name: value", which win over -H, -C, -A and -T's
// of the same name) and its body.
type TargetSpec struct {
	Method  string
	Headers []string
	Body    []byte
	HasBody bool
}

// AddTarget is Add for a --targets target: the URL and what it sets.
func (l *URLList) AddTarget(t Target, serverName func(Target) string, spec TargetSpec) error {
	if err := l.Add(t, t.Path, serverName); err != nil {
		return err
	}
	l.specs = append(l.specs, spec)
	return nil
}

// headerName is a header line's name.
func headerName(line string) string {
	name, _, _ := strings.Cut(line, ":")
	return strings.TrimSpace(name)
}

// has reports whether the target sets header name.
func (ts *TargetSpec) has(name string) (string, bool) {
	for _, h := range ts.Headers {
		if strings.EqualFold(headerName(h), name) {
			_, v, _ := strings.Cut(h, ":")
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// apply is base (the command line's request for the target's origin) with
// the target's method, path, headers and body; a header of the target's
// wins over the command line's of the same name.
func (ts *TargetSpec) apply(base RequestSpec, path string) RequestSpec {
	s := base
	s.Method, s.HeadMethod, s.Target = ts.Method, ts.Method == "HEAD", path
	s.Body, s.HasBody = ts.Body, ts.HasBody
	s.Headers = nil
	for _, h := range base.Headers {
		if _, own := ts.has(headerName(h)); !own {
			s.Headers = append(s.Headers, h)
		}
	}
	if _, own := ts.has("Cookie"); own {
		s.Cookie, s.HasCookie = "", false
	}
	s.Auth = nil
	for _, a := range base.Auth {
		if _, own := ts.has(headerName(a)); !own {
			s.Auth = append(s.Auth, a)
		}
	}
	ct, ownCT := ts.has("Content-Type")
	for _, h := range ts.Headers {
		if ownCT && s.HasBody && strings.EqualFold(headerName(h), "Content-Type") {
			continue // ab's own Content-type line carries it
		}
		s.Headers = append(s.Headers, h)
	}
	if ownCT && s.HasBody {
		s.ContentType = ct
	}
	return s
}

// prebuilt are one origin's --targets requests, each built once in full
// (for the protocol: ab's bytes, an HTTP/2 block, HTTP/3 frames).
type prebuilt struct {
	*urlPicker
	reqs  [][]byte // by URL index (nil for other origins' URLs)
	specs []RequestSpec
	max   int
}

// newPrebuilt builds each of origin cfg.urlOrigin's targets with build.
func newPrebuilt(cfg *Config, build func(c *Config) ([]byte, error)) (*prebuilt, error) {
	l := cfg.URLs
	p := &prebuilt{urlPicker: l.pickerFor(cfg.urlOrigin), reqs: make([][]byte, l.Len()), specs: make([]RequestSpec, l.Len())}
	for i := range l.Len() {
		if l.OriginOf(i) != cfg.urlOrigin {
			continue
		}
		one := *cfg
		one.Spec = l.specs[i].apply(cfg.Spec, string(l.RequestTarget(i)))
		b, err := build(&one)
		if err != nil {
			return nil, err
		}
		p.reqs[i], p.specs[i] = b, one.Spec
		p.max = max(p.max, len(b))
	}
	return p, nil
}

// next is the next target's index.
func (p *prebuilt) next(t *tally) int { return p.pick(t) }

// Targets reports whether the list is --targets' (each URL with its method,
// headers and body) rather than --urls'.
func (l *URLList) Targets() bool { return l.specs != nil }

// anyBody reports whether a target has a body.
func (l *URLList) anyBody() bool {
	for i := range l.specs {
		if l.specs[i].HasBody && len(l.specs[i].Body) > 0 {
			return true
		}
	}
	return false
}
