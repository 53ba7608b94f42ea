// Package hdrjs reads HdrHistogram interval logs with an independent
// implementation, the npm package hdr-histogram-js run by node, so that tests
// can check gab's --hlog files against it. The package is installed once with
// npm ci from the lock file embedded here into the user's cache directory
// (keyed by the lock file's hash), and works offline from then on. Without
// node or npm the test fails under CI and is skipped elsewhere.
package hdrjs

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"gab/internal/testtool"
)

//go:embed package.json
var packageJSON []byte

//go:embed package-lock.json
var packageLock []byte

//go:embed read.js
var readJS []byte

// Interval is one interval histogram as hdr-histogram-js read it.
type Interval struct {
	Tag     string  `json:"tag"`
	StartMs float64 `json:"start_ms"` // since the epoch
	EndMs   float64 `json:"end_ms"`
	Count   int64   `json:"count"`
	Max     int64   `json:"max"`
	// P99 is the value at gab's p99 rank (floor(count·99/100), 0-based),
	// capped by the line's Interval_Max.
	P99 int64 `json:"p99"`
}

// ReadLog returns every interval histogram of the log at path, in order.
func ReadLog(t testing.TB, path string) []Interval {
	t.Helper()
	node := testtool.Need(t, "node", "nodejs")
	dir := install(t)
	script := filepath.Join(dir, "read.js")
	cmd := exec.Command(node, script, path)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("node read.js: %v\n%s", err, stderr)
	}
	var ivs []Interval
	if err := json.Unmarshal(out, &ivs); err != nil {
		t.Fatalf("node read.js printed %q: %v", out, err)
	}
	return ivs
}

// install puts hdr-histogram-js and read.js in a cache directory once.
func install(t testing.TB) string {
	t.Helper()
	npm := testtool.Need(t, "npm", "npm")
	sum := sha256.Sum256(append(append(append([]byte(nil), packageLock...), packageJSON...), readJS...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "gab-hdrjs-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "hdr-histogram-js", "package.json")); err == nil {
		return dir
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(cache, "gab-hdrjs-install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp) // nothing left once renamed
	for name, b := range map[string][]byte{"package.json": packageJSON, "package-lock.json": packageLock, "read.js": readJS} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--prefer-offline")
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm ci (hdr-histogram-js): %v\n%s", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another test process installed it meanwhile.
		if _, serr := os.Stat(filepath.Join(dir, "node_modules", "hdr-histogram-js", "package.json")); serr != nil {
			t.Fatalf("installing hdr-histogram-js: %v", err)
		}
	}
	return dir
}
