//go:build unix

package sweep

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRunBefore: --before's command runs with the point's --param value in
// place of {NAME}, its output on the given writer; a failure names the
// command; a cancelled sweep kills it; no --before runs nothing.
func TestRunBefore(t *testing.T) {
	s := &Settings{Before: "echo workers={w}", Param: &Param{Name: "w", Values: []string{"4", "16"}}}
	var out bytes.Buffer
	if err := s.RunBefore(t.Context(), Point{Param: 1}, &out); err != nil || out.String() != "workers=16\n" {
		t.Errorf("%q, %v", out.String(), err)
	}
	s.Before = "exit 3"
	if err := s.RunBefore(t.Context(), Point{Param: 0}, &out); err == nil || err.Error() != `--before "exit 3": exit status 3` {
		t.Errorf("failing command: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s.Before = "sleep 30"
	if err := s.RunBefore(ctx, Point{}, &out); err == nil || !strings.Contains(err.Error(), "sleep 30") {
		t.Errorf("cancelled: %v", err)
	}
	if err := (&Settings{}).RunBefore(t.Context(), Point{}, &out); err != nil {
		t.Errorf("no --before: %v", err)
	}
}
