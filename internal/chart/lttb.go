package chart

import "math"

// LTTB downsamples pts (sorted by X) to at most n points with
// largest-triangle-three-buckets (Steinarsson, 2013): the first and last
// points are kept, the others split into n−2 buckets of equal count, and
// from each bucket the point that makes the largest triangle with the point
// kept before it and the mean of the next bucket. Peaks survive, flat
// stretches thin out. It returns pts itself when it has at most n points
// (or n < 3).
func LTTB(pts []XY, n int) []XY {
	if n < 3 || len(pts) <= n {
		return pts
	}
	out := make([]XY, 0, n)
	out = append(out, pts[0])
	every := float64(len(pts)-2) / float64(n-2)
	a := 0
	for i := 0; i < n-2; i++ {
		lo := int(float64(i)*every) + 1
		hi := int(float64(i+1)*every) + 1
		// The mean of the next bucket (the last point for the last bucket).
		nlo, nhi := hi, min(int(float64(i+2)*every)+1, len(pts))
		if i == n-3 {
			nlo, nhi = len(pts)-1, len(pts)
		}
		var mx, my float64
		for _, p := range pts[nlo:nhi] {
			mx += p.X
			my += p.Y
		}
		mx /= float64(nhi - nlo)
		my /= float64(nhi - nlo)
		best, bestArea := lo, -1.0
		ax, ay := pts[a].X, pts[a].Y
		for j := lo; j < hi; j++ {
			area := math.Abs((ax-mx)*(pts[j].Y-ay) - (ax-pts[j].X)*(my-ay))
			if area > bestArea {
				best, bestArea = j, area
			}
		}
		out = append(out, pts[best])
		a = best
	}
	return append(out, pts[len(pts)-1])
}

// XY is a point of a series.
type XY struct{ X, Y float64 }
