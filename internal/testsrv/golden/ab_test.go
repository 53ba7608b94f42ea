package golden

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

const goldenDir = "../../../testdata/golden"

// needAb returns the path of the real ab; it fails under CI when ab is
// missing and skips otherwise.
func needAb(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ab")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ab is required under CI (apt-get install apache2-utils)")
		}
		t.Skip("ab not installed")
	}
	return p
}

// abUnreproducible are cases the real ab cannot re-run against the test
// servers: they need a real DNS lookup or a non-loopback address, or a signal.
var abUnreproducible = map[string]string{
	"err-dns":                 "resolves nosuchhost.invalid",
	"err-bad-url-scheme-case": "resolves the name HTTP:",
	"err-connect-abort":       "connects to 224.0.0.1",
	"sigint":                  "needs a signal; covered by the top-level suite",
	"timeout-after-some":      "the golden's /sometimes counter did not start at 0 (covered by diff_test.go)",
}

// abLoose lists the cases where ab against the test servers legitimately
// prints something other than its golden; they are compared by Shape
// (layout and labels, numbers masked) instead, for the reason given.
var abLoose = map[string]string{
	// The Python server's counter was shared by every case; ours is fresh.
	"varlen": "fresh /var counter", "varlen-l": "fresh /var counter", "html-varlen": "fresh /var counter",
	"csv-n10":          "fresh /var counter, and ab's out-of-bounds CSV read",
	"ka-server-closes": "timing-dependent",
	"timelimit":        "timing-dependent counts",
	"timelimit-then-n": "timing-dependent counts",
	"https-verbose2":   "OpenSSL session dump (random ids and keys) on stderr",
}

// TestAbReproducesGoldens checks the harness itself: the real ab, run
// against the Go test servers with the goldens' command lines, prints its
// goldens again once timings are masked. That proves the servers answer byte
// for byte like nginx and pysrv.py and that the masking hides only timings.
func TestAbReproducesGoldens(t *testing.T) {
	ab := needAb(t)
	names, err := Names(goldenDir)
	if err != nil || len(names) < 80 {
		t.Fatalf("golden cases: %d, %v", len(names), err)
	}
	dataDir, _ := filepath.Abs(goldenDir)
	for _, name := range names {
		if abUnreproducible[name] != "" || (name == "ipv6-refused" && !IPv6Loopback()) {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := Load(goldenDir, name)
			if err != nil {
				t.Fatal(err)
			}
			srv, err := StartServers()
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			out := t.TempDir()
			res, err := RunBinary(context.Background(), ab, c.Argv(srv.Ports, dataDir, out), out, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			mask := Mask
			if abLoose[name] != "" {
				mask = Shape
			}
			wantOut, gotOut := mask(MaskTLS(srv.Ports.Rewrite(c.Stdout))), mask(MaskTLS(res.Stdout))
			wantErr, gotErr := mask(MaskTLS(srv.Ports.Rewrite(c.Stderr))), mask(MaskTLS(res.Stderr))
			if name == "https-verbose2" {
				wantErr, gotErr = "", ""
			}
			if c.Exit != res.Exit {
				t.Errorf("exit %d, golden %d", res.Exit, c.Exit)
			}
			if d := Diff(wantOut, gotOut); d != "" {
				t.Errorf("stdout: %s", d)
			}
			if d := Diff(wantErr, gotErr); d != "" {
				t.Errorf("stderr: %s", d)
			}
			for f, want := range c.Files {
				got, _ := os.ReadFile(filepath.Join(out, f))
				if name == "csv-n10" {
					continue // checked by the top-level suite
				}
				if d := Diff(MaskTSV(MaskCSV(want)), MaskTSV(MaskCSV(string(got)))); d != "" {
					t.Errorf("%s: %s", f, d)
				}
			}
		})
	}
}
