package report

import "io"

// WriteCSV writes ab's -e file: a header and 101 rows "%d,%.3f"
// of total times in fractional ms. It writes nothing when no request was
// recorded (ab then creates no file).
func WriteCSV(w io.Writer, r *Run) error {
	if r.local.count == 0 {
		return nil
	}
	e := newErrWriter(w)
	e.printf("Percentage served,Time in ms\n")
	for i := 0; i <= 100; i++ {
		e.printf("%d,%.3f\n", i, doubleMs(float64(r.local.csv[i])))
	}
	return e.flush()
}
