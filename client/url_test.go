package client

import (
	"errors"
	"math"
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		name, arg string
		want      Target // Raw is filled in from arg
		hostField string
	}{
		{"plain", "http://127.0.0.1:18080/f100.txt", Target{Host: "127.0.0.1", Port: 18080, Path: "/f100.txt"}, "127.0.0.1:18080"},
		{"default port", "http://example.com/", Target{Host: "example.com", Port: 80, Path: "/"}, "example.com"},
		{"explicit default port is not shown in Host", "http://example.com:80/", Target{Host: "example.com", Port: 80, Path: "/"}, "example.com"},
		{"https default port", "https://localhost/x", Target{TLS: true, Host: "localhost", Port: 443, Path: "/x"}, "localhost"},
		{"https port 80 is shown", "https://localhost:80/x", Target{TLS: true, Host: "localhost", Port: 80, Path: "/x"}, "localhost:80"},
		{"no scheme", "127.0.0.1:18081/capture10", Target{Host: "127.0.0.1", Port: 18081, Path: "/capture10"}, "127.0.0.1:18081"},
		{"query and fragment kept verbatim", "http://h/a%20b?q=1&r=%zz#frag", Target{Host: "h", Port: 80, Path: "/a%20b?q=1&r=%zz#frag"}, "h"},
		{"path from the first slash", "http://h//x/../y", Target{Host: "h", Port: 80, Path: "//x/../y"}, "h"},
		{"upper-case scheme is a host", "HTTP://127.0.0.1:18080/f100.txt", Target{Host: "HTTP:", Port: 80, Path: "//127.0.0.1:18080/f100.txt"}, "HTTP:"},
		{"scheme only stripped when followed by text", "http:///", Target{}, ""},
		{"ipv6", "http://[::1]:8080/capture11", Target{Host: "::1", Port: 8080, Path: "/capture11"}, "[::1]:8080"},
		{"ipv6 default port", "http://[::1]/", Target{Host: "::1", Port: 80, Path: "/"}, "[::1]"},
		{"ipv6 https 443", "https://[::1]:443/", Target{TLS: true, Host: "::1", Port: 443, Path: "/"}, "[::1]"},
		{"v4-mapped ipv6", "http://[::ffff:127.0.0.1]/", Target{Host: "::ffff:127.0.0.1", Port: 80, Path: "/"}, "[::ffff:127.0.0.1]"},
		{"host colon without digits is a host", "http://h:/x", Target{Host: "h:", Port: 80, Path: "/x"}, "h:"},
		{"host colon letters is a host", "http://host:abc/", Target{Host: "host:abc", Port: 80, Path: "/"}, "host:abc"},
		{"bare ipv6 takes its last group as port", "http://::1/", Target{Host: ":", Port: 1, Path: "/"}, "::1"},
		{"bare ipv6 ending in colon is a host", "http://fe80::/", Target{Host: "fe80::", Port: 80, Path: "/"}, "fe80::"},
		{"lone colon is a host", "http://:/", Target{Host: ":", Port: 80, Path: "/"}, ":"},
		{"leading zeros in port", "http://a:00080/", Target{Host: "a", Port: 80, Path: "/"}, "a"},
		{"max port", "http://a:65535/", Target{Host: "a", Port: 65535, Path: "/"}, "a:65535"},
		{"sign is not a digit", "http://a:+5/", Target{Host: "a:+5", Port: 80, Path: "/"}, "a:+5"},
		{"bare scheme is a host", "http://", Target{Host: "http:", Port: 80, Path: "//"}, "http:"},
		{"two colons", "a:1:2/", Target{Host: "a:1", Port: 2, Path: "/"}, "a:1:2"},
	}
	for _, tc := range tests {
		got, err := ParseURL(tc.arg)
		if tc.want.Host == "" {
			if !errors.Is(err, errInvalidURL) {
				t.Errorf("%s: ParseURL(%q) = %+v, %v; want errInvalidURL", tc.name, tc.arg, got, err)
			}
			continue
		}
		tc.want.Raw = tc.arg
		if err != nil || got != tc.want {
			t.Errorf("%s: ParseURL(%q) = %+v, %v; want %+v", tc.name, tc.arg, got, err, tc.want)
			continue
		}
		if hf := got.HostField(); hf != tc.hostField {
			t.Errorf("%s: HostField() of %q = %q, want %q", tc.name, tc.arg, hf, tc.hostField)
		}
	}
}

// Each of these was checked against the real ab (exit 22, "invalid URL").
func TestParseURLInvalid(t *testing.T) {
	for _, arg := range []string{
		"http://127.0.0.1:18080",  // no path
		"http://127.0.0.1:99999/", // port out of range
		"http://a:0/",
		"http://a:65536/",
		"http://:80/", // empty host
		"http:///x",
		"http:///",
		"https:///",
		"http://1234/", // all digits: APR reads a bare port
		"http://[::1%lo]/",
		"http://[::1]x/",
		"http://[nothex]/",
		"http://[127.0.0.1]/",
		"http://[]/",
		"http://[::1]:/",
		"http://[::1]:0/",
		"",
		"noslash",
	} {
		if got, err := ParseURL(arg); !errors.Is(err, errInvalidURL) {
			t.Errorf("ParseURL(%q) = %+v, %v; want errInvalidURL", arg, got, err)
		}
	}
}

func TestHostFieldWithoutRaw(t *testing.T) {
	tg := Target{Host: "::1", Port: 8443, TLS: true}
	if got, want := tg.HostField(), "[::1]:8443"; got != want {
		t.Errorf("HostField() = %q, want %q", got, want)
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:18080/f100.txt", "https://[::1]:443/x?y#z", "HTTP://h/", "h:/", "http://::1/",
		"http://[::1%lo]/", "http://1234/", "a:1:2/", "http:///", "[::ffff:1.2.3.4]:9/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		tg, err := ParseURL(arg)
		if err != nil {
			return
		}
		if tg.Host == "" {
			t.Fatalf("ParseURL(%q) accepted an empty host", arg)
		}
		if tg.Port < 1 || tg.Port > 65535 {
			t.Fatalf("ParseURL(%q) port %d out of range", arg, tg.Port)
		}
		if len(tg.Path) == 0 || tg.Path[0] != '/' {
			t.Fatalf("ParseURL(%q) path %q does not start with /", arg, tg.Path)
		}
		// The path is a suffix of the argument, untouched.
		if len(arg) < len(tg.Path) || arg[len(arg)-len(tg.Path):] != tg.Path {
			t.Fatalf("ParseURL(%q) path %q is not the argument's tail", arg, tg.Path)
		}
		// Re-parsing host and an explicit port gives the same host and port.
		hp := tg.Host
		if strings.HasPrefix(tg.HostField(), "[") {
			hp = "[" + hp + "]"
		}
		hp += ":" + strconv.Itoa(tg.Port) + tg.Path
		again, err := ParseURL(hp)
		if err != nil || again.Host != tg.Host || again.Port != tg.Port {
			t.Fatalf("ParseURL(%q) = host %q port %d; re-parse of %q gives %+v, %v", arg, tg.Host, tg.Port, hp, again, err)
		}
	})
}

// TestDialerFallback pins ab's address fallback rule, which every path uses.
func TestDialerFallback(t *testing.T) {
	two := []net.IPAddr{{IP: net.IPv6loopback}, {IP: net.IPv4(127, 0, 0, 1)}}
	d := &dialer{addrs: two}
	if d.fallback(0, true) || d.current.Load() != 0 {
		t.Errorf("fell back while the run stops")
	}
	if !d.fallback(0, false) || d.current.Load() != 1 {
		t.Errorf("did not move from ::1 to 127.0.0.1 (current %d)", d.current.Load())
	}
	if d.fallback(1, false) {
		t.Errorf("fell back past the last address")
	}
	d = &dialer{addrs: two}
	d.markWorked(nil, 0)
	if d.fallback(0, false) {
		t.Errorf("fell back after a connection had worked")
	}
}

func TestAtoi(t *testing.T) {
	for in, want := range map[string]int{
		"10": 10, "10k": 10, " \t+7": 7, "-3": -3, "abc": 0, "": 0, "-": 0, "99999999999999": math.MaxInt32, "1e3": 1,
	} {
		if got := Atoi(in); got != want {
			t.Errorf("Atoi(%q) = %d, want %d", in, got, want)
		}
	}
}
