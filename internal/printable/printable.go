// Package printable makes text safe to print: String escapes every byte of
// a string that could end a line, reach a terminal as an escape sequence
// or disguise the text around it. It is small and imports only the
// standard library, so that the engine (client), the reports and the
// charts all use the one rule.
package printable

import (
	"strings"
	"unicode/utf8"
)

// String returns s with every byte that is not printable text written as
// \xNN: C0 controls (newline and tab included), DEL, C1 controls
// (U+0080–U+009F), the line and paragraph separators (U+2028, U+2029: a line
// end to JavaScript and to some terminals and editors), the bidirectional
// controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069: they
// reorder the text after them, so that what is shown is not what is there)
// and bytes that are not UTF-8. Other printable text, UTF-8 included, is
// returned unchanged. Labels and titles come from command lines, file names,
// documents and servers; written through String they cannot end a line of
// a script or a comment, reach a terminal as an escape sequence, nor
// disguise the text around them.
func String(s string) string {
	i := 0
	for i < len(s) {
		_, size, bad := nextRune(s[i:])
		if bad {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		_, size, bad := nextRune(s[i:])
		if !bad {
			b.WriteString(s[i : i+size])
		} else {
			for _, c := range []byte(s[i : i+size]) {
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			}
		}
		i += size
	}
	return b.String()
}

// nextRune decodes the first rune of s and says whether it is not printable
// text (a control, DEL, a separator or bidirectional control, or a byte that
// is not UTF-8).
func nextRune(s string) (r rune, size int, bad bool) {
	if c := s[0]; c < utf8.RuneSelf {
		return rune(c), 1, c < 0x20 || c == 0x7f
	}
	r, size = utf8.DecodeRuneInString(s)
	return r, size, r == utf8.RuneError && size == 1 || r >= 0x80 && r <= 0x9f || hidden(r)
}

// hidden reports whether r is one of the format characters String
// escapes although they are valid UTF-8: the line and paragraph separators
// U+2028 and U+2029, and the bidirectional controls U+061C (Arabic letter
// mark), U+200E and U+200F (left-to-right and right-to-left marks),
// U+202A–U+202E (embeddings and overrides) and U+2066–U+2069 (isolates).
func hidden(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x2028 && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
