package client

import (
	"time"

	"gab/internal/samples"
)

// Ending says how a run ended.
type Ending int

const (
	// EndCompleted: n requests were recorded.
	EndCompleted Ending = iota
	// EndTimeLimit: the -t limit passed.
	EndTimeLimit
	// EndInterrupted: SIGINT/SIGTERM (the context was cancelled); the report is partial.
	EndInterrupted
	// EndFatal: a fatal error (Result.fatal) ended the run; ab prints no report.
	EndFatal
)

// String is the ending's name in a run's JSON document: "completed",
// "time_limit", "interrupted" or "fatal".
func (e Ending) String() string {
	switch e {
	case EndCompleted:
		return "completed"
	case EndTimeLimit:
		return "time_limit"
	case EndInterrupted:
		return "interrupted"
	case EndFatal:
		return "fatal"
	}
	return "unknown"
}

// Failures are ab's failure classes ("Failed requests" and its breakdown).
type Failures struct {
	Total      int // ab's "bad": may exceed the sum of the classes (header overflow has none)
	Connect    int
	Receive    int
	Length     int
	Exceptions int
}

// classified is the sum of the four classes.
func (f *Failures) classified() int { return f.Connect + f.Receive + f.Length + f.Exceptions }

// Counters are ab's counters of a run: failures, the responses counted apart,
// and the bytes. Each worker keeps its own (in its tally); Result holds their
// sum.
type Counters struct {
	// Failed.Total is the run's (the workers' tallies leave it 0).
	Failed      Failures
	WriteErrors int // ab's epipe
	Non2xx      int
	KeepAlive   int // ab's doneka: responses completed on a kept-alive connection
	// Retries counts requests sent again: HTTP/1 requests re-sent once on a new
	// connection because the server closed a reused keep-alive connection before
	// answering; pipelined HTTP/1 requests the server provably did not process
	// (behind a response that ended the connection, or not written whole), at
	// most 3 times each; HTTP/2 and HTTP/3 requests the server did not process
	// (REFUSED_STREAM, or above a GOAWAY's last stream ID), at most 3 times each.
	Retries int

	TotalRead int64 // every byte read, heads included ("Total transferred")
	BodyRead  int64 // decoded body bytes ("HTML transferred")
	TotalSent int64 // every request byte written ("Total body sent")
}

// add adds o's counts to c.
func (c *Counters) add(o *Counters) {
	c.Failed.Total += o.Failed.Total
	c.Failed.Connect += o.Failed.Connect
	c.Failed.Receive += o.Failed.Receive
	c.Failed.Length += o.Failed.Length
	c.Failed.Exceptions += o.Failed.Exceptions
	c.WriteErrors += o.WriteErrors
	c.Non2xx += o.Non2xx
	c.KeepAlive += o.KeepAlive
	c.Retries += o.Retries
	c.TotalRead += o.TotalRead
	c.BodyRead += o.BodyRead
	c.TotalSent += o.TotalSent
}

// Failure names one of ab's four failure classes, or write errors: the keys of
// Result.FirstError are their String()s, which the report's failure table and
// the JSON document's failures_by_class use too.
type Failure uint8

const (
	FailureConnect Failure = iota
	FailureReceive
	FailureLength
	FailureExceptions
	FailureWrite
	failureKinds
)

var failureNames = [failureKinds]string{"connect", "receive", "length", "exceptions", "write"}

// String is the class's name: "connect", "receive", "length", "exceptions" or "write".
func (f Failure) String() string {
	if f < failureKinds {
		return failureNames[f]
	}
	return "unknown"
}

// TLSInfo describes the first TLS handshake, in ab's words.
type TLSInfo struct {
	Protocol    string // "TLSv1.3"
	Cipher      string // OpenSSL's name, e.g. "TLS_AES_128_GCM_SHA256" or "ECDHE-RSA-AES256-GCM-SHA384"
	PeerKeyBits int    // the server certificate's public key size (0 without one)
	CipherBits  int    // the cipher's secret bits
	TempKey     string // "X25519 253 bits", "ECDH prime256v1 256 bits", or "" if unknown
	ServerName  string // SNI sent, "" if none
}

// Result is everything a run measured, as plain data.
type Result struct {
	Start   time.Time     // just before the first connect (wall clock, for -g)
	Elapsed time.Duration // ab's lasttime − start
	Ending  Ending
	fatal   *FatalError // set when Ending == EndFatal

	Complete int // ab's done: recorded requests
	Counters

	DocLength      int64  // body length of the first successful response
	ServerSoftware string // ab's cut of the first Server header
	TLS            *TLSInfo
	// Protocol is "h2" or "h2c" for --http2, "h3" for --http3, "" otherwise.
	Protocol string
	// Engine is what moved an HTTP/1 run's bytes (--engine): "epoll" or
	// "uring" (the Linux event loops), "portable" (a goroutine per
	// connection); "" for the other protocols.
	Engine string
	// QUIC holds quic-go's counters over an --http3 run's connections (nil
	// otherwise).
	QUIC *QUICStats

	// StatusCounts counts responses per status code (gab's extended report).
	StatusCounts map[int]int
	// FirstError holds the first error message of each failure class, by
	// Failure.String() ("connect", "receive", "length", "exceptions", "write"),
	// and FirstErrorAt when it ended (since the start): the earliest of the
	// workers' first errors.
	FirstError   map[string]string
	FirstErrorAt map[string]time.Duration

	// Warmup describes the warm-up (--warmup) sent before the measured run;
	// nil without one. None of its requests is in any other figure.
	Warmup *WarmupResult
	// Ramp describes the requests that started during Config.RampUp, left
	// out of every other figure; nil without a ramp-up.
	Ramp *RampResult

	Samples *samples.Store
	// Extra holds the figures beyond ab's (Config.Extended or Config.Rate); nil otherwise.
	Extra *ExtraResult
	// Timeline is the latency over time (Config.Interval > 0); nil otherwise.
	Timeline *Timeline
	// Targets are the results per target of a URL list (--urls, --targets),
	// in the list's order; nil without one.
	Targets []TargetResult
	// CGI holds the CGI-mode breakdown (nil otherwise).
	CGI *CGITimes
	// Outstanding are the requests still in flight when the run stopped
	// (-t, SIGINT, -s, a fatal error), in no order: sent, or being sent,
	// and neither answered nor failed (none when the run recorded its n
	// requests, and none of the warm-up's or the ramp-up's). ab counts them
	// nowhere; gab's figures count each as a latency of at least its age,
	// and one older than Timeout as a failure (package report).
	Outstanding []InFlight
	// Timeout is -s (Config.Timeout; 0 or less: none), for Outstanding's rule.
	Timeout time.Duration

	// Opening says whether the connections opened as promptly as the run
	// asked for them (Config.Extended without Config.Rate, whose schedule asks
	// for connections as it needs them; with TCP connections; nil otherwise).
	Opening *ConnOpening
}

// InFlight is a request that was still in flight when the run stopped,
// with its ages at the stop.
type InFlight struct {
	// Age is from its start as ab's Total column counts it: before its
	// connect, or when the previous response on its kept-alive connection
	// ended; in rate mode no earlier than its actual send time.
	Age time.Duration
	// Corrected is from its intended send time in rate mode (its slot on
	// the schedule, as the corrected latencies count); Age otherwise.
	Corrected time.Duration
}

// ConnOpening is how promptly a run's TCP connections (HTTP/1.x, HTTP/2)
// were established once it asked for them. The rule: the window W is
// max(100 ms, a tenth of the run's time). A closed-model run of -c N asks for
// its first connection at the start and for the other N−1 when the first
// response head arrives (ab's ramp), or for slot i's at i/N of --ramp-up.
// Asked is how many of the N it asked for by min(W, run − W) (so each had a
// whole window before the run's end), and no more than the connections
// established over the whole run (slots that found no request left ask for
// none); Opened is how many connections were established by that moment
// plus W, at most Asked. Opened < Asked: gab took more than W to open a
// connection it had asked for. Every connection counts, so a run without
// keep-alive that opens connections again quickly counts as prompt.
type ConnOpening struct {
	Asked, Opened int
	Window        time.Duration // W
}

// CGITimes are the per-request CGI phases in µs, one entry per recorded request
// in recording order (parallel to Samples.Exact() until report.Summarize or
// gnuplot.Write sorts the samples in place).
type CGITimes struct {
	Spawn, FirstByte, Output, Reap, ChildCPU []uint32
}

// WarmupResult is what the warm-up (--warmup) sent before the measured run.
type WarmupResult struct {
	Complete int           // requests completed (the server saw them)
	Failed   int           // of those, ab's failed requests
	Elapsed  time.Duration // how long the warm-up took
}
