package sweep

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// Each configuration's maximum and where, with the values whose interval
// reaches it; configurations in their first order.
func TestParamMaxima(t *testing.T) {
	got := ParamMaxima([]ParamRow{
		{"nginx", "off", 1000, 10}, {"nginx", "on", 1500, 20}, {"nginx", "auto", 1480, 15},
		{"caddy", "off", 900, 5}, {"caddy", "on", 700, 5}, {"caddy", "auto", 800, 5},
	})
	want := []ParamMax{
		{Configuration: "nginx", MeanPerS: 1500, CI95PerS: 20, At: "on", Within: []string{"auto"}},
		{Configuration: "caddy", MeanPerS: 900, CI95PerS: 5, At: "off"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// The table text of a --param sweep ends its points with each
// configuration's maximum and where it is.
func TestTableParamMaxima(t *testing.T) {
	s := &Settings{Param: &Param{Name: "gzip", Values: []string{"off", "on"}}, Concurrency: []int{10, 50}, MaxCV: 0.1}
	var points []*PointResult
	rps := map[int]map[string]float64{10: {"off": 1100, "on": 1000}, 50: {"off": 5000, "on": 5100}}
	for _, c := range []int{10, 50} {
		for _, v := range []string{"off", "on"} {
			p := &PointResult{Label: "nginx", ParamValue: v, Concurrency: c, Runs: []*RunResult{{}}}
			p.RPS.Mean, p.RPS.CI95 = rps[c][v], 1
			points = append(points, p)
		}
	}
	var b strings.Builder
	if err := WriteTable(&b, s, points, true); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	i := strings.Index(out, "Maximum req/s per configuration over gzip")
	if i < 0 {
		t.Fatalf("no maximum table:\n%s", out)
	}
	if !regexp.MustCompile(`nginx c=10\s+1100\.0\s+1\.0\s+off\s+-`).MatchString(out) || !regexp.MustCompile(`nginx c=50\s+5100\.0\s+1\.0\s+on\s+-`).MatchString(out) {
		t.Errorf("maxima:\n%s", out[i:])
	}
}
