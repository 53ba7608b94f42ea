package printable

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"plain µs text, 99.9 %":    "plain µs text, 99.9 %",
		"a\nb\tc\rd\x00e\x1bf\x7f": `a\x0ab\x09c\x0dd\x00e\x1bf\x7f`,
		"C1 \u0085 \u009b end":     `C1 \xc2\x85 \xc2\x9b end`,
		"bad \xff\xfe \xe2\x82":    `bad \xff\xfe \xe2\x82`,
		`back\slash`:               `back\slash`,
		"\ufffd is valid":          "\ufffd is valid",
		// A line separator ends a line of JavaScript and of some terminals;
		// the bidirectional controls reorder what follows them.
		"a\u2028b\u2029c":                      `a\xe2\x80\xa8b\xe2\x80\xa9c`,
		"file\u202egnp.exe":                    `file\xe2\x80\xaegnp.exe`,
		"\u202a\u202b\u202c\u202d":             `\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad`,
		"\u2066x\u2067y\u2068z\u2069":          `\xe2\x81\xa6x\xe2\x81\xa7y\xe2\x81\xa8z\xe2\x81\xa9`,
		"\u200e\u200f\u061c":                   `\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c`,
		"kept: \u2027\u202f\u2065\u206a\u200d": "kept: \u2027\u202f\u2065\u206a\u200d",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzPrintable: String's result is UTF-8 without a control byte, unchanged when
// there was nothing to escape, and the same when escaped again.
func FuzzPrintable(f *testing.F) {
	f.Add("a\nb\x00\xff\u0085é")
	f.Add("x\u2028y\u202ez\u2066\u061c")
	f.Fuzz(func(t *testing.T, s string) {
		p := String(s)
		if !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || hidden(r) }) {
			t.Fatalf("String(%q) = %q", s, p)
		}
		if String(p) != p {
			t.Fatalf("String(%q) changes again", p)
		}
		if !strings.Contains(p, `\x`) && p != s {
			t.Fatalf("String(%q) = %q with nothing escaped", s, p)
		}
	})
}
