package sweep

import (
	"strings"
	"testing"
)

// FuzzParseLists: the list parsers never panic, and what they accept is
// within their rules.
func FuzzParseLists(f *testing.F) {
	for _, s := range []string{"1,10,100", "10,x", "4,100b,10k,1m", "64KB", "", ",", "1g,1g", "99999999999999999999", "7 , 8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if cs, err := ParseConcurrency(s); err == nil {
			if len(cs) == 0 || len(cs) > MaxListLength {
				t.Fatalf("%q: a list of %d accepted", s, len(cs))
			}
			for _, c := range cs {
				if c < 1 || c > MaxConcurrency {
					t.Fatalf("%q: concurrency %d accepted", s, c)
				}
			}
		}
		if sizes, err := ParseSizes("--sizes", s); err == nil {
			for _, z := range sizes {
				if z.Bytes < 0 || z.Bytes > MaxSize || z.Text == "" || strings.Contains(z.Text, ",") {
					t.Fatalf("%q: size %+v accepted", s, z)
				}
			}
		}
		if sizes, err := ParseSizes("--post-sizes", s); err == nil {
			for _, z := range sizes {
				if z.Bytes > MaxPostSize {
					t.Fatalf("%q: POST size %+v accepted", s, z)
				}
			}
		}
	})
}

// FuzzParseTargets: labels are unique, non-empty and never hold ':' or '/'.
func FuzzParseTargets(f *testing.F) {
	f.Add("a=http://h/{size}", "http://h:1/x?a=b", "--sizes")
	f.Add("http://h/", "http://h/", "")
	f.Fuzz(func(t *testing.T, a, b, option string) {
		targets, err := ParseTargets([]string{a, b}, option)
		if err != nil {
			return
		}
		if len(targets) != 2 || targets[0].Label == targets[1].Label || targets[0].Label == "" || targets[0].URL == "" {
			t.Fatalf("%q %q: %+v", a, b, targets)
		}
	})
}
