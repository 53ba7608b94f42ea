// Package testtool finds the real programs that tests run (ab, nginx,
// gnuplot, chromium, buildah, Slurm, node): a test that needs one fails under
// CI (the CI environment variable set) when it is missing, and skips
// elsewhere, so that a green CI run always means the real tool was used.
package testtool

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Need returns the path of the program name, looked up on PATH and then in
// /usr/sbin and /sbin (where Debian puts daemons). When it is missing the
// test fails under CI, naming the Debian package that provides it, and is
// skipped otherwise.
func Need(t testing.TB, name, debianPackage string) string {
	t.Helper()
	if p, ok := Find(name); ok {
		return p
	}
	Missing(t, name+" is not installed (apt-get install "+debianPackage+")")
	return ""
}

// Find looks name up as Need does, without ending the test.
func Find(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// Missing ends the test for a missing prerequisite: a failure under CI, a
// skip elsewhere.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// WantInFile fails t for each of wants that the file name lacks.
func WantInFile(t testing.TB, name string, wants ...string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range wants {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q", name, want)
		}
	}
}
