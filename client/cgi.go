package client

import (
	"gab/internal/samples"

	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// CGI mode (--cgi): every request executes Config.CGIProgram as a CGI/1.1
// script (RFC 3875) instead of connecting to the URL, so that a gateway can be
// timed with no web server in between. The URL only supplies the request's
// meta-variables. The process handling is platform specific (cgi_linux.go).

// cgiSample is one CGI request's phases in µs. Spawn + FirstByte + Output +
// Reap is the request's Total, unless the program was still running
// cgiLinger after its stdout's EOF: then the response ended at the EOF (Total
// is Spawn + FirstByte + Output) and Reap and ChildCPU are filled in when the
// program exits or is killed at the end of the run.
type cgiSample struct {
	Spawn     uint32 // request start → the program is executing (fork + exec)
	FirstByte uint32 // executing → first byte on its stdout
	Output    uint32 // first byte → stdout EOF
	Reap      uint32 // stdout EOF → the process reaped
	ChildCPU  uint32 // user + system CPU time of the child (its rusage)

	late *cgiLate // a program reaped after its response was recorded; nil otherwise
}

// cgiLate carries the Reap and ChildCPU of a program that outlived its
// response to the store slot its request was recorded in, whichever of the
// two (the recording, the exit) comes first.
type cgiLate struct {
	mu        sync.Mutex
	store     *cgiStore
	idx       int // -1 until recorded
	reaped    bool
	reap, cpu uint32
}

func (l *cgiLate) recorded(s *cgiStore, i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.store, l.idx = s, i
	if l.reaped {
		s.setExit(i, l.reap, l.cpu)
	}
}

func (l *cgiLate) exited(reap, cpu uint32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reaped, l.reap, l.cpu = true, reap, cpu
	if l.idx >= 0 {
		l.store.setExit(l.idx, reap, cpu)
	}
}

// cgiStore keeps the CGI phases of the first min(n, SampleLimit) recorded
// requests, by recording index, like Samples: allocated at once, or as the
// requests come in a run that a time limit ends (see samples.NewGrowing).
type cgiStore struct {
	spawn, firstByte, output, reap, childCPU samples.Blocks[uint32]
}

func newCGIStore(n, limit int, growing bool) *cgiStore {
	if limit <= 0 {
		limit = samples.DefaultLimit
	}
	size := max(min(n, limit), 0)
	first := size
	if growing {
		first = 0 // the blocks come as the requests do
	}
	return &cgiStore{
		spawn:     samples.NewBlocks[uint32](first, size),
		firstByte: samples.NewBlocks[uint32](first, size),
		output:    samples.NewBlocks[uint32](first, size),
		reap:      samples.NewBlocks[uint32](first, size),
		childCPU:  samples.NewBlocks[uint32](first, size),
	}
}

// put stores request i's phases; safe for concurrent use with distinct i.
func (s *cgiStore) put(i int, c *cgiSample) {
	if c == nil || i >= s.spawn.Limit() {
		return
	}
	s.spawn.Set(i, c.Spawn)
	s.firstByte.Set(i, c.FirstByte)
	s.output.Set(i, c.Output)
	s.setExit(i, c.Reap, c.ChildCPU)
	if c.late != nil {
		c.late.recorded(s, i)
	}
}

// setExit stores request i's Reap and ChildCPU.
func (s *cgiStore) setExit(i int, reap, cpu uint32) {
	s.reap.Set(i, reap)
	s.childCPU.Set(i, cpu)
}

// times returns the phases of the first done requests (fewer past the
// limit). It must not run concurrently with put or setExit.
func (s *cgiStore) times(done int) *CGITimes {
	k := max(min(done, s.spawn.Limit()), 0)
	return &CGITimes{
		Spawn:     s.spawn.All(k),
		FirstByte: s.firstByte.All(k),
		Output:    s.output.All(k),
		Reap:      s.reap.All(k),
		ChildCPU:  s.childCPU.All(k),
	}
}

// cgiTransport runs one process per request.
type cgiTransport struct {
	cfg     *Config
	path    string   // absolute path of the program
	dir     string   // its directory: the working directory of every run
	argv    []string // argv[0] is the program's path
	env     []string // the meta-variables, built once
	nph     bool     // nph- program: writes a full HTTP response
	body    []byte
	hasBody bool

	// Programs that outlived their response (see cgiLinger): killed when
	// the run stops, as running ones are.
	lingerMu  sync.Mutex
	lingerers map[io.Closer]struct{}
	stopped   bool
}

// addLingerer registers a program that outlives its response, or kills it
// at once if the run has stopped.
func (tr *cgiTransport) addLingerer(p io.Closer) {
	tr.lingerMu.Lock()
	defer tr.lingerMu.Unlock()
	if tr.stopped {
		_ = p.Close() // kills the group; its reaper goes on
		return
	}
	if tr.lingerers == nil {
		tr.lingerers = map[io.Closer]struct{}{}
	}
	tr.lingerers[p] = struct{}{}
}

func (tr *cgiTransport) dropLingerer(p io.Closer) {
	tr.lingerMu.Lock()
	defer tr.lingerMu.Unlock()
	delete(tr.lingerers, p)
}

// stopLingerers kills the programs still running when the run stops.
func (tr *cgiTransport) stopLingerers() {
	tr.lingerMu.Lock()
	defer tr.lingerMu.Unlock()
	tr.stopped = true
	for p := range tr.lingerers {
		_ = p.Close()
	}
}

// errCGIProgram reports a --cgi program that cannot be used.
var errCGIProgram = errors.New("not an executable file")

func newCGI(cfg *Config) (transport, error) {
	if err := cgiSupported(); err != nil {
		return nil, err
	}
	if cfg.CGIProgram == "" {
		return nil, errors.New("--cgi needs a program")
	}
	path, err := filepath.Abs(cfg.CGIProgram)
	if err != nil {
		return nil, fmt.Errorf("--cgi %s: %w", cfg.CGIProgram, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--cgi: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("--cgi %s: %w", cfg.CGIProgram, errCGIProgram)
	}
	base := filepath.Base(path)
	return &cgiTransport{
		cfg:     cfg,
		path:    path,
		dir:     filepath.Dir(path),
		argv:    []string{path},
		env:     cgiEnvironment(cfg, base),
		nph:     strings.HasPrefix(base, "nph-"),
		body:    cfg.Spec.Body,
		hasBody: cfg.Spec.HasBody,
	}, nil
}

func (tr *cgiTransport) prepare(_ context.Context, r *run) error {
	if tr.cfg.KeepAlive {
		r.events.Notice("-k has no meaning with --cgi (every request runs a new process); ignored")
	}
	if err := cgiPrepareProcess(); err != nil {
		return err
	}
	r.cgi = newCGIStore(tr.cfg.Requests, tr.cfg.SampleLimit, tr.cfg.TimeLimit > 0)
	go func() {
		<-r.stopCh // every run ends with stop
		tr.stopLingerers()
	}()
	// No ramp-up: a program that fails without a header must not keep the
	// other slots waiting for ever.
	r.openRamp()
	return nil
}

func (tr *cgiTransport) slots() int { return tr.cfg.Concurrency }

func (tr *cgiTransport) work(r *run, _ int, t *tally) {
	w := &cgiWorker{tr: tr, buf: make([]byte, 64<<10)}
	w.parser.nph = tr.nph
	defer w.lingering.Wait() // the run's result waits for their Reap figures
	for r.claim(t) {
		o := w.do(r, t)
		if !r.finish(t, o) {
			return
		}
	}
}

// cgiWorker holds one slot's reusable state.
type cgiWorker struct {
	tr     *cgiTransport
	buf    []byte
	parser cgiParser
	phases cgiSample
	out    outcome
	// lingering counts this worker's programs being reaped in the background.
	lingering sync.WaitGroup
}

// --- meta-variables (RFC 3875 §4.1) ---

// splitScriptPath splits a URL path (no query) into SCRIPT_NAME, which runs up
// to and including the first segment equal to the program's base name (the
// whole path if none is), and PATH_INFO, the rest.
func splitScriptPath(path, base string) (script, info string) {
	for i := 0; i < len(path); {
		if path[i] != '/' {
			i++
			continue
		}
		start := i + 1
		end := strings.IndexByte(path[start:], '/')
		if end < 0 {
			end = len(path)
		} else {
			end += start
		}
		if seg := path[start:end]; seg == base || unescapePath(seg) == base {
			return path[:end], path[end:]
		}
		i = end
	}
	return path, ""
}

func unescapePath(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// cgiEnv builds an environment in which a later value replaces an earlier one.
type cgiEnv struct {
	names []string
	vals  map[string]string
}

func (e *cgiEnv) set(name, val string) {
	if e.vals == nil {
		e.vals = map[string]string{}
	}
	if _, ok := e.vals[name]; !ok {
		e.names = append(e.names, name)
	}
	e.vals[name] = val
}

// add joins repeated HTTP_* headers with ", " (RFC 3875 §4.1.18).
func (e *cgiEnv) add(name, val string) {
	if old, ok := e.vals[name]; ok {
		e.vals[name] = old + ", " + val
		return
	}
	e.set(name, val)
}

func (e *cgiEnv) list() []string {
	out := make([]string, 0, len(e.names))
	for _, n := range e.names {
		out = append(out, n+"="+e.vals[n])
	}
	return out
}

// cgiEnvironment is the environment of every run: the request's
// meta-variables, PATH, and --cgi-env additions (which win).
func cgiEnvironment(cfg *Config, base string) []string {
	var env cgiEnv
	spec := &cfg.Spec
	path := cfg.Target.Path
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path = path[:i]
	}
	query := ""
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, query = path[:i], path[i+1:]
	}
	if path == "" {
		path = "/"
	}
	script, info := splitScriptPath(path, base)

	env.set("GATEWAY_INTERFACE", "CGI/1.1")
	proto := "HTTP/1.0"
	if spec.HTTP11 {
		proto = "HTTP/1.1"
	}
	env.set("SERVER_PROTOCOL", proto)
	env.set("SERVER_SOFTWARE", "gab")
	env.set("SERVER_NAME", cfg.Target.Host)
	env.set("SERVER_PORT", strconv.Itoa(cfg.Target.Port))
	method := spec.Method
	if method == "" {
		method = "GET"
		if spec.HeadMethod {
			method = "HEAD"
		}
	}
	env.set("REQUEST_METHOD", method)
	env.set("SCRIPT_NAME", unescapePath(script))
	env.set("PATH_INFO", unescapePath(info))
	env.set("QUERY_STRING", query)
	remote := "127.0.0.1"
	if ip := net.ParseIP(cfg.LocalAddr); ip != nil {
		remote = ip.String()
	}
	env.set("REMOTE_ADDR", remote)
	if spec.HasBody {
		env.set("CONTENT_LENGTH", strconv.Itoa(len(spec.Body)))
		if spec.ContentType != "" { // the CLI fills in DefaultContentType
			env.set("CONTENT_TYPE", spec.ContentType)
		}
	}
	for _, line := range spec.Auth {
		name, val, ok := splitHeader(line)
		if ok && strings.EqualFold(name, "Authorization") {
			setAuth(&env, val)
		}
		// Proxy-Authorization is for a proxy; a CGI program never sees it.
	}

	// The request headers gab would send, in ab's order (see BuildRequest).
	if spec.Cookie != "" {
		env.add("HTTP_COOKIE", spec.Cookie)
	}
	_, hasHost, hasAgent, hasAccept := HeaderOverrides(spec.Headers)
	for _, line := range spec.Headers {
		name, val, ok := splitHeader(line)
		if !ok {
			continue
		}
		switch {
		case strings.EqualFold(name, "Authorization"):
			setAuth(&env, val)
			continue
		case strings.EqualFold(name, "Content-Type"), strings.EqualFold(name, "Content-Length"):
			// §4.1.18: these are CONTENT_TYPE/CONTENT_LENGTH, never HTTP_*.
			if !spec.HasBody {
				env.set(strings.ToUpper(strings.ReplaceAll(name, "-", "_")), val)
			}
			continue
		}
		env.add(httpVarName(name), val)
	}
	if !hasHost {
		env.add("HTTP_HOST", spec.Host)
	}
	if !hasAgent {
		env.add("HTTP_USER_AGENT", abUserAgent)
	}
	if !hasAccept {
		env.add("HTTP_ACCEPT", "*/*")
	}
	p := os.Getenv("PATH")
	if p == "" {
		p = "/usr/local/bin:/usr/bin:/bin"
	}
	env.set("PATH", p)
	for _, kv := range cfg.CGIEnv {
		if name, val, ok := strings.Cut(kv, "="); ok && name != "" {
			env.set(name, val)
		}
	}
	return env.list()
}

// splitHeader splits "Name: value"; ok is false without a name.
func splitHeader(line string) (name, val string, ok bool) {
	line = strings.TrimRight(line, "\r\n")
	name, val, ok = strings.Cut(line, ":")
	name = strings.TrimSpace(name)
	return name, strings.TrimSpace(val), ok && name != ""
}

// setAuth sets AUTH_TYPE and, for Basic credentials, REMOTE_USER.
func setAuth(env *cgiEnv, val string) {
	scheme, cred, _ := strings.Cut(val, " ")
	env.set("AUTH_TYPE", scheme)
	if strings.EqualFold(scheme, "Basic") {
		if dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
			user, _, _ := strings.Cut(string(dec), ":")
			env.set("REMOTE_USER", user)
		}
	}
}

func httpVarName(name string) string {
	b := []byte("HTTP_" + name)
	for i := 5; i < len(b); i++ {
		switch c := b[i]; {
		case c == '-':
			b[i] = '_'
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// --- the response (RFC 3875 §6) ---

// cgiMaxHead bounds the header block, as ab bounds a response head.
const cgiMaxHead = 8192

var errTooLongHead = fmt.Errorf("malformed header from script: no blank line within %d bytes", cgiMaxHead)

// cgiParser reads a program's stdout as it arrives: the header block up to
// the blank line, then the body, which is only counted.
type cgiParser struct {
	nph       bool
	head      []byte // the header block so far (reused between requests)
	lineStart int    // where the current, incomplete line starts in head
	inHead    bool
	body      int64
	status    int
	server    string
	hasServer bool
	headLen   int // length of the complete header block, terminator included
	err       error
}

func (p *cgiParser) reset() {
	p.head = p.head[:0]
	p.lineStart = 0
	p.inHead = true
	p.body = 0
	p.status = 0
	p.server, p.hasServer = "", false
	p.headLen = 0
	p.err = nil
}

// feed takes the next bytes of stdout.
func (p *cgiParser) feed(b []byte) {
	if !p.inHead {
		if p.err == nil {
			p.body += int64(len(b))
		}
		return
	}
	scan := len(p.head)
	p.head = append(p.head, b...)
	for {
		nl := bytes.IndexByte(p.head[scan:], '\n')
		if nl < 0 {
			break
		}
		nl += scan
		line := p.head[p.lineStart:nl]
		if len(line) == 0 || (len(line) == 1 && line[0] == '\r') {
			p.inHead = false
			if nl+1 > cgiMaxHead {
				p.err = errTooLongHead
				return
			}
			p.headLen = nl + 1
			if p.err = p.parseHead(p.head[:p.lineStart]); p.err == nil {
				p.body = int64(len(p.head) - p.headLen)
			}
			return
		}
		p.lineStart = nl + 1
		scan = nl + 1
	}
	if len(p.head) > cgiMaxHead {
		p.inHead = false
		p.err = errTooLongHead
	}
}

// finish is called at stdout EOF.
func (p *cgiParser) finish() {
	if p.inHead {
		p.inHead = false
		if len(p.head) == 0 {
			p.err = errors.New("malformed header from script: no output")
		} else {
			p.err = errors.New("malformed header from script: output ended before the blank line")
		}
	}
}

// parseHead checks the header block (without its blank line) and takes the status.
func (p *cgiParser) parseHead(h []byte) error {
	fields := 0
	location := false
	first := true
	for len(h) > 0 {
		var line []byte
		if i := bytes.IndexByte(h, '\n'); i >= 0 {
			line, h = h[:i], h[i+1:]
		} else {
			line, h = h, nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if first && p.nph {
			first = false
			code, ok := statusLineCode(line)
			if !ok {
				return fmt.Errorf("malformed status line from nph- script: %q", line)
			}
			p.status = code
			continue
		}
		first = false
		if line[0] == ' ' || line[0] == '\t' {
			if fields == 0 {
				return fmt.Errorf("malformed header from script: %q", line)
			}
			continue // an obsolete folded continuation of the previous field
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 || !isToken(line[:colon]) {
			return fmt.Errorf("malformed header from script: %q", line)
		}
		fields++
		name, val := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case !p.nph && bytes.EqualFold(name, []byte("Status")):
			code, ok := statusCode(val)
			if !ok {
				return fmt.Errorf("malformed Status header from script: %q", line)
			}
			p.status = code
		case bytes.EqualFold(name, []byte("Location")):
			location = true
		case bytes.EqualFold(name, []byte("Server")) && !p.hasServer:
			p.server, p.hasServer = serverToken(val), true // as ab cuts a server's
		}
	}
	if p.nph {
		if p.status == 0 {
			return errors.New("malformed header from nph- script: no status line")
		}
		return nil
	}
	if fields == 0 {
		return errors.New("malformed header from script: empty header block")
	}
	if p.status == 0 {
		p.status = 200
		if location {
			p.status = 302
		}
	}
	return nil
}

// statusCode reads "NNN" or "NNN reason".
func statusCode(v []byte) (int, bool) {
	if len(v) < 3 || (len(v) > 3 && v[3] != ' ' && v[3] != '\t') {
		return 0, false
	}
	code := 0
	for _, c := range v[:3] {
		if c < '0' || c > '9' {
			return 0, false
		}
		code = code*10 + int(c-'0')
	}
	return code, code >= 100
}

// statusLineCode reads "HTTP/x.y NNN reason".
func statusLineCode(line []byte) (int, bool) {
	if !bytes.HasPrefix(line, []byte("HTTP/")) {
		return 0, false
	}
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return 0, false
	}
	return statusCode(bytes.TrimLeft(line[sp:], " "))
}

func isToken(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return len(b) > 0
}
