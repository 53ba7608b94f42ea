package chart

import "testing"

// TestLTTBKeepsPeaks: 10,000 flat points with three spikes become 100
// points that keep the first, the last and every spike, in order.
func TestLTTBKeepsPeaks(t *testing.T) {
	pts := make([]XY, 10_000)
	for i := range pts {
		pts[i] = XY{float64(i), 1 + float64(i%7)/100}
	}
	for _, i := range []int{1234, 5000, 8765} {
		pts[i].Y = 50
	}
	got := LTTB(pts, 100)
	if len(got) != 100 || got[0] != pts[0] || got[99] != pts[len(pts)-1] {
		t.Fatalf("%d points from %v to %v", len(got), got[0], got[len(got)-1])
	}
	spikes := 0
	for i, p := range got {
		if i > 0 && p.X <= got[i-1].X {
			t.Fatalf("point %d at x %v after %v", i, p.X, got[i-1].X)
		}
		if p.Y == 50 {
			spikes++
		}
	}
	if spikes != 3 {
		t.Errorf("%d spikes kept, want 3", spikes)
	}
	if small := pts[:50]; len(LTTB(small, 100)) != 50 {
		t.Errorf("a series under the limit is changed")
	}
}
