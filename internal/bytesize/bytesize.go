// Package bytesize reads a size as gab sweep's --sizes and --post-sizes
// and the demo server's /bytes/N have it ("100", "10k", "1m"). It imports
// only the standard library.
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a size: digits with an optional unit b, k, m or g (also kb,
// mb, gb; any case), binary multiples: 1k = 1024 bytes.
func Parse(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%q is not a size (digits with an optional unit b, k, m, g)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	var mult int64
	switch t[i:] {
	case "", "b":
		mult = 1
	case "k", "kb":
		mult = 1 << 10
	case "m", "mb":
		mult = 1 << 20
	case "g", "gb":
		mult = 1 << 30
	default:
		return 0, fmt.Errorf("%q is not a size (unknown unit %q; use b, k, m or g)", s, t[i:])
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}
