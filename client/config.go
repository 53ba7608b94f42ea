package client

import (
	"context"
	"net"
	"strconv"
	"time"
)

// Protocol selects the transport that carries the requests.
type Protocol int

const (
	// HTTP10 is ab's protocol: an HTTP/1.0 request line, raw sockets.
	HTTP10 Protocol = iota
	// HTTP11 sends HTTP/1.1 request lines (--http1.1).
	HTTP11
	// HTTP2 speaks h2 (TLS + ALPN) or h2c with prior knowledge (--http2).
	HTTP2
	// CGI executes a CGI program per request instead of connecting (--cgi).
	CGI
	// HTTP3 speaks HTTP/3 over QUIC (--http3; https:// URLs only).
	HTTP3
)

// String is the protocol's name in a shard's document: "http1.0", "http1.1",
// "http2", "cgi" or "http3".
func (p Protocol) String() string {
	switch p {
	case HTTP10:
		return "http1.0"
	case HTTP11:
		return "http1.1"
	case HTTP2:
		return "http2"
	case CGI:
		return "cgi"
	case HTTP3:
		return "http3"
	}
	return "unknown"
}

// Target is the parsed URL argument, with ab's rules (see ParseURL).
type Target struct {
	Raw  string // the URL argument exactly as typed (sent as the request target with -X)
	TLS  bool   // https://
	Host string // host name or address, without IPv6 brackets
	Port int    // explicit port, or 80/443
	Path string // everything from the first '/' on, query and fragment included
}

// withPort appends ":port" to host when the port is not the scheme's default.
func (t Target) withPort(host string) string {
	def := 80
	if t.TLS {
		def = 443
	}
	if t.Port != def {
		return host + ":" + strconv.Itoa(t.Port)
	}
	return host
}

// Resolver looks up host addresses; tests inject one so that no real name is resolved.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// DialFunc opens a connection; tests inject one to simulate unreachable hosts.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// TLSOptions are ab's -Z -f -E -I plus gab's --verify-tls and --tls-resume:
// Config.TLS, which the command line fills.
type TLSOptions struct {
	Ciphers    string // -Z, OpenSSL cipher names
	Protocol   string // -f: "", ALL, TLS1, TLS1.1, TLS1.2, TLS1.3 (already normalised)
	CertFile   string // -E: PEM with certificate chain and private key
	NoSNI      bool   // -I
	ServerName string // SNI from -H Host: (verbatim), else the URL host; "" if none
	Verify     bool   // --verify-tls
	// Resume keeps the sessions servers grant and offers them on new
	// connections (--tls-resume); ab, like the default, makes a full handshake
	// on every connection.
	Resume bool
	// EarlyData sends requests as 0-RTT data on QUIC connections that
	// resume a session (--early-data, with --http3 and --tls-resume).
	EarlyData bool
}

// Config is everything the engine needs. flags.go fills it in; tests build it directly.
type Config struct {
	Target Target
	// Request is the exact request (head and body) sent for every HTTP/1 request,
	// built once by BuildRequest.
	Request []byte
	// HeadLen is the length of the head within Request (the rest is the body).
	HeadLen int
	// Spec is what Request was built from; HTTP/2 and CGI transports read it.
	Spec RequestSpec
	// URLs, when set (--urls), replaces the one request target with a list
	// of URLs taken in turn (or at random); Target is the first URL's.
	URLs *URLList
	// urlOrigin is the URLs' origin this configuration's connections keep
	// to (a multiTransport gives each origin its copy).
	urlOrigin int
	perOrigin bool // this is an origin's copy: its transport is that origin's

	Requests       int           // -n
	Concurrency    int           // -c
	TimeLimit      time.Duration // -t; 0 means none
	Timeout        time.Duration // -s: no event for this long ends the run (exit 119); <0 waits forever
	RequestTimeout time.Duration // --request-timeout: fails just the overdue request; 0 = off
	KeepAlive      bool          // -k
	KeepGoing      bool          // -r: receive errors are counted instead of being fatal
	VariableLength bool          // -l: no Length failures
	SocketBuffer   int           // -b: SO_SNDBUF/SO_RCVBUF when nonzero
	LocalAddr      string        // -B
	Proxy          bool          // -X given (even with an empty host, which then fails to resolve as in ab)
	ProxyHost      string        // -X host
	ProxyPort      int           // -X port (atoi; 0 when none)
	Verbosity      int           // -v
	Quiet          bool          // -q: no progress events
	TLS            TLSOptions

	Protocol Protocol
	Streams  int // --streams: concurrent HTTP/2 or HTTP/3 streams per connection (default 1)
	// Pipeline, when > 1, is --pipeline: HTTP/1 requests written back to back
	// on a kept-alive connection before their responses are read (h1pipe.go).
	Pipeline int
	// Portable takes the portable goroutine-per-connection path even where the
	// Linux event loops would serve the run (the command line sets it when the
	// environment has GAB_NETPOLL=go).
	Portable bool
	// Engine is --engine: EngineEpoll, EngineUring, or EngineAuto ("" too):
	// the I/O of the HTTP/1 event loops (http1_uring_linux.go).
	Engine string
	// transport, when set, builds the run's transport instead of Protocol's
	// (tests inject one that sends nothing, as they inject Dial and Resolver).
	transport func(*Config) (transport, error)

	// CGI mode (--cgi).
	CGIProgram string
	CGIEnv     []string // extra NAME=VALUE pairs

	// WarmupRequests or WarmupTime (--warmup) asks for a warm-up before the
	// measured run: that many requests, or requests for that long, sent with
	// the same options over their own connections and left out of every
	// figure (Result.Warmup says how many there were). At most one is set.
	WarmupRequests int
	WarmupTime     time.Duration
	// RampUp, when > 0, opens the connections evenly over it (slot i of s
	// starts its first request at i·RampUp/s after the run's start, instead
	// of ab's start once the first response head arrives); every request
	// that starts before RampUp has passed is sent but left out of every
	// count and figure, as a warm-up's (Result.Ramp says how many). The run
	// takes the goroutine-per-connection path, where a slot is a connection.
	RampUp time.Duration

	// Workers, when > 0, is the number of event loops (ab's -W worker
	// threads), at most Concurrency; 0 lets the engine choose.
	Workers int
	// ConnectDelay, when > 0, starts slot i's first request (i mod
	// Concurrency: its connection) at i·ConnectDelay after the run's start,
	// instead of ab's start once the first response head arrives (-R, the
	// next ab's ramp delay). Unlike RampUp, every request counts. The run
	// takes the goroutine-per-connection path.
	ConnectDelay time.Duration

	// Replay, when set (--replay), is each request's due time in ns since
	// the start, ascending: request k is due at Replay[k] and sends the URL
	// list's entry k (Rate must still be > 0: the mean rate). Requests is
	// at most len(Replay).
	Replay []int64

	// Rate, when > 0, is the open-model schedule in requests per second (--rate).
	Rate float64
	// RateSchedule, when not empty, replaces Rate's constant (which must
	// still be > 0) with these phases; their last rate holds after them.
	RateSchedule []RatePhase
	// Extended gathers the figures beyond ab's into Result.Extra (--extended,
	// --format json, --json); rate mode gathers them anyway.
	Extended bool
	// Live keeps, per worker, a small histogram of total times that
	// Runner.Live reads during the run (a status line's running p99).
	Live bool
	// Interval, when > 0, keeps a latency timeline: an HDR histogram and the
	// counts of completions, failures and bytes for each Interval of the run
	// (Result.Timeline; --interval, --hlog, --extended and the JSON document).
	Interval time.Duration
	// OnInterval, when set with Interval, receives each interval of the
	// timeline as it closes, a little after its end (live results). The
	// timeline's collector goroutine calls it, never a worker; the intervals
	// still open when the run ends come from the goroutine running
	// Runner.Run before it returns. Calls never overlap, come in the order
	// of the intervals, once each; a call that takes long delays the next
	// interval's close, not the run. An interval handed on lacks the records
	// that arrive after its close (a worker that recorded late): the
	// Result's timeline has them. Not called for the warm-up.
	OnInterval func(Interval)

	// SampleLimit caps the exact per-request store; past it the statistics come
	// from histograms. 0 means samples.DefaultLimit.
	SampleLimit int
	// KeepAllRows keeps every sample past SampleLimit in a temporary file as
	// well, so that the -g file has every request's row (set with -g).
	KeepAllRows bool

	// Events receives what ab prints during a run. Nil discards them.
	Events Events
	// Resolver and Dial may be injected by tests; nil means the system's.
	Resolver Resolver
	Dial     DialFunc
	// NoSpin: the server shares this process's cores (--demo), so event
	// loops never poll without sleeping (see epoll_linux.go).
	NoSpin bool
}

// RequestSpec holds the request as the user described it, before ab's bytes are built.
type RequestSpec struct {
	Method      string   // GET, HEAD (-i), POST (-p), PUT (-u) or -m's text
	HeadMethod  bool     // -i was given (ab ignores the body of such responses); also true for -m HEAD in gab
	Target      string   // request target: the path, or the URL as typed with -X
	KeepAlive   bool     // adds "Connection: Keep-Alive" (HTTP/1.0)
	Cookie      string   // last -C value
	HasCookie   bool     // -C was given: ab sends "Cookie: " even for an empty value
	Auth        []string // complete "Authorization: Basic ..." / "Proxy-Authorization: ..." lines, in order
	Headers     []string // -H lines, verbatim, in order
	Body        []byte   // -p/-u file contents
	HasBody     bool     // -p or -u given (an empty file still sends Content-length: 0)
	ContentType string   // -T, default text/plain
	Host        string   // Host header value unless an -H Host: overrides it
	HTTP11      bool     // --http1.1 request line
}

func isIPv6Literal(h string) bool {
	for i := 0; i < len(h); i++ {
		if h[i] == ':' {
			return true
		}
	}
	return false
}
