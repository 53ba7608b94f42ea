package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/internal/samples"
)

// The Server header is the peer's text: -w writes it escaped, so a hostile
// server cannot store script in a report people open in a browser.
func TestHTMLEscapesServerSoftware(t *testing.T) {
	res := &client.Result{Elapsed: 5 * time.Millisecond, Samples: samples.New(1, 0),
		ServerSoftware: `<script>alert(1)</script>&"'`}
	var out bytes.Buffer
	if err := WriteHTML(&out, Summarize(res, Options{Host: "127.0.0.1", Port: 80, Path: "/"})); err != nil {
		t.Fatal(err)
	}
	want := "<td colspan=2 >&lt;script&gt;alert(1)&lt;/script&gt;&amp;&#34;&#39;</td>"
	if !strings.Contains(out.String(), want) || strings.Contains(out.String(), "<script>") {
		t.Errorf("Server Software not escaped:\n%s", out.String())
	}
}
