package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gab/client"
	"gab/gnuplot"
	"gab/internal/abprint"
	"gab/internal/dashboard"
	"gab/internal/live"
	"gab/internal/longopt"
	"gab/internal/runcmd"
	"gab/internal/shard"
	"gab/internal/sweep"
	"gab/internal/targets"
	"gab/internal/threshold"
	"gab/report"
)

// Exit statuses of the command line, as ab uses them.
const (
	exitOK    = 0
	exitError = 1  // ab's err(): bad -n, method mixing, POST file, credentials, TLS setup
	exitUsage = 22 // EINVAL: arguments, URL, concurrency, -h; gab's invalid or conflicting options
	// A failed --fail-if threshold exits with threshold.ExitStatus (3).
)

// maxConcurrency is this ab build's limit ("Invalid Concurrency [Range 0..200000]").
const maxConcurrency = runcmd.MaxConcurrency

// maxCPUs is the largest --cpus (Go's scheduler needs a thread per CPU).
const maxCPUs = 1024

// timeLimitRequests is the n that -t implies in ab; --no-cap lifts it.
const timeLimitRequests = runcmd.TimeLimitRequests

// uncappedRequests stands for "no request limit" under -t --no-cap.
const uncappedRequests = math.MaxInt32

// shortOptions is ab 2.3's getopt string (TLS build) with the options of
// Apache httpd trunk's ab ("...SqQB:m:R:W:"): -Q, -R and -W.
const shortOptions = "n:c:t:s:b:T:p:u:v:lrkVhwiIx:y:z:C:H:P:A:g:X:de:SqQB:m:R:W:Z:f:E:"

// cliOptions is everything the command line says (runcmd.Options), with
// what only the parsing and the root's setup read.
type cliOptions struct {
	runcmd.Options
	// lists are --urls, --targets and --replay, with their options
	// (internal/targets).
	lists targets.Options
	// memoryLimit is the soft memory limit a big URL list asks for (0: none).
	memoryLimit int64
}

// newOptions returns ab's defaults.
func newOptions(argv0 string) *cliOptions {
	return &cliOptions{Options: runcmd.Options{
		Version:     version,
		Argv0:       argv0,
		CellAttrs:   "bgcolor=white",
		Format:      "text",
		ProgressBar: "auto",
		Config: client.Config{
			Requests:    1,
			Concurrency: 1,
			Timeout:     30 * time.Second,
			Streams:     1,
			Spec:        client.RequestSpec{ContentType: client.DefaultContentType},
			// GAB_NETPOLL=go: the portable goroutine-per-connection path. (The
			// engine reads only PATH, which it passes on to a --cgi program.)
			Portable: os.Getenv("GAB_NETPOLL") == "go",
		},
	}}
}

// longOptions holds the values of gab's long options while they are parsed.
type longOptions struct {
	http2, http11, demo, version, verifyTLS, extended, noCap, help bool
	histogram, tlsResume                                           bool
	streams, cpus, sampleLimit                                     int
	pipeline                                                       int
	cgi, format, jsonFile, plot, html, progress                    string
	hlogFile                                                       string
	dashboard                                                      string
	dashboardLinger                                                durationValue
	cgiEnv, failIf, serverPID                                      []string
	requestTimeout, interval                                       durationValue
	percentiles                                                    longopt.Percentiles
	rate                                                           string
	engine                                                         string
	step                                                           durationValue
	warmup                                                         longopt.Warmup
	apdex                                                          longopt.Apdex
	ranges                                                         longopt.Ranges
	shard                                                          shard.Flags
	live                                                           live.Flags
	liveLinger                                                     durationValue // --metrics-linger

	http3, earlyData bool            // --http3, --early-data
	lists            targets.Options // --urls, --targets, --replay
}

func newLongFlagSet(lo *longOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("gab", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.BoolVar(&lo.http2, "http2", false, "speak HTTP/2 (h2 over TLS with ALPN, h2c with prior knowledge)")
	fs.BoolVar(&lo.http3, "http3", false, "speak HTTP/3 over QUIC (https:// URLs; -k implied)")
	fs.BoolVar(&lo.earlyData, "early-data", false, "with --http3 and --tls-resume, send requests as 0-RTT data on resumed connections (a server may replay them)")
	fs.BoolVar(&lo.http11, "http1.1", false, "send HTTP/1.1 request lines (keep-alive implied by -k, else Connection: close)")
	fs.IntVar(&lo.streams, "streams", 1, "`N` concurrent HTTP/2 or HTTP/3 streams per connection (-c × N at most 200000)")
	fs.IntVar(&lo.pipeline, "pipeline", 1, "with -k, write up to `N` HTTP/1 requests on a connection before reading their responses (1 to 1024; with --rate a due request may wait behind them)")
	fs.StringVar(&lo.cgi, "cgi", "", "run `PROGRAM` as a CGI script per request instead of connecting")
	fs.StringArrayVar(&lo.cgiEnv, "cgi-env", nil, "extra `NAME=VALUE` for the CGI environment (repeatable)")
	fs.Var(&lo.requestTimeout, "request-timeout", "fail a single request after `DURATION` (Go duration or seconds)")
	fs.StringVar(&lo.engine, "engine", client.EngineAuto, "HTTP/1 event loops' I/O on Linux: `epoll`, uring (io_uring) or auto")
	fs.IntVar(&lo.cpus, "cpus", 0, "use `N` CPUs, 1 to 1024 (sets GOMAXPROCS)")
	fs.BoolVar(&lo.noCap, "no-cap", false, "with -t, do not stop at 50000 requests")
	fs.IntVar(&lo.sampleLimit, "sample-limit", 0, "keep the first `N` requests' timings exactly, then 1 ms histograms (default 10000000)")
	fs.BoolVar(&lo.demo, "demo", false, "benchmark a built-in local server (no URL argument)")
	fs.BoolVar(&lo.version, "version", false, "print gab's version and exit")
	fs.BoolVar(&lo.verifyTLS, "verify-tls", false, "verify the server's certificate (ab never does)")
	fs.BoolVar(&lo.tlsResume, "tls-resume", false, "resume TLS sessions on new connections (ab makes a full handshake on each)")
	fs.StringVar(&lo.format, "format", "text", "report format: `text|json`")
	fs.StringVar(&lo.jsonFile, "json", "", "also write the results as JSON to `FILE`")
	fs.Var(&lo.percentiles, "percentiles", "extra percentiles to report, a `LIST` such as 50,99,99.9")
	fs.BoolVar(&lo.extended, "extended", false, "print gab's extended report after ab's")
	fs.StringVar(&lo.rate, "rate", "", "open model: send `R` requests per second whatever the responses do; R1:R2/DURATION ramps, R1,R2,... steps (--step each)")
	fs.Var(&lo.step, "step", "each rate's `DURATION` in a --rate list (default 10s)")
	fs.Var(&lo.interval, "interval", "latency timeline interval `DURATION` for --hlog, --extended and JSON (default 1s)")
	fs.StringVar(&lo.hlogFile, "hlog", "", "write the latency timeline as an HdrHistogram interval log to `FILE`")
	fs.StringArrayVar(&lo.serverPID, "server-pid", nil, "report the CPU of processes `[LABEL=]PID[,PID...]` (threads, children) per request (Linux); LABEL names the server")
	fs.StringVar(&lo.plot, "plot", "", "draw the run's charts into `FILE`.png|.svg|.pdf with gnuplot (FILE.png.gp and FILE.png.dat beside it)")
	fs.StringVar(&lo.html, "html", "", "write a self-contained HTML report with charts to `FILE`")
	fs.StringVar(&lo.dashboard, "dashboard", "", "serve the HTML report live at `ADDR` (:8080 is 127.0.0.1:8080), refreshed each interval; the finished report when the run ends")
	fs.Var(&lo.dashboardLinger, "dashboard-linger", "keep serving the finished report for `DURATION` after the run (Ctrl-C ends it)")
	fs.BoolVar(&lo.histogram, "histogram", false, "print a latency histogram after the report")
	fs.StringVar(&lo.progress, "progress", "auto", "live status line on stderr: `auto|always|never` (auto: when stderr is a terminal)")
	lo.shard.AddFlags(fs)
	lo.live.AddFlags(fs, &lo.liveLinger)
	lo.lists.AddURLFlags(fs)
	lo.lists.AddTargetFlags(fs)
	lo.lists.AddReplayFlags(fs)
	fs.Var(&lo.warmup, "warmup", "first send `N|DURATION` (requests, or a time such as 10s) left out of every figure")
	fs.Var(&lo.apdex, "apdex", "report APDEX as JMeter computes it: satisfied within `T[,F]` (durations; F, tolerating, 4T by default) for --extended, JSON and --html")
	fs.Var(&lo.ranges, "ranges", "the charts' response-time ranges: ascending upper edges, a `LIST` of durations (default 800ms,1200ms, Gatling's)")
	fs.StringArrayVar(&lo.failIf, "fail-if", nil, "a threshold checked after the report, exit 3 unless `EXPR` holds (p99<50ms, mean<10ms, failed<1%, non2xx=0, rps>5000; repeatable)")
	fs.BoolVar(&lo.help, "help", false, "print this help (ab's options and gab's) on stdout and exit")
	return fs
}

// durationValue is a duration option's value (longopt.Duration: a Go
// duration or plain seconds).
type durationValue = longopt.Duration

// emptyValue is the name of a string option given as "" (--json "", a
// program, a path or a list that would otherwise be silently absent), or "".
func emptyValue(fs *pflag.FlagSet) string {
	name := ""
	fs.Visit(func(f *pflag.Flag) {
		if name == "" && f.Value.Type() == "string" && f.Value.String() == "" {
			name = f.Name
		}
	})
	return name
}

// longOptionError is a long option's parse error (pflag's) as one line that
// names the option and the value given, whatever the option's type.
func longOptionError(err error) error {
	var (
		invalid  *pflag.InvalidValueError
		required *pflag.ValueRequiredError
		unknown  *pflag.NotExistError
		syntax   *pflag.InvalidSyntaxError
	)
	switch {
	case errors.As(err, &invalid):
		return fmt.Errorf("--%s %q: %v", invalid.GetFlag().Name, invalid.GetValue(), invalid.Unwrap())
	case errors.As(err, &required):
		return fmt.Errorf("--%s needs a value", required.GetSpecifiedName())
	case errors.As(err, &unknown):
		return fmt.Errorf("unknown option --%s", unknown.GetSpecifiedName())
	case errors.As(err, &syntax):
		return fmt.Errorf("%q is not an option", syntax.GetSpecifiedFlag())
	}
	return err
}

// takesArgument reports whether ab's short option c needs an argument.
func takesArgument(c byte) bool {
	i := strings.IndexByte(shortOptions, c)
	return c != ':' && i >= 0 && i+1 < len(shortOptions) && shortOptions[i+1] == ':'
}

// cmdWords is a command line's words (argv[0] excluded), classified in one
// walk (splitArgs), for everything that reads argv: ab's getopt, pflag, the
// early check for --format json and the JSON document's redacted copy.
type cmdWords struct {
	short []string // ab's options and operands, in order, for getopt
	long  []string // gab's long options and their separate values, for pflag
	// secrets are the -A and -P values: the word holding one, and where in it
	// the value starts (0 for a separate word, past the letter for "-Auser:pw").
	secrets []wordAt
	// jsonFormat: --format json (or --format=json) among the long options.
	jsonFormat bool
}

type wordAt struct{ word, at int }

// splitArgs takes gab's long options (and their separate values) out of args,
// wherever they are, so that ab's getopt sees only what ab would see. A word
// that is the argument of a short option (-H --x) stays with it, and "--" ends
// the long options as well. Short options are walked with ab's grammar
// (clusters, attached or separate values), also past the first operand, so
// that a credential is found wherever it is.
func splitArgs(args []string, fs *pflag.FlagSet) cmdWords {
	var w cmdWords
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			w.short = append(w.short, args[i:]...)
			return w
		case strings.HasPrefix(a, "--"):
			w.long = append(w.long, a)
			name := a[2:]
			if name == "format=json" {
				w.jsonFormat = true
			}
			if strings.Contains(name, "=") {
				continue
			}
			if f := fs.Lookup(name); f != nil && f.NoOptDefVal == "" && i+1 < len(args) {
				i++
				w.long = append(w.long, args[i])
				w.jsonFormat = w.jsonFormat || (name == "format" && args[i] == "json")
			}
		case len(a) > 1 && a[0] == '-':
			w.short = append(w.short, a)
			for j := 1; j < len(a); j++ {
				if !takesArgument(a[j]) {
					continue
				}
				secret := a[j] == 'A' || a[j] == 'P'
				switch {
				case j+1 < len(a):
					if secret {
						w.secrets = append(w.secrets, wordAt{i, j + 1})
					}
				case i+1 < len(args):
					i++
					w.short = append(w.short, args[i])
					if secret {
						w.secrets = append(w.secrets, wordAt{i, 0})
					}
				}
				break
			}
		default:
			w.short = append(w.short, a)
		}
	}
	return w
}

// classifyArgv is splitArgs of argv[1:] with gab's long options.
func classifyArgv(argv []string) cmdWords {
	if len(argv) < 2 {
		return cmdWords{}
	}
	return splitArgs(argv[1:], newLongFlagSet(new(longOptions)))
}

// getopt is APR's apr_getopt, which ab uses: options left to right, clusters,
// attached or separate arguments (the next word is taken whatever it is), and
// parsing stops at the first non-option, at "-", after "--", or at the first
// error, which is reported with basename(argv[0]).
type getopt struct {
	argv  []string
	ind   int    // next word
	place string // rest of the current cluster
	prog  string // basename of argv[0]
	errw  io.Writer
}

// next returns the next option and its argument; ok is false at the end of the
// options or after an error (already printed).
func (g *getopt) next() (opt byte, arg string, ok bool) {
	if g.place == "" {
		if g.ind >= len(g.argv) || !strings.HasPrefix(g.argv[g.ind], "-") {
			return 0, "", false
		}
		g.place = g.argv[g.ind]
		if len(g.place) > 1 {
			g.place = g.place[1:]
			if g.place[0] == '-' { // "--", or any "--word": the end of the options
				g.ind++
				g.place = ""
				return 0, "", false
			}
		}
	}
	opt = g.place[0]
	g.place = g.place[1:]
	i := strings.IndexByte(shortOptions, opt)
	if opt == ':' || i < 0 {
		if opt == '-' { // a lone "-" is an argument
			g.place = ""
			return 0, "", false
		}
		if g.place == "" {
			g.ind++
		}
		fmt.Fprintf(g.errw, "%s: illegal option -- %c\n", g.prog, opt)
		return opt, "", false
	}
	if !takesArgument(opt) {
		if g.place == "" {
			g.ind++
		}
		return opt, "", true
	}
	if g.place != "" {
		arg = g.place
	} else {
		g.ind++
		if g.ind >= len(g.argv) {
			g.place = ""
			fmt.Fprintf(g.errw, "%s: option requires an argument -- %c\n", g.prog, opt)
			return opt, "", false
		}
		arg = g.argv[g.ind]
	}
	g.place = ""
	g.ind++
	return opt, arg, true
}

// basename is apr_filepath_name_get: the text after the last '/'.
func basename(p string) string {
	return p[strings.LastIndexByte(p, '/')+1:]
}

// method kinds, as ab tracks them for "Cannot mix ... with other methods".
type methodKind int

const (
	methodNone methodKind = iota
	methodHead
	methodPost
	methodPut
	methodCustom
)

// shortState is what ab's option loop tracks besides the options themselves.
type shortState struct {
	method    methodKind
	quiet     bool // -q
	timeLimit bool // -t given
	requests  bool // -n given
	fs        *pflag.FlagSet
	// workers and rampDelay are -W's and -R's values as atoi read them
	// (checked after the options); workersSet: -W was given.
	workers, rampDelay int
	workersSet         bool
}

// parseArgs reads argv (argv[0] included) as ab 2.3 does, plus gab's long
// options. When done is true the caller must exit with the status (usage,
// errors, -V, -h and --version have been printed already).
func parseArgs(argv []string, stdout, stderr io.Writer) (o *cliOptions, status int, done bool) {
	argv0 := "ab"
	if len(argv) > 0 {
		argv0 = argv[0]
		argv = argv[1:]
	}
	o = newOptions(argv0)

	var lo longOptions
	fs := newLongFlagSet(&lo)
	words := splitArgs(argv, fs)
	shortArgs := words.short
	if err := fs.Parse(words.long); err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", longOptionError(err))
		return o, exitUsage, true
	}
	if lo.version {
		fmt.Fprintf(stdout, "gab %s\n", version)
		return o, exitOK, true
	}
	if lo.help {
		abprint.WriteUsage(stdout, argv0)
		io.WriteString(stdout, "\n"+abprint.TrunkUsage+"\n")
		writeLongUsage(stdout, fs)
		writeCommands(stdout, argv0) // commands.go; -h stays ab's usage and the long options
		return o, exitOK, true
	}
	if status, done := o.applyLong(&lo, fs, stderr); done {
		return o, status, true
	}

	g := &getopt{argv: append([]string{argv0}, shortArgs...), ind: 1, prog: basename(argv0), errw: stderr}
	st := &shortState{fs: fs}
	for {
		opt, arg, ok := g.next()
		if !ok {
			break
		}
		if status, done := o.applyShort(opt, arg, st, stdout, stderr); done {
			return o, status, true
		}
	}
	if status, done := o.check(g.argv[g.ind:], st, stderr); done {
		return o, status, true
	}
	if status, done := o.applyShard(&lo.shard, time.Now(), stderr); done {
		return o, status, true
	}
	return o, exitOK, false
}

// applyShort applies one of ab's options at once, as ab does (so -t then -n
// differs from -n then -t, and -V or a bad -n ends parsing).
func (o *cliOptions) applyShort(opt byte, arg string, st *shortState, stdout, stderr io.Writer) (status int, done bool) {
	switch opt {
	case 'V':
		abprint.WriteBanner(stdout, o.HTML)
		return exitOK, true
	case 'h':
		abprint.WriteUsage(stderr, o.Argv0)
		io.WriteString(stderr, "\n"+abprint.TrunkUsage+"\n")
		writeLongUsage(stderr, st.fs)
		return exitUsage, true
	case 'n', 'k', 'r', 't', 's', 'c', 'b', 'l', 'v', 'B', 'X':
		return o.applyRunShort(opt, arg, st, stderr)
	case 'W', 'R':
		o.applyTrunkShort(opt, arg, st)
	case 'i', 'p', 'u', 'm', 'T', 'C', 'A', 'P', 'H':
		return o.applyRequestShort(opt, arg, st, stderr)
	case 'I', 'Z', 'f', 'E':
		o.applyTLSShort(opt, arg)
	case 'q', 'Q', 'd', 'S', 'g', 'e', 'w', 'x', 'y', 'z':
		o.applyOutputShort(opt, arg, st)
	}
	return exitOK, false
}

// applyRunShort applies ab's options of the run: how many requests, how many
// at once, for how long, where from, through which proxy.
func (o *cliOptions) applyRunShort(opt byte, arg string, st *shortState, stderr io.Writer) (status int, done bool) {
	cfg := &o.Config
	switch opt {
	case 'n':
		cfg.Requests = client.Atoi(arg)
		st.requests = true
		if cfg.Requests <= 0 {
			io.WriteString(stderr, "Invalid number of requests\n\n")
			return exitError, true
		}
	case 'k':
		cfg.KeepAlive = true
	case 'r':
		cfg.KeepGoing = true
	case 't':
		st.timeLimit = true
		cfg.TimeLimit = timeLimit(client.Atoi(arg))
		cfg.Requests = timeLimitRequests
		if o.NoCap {
			cfg.Requests = uncappedRequests
		}
	case 's':
		cfg.Timeout = time.Duration(client.Atoi(arg)) * time.Second
	case 'c':
		cfg.Concurrency = client.Atoi(arg)
	case 'b':
		cfg.SocketBuffer = client.Atoi(arg)
	case 'l':
		cfg.VariableLength = true
	case 'v':
		cfg.Verbosity = client.Atoi(arg)
	case 'B':
		cfg.LocalAddr = arg
	case 'X':
		host, port, hasPort := strings.Cut(arg, ":")
		o.Proxy, cfg.Proxy, cfg.ProxyHost, cfg.ProxyPort = true, true, host, 0
		if hasPort {
			cfg.ProxyPort = client.Atoi(port)
		}
	}
	return exitOK, false
}

// applyRequestShort applies ab's options of the request: its method, body,
// headers, cookie and credentials.
func (o *cliOptions) applyRequestShort(opt byte, arg string, st *shortState, stderr io.Writer) (status int, done bool) {
	spec := &o.Config.Spec
	switch opt {
	case 'i':
		if st.method != methodNone {
			io.WriteString(stderr, "Cannot mix HEAD with other methods\n\n")
			return exitError, true
		}
		st.method, spec.Method = methodHead, "HEAD"
	case 'p', 'u':
		verb, kind := "POST", methodPost
		if opt == 'u' {
			verb, kind = "PUT", methodPut
		}
		if st.method != methodNone {
			fmt.Fprintf(stderr, "Cannot mix %s with other methods\n\n", verb)
			return exitError, true
		}
		body, err := targets.ReadPostFile(arg)
		if err != nil {
			io.WriteString(stderr, err.Error())
			return exitError, true
		}
		st.method, spec.Method = kind, verb
		spec.Body, spec.HasBody = body, true
	case 'm':
		// No mixing check: -m only renames the method (ab: -p f -m PUT sends PUT with the body).
		st.method, spec.Method = methodCustom, arg
	case 'T':
		spec.ContentType = arg
	case 'C':
		spec.Cookie, spec.HasCookie = arg, true // only the last -C counts
	case 'A', 'P':
		line, err := client.AuthLine(arg, opt == 'P')
		if err != nil {
			io.WriteString(stderr, err.Error()+"\n")
			return exitError, true
		}
		spec.Auth = append(spec.Auth, line)
	case 'H':
		spec.Headers = append(spec.Headers, arg)
	}
	return exitOK, false
}

// applyTLSShort applies ab's TLS options.
func (o *cliOptions) applyTLSShort(opt byte, arg string) {
	tls := &o.Config.TLS
	switch opt {
	case 'I':
		tls.NoSNI = true
	case 'Z':
		tls.Ciphers = arg
	case 'f':
		if p := tlsProtocol(arg); p != "" {
			tls.Protocol = p
		}
	case 'E':
		tls.CertFile = arg
	}
}

// applyOutputShort applies ab's options of what it prints and writes.
func (o *cliOptions) applyOutputShort(opt byte, arg string, st *shortState) {
	switch opt {
	case 'q':
		st.quiet = true
	case 'Q':
		o.NoBanner = true
	case 'd':
		o.NoPercentiles = true
	case 'S':
		o.NoConfidence = true
	case 'g':
		o.GnuplotFile = arg
		o.Config.KeepAllRows = arg != "" // every row, also past --sample-limit
	case 'e':
		o.CSVFile = arg
	case 'w':
		o.HTML = true
	case 'x':
		o.HTML, o.TableAttrs = true, arg
	case 'y':
		o.HTML, o.RowAttrs = true, arg
	case 'z':
		o.HTML, o.CellAttrs = true, arg
	}
}

// timeLimit converts -t's seconds. A negative value puts ab's stop time in
// the past, so the run ends at its first wake-up: a nanosecond here.
func timeLimit(secs int) time.Duration {
	switch {
	case secs > 0:
		return time.Duration(secs) * time.Second
	case secs < 0:
		return time.Nanosecond
	}
	return 0
}

// check runs ab's checks after the options, in ab's order, then gab's own.
func (o *cliOptions) check(args []string, st *shortState, stderr io.Writer) (status int, done bool) {
	cfg := &o.Config
	usageError := func(format string, a ...any) (int, bool) {
		fmt.Fprintf(stderr, "%s: "+format+"\n", append([]any{o.Argv0}, a...)...)
		abprint.WriteUsage(stderr, o.Argv0)
		return exitUsage, true
	}
	wantArgs := 1
	if o.lists.URLs != "" || o.lists.Targets != "" {
		wantArgs = 0 // the URLs are the file's
		if len(args) == 1 {
			fmt.Fprintf(stderr, "gab: %s takes its URLs from its file and no URL argument (%s)\n", o.lists.ListOption(), args[0])
			return exitUsage, true
		}
	}
	if o.lists.Replay != "" && len(args) <= 1 {
		wantArgs = len(args) // the URL the log's paths go to, if they are paths
	}
	if o.Demo {
		wantArgs = 0 // the URL is the demo server's
		if len(args) == 1 {
			fmt.Fprintf(stderr, "gab: --demo benchmarks its own server and takes no URL (%s)\n", args[0])
			return exitUsage, true
		}
	}
	if len(args) != wantArgs {
		return usageError("wrong number of arguments")
	}
	if st.method == methodNone {
		cfg.Spec.Method = "GET"
	}
	cfg.Spec.HeadMethod = cfg.Spec.Method == "HEAD"
	var target client.Target
	if o.lists.Replay != "" {
		t, status, done := o.checkReplay(args, st, stderr)
		if done {
			return status, done
		}
		target = t
	} else if o.lists.URLs != "" || o.lists.Targets != "" {
		t, status, done := o.loadList(st, stderr)
		if done {
			return status, done
		}
		target, o.URL = t, t.Raw
	} else if !o.Demo {
		o.URL = args[0]
		t, err := client.ParseURL(o.URL)
		if err != nil {
			return usageError("invalid URL")
		}
		target = t
	}
	if len(cfg.RateSchedule) > 0 && !st.timeLimit {
		// A schedule lasts its phases: they are the run's -t, and -n (if
		// given) its only other bound.
		cfg.TimeLimit = client.ScheduleLength(cfg.RateSchedule)
		if !st.requests {
			cfg.Requests = uncappedRequests
		}
	}
	if cfg.Concurrency < 0 || cfg.Concurrency > maxConcurrency {
		return usageError("Invalid Concurrency [Range 0..%d]", maxConcurrency)
	}
	if cfg.Concurrency > cfg.Requests {
		return usageError("Cannot use concurrency level greater than total number of requests")
	}
	if status, done := o.checkTrunk(st, usageError); done {
		return status, done
	}
	o.Progress = client.ProgressInterval(cfg.Requests, st.quiet)
	cfg.Quiet = o.Progress == 0
	if o.NoCap && !st.timeLimit {
		io.WriteString(stderr, "gab: --no-cap needs -t (it lifts the 50000 requests that -t implies)\n")
		return exitUsage, true
	}
	if status, done := o.conflicts(target, stderr); done {
		return status, done
	}
	if !o.Demo {
		o.setTarget(target)
	}
	return exitOK, false
}

// conflicts refuses the combinations of ab's options with gab's that would
// leave an option without effect (runcmd.Options.Conflict): a usage error
// (exit 22), as every invalid or conflicting extension option is. target is
// the URL's (zero with --demo).
func (o *cliOptions) conflicts(target client.Target, stderr io.Writer) (status int, done bool) {
	if msg := o.Conflict(target); msg != "" {
		io.WriteString(stderr, "gab: "+msg+"\n")
		return exitUsage, true
	}
	return exitOK, false
}

// applyLong moves the long options' values into o; a contradiction is an error.
// One rule for numbers: a numeric option that is given must be positive (its
// absence is the default).
func (o *cliOptions) applyLong(lo *longOptions, fs *pflag.FlagSet, stderr io.Writer) (status int, done bool) {
	err := func() error {
		if lo.http3 && (lo.http2 || lo.http11 || lo.cgi != "") {
			return errors.New("--http3 excludes --http2, --http1.1 and --cgi")
		}
		if name := emptyValue(fs); name != "" {
			return fmt.Errorf("--%s needs a value (an empty one would leave it without effect)", name)
		}
		for _, apply := range [...]func(*longOptions, *pflag.FlagSet) error{
			o.applyProtocolLong, o.applyRunLong, o.applyOutputLong, o.applyLiveLong, o.applyMeasureLong,
		} {
			if err := apply(lo, fs); err != nil {
				return err
			}
		}
		if err := lo.lists.Check(fs.Changed, lo.demo); err != nil {
			return err
		}
		o.lists = lo.lists
		return nil
	}()
	if err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return exitUsage, true
	}
	return exitOK, false
}

// applyProtocolLong applies the options of the protocol: --http2, --http3,
// --http1.1, --cgi (one at most), --streams, --cgi-env.
func (o *cliOptions) applyProtocolLong(lo *longOptions, fs *pflag.FlagSet) error {
	cfg := &o.Config
	exclusive := 0
	for _, on := range []bool{lo.http2, lo.http11, lo.cgi != ""} {
		if on {
			exclusive++
		}
	}
	if exclusive > 1 {
		return errors.New("--http2, --http1.1 and --cgi exclude each other")
	}
	switch {
	case lo.http2:
		cfg.Protocol = client.HTTP2
	case lo.http3:
		cfg.Protocol = client.HTTP3
	case lo.http11:
		cfg.Protocol = client.HTTP11
	case lo.cgi != "":
		cfg.Protocol = client.CGI
		cfg.CGIProgram = lo.cgi
	}
	if lo.streams < 1 {
		return fmt.Errorf("--streams must be at least 1, not %d", lo.streams)
	}
	if fs.Changed("streams") && !lo.http2 && !lo.http3 {
		return errors.New("--streams needs --http2 or --http3 (HTTP/1 sends one request at a time per connection)")
	}
	cfg.Streams = lo.streams
	if lo.pipeline < 1 || lo.pipeline > client.MaxPipeline {
		return fmt.Errorf("--pipeline must be from 1 to %d, not %d", client.MaxPipeline, lo.pipeline)
	}
	cfg.Pipeline = lo.pipeline
	if lo.earlyData && !lo.http3 {
		return errors.New("--early-data needs --http3 (0-RTT is QUIC's)")
	}
	cfg.TLS.EarlyData = lo.earlyData
	if len(lo.cgiEnv) > 0 && lo.cgi == "" {
		return errors.New("--cgi-env needs --cgi")
	}
	for _, kv := range lo.cgiEnv {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			return fmt.Errorf("--cgi-env wants NAME=VALUE, not %q", kv)
		}
	}
	cfg.CGIEnv = lo.cgiEnv
	return nil
}

// applyRunLong applies the options of how gab runs: --request-timeout, --engine, --cpus,
// --no-cap, --sample-limit, --demo, --verify-tls, --tls-resume.
func (o *cliOptions) applyRunLong(lo *longOptions, fs *pflag.FlagSet) error {
	cfg := &o.Config
	if fs.Changed("request-timeout") && lo.requestTimeout == 0 {
		return errors.New("--request-timeout must be positive (leave it out for no per-request timeout)")
	}
	cfg.RequestTimeout = time.Duration(lo.requestTimeout)
	switch lo.engine {
	case client.EngineUring:
		if lo.http2 || lo.http3 || lo.cgi != "" {
			return errors.New("--engine uring is for HTTP/1 (not --http2, --http3 or --cgi)")
		}
		cfg.Engine = lo.engine
	case client.EngineAuto, client.EngineEpoll:
		cfg.Engine = lo.engine
	default:
		return fmt.Errorf("--engine must be epoll, uring or auto, not %q", lo.engine)
	}
	if fs.Changed("cpus") && (lo.cpus < 1 || lo.cpus > maxCPUs) {
		return fmt.Errorf("--cpus must be from 1 to %d, not %d", maxCPUs, lo.cpus)
	}
	o.CPUs = lo.cpus
	o.NoCap = lo.noCap
	if fs.Changed("sample-limit") && lo.sampleLimit < 1 {
		return fmt.Errorf("--sample-limit must be at least 1, not %d", lo.sampleLimit)
	}
	cfg.SampleLimit = lo.sampleLimit
	o.Demo = lo.demo
	cfg.TLS.Verify = lo.verifyTLS
	cfg.TLS.Resume = lo.tlsResume
	return nil
}

// applyOutputLong applies the options of what gab prints and writes:
// --format, --json, --percentiles, --extended, --plot, --html, --histogram,
// --progress.
func (o *cliOptions) applyOutputLong(lo *longOptions, _ *pflag.FlagSet) error {
	switch lo.format {
	case "text", "json":
		o.Format = lo.format
	default:
		return fmt.Errorf("--format must be text or json, not %q", lo.format)
	}
	o.JSONFile = lo.jsonFile
	o.Percentiles = lo.percentiles
	o.Extended = lo.extended
	if lo.plot != "" {
		if _, err := gnuplot.TerminalFor(lo.plot); err != nil {
			return fmt.Errorf("--plot %v", err)
		}
	}
	o.PlotFile, o.HTMLFile, o.Histogram = lo.plot, lo.html, lo.histogram
	if lo.dashboard != "" {
		if _, err := dashboard.ListenAddr(lo.dashboard); err != nil {
			return fmt.Errorf("--dashboard %v", err)
		}
	} else if lo.dashboardLinger != 0 {
		return errors.New("--dashboard-linger needs --dashboard")
	}
	o.Dashboard, o.DashboardLinger = lo.dashboard, time.Duration(lo.dashboardLinger)
	switch lo.progress {
	case "auto", "always", "never":
		o.ProgressBar = lo.progress
	default:
		return fmt.Errorf("--progress must be auto, always or never, not %q", lo.progress)
	}
	return nil
}

// applyMeasureLong applies the options of what gab measures besides ab's
// figures, and how: --rate, --server-pid, --warmup, --fail-if, --hlog,
// --interval (after the output options, which --interval needs one of).
func (o *cliOptions) applyMeasureLong(lo *longOptions, fs *pflag.FlagSet) error {
	cfg := &o.Config
	if fs.Changed("rate") {
		rate, phases, err := longopt.ParseRate(lo.rate, time.Duration(lo.step), fs.Changed("step"))
		if err != nil {
			return err
		}
		cfg.Rate, cfg.RateSchedule = rate, phases
	} else if fs.Changed("step") {
		return errors.New("--step needs a --rate list (--rate 1000,2000,4000 --step 10s)")
	}
	switch len(lo.serverPID) {
	case 0:
	case 1:
		label, pids, err := sweep.ParseServerPID(lo.serverPID[0])
		if err != nil {
			return err
		}
		o.ServerLabel, o.ServerPIDs = label, pids
	default:
		return fmt.Errorf("--server-pid is given %d times: a run measures one server (list all its processes: --server-pid [LABEL=]PID,PID)", len(lo.serverPID))
	}
	cfg.WarmupRequests, cfg.WarmupTime = lo.warmup.Requests, lo.warmup.Time
	for _, e := range lo.failIf {
		t, err := report.ParseThreshold(e)
		if err != nil {
			return err
		}
		o.FailIf = append(o.FailIf, t)
	}
	if err := failIfNeeds(o.FailIf, lo.apdex.T > 0, len(o.ServerPIDs) > 0); err != nil {
		return err
	}
	if lo.apdex.T > 0 {
		shown := slices.Contains(report.ThresholdNeeds(o.FailIf), report.NeedsApdex) // a --fail-if verdict states it
		if !shown && !o.Extended && o.Format != "json" && o.JSONFile == "" && o.HTMLFile == "" && o.Dashboard == "" {
			return errors.New("--apdex needs --extended, --json, --format json, --html, --dashboard or a --fail-if on apdex to show it")
		}
		o.Apdex = &report.Apdex{T: lo.apdex.T, F: lo.apdex.F}
	}
	if len(lo.ranges) > 0 {
		if o.PlotFile == "" && o.HTMLFile == "" && o.Dashboard == "" {
			return errors.New("--ranges needs --plot, --html or --dashboard to draw them")
		}
		o.Ranges = lo.ranges
	}
	o.HlogFile = lo.hlogFile
	o.Interval = time.Duration(lo.interval)
	if o.Interval != 0 {
		if o.Interval < client.MinInterval {
			return fmt.Errorf("--interval must be at least %v, not %v", client.MinInterval, o.Interval)
		}
		if o.HlogFile == "" && !o.Extended && o.Format != "json" && o.JSONFile == "" && o.PlotFile == "" && o.HTMLFile == "" && !o.Live.Any() && o.Dashboard == "" {
			return errors.New("--interval needs --hlog, --extended, --json, --format json, --plot, --html, --live, --metrics, --remote-write or --dashboard to show the timeline")
		}
	}
	return nil
}

// failIfNeeds refuses a --fail-if figure that needs a setting the command
// line lacks (the catalog's Needs): --apdex T, --server-pid.
func failIfNeeds(ts []threshold.Threshold, apdex, serverPID bool) error {
	for _, t := range ts {
		f, _ := report.FigureByKey(t.Key)
		switch {
		case f.Needs == report.NeedsApdex && !apdex:
			return fmt.Errorf("--fail-if %q: %s needs --apdex T (the APDEX's target time)", t.Expr, t.Key)
		case f.Needs == report.NeedsServerCPU && !serverPID:
			return fmt.Errorf("--fail-if %q: %s needs --server-pid (the server's processes)", t.Expr, t.Key)
		}
	}
	return nil
}

// setTarget fills in what depends on the URL: the request target and Host
// header, the TLS server name, and the request bytes.
func (o *cliOptions) setTarget(t client.Target) {
	cfg := &o.Config
	cfg.Target = t
	spec := &cfg.Spec
	spec.Target = t.Path
	if o.Proxy {
		spec.Target = t.Raw // ab sends the URL exactly as typed to a proxy
	}
	spec.Host = t.HostField()
	spec.KeepAlive = cfg.KeepAlive
	spec.HTTP11 = cfg.Protocol == client.HTTP11
	cfg.TLS.ServerName = ""
	if !cfg.TLS.NoSNI {
		name := t.Host
		if host, ok, _, _ := client.HeaderOverrides(spec.Headers); ok {
			name = host
		}
		if name != "" && !looksLikeIPAddress(name) {
			cfg.TLS.ServerName = name
		}
	}
	cfg.Request, cfg.HeadLen = client.BuildRequest(*spec)
}

// tlsProtocol is ab's -f: a case-insensitive prefix match tried in the order
// ALL, TLS1.1, TLS1.2, TLS1.3, TLS1; anything else is ignored ("").
func tlsProtocol(arg string) string {
	for _, p := range []string{"ALL", "TLS1.1", "TLS1.2", "TLS1.3", "TLS1"} {
		if len(arg) >= len(p) && strings.EqualFold(arg[:len(p)], p) {
			return p
		}
	}
	return ""
}

// looksLikeIPAddress is apr_ipsubnet_create's test that keeps ab from sending
// an address as SNI: an IPv6 or IPv4 address, or a partial IPv4 network
// ("10.1", "10.1.2.").
func looksLikeIPAddress(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil && !strings.Contains(s, "%") {
		return true
	}
	if len(s) > len("255.255.255.255") {
		return false
	}
	octets := 0
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || client.Atoi(s[:i]) > 255 || octets == 4 {
			return false
		}
		octets++
		s = s[i:]
		if s != "" {
			if s[0] != '.' {
				return false
			}
			s = s[1:]
		}
	}
	return octets > 0
}

// strerror is glibc's text for the errno inside err, else Go's text.
func strerror(err error) string { return targets.Strerror(err) }

// writeLongUsage lists gab's long options (after ab's text, for -h), in
// ab's layout: the option and its argument, then the description.
func writeLongUsage(w io.Writer, fs *pflag.FlagSet) {
	type row struct{ left, help string }
	var rows []row
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		arg, help := pflag.UnquoteUsage(f)
		left := "--" + f.Name
		if f.Value.Type() != "bool" {
			left += " " + arg
		}
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" && f.DefValue != "[]" {
			help += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		rows = append(rows, row{left, help})
		width = max(width, len(left))
	})
	io.WriteString(w, "gab's own options (long options only):\n")
	for _, r := range rows {
		fmt.Fprintf(w, "    %-*s  %s\n", width, r.left, r.help)
	}
}

// applyLiveLong checks the live options (internal/live).
func (o *cliOptions) applyLiveLong(lo *longOptions, fs *pflag.FlagSet) error {
	s, err := lo.live.Spec(fs.Changed("metrics-linger"), time.Duration(lo.liveLinger))
	if err != nil {
		return err
	}
	if s.File == "-" && o.Format == "json" {
		return errors.New("--live - needs stdout, where --format json writes its document: give --live a file (or --json FILE for the document)")
	}
	o.Live = s
	return nil
}

// liveToStdout reports whether argv's long options say --live - (before the
// options are parsed, so that the report can be sent to stderr from the
// start).
func liveToStdout(argv []string) bool {
	if len(argv) < 2 {
		return false
	}
	var lo longOptions
	fs := newLongFlagSet(&lo)
	words := splitArgs(argv[1:], fs)
	if fs.Parse(words.long) != nil {
		return false
	}
	return lo.live.File == "-" && lo.format != "json"
}

// listRun is what reading --urls', --targets' or --replay's file needs of
// the rest of the command line (internal/targets).
func (o *cliOptions) listRun(st *shortState) targets.Run {
	r := targets.Run{Proxy: o.Proxy, MethodGiven: st.method != methodNone, Config: &o.Config, ServerName: o.serverName}
	if st.requests {
		r.Requests = o.Config.Requests
	}
	return r
}

// loadList reads --urls' or --targets' file into the run's URL list and
// returns its first URL, after the options that cannot go with a list.
func (o *cliOptions) loadList(st *shortState, stderr io.Writer) (client.Target, int, bool) {
	first, memoryLimit, err := o.lists.LoadList(os.Stdin, o.listRun(st))
	if err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return client.Target{}, exitUsage, true
	}
	o.memoryLimit = memoryLimit
	return first, exitOK, false
}

// checkReplay is check's part for --replay: the URL argument (optional),
// then the log (internal/targets).
func (o *cliOptions) checkReplay(args []string, st *shortState, stderr io.Writer) (client.Target, int, bool) {
	var base client.Target
	if len(args) == 1 {
		t, err := client.ParseURL(args[0])
		if err != nil {
			fmt.Fprintf(stderr, "%s: invalid URL\n", o.Argv0)
			abprint.WriteUsage(stderr, o.Argv0)
			return client.Target{}, exitUsage, true
		}
		base = t
	}
	first, err := o.lists.LoadLog(os.Stdin, base, len(args) == 1, o.listRun(st), stderr)
	if err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return client.Target{}, exitUsage, true
	}
	o.URL = first.Raw
	if len(args) == 1 {
		o.URL = args[0]
	}
	return first, exitOK, false
}

// serverName is the SNI a connection to t sends, by setTarget's rule.
func (o *cliOptions) serverName(t client.Target) string {
	if o.Config.TLS.NoSNI {
		return ""
	}
	name := t.Host
	if host, ok, _, _ := client.HeaderOverrides(o.Config.Spec.Headers); ok {
		name = host
	}
	if name == "" || looksLikeIPAddress(name) {
		return ""
	}
	return name
}

// applyShard checks the sharding options (internal/shard) against the rest
// of the command line and gives this process its shares. It runs after ab's
// checks.
func (o *cliOptions) applyShard(f *shard.Flags, now time.Time, stderr io.Writer) (status int, done bool) {
	cfg := &o.Config
	p, err := f.Plan(now)
	whole := runcmd.ShardSpec{Index: p.Index, Count: p.Count, RunID: p.RunID,
		Requests: cfg.Requests, Concurrency: cfg.Concurrency, Rate: cfg.Rate}
	if err == nil {
		err = p.Apply(cfg, o.JSONFile != "" || o.Format == "json", uncappedRequests)
	}
	if err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return exitUsage, true
	}
	o.StartAt = p.StartAt
	if p.Count == 0 {
		return exitOK, false
	}
	o.Shard = &whole
	if o.Progress > 0 {
		o.Progress = client.ProgressInterval(cfg.Requests, false)
		cfg.Quiet = o.Progress == 0
	}
	return exitOK, false
}

// The options of Apache httpd trunk's ab, the next ab (its usage and getopt
// string "...SqQB:m:R:W:"), so that scripts written for it run on gab:
//
//	-W workers    worker threads: gab's event loops (at most -c), and the
//	              threads that run Go code (GOMAXPROCS, unless --cpus)
//	-R rampdelay  milliseconds between new connections at the start
//	-Q            no "This is ApacheBench" banner
//
// ab 2.3's usage text (-h) stays ab 2.3's, byte for byte: these options are
// listed after it, with gab's long options (writeLongUsage).

// maxRampDelay bounds -R (ms): a day between two connections.
const maxRampDelay = 24 * 60 * 60 * 1000

// applyTrunkShort applies -W and -R (checked after the options, in checkTrunk).
func (o *cliOptions) applyTrunkShort(opt byte, arg string, st *shortState) {
	switch opt {
	case 'W':
		st.workers, st.workersSet = client.Atoi(arg), true
	case 'R':
		st.rampDelay = client.Atoi(arg)
	}
}

// checkTrunk refuses a -W below 1 and a negative -R as usage errors (ab's
// status 22) and moves them into the configuration.
func (o *cliOptions) checkTrunk(st *shortState, usageError func(string, ...any) (int, bool)) (status int, done bool) {
	cfg := &o.Config
	if st.workersSet {
		if st.workers < 1 {
			return usageError("Invalid number of workers [at least 1]")
		}
		cfg.Workers = st.workers
	}
	if st.rampDelay < 0 || st.rampDelay > maxRampDelay {
		return usageError("Invalid ramp delay [Range 0..%d ms]", maxRampDelay)
	}
	cfg.ConnectDelay = time.Duration(st.rampDelay) * time.Millisecond
	return exitOK, false
}

// jsonRequested reports --format json in argv (before the options are
// parsed, so that an error in them can still be reported as a JSON document).
func jsonRequested(argv []string) bool { return classifyArgv(argv).jsonFormat }

// redactCredentials returns argv with the values of -A and -P replaced: ab
// prints credentials only in its -v 2 request dump, so the JSON command line
// must not carry them. The words are the ones splitArgs finds.
func redactCredentials(argv []string) []string {
	const hidden = "<redacted>"
	out := append([]string(nil), argv...)
	for _, s := range classifyArgv(argv).secrets {
		w := &out[s.word+1] // splitArgs counts from argv[1]
		*w = (*w)[:s.at] + hidden
	}
	return out
}
