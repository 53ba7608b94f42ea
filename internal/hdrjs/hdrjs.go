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
	"strconv"
	"strings"
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
	// AtRank are the values at Percents by the nearest-rank rule of
	// HdrHistogram's Go, C and Python libraries (gab's rule,
	// samples.NearestRank), each capped by the line's exact Interval_Max.
	AtRank []int64 `json:"at_rank"`
	// Own are hdr-histogram-js's getValueAtPercentile(p) at Percents as it
	// computes them, capped by Interval_Max. Like HdrHistogram's Java
	// library it rounds p/100·count up, so it takes one rank more than
	// AtRank wherever the fraction of p/100·count lies in (0, 0.5).
	Own []int64 `json:"own"`
	// P99 is AtRank's p99.
	P99 int64 `json:"-"`
}

// Percents are the percentiles ReadLog reads for each interval (a gab
// timeline's p50, p90, p99 and p99.9).
var Percents = [...]float64{50, 90, 99, 99.9}

// ReadLog returns every interval histogram of the log at path, in order.
func ReadLog(t testing.TB, path string) []Interval {
	t.Helper()
	node := testtool.Need(t, "node", "nodejs")
	dir := install(t)
	script := filepath.Join(dir, "read.js")
	ps := make([]string, len(Percents))
	for i, p := range Percents {
		ps[i] = strconv.FormatFloat(p, 'f', -1, 64)
	}
	cmd := exec.Command(node, script, path, strings.Join(ps, ","))
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
	for i, iv := range ivs {
		if len(iv.AtRank) != len(Percents) || len(iv.Own) != len(Percents) {
			t.Fatalf("node read.js printed %d and %d values for %d percentiles", len(iv.AtRank), len(iv.Own), len(Percents))
		}
		ivs[i].P99 = iv.AtRank[2]
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
