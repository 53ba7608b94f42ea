// Package container holds the test of gab's container image: it builds the
// image with build.sh and buildah (offline, vfs storage in a private store),
// then checks it without running a container, which these machines do not
// allow: the filesystem through buildah mount, the binary run directly, and
// the configuration through buildah inspect.
package container

import (
	"debug/buildinfo"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gab/internal/testtool"
)

// needBuildah returns buildah's path, or ends the test (a failure under CI):
// building with the vfs store needs root, which CI has.
func needBuildah(t *testing.T) string {
	t.Helper()
	path := testtool.Need(t, "buildah", "buildah")
	if os.Geteuid() != 0 {
		testtool.Missing(t, "building the image with buildah's vfs store needs root")
	}
	return path
}

// store is a private buildah store in a temporary directory.
type store struct {
	t       *testing.T
	buildah string
	flags   []string
}

func (s *store) run(args ...string) string {
	s.t.Helper()
	cmd := exec.Command(s.buildah, append(slices.Clone(s.flags), args...)...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		s.t.Fatalf("buildah %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out))
}

func TestImage(t *testing.T) {
	bin := needBuildah(t)
	dir := t.TempDir()
	s := &store{t: t, buildah: bin, flags: []string{
		"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"), "--storage-driver", "vfs"}}
	const tag = "localhost/gab:imagetest"
	const version = "9.8.7-imagetest"

	build := exec.Command("bash", "build.sh", tag)
	build.Env = append(os.Environ(),
		"VERSION="+version,
		"BUILDAH_FLAGS="+strings.Join(s.flags[:4], " "))
	out, err := build.CombinedOutput()
	if err != nil {
		t.Fatalf("build.sh: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		s.run("rmi", "--force", tag)
		if imgs := s.run("images", "--quiet"); imgs != "" {
			t.Errorf("images left in the store after rmi: %q", imgs)
		}
	})

	// build.sh's last line gives the size; a static gab in an empty image is
	// a few MB.
	m := regexp.MustCompile(`(?m)^built ` + regexp.QuoteMeta(tag) + ` \(` + regexp.QuoteMeta(version) + `\): ([0-9.]+) (kB|MB)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("build.sh did not print the size line:\n%s", out)
	}
	size, _ := strconv.ParseFloat(string(m[1]), 64)
	if string(m[2]) == "MB" && size > 20 {
		t.Errorf("image is %s MB; a static gab in an empty image should be well under 20 MB", m[1])
	}

	// The image's configuration: entrypoint, non-root user, version label.
	var img struct {
		OCIv1 struct {
			Config struct {
				Entrypoint []string
				User       string
				Labels     map[string]string
			} `json:"config"`
		}
	}
	if err := json.Unmarshal([]byte(s.run("inspect", "--type", "image", tag)), &img); err != nil {
		t.Fatalf("buildah inspect: %v", err)
	}
	cfg := img.OCIv1.Config
	if !slices.Equal(cfg.Entrypoint, []string{"/gab"}) {
		t.Errorf("entrypoint %q, want [/gab]", cfg.Entrypoint)
	}
	if cfg.User != "65532:65532" {
		t.Errorf("user %q, want the unprivileged 65532:65532", cfg.User)
	}
	if got := cfg.Labels["org.opencontainers.image.version"]; got != version {
		t.Errorf("version label %q, want %q", got, version)
	}

	// The filesystem: the binary, the CA bundle, an empty sticky /tmp, and
	// nothing else.
	ctr := s.run("from", tag)
	t.Cleanup(func() { s.run("rm", ctr) })
	root := s.run("mount", ctr)
	t.Cleanup(func() { s.run("umount", ctr) })
	want := map[string]fs.FileMode{
		"etc":                               fs.ModeDir | 0o755,
		"etc/ssl":                           fs.ModeDir | 0o755,
		"etc/ssl/certs":                     fs.ModeDir | 0o755,
		"etc/ssl/certs/ca-certificates.crt": 0o644,
		"gab":                               0o755,
		"tmp":                               fs.ModeDir | fs.ModeSticky | 0o777,
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode, ok := want[rel]
		switch {
		case !ok:
			t.Errorf("unexpected file in the image: /%s", rel)
		case info.Mode() != mode:
			t.Errorf("/%s has mode %v, want %v", rel, info.Mode(), mode)
		}
		seen[rel] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range want {
		if !seen[p] {
			t.Errorf("/%s is missing from the image", p)
		}
	}
	if st, err := os.Stat(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt")); err != nil || st.Size() < 1000 {
		t.Errorf("the CA bundle is missing or empty: %v", err)
	}

	// The binary: static (no cgo), stamped with the version, and working.
	gab := filepath.Join(root, "gab")
	info, err := buildinfo.ReadFile(gab)
	if err != nil {
		t.Fatalf("build info of /gab: %v", err)
	}
	cgo := ""
	for _, kv := range info.Settings {
		if kv.Key == "CGO_ENABLED" {
			cgo = kv.Value
		}
	}
	if cgo != "0" {
		t.Errorf("/gab was built with CGO_ENABLED=%q, want 0 (a static binary)", cgo)
	}
	if got := runGab(t, gab, "--version"); strings.TrimSpace(got) != "gab "+version {
		t.Errorf("/gab --version printed %q, want %q", got, "gab "+version)
	}
	if got := runGab(t, gab, "-V"); !strings.HasPrefix(got, "This is ApacheBench, Version 2.3") {
		t.Errorf("/gab -V printed %q", got)
	}
	got := runGab(t, gab, "--demo", "-n", "200", "-c", "4", "-k")
	for _, line := range []string{"Complete requests:      200", "Failed requests:        0"} {
		if !strings.Contains(got, line) {
			t.Errorf("/gab --demo run lacks %q:\n%s", line, got)
		}
	}
}

func runGab(t *testing.T, gab string, args ...string) string {
	t.Helper()
	out, err := exec.Command(gab, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", gab, strings.Join(args, " "), err)
	}
	return string(out)
}
