package client

import (
	"strings"
	"testing"
)

// The note on UDP buffers: only when a limit is below what quic-go asks for
// and the process cannot force past it, with the command that raises both.
func TestUDPBufferNote(t *testing.T) {
	never := func() bool { return false }
	always := func() bool { return true }
	for _, tc := range []struct {
		rmax, wmax int
		forced     func() bool
		note       bool
	}{
		{212992, 212992, never, true}, // Linux's default
		{8 << 20, 212992, never, true},
		{212992, 212992, always, false}, // CAP_NET_ADMIN: quic-go forces them
		{8 << 20, 8 << 20, never, false},
		{-1, 212992, never, false}, // unknown: say nothing
	} {
		note := udpBufferNoteFor(tc.rmax, tc.wmax, tc.forced)
		if (note != "") != tc.note {
			t.Errorf("rmem_max %d wmem_max %d: note %q", tc.rmax, tc.wmax, note)
		}
		if note != "" && (!strings.Contains(note, "sysctl -w net.core.rmem_max=7500000 net.core.wmem_max=7500000") || strings.Contains(note, "\n")) {
			t.Errorf("note %q does not say how to raise the limits on one line", note)
		}
	}
	if udpBufferNote() != "" && udpBuffersForced() {
		t.Error("a note although the buffers can be forced")
	}
}
