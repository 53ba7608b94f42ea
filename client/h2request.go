package client

import (
	"strconv"
	"strings"

	"golang.org/x/net/http2/hpack"
)

// The --http2 request: the header fields gab sends, encoded once.

// h2Fields lists the request's header fields in the order they are sent:
// pseudo-headers, then what ab sends, lower-cased. Connection-specific headers
// (which HTTP/2 forbids) and -H lines without a colon are left out.
func h2Fields(cfg *Config) []hpack.HeaderField {
	spec := cfg.Spec
	method := spec.Method
	if method == "" {
		method = "GET"
	}
	path := spec.Target
	if path == "" {
		path = cfg.Target.Path
	}
	if path == "" {
		path = "/"
	}
	scheme := "http"
	if cfg.Target.TLS {
		scheme = "https"
	}
	authority := spec.Host
	if authority == "" {
		authority = cfg.Target.HostField()
	}
	var extra []hpack.HeaderField
	userAgent, accept := true, true
	for _, line := range spec.Headers {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.TrimSpace(value)
		switch name {
		case "host":
			authority = value
			continue
		case "user-agent":
			userAgent = false
		case "accept":
			accept = false
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			continue
		case "":
			continue
		}
		extra = append(extra, hpack.HeaderField{Name: name, Value: value})
	}
	fields := []hpack.HeaderField{
		{Name: ":method", Value: method},
		{Name: ":scheme", Value: scheme},
		{Name: ":authority", Value: authority},
		{Name: ":path", Value: path},
	}
	if userAgent {
		fields = append(fields, hpack.HeaderField{Name: "user-agent", Value: abUserAgent})
	}
	if accept {
		fields = append(fields, hpack.HeaderField{Name: "accept", Value: "*/*"})
	}
	fields = append(fields, extra...)
	if spec.Cookie != "" || spec.HasCookie {
		fields = append(fields, hpack.HeaderField{Name: "cookie", Value: spec.Cookie})
	}
	for _, line := range spec.Auth {
		name, value, ok := strings.Cut(line, ":")
		if ok {
			fields = append(fields, hpack.HeaderField{Name: strings.ToLower(strings.TrimSpace(name)), Value: strings.TrimSpace(value)})
		}
	}
	if spec.HasBody {
		ct := spec.ContentType
		if ct == "" {
			ct = DefaultContentType
		}
		fields = append(fields,
			hpack.HeaderField{Name: "content-type", Value: ct},
			hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(spec.Body))})
	}
	return fields
}

// RequestHead is the request head that -v 2 shows: ab's request bytes, or
// for --http2 and --http3 the header fields sent (pseudo-headers first), one
// "name: value" line each.
func (cfg *Config) RequestHead() []byte {
	if cfg.Protocol != HTTP2 && cfg.Protocol != HTTP3 {
		return cfg.Request[:cfg.HeadLen]
	}
	var b []byte
	for _, f := range h2Fields(cfg) {
		b = append(append(append(append(b, f.Name...), ": "...), f.Value...), "\r\n"...)
	}
	return append(b, "\r\n"...)
}

// h2HeaderBlock encodes the request's header block once. Every field is a
// never-indexed literal (or a static-table entry), so the block leaves the
// server's dynamic table untouched and can be sent again byte for byte.
func h2HeaderBlock(cfg *Config) ([]byte, error) {
	var buf strings.Builder
	enc := hpack.NewEncoder(&buf)
	for _, f := range h2Fields(cfg) {
		f.Sensitive = true
		if err := enc.WriteField(f); err != nil {
			return nil, err
		}
	}
	return []byte(buf.String()), nil
}
