package client

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// goroutineEndWait bounds the wait for goroutines to end after a test or
// the package: a leaked goroutine never ends, while one winding down can
// wait seconds for a CPU on a loaded machine, so the bound is generous (the
// wait ends as soon as they are gone).
const goroutineEndWait = 20 * time.Second

// TestMain fails the package's run if goroutines of the engine (any goroutine
// with a frame in a non-test file of this package), or of the tests' servers,
// outlive the tests: every run must stop everything it started.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if left := waitForGoroutines(nil, goroutineEndWait, isPackageGoroutine); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: %d goroutines of package client outlived the tests:\n\n%s\n",
				len(left), strings.Join(left, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

// checkEngineLeaks fails t if a goroutine of the engine started during t is
// still running once t and its cleanups registered later have finished.
// Unlike checkGoroutines it counts only the engine's goroutines, by identity.
func checkEngineLeaks(t *testing.T) {
	t.Helper()
	before := map[string]bool{}
	for _, g := range goroutineStacks() {
		before[goroutineID(g)] = true
	}
	t.Cleanup(func() {
		if left := waitForGoroutines(before, goroutineEndWait, isEngineGoroutine); len(left) > 0 {
			t.Errorf("%d engine goroutines outlived the test:\n\n%s", len(left), strings.Join(left, "\n\n"))
		}
	})
}

// waitForGoroutines waits up to limit for the goroutines that match keep and
// are not in skip (by id) to end, and returns the stacks of those still there.
func waitForGoroutines(skip map[string]bool, limit time.Duration, keep func(stack string) bool) []string {
	deadline := time.Now().Add(limit)
	for {
		var left []string
		for i, g := range goroutineStacks() {
			if i == 0 || skip[goroutineID(g)] || !keep(g) {
				continue // the first stack is the calling goroutine's
			}
			left = append(left, g)
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// goroutineStacks returns every goroutine's stack, the caller's first.
func goroutineStacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if s := strings.TrimSpace(string(g)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// goroutineID is the "goroutine N" prefix of a stack.
func goroutineID(stack string) string {
	id, _, _ := strings.Cut(stack, " [")
	return id
}

// isPackageGoroutine reports a goroutine running code of this package, tests
// included (fault servers, helper processes' pipes).
func isPackageGoroutine(stack string) bool {
	return strings.Contains(stack, "gab/client.")
}

// isEngineGoroutine reports a goroutine with a frame in a non-test source file
// of this package, or one created by such a frame.
func isEngineGoroutine(stack string) bool {
	for _, line := range strings.Split(stack, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "/") || !strings.Contains(line, "/client/") {
			continue
		}
		file, _, _ := strings.Cut(line, ":")
		if strings.HasSuffix(file, ".go") && !strings.HasSuffix(file, "_test.go") {
			return true
		}
	}
	return false
}

func TestGoroutineStacksParse(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	go func() {
		close(started)
		<-release
	}()
	<-started
	stacks := goroutineStacks()
	if len(stacks) < 2 || !strings.HasPrefix(stacks[0], "goroutine ") || !strings.Contains(stacks[0], "TestGoroutineStacksParse") {
		t.Fatalf("caller's stack is not first:\n%s", stacks[0])
	}
	found := 0
	for _, g := range stacks {
		if strings.Contains(g, "TestGoroutineStacksParse.func1") {
			found++
			if !isPackageGoroutine(g) || isEngineGoroutine(g) {
				t.Errorf("a test goroutine is classified package %v engine %v", isPackageGoroutine(g), isEngineGoroutine(g))
			}
		}
	}
	if found != 1 {
		t.Errorf("found the parked goroutine %d times", found)
	}
	close(release)
	if left := waitForGoroutines(nil, goroutineEndWait, func(s string) bool { return strings.Contains(s, "TestGoroutineStacksParse.func1") }); len(left) != 0 {
		t.Errorf("released goroutine still listed: %v", left)
	}
}

// The goroutines of a running Runner are the engine's; none remain after Run returns.
func TestEngineGoroutinesDetected(t *testing.T) {
	srv := newFaultServer(t, stallForever)
	rn, err := New(h1Config(srv.port(), 1, 1, false))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _, _ = rn.Run(ctx) }()
	for srv.accepted.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if left := waitForGoroutines(nil, 0, isEngineGoroutine); len(left) == 0 {
		t.Errorf("a running engine has no engine goroutines")
	}
	cancel()
	<-done
	if left := waitForGoroutines(nil, goroutineEndWait, isEngineGoroutine); len(left) != 0 {
		t.Errorf("engine goroutines remain after Run returned:\n%s", strings.Join(left, "\n\n"))
	}
}
