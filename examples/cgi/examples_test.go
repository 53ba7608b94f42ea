//go:build linux

// Package cgiexamples holds the C programs of the CGI output-buffering
// experiment (run.sh); this test builds them with cc and runs them.
package cgiexamples

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gab/client"
	"gab/internal/testtool"
	"gab/report"
)

var methods = []string{"stdio", "setvbuf-1k", "setvbuf-4k", "setvbuf-8k", "setvbuf-64k",
	"onewrite", "writeline", "readwrite", "mmap", "sendfile"}

// buildExamples compiles every method with run.sh into a temporary directory.
func buildExamples(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("cc is needed to build the CGI examples and CI is set")
		}
		t.Skip("cc not installed")
	}
	dir := t.TempDir()
	out, err := exec.Command("sh", "run.sh", "build", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("run.sh build: %v\n%s", err, out)
	}
	return dir
}

func TestExamplesProduceTheSameDocument(t *testing.T) {
	dir := buildExamples(t)
	for _, size := range []int{1024, 1048576} {
		want, err := os.ReadFile(filepath.Join(dir, "data", "doc-"+strconv.Itoa(size)))
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != size {
			t.Fatalf("mkdoc %d wrote %d bytes", size, len(want))
		}
		for _, m := range methods {
			cmd := exec.Command(filepath.Join(dir, m))
			cmd.Dir = dir
			cmd.Env = []string{"QUERY_STRING=size=" + strconv.Itoa(size)}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s size=%d: %v", m, size, err)
			}
			head := "Content-Type: text/plain\r\nContent-Length: " + strconv.Itoa(size) + "\r\n\r\n"
			if !bytes.HasPrefix(out, []byte(head)) || !bytes.Equal(out[len(head):], want) {
				t.Errorf("%s size=%d: output (%d bytes) is not the header and the %d-byte document", m, size, len(out), size)
			}
		}
	}
}

func TestExamplesRunUnderGabCGI(t *testing.T) {
	dir := buildExamples(t)
	const size, n = 16384, 20
	for _, m := range methods {
		url := "http://localhost/cgi-bin/" + m + "?size=" + strconv.Itoa(size)
		target, err := client.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		rn, err := client.New(client.Config{
			Target: target, Requests: n, Concurrency: 2, Timeout: 30 * time.Second,
			Spec:     client.RequestSpec{Method: "GET", Target: target.Path, Host: target.HostField()},
			Protocol: client.CGI, CGIProgram: filepath.Join(dir, m),
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := rn.Run(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if res.Complete != n || res.Failed.Total != 0 || res.Non2xx != 0 || res.DocLength != size {
			t.Errorf("%s: complete %d failed %d non-2xx %d doc length %d; want %d, 0, 0, %d (%v)",
				m, res.Complete, res.Failed.Total, res.Non2xx, res.DocLength, n, size, res.FirstError)
		}
		var table bytes.Buffer
		if err := report.WriteSections(&table, report.Summarize(res, report.Options{}), report.Sections{Tables: true}); err != nil || !bytes.Contains(table.Bytes(), []byte("\nCGI times (ms)\n")) {
			t.Errorf("%s: CGI table %q, err %v", m, table.String(), err)
		}
	}
}

// TestRunShEndToEnd runs the experiment script on a small scale with the gab
// CLI built from this tree, lighttpd comparison included.
func TestRunShEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gab and runs every example")
	}
	buildExamples(t) // checks for cc
	withServer := true
	if _, err := exec.LookPath("lighttpd"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("lighttpd is needed for run.sh -S and CI is set")
		}
		withServer = false
	}
	tmp := t.TempDir()
	gab := filepath.Join(tmp, "gab")
	if out, err := exec.Command("go", "build", "-o", gab, "gab").CombinedOutput(); err != nil {
		t.Fatalf("go build gab: %v\n%s", err, out)
	}
	args := []string{"run.sh", "-n", "20", "-r", "1", "-s", "1024 16384", "-o", filepath.Join(tmp, "out")}
	if withServer {
		args = append(args, "-S")
	}
	// lighttpd binds a port that was free a moment ago (testtool.FreePort):
	// on a busy machine another listener, or an outgoing connection's local
	// port, may take it first, and lighttpd then never answers there. That
	// run is started again on another port, up to three times in all; a
	// lighttpd that cannot serve at all fails each.
	var port int
	var out []byte
	for try := 1; ; try++ {
		port = testtool.FreePort(t)
		cmd := exec.Command("sh", args...)
		cmd.Env = append(os.Environ(), "GAB="+gab, "BIN="+filepath.Join(tmp, "bin"), "PORT="+strconv.Itoa(port))
		var err error
		out, err = cmd.CombinedOutput()
		if err == nil {
			break
		}
		if try == 3 || !bytes.Contains(out, []byte("run.sh: lighttpd did not answer on port")) {
			t.Fatalf("run.sh: %v\n%s", err, out)
		}
		t.Logf("run.sh, try %d: %s", try, out)
	}
	text := string(out)
	for _, m := range methods {
		if !strings.Contains(text, "\n| "+m+" | ") {
			t.Errorf("run.sh table has no row for %s:\n%s", m, text)
		}
		for _, size := range []string{"1024", "16384"} {
			tsv, err := os.ReadFile(filepath.Join(tmp, "out", m+"-"+size+"-r1.tsv"))
			if err != nil {
				t.Fatal(err)
			}
			if lines := strings.Count(string(tsv), "\n"); lines != 21 {
				t.Errorf("%s-%s -g file has %d lines, want a header and 20 requests", m, size, lines)
			}
		}
	}
	report, err := os.ReadFile(filepath.Join(tmp, "out", "stdio-1024-r1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(report, []byte("\nCGI times (ms)\n")) || !bytes.Contains(report, []byte("Document Length:        1024 bytes")) {
		t.Errorf("gab --cgi report lacks the CGI table or the document length:\n%s", report)
	}
	if withServer {
		if !strings.Contains(text, "| sendfile | 16 KiB | ") {
			t.Errorf("run.sh -S printed no server comparison:\n%s", text)
		}
		// run.sh stops lighttpd by its PID: the port must be free again.
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Errorf("lighttpd still holds port %d: %v", port, err)
		} else {
			ln.Close()
		}
	}
}
