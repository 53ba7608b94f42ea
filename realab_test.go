package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gab/internal/testtool"
)

// The differential tests compare gab with the real ApacheBench. README
// suggests installing gab as "ab" ahead of the real one on PATH; the tests
// must then still find ApacheBench, never gab under its name.

// realAB returns the path of the real ApacheBench: the first "ab" on PATH,
// then in /usr/bin and /usr/local/bin (where Debian and a source build put
// it), that is not gab. Without one the test fails under CI and is skipped
// elsewhere, saying which "ab" files were gab.
func realAB(t testing.TB) string {
	t.Helper()
	p, gabs := findRealAB(os.Getenv("PATH"))
	if p == "" {
		why := "the real ApacheBench is not installed (apt-get install apache2-utils)"
		if len(gabs) > 0 {
			why += "; these \"ab\" are gab: " + strings.Join(gabs, ", ")
		}
		testtool.Missing(t, why)
	}
	return p
}

// findRealAB looks for ApacheBench along pathList and then in the usual
// directories, and returns it with every "ab" found to be gab.
func findRealAB(pathList string) (ab string, gabs []string) {
	seen := map[string]bool{}
	for _, dir := range append(filepath.SplitList(pathList), "/usr/bin", "/usr/local/bin") {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, "ab")
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		if isApacheBench(p) {
			return p, gabs
		}
		gabs = append(gabs, p)
	}
	return "", gabs
}

// isApacheBench tells ab 2.3 from gab: ab takes "--version" for the end of
// its options and exits 22 with "wrong number of arguments"; gab prints its
// version and exits 0. (Both answer -V with ApacheBench's banner.)
func isApacheBench(path string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == 22 &&
		strings.Contains(string(out), "wrong number of arguments") && !strings.HasPrefix(string(out), "gab ")
}

// With gab linked as "ab" first on PATH (README's install tip), the
// differential tests must still run the real ApacheBench, or report that it
// is missing: never gab.
func TestRealABIsNotGab(t *testing.T) {
	gab := buildGab(t) // a directory holding gab as "ab"
	if isApacheBench(gab) {
		t.Fatalf("%s (gab) passes for ApacheBench", gab)
	}
	shadowed := filepath.Dir(gab) + string(filepath.ListSeparator) + os.Getenv("PATH")
	ab, gabs := findRealAB(shadowed)
	if len(gabs) == 0 || gabs[0] != gab {
		t.Errorf("gab's \"ab\" at %s was not recognised as gab (gabs %v)", gab, gabs)
	}
	if ab == gab {
		t.Fatalf("findRealAB chose gab")
	}
	if ab == "" {
		testtool.Missing(t, "the real ApacheBench is not installed (apt-get install apache2-utils)")
	}
	if !isApacheBench(ab) {
		t.Errorf("%s is not ApacheBench", ab)
	}
	t.Setenv("PATH", shadowed)
	if got := realAB(t); got != ab {
		t.Errorf("realAB with gab first on PATH = %s, want %s", got, ab)
	}
}
