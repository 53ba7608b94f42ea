package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"
	"strings"
	"testing"

	"gab/client"
)

// fixtureRows are results per target of totals (µs) by target: "GET /a" gets
// totals[0], and so on.
func fixtureRows(totals ...[]int64) []client.TargetResult {
	var rows []client.TargetResult
	for i, ts := range totals {
		r := client.TargetResult{Method: "GET", URL: fmt.Sprintf("http://h/%c", 'a'+i), Hist: client.NewTargetHist()}
		if i == 2 {
			r.Method, r.URL, r.Other = "", "", true
		}
		for _, us := range ts {
			if r.Count == 0 || us < r.MinUs {
				r.MinUs = us
			}
			r.MaxUs = max(r.MaxUs, us)
			r.Count++
			r.Complete++
			r.SumUs += us
			hi, lo := bits.Mul64(uint64(us), uint64(us))
			var c uint64
			r.SumSquaresLo, c = bits.Add64(r.SumSquaresLo, lo, 0)
			r.SumSquaresHi += hi + c
			r.BodyBytes += 100
			_ = r.Hist.RecordValue(us)
		}
		r.Non2xx = int64(i)
		r.Connect = int64(i + 1)
		rows = append(rows, r)
	}
	return rows
}

// A run's targets: each entry's figures from its sums, the document valid
// against the schema, --extended's table naming each target.
func TestTargetsSection(t *testing.T) {
	res := tenSamples()
	res.Targets = fixtureRows([]int64{1000, 2000, 3000, 4000}, []int64{500, 700}, []int64{9000})
	r := Summarize(res, Options{})
	if len(r.Targets) != 3 {
		t.Fatalf("%d targets", len(r.Targets))
	}
	a := r.Targets[0]
	if a.Complete != 4 || a.Total.Mean != 2.5 || a.Total.Max != 4 || a.Total.P50 < 1.99 || a.Total.P50 > 2.02 || a.Sums.Count != 4 || a.Sums.SumSquaresUs2 != "30000000" {
		t.Errorf("GET /a: %+v", a)
	}
	if o := r.Targets[2]; !o.Other || o.Failed.Connect != 3 || o.Non2xx != 2 {
		t.Errorf("other: %+v", o)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	matchesSchema(t, b.Bytes())
	b.Reset()
	if err := WriteSections(&b, r, Sections{Extended: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Per target (times in ms):", "GET http://h/a", "GET http://h/b", "  other", "2.500"} {
		if !strings.Contains(out, want) {
			t.Errorf("--extended lacks %q:\n%s", want, out)
		}
	}
}

// Merging two documents' targets adds their counts and merges their sums and
// histograms exactly: the merge of the halves equals the whole run's entry.
func TestTargetsMergeExactly(t *testing.T) {
	whole := tenSamples()
	whole.Targets = fixtureRows([]int64{1000, 2000, 3000, 4000, 5000, 61000}, []int64{500, 700, 900})
	one, two := tenSamples(), tenSamples()
	one.Targets = fixtureRows([]int64{1000, 2000, 3000}, []int64{500})
	two.Targets = fixtureRows([]int64{4000, 5000, 61000}, []int64{700, 900})
	want := roundTrip(t, Summarize(whole, Options{}))
	merged, err := MergeRuns([]*Run{roundTrip(t, Summarize(one, Options{})), roundTrip(t, Summarize(two, Options{}))})
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Targets) != 2 {
		t.Fatalf("%d merged targets", len(merged.Targets))
	}
	for i := range want.Targets {
		w, g := want.Targets[i], merged.Targets[i]
		w.Failed, g.Failed, w.Non2xx, g.Non2xx = failures{}, failures{}, 0, 0 // the fixture's counts per document, added below
		jw, _ := json.Marshal(w)
		jg, _ := json.Marshal(g)
		if string(jw) != string(jg) || !strings.Contains(string(jg), `"data":"HISTF`) {
			t.Errorf("target %d merged:\n%s\nwant\n%s", i, jg, jw)
		}
	}
	if g := merged.Targets[1]; g.Failed.Connect != 4 || g.Non2xx != 2 {
		t.Errorf("counts not added: %+v", g)
	}
}

// The HTML report has a table of the results per target, every name escaped.
func TestTargetsHTML(t *testing.T) {
	res := tenSamples()
	res.Targets = fixtureRows([]int64{1000, 2000}, []int64{500})
	res.Targets[1].URL = "http://h/<script>"
	var b bytes.Buffer
	if err := WriteHTMLPage(&b, &Page{Title: "t", Runs: []PageRun{{Doc: Summarize(res, Options{})}}}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<table id="targets-`, "<td>GET http://h/a</td><td>2</td>", "GET http://h/&lt;script&gt;", "<td>1.500</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "h/<script>") {
		t.Error("a target's name reaches the page unescaped")
	}
}

// gab compare compares the targets both sides have: mean, p99 and failures.
func TestTargetsCompare(t *testing.T) {
	a, b := tenSamples(), tenSamples()
	a.Targets = fixtureRows([]int64{1000, 3000}, []int64{500})
	b.Targets = fixtureRows([]int64{3000, 5000}, []int64{500})
	doc, err := Compare("a.json", "b.json", []CompareGroup{{Runs: []*Run{roundTrip(t, Summarize(a, Options{}))}}},
		[]CompareGroup{{Runs: []*Run{roundTrip(t, Summarize(b, Options{}))}}}, func([]string) map[string]string { return nil })
	if err != nil {
		t.Fatal(err)
	}
	ts := doc.Groups[0].Targets
	if len(ts) != 2 || ts[0].Target != "GET http://h/a" || ts[0].AMeanMs != 2 || ts[0].BMeanMs != 4 || ts[1].AFailed != 3 {
		t.Fatalf("targets compared: %+v", ts)
	}
	var out bytes.Buffer
	if err := doc.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Per target (total time, ms; p99 within 1 %):") || !strings.Contains(out.String(), "+100.0 %") {
		t.Errorf("gab compare's text:\n%s", out.String())
	}
}
