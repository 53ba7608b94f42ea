// Package targets reads vegeta's two target formats, so that existing
// target files work with gab --targets unchanged:
//
//   - http (vegeta's default): "METHOD URL", then header lines "Name: value",
//     then an optional "@path" naming the body file; targets are separated
//     by blank lines, and lines starting with '#' are comments;
//   - JSON lines: one object a line, {"method", "url", "header": {"Name":
//     ["v", ...]}, "body": base64}.
//
// A parser returns every target with the line it began on, or the first
// error, which names the line. Body files are named, not read (the caller
// reads each once, before the run).
package targets

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// MaxLine bounds a line of either format (a JSON target with its body
// inline included).
const MaxLine = 4 << 20

// Header is one header field, in the order the target gives it.
type Header struct{ Name, Value string }

// Target is one request: its method, absolute URL, header fields and body
// (inline, from JSON) or body file (BodyFile, from "@path").
type Target struct {
	Line     int // the line the target began on (1-based)
	Method   string
	URL      string
	Header   []Header
	Body     []byte
	BodyFile string
	BodyLine int // the "@file" line (0 without)
}

// Error is a parse error at a line.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Line, e.Msg) }

func errAt(line int, format string, a ...any) error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, a...)}
}

// isToken reports an HTTP token (RFC 9110): a method or a header name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validValue reports a header value a request can carry: no control
// character but tab.
func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// checkURL accepts an absolute http:// or https:// URL whose rest has no
// space or control character (the caller applies ab's URL rules).
func checkURL(u string) error {
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return errors.New("not an absolute http:// or https:// URL")
	}
	for i := 0; i < len(u); i++ {
		if c := u[i]; c <= ' ' || c == 0x7f {
			return errors.New("a space or control character in the URL")
		}
	}
	return nil
}

// lines reads r line by line (without the "\r\n" or "\n"), at most MaxLine
// bytes each, calling fn with each line and its number.
func lines(r io.Reader, fn func(n int, line string) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for n := 1; ; n++ {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
				if len(long) > MaxLine {
					return errAt(n, "a line longer than %d bytes", MaxLine)
				}
			}
			b = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return errAt(n, "%v", err)
		}
		if len(b) > 0 || err == nil {
			line := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
			if ferr := fn(n, line); ferr != nil {
				return ferr
			}
		}
		if err != nil {
			return nil
		}
	}
}

// ParseHTTP reads vegeta's http format.
func ParseHTTP(r io.Reader) ([]Target, error) {
	var out []Target
	var cur *Target
	state := 0 // 0: between targets, 1: in headers, 2: after the body line
	err := lines(r, func(n int, line string) error {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			state, cur = 0, nil
			return nil
		case strings.HasPrefix(trimmed, "#"):
			return nil
		}
		switch state {
		case 0:
			method, url, ok := strings.Cut(trimmed, " ")
			url = strings.TrimSpace(url)
			if !ok || !isToken(method) {
				return errAt(n, "a target starts with \"METHOD URL\"")
			}
			if err := checkURL(url); err != nil {
				return errAt(n, "%v", err)
			}
			out = append(out, Target{Line: n, Method: method, URL: url})
			cur, state = &out[len(out)-1], 1
		case 1:
			if strings.HasPrefix(trimmed, "@") {
				if trimmed == "@" {
					return errAt(n, "\"@\" names no body file")
				}
				cur.BodyFile, cur.BodyLine, state = trimmed[1:], n, 2
				return nil
			}
			name, value, ok := strings.Cut(line, ":")
			name, value = strings.TrimSpace(name), strings.TrimSpace(value)
			if !ok || !isToken(name) {
				return errAt(n, "a header line is \"Name: value\" (or \"@file\" for the body, or a blank line before the next target)")
			}
			if !validValue(value) {
				return errAt(n, "a control character in the value of %s", name)
			}
			cur.Header = append(cur.Header, Header{name, value})
		case 2:
			return errAt(n, "a line after the body file; targets are separated by a blank line")
		}
		return nil
	})
	return out, err
}

// jsonTarget is vegeta's JSON target.
type jsonTarget struct {
	Method string              `json:"method"`
	URL    string              `json:"url"`
	Body   []byte              `json:"body"` // base64, as encoding/json decodes []byte
	Header map[string][]string `json:"header"`
}

// ParseJSON reads vegeta's JSON-lines format (blank lines skipped).
func ParseJSON(r io.Reader) ([]Target, error) {
	var out []Target
	err := lines(r, func(n int, line string) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		var jt jsonTarget
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&jt); err != nil {
			var b64 base64.CorruptInputError
			if errors.As(err, &b64) {
				return errAt(n, "the body is not base64 (%v)", err)
			}
			return errAt(n, "not a JSON target {\"method\", \"url\", \"header\", \"body\"}: %v", err)
		}
		if dec.More() {
			return errAt(n, "more than one JSON value on the line")
		}
		if !isToken(jt.Method) {
			return errAt(n, "the method %q is not an HTTP token", jt.Method)
		}
		if err := checkURL(jt.URL); err != nil {
			return errAt(n, "%v", err)
		}
		t := Target{Line: n, Method: jt.Method, URL: jt.URL, Body: jt.Body}
		names := make([]string, 0, len(jt.Header))
		for name := range jt.Header {
			names = append(names, name)
		}
		sort.Strings(names) // a JSON object has no order: sorted, so that runs repeat
		for _, name := range names {
			if !isToken(name) {
				return errAt(n, "the header name %q is not an HTTP token", name)
			}
			for _, v := range jt.Header[name] {
				if !validValue(v) {
					return errAt(n, "a control character in the value of %s", name)
				}
				t.Header = append(t.Header, Header{name, v})
			}
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// Parse reads format "http" or "json".
func Parse(format string, r io.Reader) ([]Target, error) {
	switch format {
	case "http":
		return ParseHTTP(r)
	case "json":
		return ParseJSON(r)
	}
	return nil, fmt.Errorf("unknown format %q (http or json)", format)
}

// HasHeader reports whether t sets the header name (case-insensitive).
func (t *Target) HasHeader(name string) bool {
	for _, h := range t.Header {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}
