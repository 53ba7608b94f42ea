package calibrate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"gab/internal/testtool"
)

// ReadFile takes a regular file of a calibration only: not a FIFO (at once,
// without a writer), a directory, nor a file over MaxFile.
func TestReadFileRegularFilesOnly(t *testing.T) {
	dir := t.TempDir()
	good, _ := json.Marshal(Calibration{Schema: Schema, SchemaVersion: 1, Ceiling: map[string]float64{"h1_keepalive": 10}})
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if c := ReadFile(write("good.json", good)); c == nil || c.Ceiling["h1_keepalive"] != 10 {
		t.Fatalf("a calibration file read as %+v", c)
	}
	big := append(bytes.Repeat([]byte(" "), MaxFile), good...)
	fifo := testtool.MakeFIFO(t, dir, "fifo.json")
	for _, name := range []string{write("big.json", big), dir, fifo.Path, filepath.Join(dir, "missing.json")} {
		if c := ReadFile(name); c != nil {
			t.Errorf("%s read as %+v", name, c)
		}
	}
}

// A read of the calibration file that never ends (a hung file system) holds
// no run: Ceiling gives up a second after the read began, and a read
// started while that one is still under way shares it rather than starting
// another.
func TestReadThatHangs(t *testing.T) {
	name := filepath.Join(t.TempDir(), "calibration.json")
	release := make(chan struct{})
	var calls atomic.Int64
	readFile = func(string) *Calibration {
		calls.Add(1)
		<-release
		return &Calibration{Schema: Schema, Ceiling: map[string]float64{"h1_keepalive": 10}}
	}
	t.Cleanup(func() {
		// The read ends; once it is no longer under way the hook can go.
		close(release)
		for end := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
			reads.Lock()
			n := len(reads.pending)
			reads.Unlock()
			if n == 0 {
				break
			}
			if time.Now().After(end) {
				t.Error("the calibration read did not end")
				return
			}
		}
		readFile = ReadFile
		if n := calls.Load(); n != 1 {
			t.Errorf("%d reads of the calibration file, want one shared by both", n)
		}
	})
	first := startRead(name)
	for i, r := range []*Read{first, startRead(name)} {
		if r != first {
			t.Fatalf("read %d started another read of the file under way", i)
		}
		begin := time.Now()
		if v := r.Ceiling("h1_keepalive"); v != 0 {
			t.Fatalf("read %d: ceiling %v from a read that never ended", i, v)
		}
		if d := time.Since(begin); d > 20*time.Second {
			t.Fatalf("read %d: Ceiling took %v", i, d)
		}
	}
}

// A read that ends gives its ceiling, and none for a mode it lacks or an
// absurd figure.
func TestReadCeiling(t *testing.T) {
	name := filepath.Join(t.TempDir(), "calibration.json")
	b, _ := json.Marshal(Calibration{Schema: Schema, Ceiling: map[string]float64{"h1_keepalive": 10, "h2": 1e13}})
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := startRead(name)
	<-r.done
	for key, want := range map[string]float64{"h1_keepalive": 10, "h1_close": 0, "h2": 0, "": 0} {
		if got := r.Ceiling(key); got != want {
			t.Errorf("%q: %v, want %v", key, got, want)
		}
	}
	if (*Read)(nil).Ceiling("h1_keepalive") != 0 {
		t.Error("no read gave a ceiling")
	}
}

// BusyReason: other processes' CPU at 10 % of the cores, or a load average
// at the cores before the calibration, make a busy machine; an unknown CPU
// (-1) alone does not.
func TestBusyReason(t *testing.T) {
	for _, c := range []struct {
		others, load float64
		want         string
	}{
		{0.39, 3.9, ""},
		{-1, 0, ""},
		{0.4, 0, "other processes used 0.40 of the 4 cores (10 %; 10 % or more is a busy machine)"},
		{0, 4, "the load average was 4.00 before it began, for 4 cores"},
	} {
		cal := Calibration{Cores: 4, OthersCores: c.others, LoadBefore: c.load}
		if got := cal.BusyReason(); got != c.want {
			t.Errorf("others %v load %v: %q, want %q", c.others, c.load, got, c.want)
		}
	}
}
