package client

import (
	"strings"
	"testing"
)

// gab's own code allocates nothing per HTTP/3 request: 800 more requests
// cost no more allocations whose allocating function is gab's (quic-go's
// stream per request and crypto are its own).
func TestHTTP3RequestLoopDoesNotAllocate(t *testing.T) {
	url := startH3(t, newH2Counter(0, []byte("hello")))
	for _, streams := range []int{1, 4} {
		allocs := func(n int) map[string]int64 {
			return gabAllocations(func() {
				res, _, err := runH3(t, h3TestConfig(t, url, n, 2, streams))
				if err != nil || res.Complete != n || res.Failed.Total != 0 {
					t.Fatalf("run of %d: %v, %+v", n, err, res)
				}
			})
		}
		allocs(100) // warm up
		small, large := allocs(200), allocs(1000)
		notGab := func(fn string) bool { return !strings.HasPrefix(fn, "gab/") }
		if more, grew := allocGrowth(small, large, notGab); more > 40 {
			t.Errorf("streams %d: 800 more requests cost %d more allocations in gab's code (by allocating function: %v)", streams, more, grew)
		}
	}
}
