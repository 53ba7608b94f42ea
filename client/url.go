package client

import (
	"errors"
	"math"
	"net/netip"
	"strings"
)

// errInvalidURL is ParseURL's only error: ab prints "<argv0>: invalid URL" and its usage.
var errInvalidURL = errors.New("invalid URL")

// ParseURL reads the URL argument with ab's rules: an optional, case-sensitive
// "http://" or "https://" prefix (stripped only when something follows it), a
// mandatory '/' after host[:port], and the path from that '/' on, sent verbatim.
// host[:port] is split as APR's apr_parse_addr_port splits it, so "host:" or
// "host:abc" is a host name (whose resolution fails later), not an error.
func ParseURL(arg string) (Target, error) {
	t := Target{Raw: arg}
	rest := stripScheme(arg, &t.TLS)
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return Target{}, errInvalidURL
	}
	host, port, ok := splitHostPort(rest[:slash])
	if !ok {
		return Target{}, errInvalidURL
	}
	t.Host, t.Path = host, rest[slash:]
	t.Port = port
	if port == 0 {
		t.Port = 80
		if t.TLS {
			t.Port = 443
		}
	}
	return t, nil
}

// stripScheme removes ab's scheme prefix; ab only strips it when it is followed
// by at least one character.
func stripScheme(arg string, tls *bool) string {
	*tls = false
	switch {
	case len(arg) > 7 && strings.HasPrefix(arg, "http://"):
		return arg[7:]
	case len(arg) > 8 && strings.HasPrefix(arg, "https://"):
		*tls = true
		return arg[8:]
	}
	return arg
}

// splitHostPort is apr_parse_addr_port as ab uses it: a trailing ":digits" is
// the port (1..65535); "[v6]" must hold an IPv6 address with no %scope; an empty
// or all-digit host is invalid. port is 0 when none was given.
func splitHostPort(s string) (host string, port int, ok bool) {
	end := len(s)
	last := end - 1
	for last >= 0 && isASCIIDigit(s[last]) {
		last--
	}
	if last < 0 {
		// Only digits (or nothing): APR reads a bare port, which leaves ab with no host.
		return "", 0, false
	}
	if s[last] == ':' && last+1 < end {
		p := Atoi(s[last+1:])
		if p < 1 || p > 65535 {
			return "", 0, false
		}
		port, end = p, last
	}
	if end == 0 {
		return "", 0, false
	}
	addr := s[:end]
	if addr[0] != '[' {
		return addr, port, true
	}
	if strings.IndexByte(addr, ']') != len(addr)-1 || strings.IndexByte(addr, '%') >= 0 {
		return "", 0, false
	}
	inner := addr[1 : len(addr)-1]
	ip, err := netip.ParseAddr(inner)
	if err != nil || !ip.Is6() {
		return "", 0, false
	}
	return inner, port, true
}

// HostField is the host part of ab's Host header (and HTTP/2's :authority):
// the URL's host, in brackets only when the URL wrote it in brackets (an IPv6
// literal always, for a Target built without Raw), plus ":port" when the port
// is not the scheme's default.
func (t Target) HostField() string {
	h := t.Host
	bracketed := isIPv6Literal(h)
	if t.Raw != "" {
		var tls bool
		bracketed = strings.HasPrefix(stripScheme(t.Raw, &tls), "[")
	}
	if bracketed {
		h = "[" + h + "]"
	}
	return t.withPort(h)
}

// Atoi is C's atoi, the way ab reads every number (options, ports): leading
// white space, an optional sign, then digits up to the first non-digit;
// anything unparsable is 0. Overflow saturates at MaxInt32.
func Atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n < math.MaxInt32 {
			n = n*10 + int(s[i]-'0')
		}
	}
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	if neg {
		return -n
	}
	return n
}
