package sweep

// SweepForTest is testSweep, for the package's external tests.
var SweepForTest = testSweep

// TableForTest is the table's heads and each point's cells, as WriteTable
// writes them (trimmed of the columns' padding).
func TableForTest(s *Settings, points []*PointResult) (heads []string, rows [][]string) {
	cols, _ := tableColumns(s, points)
	for _, c := range cols {
		heads = append(heads, c.head)
	}
	for _, p := range points {
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = c.cell(p)
		}
		rows = append(rows, row)
	}
	return heads, rows
}
