package chart

import (
	"strings"
	"unicode/utf8"
)

// Printable returns s with every byte that is not printable text written as
// \xNN: C0 controls (newline and tab included), DEL, C1 controls
// (U+0080–U+009F) and bytes that are not UTF-8. Printable text, UTF-8
// included, is returned unchanged. Labels and titles come from command
// lines, file names, documents and servers; written through Printable they
// cannot end a line of a script or a comment, nor reach a terminal as an
// escape sequence.
func Printable(s string) string {
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
// text (a control, DEL, or a byte that is not UTF-8).
func nextRune(s string) (r rune, size int, bad bool) {
	if c := s[0]; c < utf8.RuneSelf {
		return rune(c), 1, c < 0x20 || c == 0x7f
	}
	r, size = utf8.DecodeRuneInString(s)
	return r, size, r == utf8.RuneError && size == 1 || r >= 0x80 && r <= 0x9f
}
