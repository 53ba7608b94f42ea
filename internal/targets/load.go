package targets

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"gab/client"
)

// This file reads --urls' and --targets' files into the run's URL list
// (client.URLList).

// List is how a URL list is read: its file, its order and what every URL
// needs of the run's other options.
type List struct {
	Name   string // the file ("-": stdin)
	Random bool   // --url-order random
	Seed   uint64 // --seed
	Format string // --targets-format
	// ServerName is the SNI a connection to a target sends.
	ServerName func(client.Target) string
	// Concurrency is -c: each connection keeps to one origin, so a list
	// may name that many origins at most.
	Concurrency int
	// MaxBody bounds a target's body file (as -p's).
	MaxBody int64
}

// maxURLLine bounds one line of a URL file.
const maxURLLine = 64 << 10

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

// openFile opens a file an option names ("-": stdin) and says its size
// when it is a regular file under 4 GiB (0 otherwise).
func openFile(option, name string, stdin io.Reader) (in io.Reader, size int, closeF func(), err error) {
	if name == "-" {
		return stdin, 0, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("%s %s: %s", option, QuoteName(name), Strerror(err))
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() < 1<<32 {
		size = int(fi.Size())
	}
	return f, size, func() { f.Close() }, nil
}

// LoadURLs reads a URL file (--urls): the list, its first URL (the report's
// Server Hostname, Port and Document Path) and the soft memory limit a big
// file asks for (0: none). A bad line is one error line naming the file and
// the line number.
func LoadURLs(stdin io.Reader, l List) (list *client.URLList, first client.Target, memoryLimit int64, err error) {
	name := l.Name
	in, size, closeF, err := openFile("--urls", name, stdin)
	if err != nil {
		return nil, first, 0, err
	}
	defer closeF()
	list = client.NewURLList(size)
	list.Random, list.Seed = l.Random, l.Seed
	br := bufio.NewReaderSize(in, maxURLLine)
	for line := 1; ; line++ {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, first, 0, fmt.Errorf("--urls %s:%d: a line longer than %d bytes", QuoteName(name), line, maxURLLine)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, first, 0, fmt.Errorf("--urls %s:%d: %s", QuoteName(name), line, Strerror(err))
		}
		if text := bytes.TrimSpace(b); len(text) > 0 && text[0] != '#' {
			t, err := addURL(list, text, l.ServerName)
			if err != nil {
				return nil, first, 0, fmt.Errorf("--urls %s:%d: %v: %s", QuoteName(name), line, err, QuoteName(string(text[:min(len(text), 200)])))
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
		return nil, first, 0, fmt.Errorf("--urls %s: no URL in the file", QuoteName(name))
	}
	if n := len(list.Origins); n > l.Concurrency {
		return nil, first, 0, fmt.Errorf("--urls %s names %d origins (scheme, host, port) and -c is %d: each connection keeps to one origin, so -c must be at least %d", QuoteName(name), n, l.Concurrency, n)
	}
	list.Trim()
	if size >= bigListFile {
		memoryLimit = int64(size) + listHeadroom
	}
	return list, first, memoryLimit, nil
}

// addURL parses one line (ab's URL rules, with the scheme required) and adds
// it to list. The line is read in place: only a new origin's names are kept.
func addURL(list *client.URLList, text []byte, serverName func(client.Target) string) (client.Target, error) {
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
	if err := list.Add(t, t.Path, serverName); err != nil {
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

// LoadTargets reads a target file (--targets) and every body file it names
// into a list, and returns its first target's URL.
func LoadTargets(stdin io.Reader, l List) (*client.URLList, client.Target, error) {
	name := l.Name
	in, _, closeF, err := openFile("--targets", name, stdin)
	if err != nil {
		return nil, client.Target{}, err
	}
	defer closeF()
	ts, err := Parse(l.Format, in)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			return nil, client.Target{}, fmt.Errorf("--targets %s:%d: %s", QuoteName(name), pe.Line, oneLine(pe.Msg))
		}
		return nil, client.Target{}, fmt.Errorf("--targets %s: %v", QuoteName(name), err)
	}
	if len(ts) == 0 {
		return nil, client.Target{}, fmt.Errorf("--targets %s: no target in the file", QuoteName(name))
	}
	list := client.NewURLList(0)
	list.Random, list.Seed = l.Random, l.Seed
	bodies := map[string][]byte{} // each body file read once
	var first client.Target
	for i, tg := range ts {
		at := fmt.Sprintf("--targets %s:%d", QuoteName(name), tg.Line)
		u, err := client.ParseURL(tg.URL)
		if err != nil {
			return nil, first, fmt.Errorf("%s: not a URL ab accepts (scheme://host[:port]/path): %s", at, QuoteName(tg.URL))
		}
		spec := client.TargetSpec{Method: tg.Method, Body: tg.Body, HasBody: len(tg.Body) > 0}
		for _, h := range tg.Header {
			spec.Headers = append(spec.Headers, h.Name+": "+h.Value)
		}
		if tg.BodyFile != "" {
			body, ok := bodies[tg.BodyFile]
			if !ok {
				if body, err = readBodyFile(tg.BodyFile, l.MaxBody); err != nil {
					return nil, first, fmt.Errorf("--targets %s:%d: body file %s: %v", QuoteName(name), tg.BodyLine, QuoteName(tg.BodyFile), err)
				}
				bodies[tg.BodyFile] = body
			}
			spec.Body, spec.HasBody = body, true
		}
		if err := list.AddTarget(u, l.ServerName, spec); err != nil {
			return nil, first, fmt.Errorf("%s: %v", at, err)
		}
		if i == 0 {
			first = u
		}
	}
	if n := len(list.Origins); n > l.Concurrency {
		return nil, first, fmt.Errorf("--targets %s names %d origins (scheme, host, port) and -c is %d: each connection keeps to one origin, so -c must be at least %d", QuoteName(name), n, l.Concurrency, n)
	}
	return list, first, nil
}

// readBodyFile reads a target's body file (at most max bytes); an error is
// glibc's text.
func readBodyFile(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, errors.New(Strerror(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, errors.New(Strerror(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	body := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, body); err != nil {
		return nil, errors.New(Strerror(err))
	}
	return body, nil
}

// Strerror is glibc's text for the errno inside err, else Go's text (ab's
// messages for a file it cannot read).
func Strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return client.ErrnoText(errno)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "End of file found" // APR_EOF
	}
	return err.Error()
}

// QuoteName is a file name or a line as one safe line for a terminal.
func QuoteName(s string) string {
	q := strconv.Quote(s)
	if q[1:len(q)-1] == s && !strings.ContainsAny(s, " :") {
		return s
	}
	return q
}

// oneLine is a message made safe for one terminal line.
func oneLine(s string) string {
	q := fmt.Sprintf("%q", s)
	return q[1 : len(q)-1]
}
