package sweep

import (
	"strconv"
	"strings"
	"testing"
)

// Every list and count of a sweep is bounded, with an error that names the
// option and the limit, before anything is allocated for it.
func TestLimits(t *testing.T) {
	if got, err := ParseSizes("--post-sizes", "64m,1"); err != nil || got[0].Bytes != MaxPostSize {
		t.Errorf("64m: %v, %v", got, err)
	}
	if got, err := ParseSizes("--sizes", "1024g"); err != nil || got[0].Bytes != MaxSize {
		t.Errorf("1024g: %v, %v", got, err)
	}
	values := make([]string, MaxListLength)
	for i := range values {
		values[i] = strconv.Itoa(i + 1)
	}
	many := strings.Join(values, ",") // 1,2,...,100
	manyTargets := make([]string, MaxListLength+1)
	for i := range manyTargets {
		manyTargets[i] = "http://h/" + strings.Repeat("x", i)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(ParseSizes("--post-sizes", "4,100g")), `--post-sizes: 100g is above the limit of 64m (64 MiB: each body is built in memory) (in "4,100g")`},
		{second(ParseSizes("--post-sizes", "65537k")), "--post-sizes: 65537k is above the limit of 64m"},
		{second(ParseSizes("--sizes", "1025g")), "--sizes: 1025g is above the limit of 1024g (1 TiB)"},
		{second(ParseSizes("--sizes", many+",101")), "--sizes: 101 values, at most 100"},
		{second(ParseConcurrency(many + ",101")), "-c: 101 values, at most 100"},
		{second(ParseTargets(manyTargets, "")), "101 targets, at most 100"},
		{CheckRuns(Dims{Targets: 2, Concurrency: 10, Repeat: MaxRepeat}), "2 targets × 1 sizes × 10 concurrencies × --repeat 1000 is more than 10000 runs"},
		{CheckRuns(Dims{Targets: 100, Sizes: 100, Concurrency: 100, Repeat: 1}), "is more than 10000 runs"},
		{CheckRuns(Dims{Targets: 1, Concurrency: 1}), "a sweep of no runs"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want %q", c.err, c.want)
		}
	}
	if err := CheckRuns(Dims{Targets: 1, Sizes: 10, Concurrency: 10, Repeat: 100}); err != nil {
		t.Errorf("10000 runs refused: %v", err)
	}
	if _, err := ParseConcurrency(many); err != nil {
		t.Errorf("100 values refused: %v", err)
	}
	if _, err := ParseSizes("--sizes", many); err != nil {
		t.Errorf("100 sizes refused: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }
