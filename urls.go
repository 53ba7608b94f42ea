package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/spf13/pflag"

	"gab/client"
)

// --urls FILE: one absolute URL a line (blank lines and '#' comments
// skipped), taken in turn (--url-order sequential) or at random (--url-order
// random, --seed N) by every request of the run; FILE "-" is stdin. The file
// is read before the run: a bad line is refused before any request, in one
// line naming the file and the line (exit 22).

// maxURLLine bounds one line of a URL file.
const maxURLLine = 64 << 10

// urlOptions are the long options of a URL list.
type urlOptions struct {
	file  string // --urls
	order string // --url-order: "sequential" or "random"
	seed  uint64 // --seed
}

// addURLFlags registers --urls, --url-order and --seed.
func addURLFlags(fs *pflag.FlagSet, u *urlOptions) {
	fs.StringVar(&u.file, "urls", "", "take every request's URL from `FILE` (one absolute URL a line; - for stdin), in turn")
	fs.StringVar(&u.order, "url-order", "sequential", "the order of --urls: `sequential|random`")
	fs.Uint64Var(&u.seed, "seed", 0, "the random order's seed `N` for --url-order random")
}

// applyURLLong checks the URL options against each other.
func (o *cliOptions) applyURLLong(lo *longOptions, changed func(string) bool) error {
	u := lo.urls
	switch u.order {
	case "sequential", "random":
	default:
		return fmt.Errorf("--url-order must be sequential or random, not %q", u.order)
	}
	if u.file == "" {
		if lo.targets.file == "" && (changed("url-order") || changed("seed")) {
			return errors.New("--url-order and --seed need --urls or --targets")
		}
		if changed("seed") && u.order != "random" {
			return errors.New("--seed needs --url-order random (sequential has no randomness)")
		}
		return nil
	}
	if changed("seed") && u.order != "random" {
		return errors.New("--seed needs --url-order random (sequential has no randomness)")
	}
	if lo.demo {
		return errors.New("--urls and --demo exclude each other (--demo benchmarks its own server)")
	}
	o.urls = u
	return nil
}

// urlListConflict is why the URL list cannot go with the rest of the
// command line, "" if it can.
func urlListConflict(o *cliOptions) string {
	switch {
	case o.Proxy:
		return o.listOption() + " cannot be used with -X (each URL's origin is a connection's)"
	case o.Config.Protocol == client.CGI:
		return o.listOption() + " cannot be used with --cgi (a CGI program has no URL)"
	}
	return ""
}

// listOption is the option that gives the run's URL list.
func (o *cliOptions) listOption() string {
	if o.targets.file != "" {
		return "--targets"
	}
	return "--urls"
}

// loadURLs reads the URL file into o.Config.URLs and returns its first URL
// (the report's Server Hostname, Port and Document Path). A bad line is one
// error line naming the file and the line number.
func (o *cliOptions) loadURLs(stdin io.Reader) (client.Target, error) {
	name := o.urls.file
	var in io.Reader = stdin
	size := 0
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return client.Target{}, fmt.Errorf("--urls %s: %s", quoteName(name), strerror(err))
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() < 1<<32 {
			size = int(fi.Size())
		}
		in = f
	}
	list := client.NewURLList(size)
	list.Random, list.Seed = o.urls.order == "random", o.urls.seed
	var first client.Target
	br := bufio.NewReaderSize(in, maxURLLine)
	for line := 1; ; line++ {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return first, fmt.Errorf("--urls %s:%d: a line longer than %d bytes", quoteName(name), line, maxURLLine)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return first, fmt.Errorf("--urls %s:%d: %s", quoteName(name), line, strerror(err))
		}
		if text := bytes.TrimSpace(b); len(text) > 0 && text[0] != '#' {
			t, err := o.addURL(list, text)
			if err != nil {
				return first, fmt.Errorf("--urls %s:%d: %v: %s", quoteName(name), line, err, quoteName(string(text[:min(len(text), 200)])))
			}
			if list.Len() == 1 {
				first = client.Target{Raw: strings.Clone(t.Raw), TLS: t.TLS, Host: strings.Clone(t.Host), Port: t.Port, Path: strings.Clone(t.Path)}
			}
		}
		if err != nil { // io.EOF
			break
		}
	}
	if list.Len() == 0 {
		return first, fmt.Errorf("--urls %s: no URL in the file", quoteName(name))
	}
	if n := len(list.Origins); n > o.Config.Concurrency {
		return first, fmt.Errorf("--urls %s names %d origins (scheme, host, port) and -c is %d: each connection keeps to one origin, so -c must be at least %d", quoteName(name), n, o.Config.Concurrency, n)
	}
	list.Trim()
	o.Config.URLs = list
	if size >= bigListFile {
		o.memoryLimit = int64(size) + listHeadroom
	}
	return first, nil
}

// A URL file of bigListFile bytes or more runs with a soft memory limit of
// its size plus listHeadroom (runtime/debug.SetMemoryLimit, unless GOMEMLIMIT
// is set): the list is held in about its size, and the limit makes the
// collector reclaim the garbage of the report's last steps (a thousand
// histograms encoded for the document) before the heap doubles. The limit
// counts the Go runtime's memory, not the program's code pages: 48 MB of it
// keeps the RSS within the file's size plus 60 MiB. Measured: a 45.8 MiB
// file of 1,000,000 URLs, -n 300000 -c 8 -k against nginx, peaks at 94.5 MiB
// of RSS, and at 105.1 MiB with --extended --json (195.6 MiB without the
// limit), within the 105.8 MiB allowed.
const (
	bigListFile  = 8 << 20
	listHeadroom = 48 << 20
)

// addURL parses one line (ab's URL rules, with the scheme required) and adds
// it to list. The line is read in place: only a new origin's names are kept.
func (o *cliOptions) addURL(list *client.URLList, text []byte) (client.Target, error) {
	s := unsafe.String(&text[0], len(text)) // read only while text is
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return client.Target{}, errors.New("not an absolute http:// or https:// URL")
	}
	t, err := client.ParseURL(s)
	if err != nil {
		return client.Target{}, errors.New("not a URL ab accepts (scheme://host[:port]/path)")
	}
	if strings.ContainsAny(t.Path, " \x00") || hasControl(t.Path) {
		return client.Target{}, errors.New("a space or control character in the path")
	}
	if err := list.Add(t, t.Path, o.serverName); err != nil {
		return client.Target{}, err
	}
	return t, nil
}

// hasControl reports an ASCII control character (a request line must have none).
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
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

// quoteName is a file name or a line as one safe line for a terminal.
func quoteName(s string) string {
	q := strconv.Quote(s)
	if q[1:len(q)-1] == s && !strings.ContainsAny(s, " :") {
		return s
	}
	return q
}
