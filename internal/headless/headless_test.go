package headless

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gab/internal/testtool"
)

// TestOpenReportsProblems is the check's own check: a page with a console
// error, an exception, a missing file and a request to another host shows all
// of them; a clean page shows none and is not blank.
func TestOpenReportsProblems(t *testing.T) {
	bin := testtool.Need(t, "chromium", "chromium")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<!DOCTYPE html><html><head><title>bad</title></head><body><p>hi</p>
<img src="missing.png"><script>console.error("boom"); undefinedFunction();</script>
<img src="http://127.0.0.1:9/x.png"></body></html>`), 0o644)
	good := filepath.Join(dir, "good.html")
	os.WriteFile(good, []byte(`<!DOCTYPE html><html><head><title>good</title><link rel="icon" href="data:,"></head>
<body><h1>Hello</h1><svg width="200" height="100"><rect width="150" height="60" fill="#7b2fbf"/></svg></body></html>`), 0o644)

	rep, err := OpenWith(context.Background(), bin, filepath.Join(dir, "profile1"), "file://"+bad, Options{Width: 800, Height: 600})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(rep.Problems, "\n")
	for _, want := range []string{"console.error: boom", "undefinedFunction", "request failed", "missing.png"} {
		if !strings.Contains(all, want) {
			t.Errorf("bad page: no %q among the problems:\n%s", want, all)
		}
	}
	if !strings.Contains(strings.Join(rep.Requests, " "), "http://127.0.0.1:9/x.png") {
		t.Errorf("bad page: the request to another host was not seen: %v", rep.Requests)
	}

	rep, err = OpenWith(context.Background(), bin, filepath.Join(dir, "profile2"), "file://"+good, Options{Width: 800, Height: 600})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) > 0 || rep.Title != "good" || len(rep.Requests) != 1 {
		t.Errorf("good page: problems %q, title %q, requests %v", rep.Problems, rep.Title, rep.Requests)
	}
	if blank, ink := Blank(rep.Screenshot); blank || ink < 0.01 {
		t.Errorf("good page: screenshot blank (%.2f%% drawn)", ink*100)
	}
}
