package sweep

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"gab/internal/outfile"
)

// This file is what gab sweep's command line turns into beyond its lists
// (lists.go): --repeat, --ci, the --csv and --json files, a run's name in
// the live outputs.

// Files are --csv and --json, created before the first request (so that a
// bad path stops the sweep before it measures) and written at its end.
type Files struct {
	csv, json *os.File
}

// CreateFiles creates the files named (none for "").
func CreateFiles(csvName, jsonName string) (*Files, error) {
	f := &Files{}
	var err error
	if csvName != "" {
		if f.csv, err = outfile.Create(csvName); err != nil {
			return nil, err
		}
	}
	if jsonName != "" {
		if f.json, err = outfile.Create(jsonName); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// Write writes the CSV and the document into the files and closes them.
func (f *Files) Write(s *Settings, points []*PointResult, m Meta) error {
	write := func(file *os.File, fn func(io.Writer) error) error {
		if file == nil {
			return nil
		}
		return outfile.WriteClose(file, fn)
	}
	err := write(f.csv, func(w io.Writer) error { return WriteCSV(w, points) })
	f.csv = nil
	if jerr := write(f.json, func(w io.Writer) error { return WriteJSON(w, NewDocument(s, points, m)) }); err == nil {
		err = jerr
	}
	f.json = nil
	return err
}

// Close closes the files not written.
func (f *Files) Close() {
	for _, file := range []*os.File{f.csv, f.json} {
		if file != nil {
			file.Close()
		}
	}
}

// ParseRepeat reads --repeat: R (1 to MaxRepeat), or auto[:MAX] (MAX
// from AutoMinRepeat to MaxRepeat, AutoDefaultRepeat
// without); it returns the number of runs planned per point (auto's
// maximum) and whether they are auto's.
func ParseRepeat(v string) (n int, auto bool, err error) {
	if rest, ok := strings.CutPrefix(v, "auto"); ok {
		n = AutoDefaultRepeat
		if rest != "" {
			m, ok := strings.CutPrefix(rest, ":")
			var perr error
			if n, perr = strconv.Atoi(m); !ok || perr != nil || n < AutoMinRepeat || n > MaxRepeat {
				return 0, false, fmt.Errorf("--repeat auto:MAX needs MAX from %d to %d, not %q", AutoMinRepeat, MaxRepeat, v)
			}
		}
		return n, true, nil
	}
	n, err = strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxRepeat {
		return 0, false, fmt.Errorf("--repeat must be from 1 to %d, or auto[:MAX], not %s", MaxRepeat, v)
	}
	return n, false, nil
}

// ParseCI reads --ci: a percentage ("2%" or "2"), above 0 and at most 100,
// as a fraction.
func ParseCI(v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || !(f > 0 && f <= 100) {
		return 0, fmt.Errorf("--ci must be a percentage above 0 and at most 100, not %q", v)
	}
	return f / 100, nil
}

// RunName names a run of the sweep in the live outputs: its target,
// concurrency, size and repetition.
func RunName(s *Settings, r Run) string {
	name := s.Targets[r.Point.Target].Label + " c=" + strconv.Itoa(s.Concurrency[r.Point.Concurrency])
	if r.Point.Size >= 0 && r.Point.Size < len(s.Sizes) {
		name += " size=" + s.Sizes[r.Point.Size].Text
	}
	return name + " rep=" + strconv.Itoa(r.Rep+1)
}
