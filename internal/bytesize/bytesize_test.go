package bytesize

import (
	"strings"
	"testing"
)

// TestParse: digits with an optional unit b, k, m or g (kb, mb, gb; any
// case; spaces around), binary multiples; anything else, or a size past
// 2^62 bytes, is an error quoting the input.
func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"4": 4, "100b": 100, "10k": 10240, "1m": 1 << 20, "64KB": 65536, "1g": 1 << 30, " 2Mb ": 2 << 20, "0": 0,
		"4294967296g": 1 << 62,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"x":                    `"x" is not a size (digits with an optional unit b, k, m, g)`,
		"":                     `"" is not a size`,
		"-1":                   `"-1" is not a size`,
		"10q":                  `"10q" is not a size (unknown unit "q"; use b, k, m or g)`,
		"1 k":                  `unknown unit " k"`,
		"4294967297g":          `"4294967297g" is too large`,
		"99999999999999999g":   "too large",
		"99999999999999999999": `"99999999999999999999" is too large`,
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", in, err, want)
		}
	}
}
