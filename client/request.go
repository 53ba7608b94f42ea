package client

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// abUserAgent is the User-Agent ab sends.
const abUserAgent = "ApacheBench/2.3"

// DefaultContentType is the Content-type of a body when -T is not given.
const DefaultContentType = "text/plain"

// maxCredentials is the longest -A/-P value ab accepts: its base64 form plus a
// NUL must fit in 1024 bytes.
const maxCredentials = 765

// credentialsError is ab's complaint about an over-long -A or -P value. Its
// text is what ab's err() prints (message and an empty line); the exit is 1.
type credentialsError struct{ proxy bool }

func (e *credentialsError) Error() string {
	if e.proxy {
		return "Proxy credentials too long\n"
	}
	return "Authentication credentials too long\n"
}

// AuthLine builds ab's "Authorization: Basic ..." line for -A (proxy false) or
// "Proxy-Authorization: Basic ..." for -P, without the CRLF. As ab does, it
// skips leading white space and encodes the rest verbatim.
func AuthLine(credentials string, proxy bool) (string, error) {
	credentials = strings.TrimLeft(credentials, " \t\n\v\f\r")
	if len(credentials) > maxCredentials {
		return "", &credentialsError{proxy: proxy}
	}
	name := "Authorization: Basic "
	if proxy {
		name = "Proxy-Authorization: Basic "
	}
	return name + base64.StdEncoding.EncodeToString([]byte(credentials)), nil
}

// HeaderOverrides reports which of ab's default headers the -H lines replace:
// ab drops Host, User-Agent and Accept when an -H line starts with that name
// (case-insensitive, colon included). host is the overriding Host value with
// surrounding white space removed (ab also uses it for TLS SNI).
func HeaderOverrides(headers []string) (host string, hasHost, hasUserAgent, hasAccept bool) {
	for _, h := range headers {
		switch {
		case hasPrefixFold(h, "Host:"):
			host, hasHost = strings.Trim(h[5:], " \t\n\v\f\r"), true
		case hasPrefixFold(h, "Accept:"):
			hasAccept = true
		case hasPrefixFold(h, "User-Agent:"):
			hasUserAgent = true
		}
	}
	return host, hasHost, hasUserAgent, hasAccept
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// BuildRequest returns the exact bytes ab sends for every request (head, then
// body) and the length of the head. Header order is ab's: Connection, Cookie,
// the -A/-P lines, Content-length/Content-type (body only), the -H lines, then
// the Host/User-Agent/Accept defaults that no -H line replaced. Unlike ab, a
// head longer than 8191 bytes is sent whole rather than truncated.
// With HTTP11 the request line says HTTP/1.1, keep-alive is implicit and a
// non-keep-alive run sends "Connection: close".
func BuildRequest(spec RequestSpec) (req []byte, headLen int) {
	if !spec.HasBody {
		head := requestHead(spec, len(spec.Body))
		return []byte(head), len(head)
	}
	return BuildRequestWithBody(spec, len(spec.Body), func(body []byte) { copy(body, spec.Body) })
}

// BuildRequestWithBody is BuildRequest for a body of n bytes that fill writes
// in place, so that the body is held once, inside the request; spec.HasBody
// is implied and spec.Body is not read. A transport that reads Spec.Body
// (HTTP/2, CGI) is given req[headLen:].
func BuildRequestWithBody(spec RequestSpec, n int, fill func(body []byte)) (req []byte, headLen int) {
	spec.HasBody = true
	head := requestHead(spec, n)
	req = make([]byte, len(head)+n)
	copy(req, head)
	fill(req[len(head):])
	return req, len(head)
}

// requestHead is the request's head for a body of bodyLen bytes.
func requestHead(spec RequestSpec, bodyLen int) string {
	var b strings.Builder
	size := 128 + len(spec.Method) + len(spec.Target) + len(spec.Cookie) + len(spec.Host) + len(spec.ContentType)
	for _, l := range spec.Auth {
		size += len(l) + 2
	}
	for _, l := range spec.Headers {
		size += len(l) + 2
	}
	b.Grow(size)

	b.WriteString(spec.Method)
	b.WriteByte(' ')
	b.WriteString(spec.Target)
	if spec.HTTP11 {
		b.WriteString(" HTTP/1.1\r\n")
		if !spec.KeepAlive {
			b.WriteString("Connection: close\r\n")
		}
	} else {
		b.WriteString(" HTTP/1.0\r\n")
		if spec.KeepAlive {
			b.WriteString("Connection: Keep-Alive\r\n")
		}
	}
	if spec.Cookie != "" || spec.HasCookie {
		b.WriteString("Cookie: ")
		b.WriteString(spec.Cookie)
		b.WriteString("\r\n")
	}
	for _, l := range spec.Auth {
		b.WriteString(l)
		b.WriteString("\r\n")
	}
	if spec.HasBody {
		b.WriteString("Content-length: ")
		b.WriteString(strconv.Itoa(bodyLen))
		b.WriteString("\r\nContent-type: ")
		b.WriteString(spec.ContentType) // the CLI fills in DefaultContentType; ab sends even an empty -T
		b.WriteString("\r\n")
	}
	for _, l := range spec.Headers {
		b.WriteString(l)
		b.WriteString("\r\n")
	}
	_, hasHost, hasUA, hasAccept := HeaderOverrides(spec.Headers)
	if !hasHost {
		b.WriteString("Host: ")
		b.WriteString(spec.Host)
		b.WriteString("\r\n")
	}
	if !hasUA {
		b.WriteString("User-Agent: " + abUserAgent + "\r\n")
	}
	if !hasAccept {
		b.WriteString("Accept: */*\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}
