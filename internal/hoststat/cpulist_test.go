package hoststat

import (
	"slices"
	"testing"
)

func TestCPUList(t *testing.T) {
	for in, want := range map[string]string{"0-3,6": "0-3,6", "0": "0", "5,1-2,2": "1-2,5", " 0-1 \n": "0-1", "3,4,5,7": "3-5,7"} {
		l, err := ParseCPUList(in)
		if err != nil || FormatCPUList(l) != want {
			t.Errorf("%q: %v %v, want %s", in, l, err, want)
		}
	}
	for _, bad := range []string{"", "x", "3-1", "-1", "0-99999", "1,"} {
		if l, err := ParseCPUList(bad); err == nil {
			t.Errorf("%q parsed: %v", bad, l)
		}
	}
	if got := Intersect([]int{0, 1, 3}, []int{1, 2, 3}); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("Intersect %v", got)
	}
	if got := Union([]int{0, 3}, []int{1, 3}); !slices.Equal(got, []int{0, 1, 3}) {
		t.Errorf("Union %v", got)
	}
}
