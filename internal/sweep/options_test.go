package sweep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseRepeatAndCI: --repeat R or auto[:MAX] within the limits, --ci a
// percentage above 0 and at most 100; anything else is refused, named.
func TestParseRepeatAndCI(t *testing.T) {
	for v, want := range map[string][2]int{"3": {3, 0}, "auto": {AutoDefaultRepeat, 1}, "auto:7": {7, 1}} {
		n, auto, err := ParseRepeat(v)
		if err != nil || n != want[0] || auto != (want[1] == 1) {
			t.Errorf("--repeat %s: %d %v %v", v, n, auto, err)
		}
	}
	for _, v := range []string{"0", "1001", "x", "auto:2", "auto:", "auto7", "auto:1001"} {
		if _, _, err := ParseRepeat(v); err == nil || !strings.Contains(err.Error(), "--repeat") {
			t.Errorf("--repeat %s: %v", v, err)
		}
	}
	for v, want := range map[string]float64{"2%": 0.02, "2": 0.02, "100": 1} {
		if f, err := ParseCI(v); err != nil || f != want {
			t.Errorf("--ci %s: %v %v", v, f, err)
		}
	}
	for _, v := range []string{"0", "-1", "101", "NaN", "x%"} {
		if _, err := ParseCI(v); err == nil || !strings.Contains(err.Error(), "--ci") {
			t.Errorf("--ci %s: %v", v, err)
		}
	}
}

// TestFilesWriteCSVAndJSON: the files are created before the runs and hold
// the CSV and the document after Write; a path that cannot be created is an
// error at once.
func TestFilesWriteCSVAndJSON(t *testing.T) {
	dir := t.TempDir()
	csvName, jsonName := filepath.Join(dir, "s.csv"), filepath.Join(dir, "s.json")
	f, err := CreateFiles(csvName, jsonName)
	if err != nil {
		t.Fatal(err)
	}
	s, runs := testSweep()
	if err := f.Write(s, Aggregate(s, runs), Meta{}); err != nil {
		t.Fatal(err)
	}
	f.Close() // nothing left open: a no-op
	c, _ := os.ReadFile(csvName)
	j, _ := os.ReadFile(jsonName)
	if !strings.HasPrefix(string(c), "label,url,") || !strings.Contains(string(j), `"schema": "gab-sweep"`) {
		t.Errorf("csv %.40q json %.60q", c, j)
	}
	if !json.Valid(j) {
		t.Error("the document is not JSON")
	}
	if _, err := CreateFiles(filepath.Join(dir, "no", "such", "s.csv"), ""); err == nil {
		t.Error("a CSV path in a missing directory was created")
	}
}
