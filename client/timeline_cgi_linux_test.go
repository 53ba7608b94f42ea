package client

import (
	"bytes"
	"context"
	"testing"
)

// TestTimelineSentBytesCGI: a CGI run counts in its timeline the bytes
// written to each child's standard input and read from its output, as
// its totals do.
func TestTimelineSentBytesCGI(t *testing.T) {
	prog := writeScript(t, t.TempDir(), "echo", "cat >/dev/null\nprintf 'Content-Type: text/plain\\r\\n\\r\\nok'\n")
	const n = 6
	cfg := cgiConfig(t, prog, "http://localhost:8080/cgi-bin/echo", n, 2)
	body := bytes.Repeat([]byte("a=1&"), 500)
	cfg.Spec.Method, cfg.Spec.HasBody, cfg.Spec.Body, cfg.Interval = "POST", true, body, MinInterval
	res, err := runCGI(t, context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, res, n, Failures{})
	wantTimelineBytes(t, res, n, body)
}
