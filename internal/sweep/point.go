package sweep

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// SetTargets parses the targets (a URL or LABEL=URL each) into s and checks
// that they make a sweep of runs within bounds and that --baseline labels
// one of them.
func (s *Settings) SetTargets(args []string) error {
	var err error
	if s.Targets, err = ParseTargets(args, s.SizeOption); err != nil {
		return err
	}
	if err := CheckRuns(s.Dims()); err != nil {
		return err
	}
	if s.Baseline != "" && !slices.ContainsFunc(s.Targets, func(t Target) bool { return t.Label == s.Baseline }) {
		return fmt.Errorf("--baseline: no target is labelled %q", s.Baseline)
	}
	return nil
}

// PointArgs is point pt's single-run command line: argv0, ab's options ab,
// -n for --requests-per-conn, -c and the target's URL at the point's size.
func (s *Settings) PointArgs(pt Point, argv0 string, ab []string) []string {
	argv := append([]string{argv0}, ab...)
	c := s.Concurrency[pt.Concurrency]
	if s.RequestsPerConn > 0 {
		argv = append(argv, "-n", strconv.FormatInt(int64(c)*int64(s.RequestsPerConn), 10))
	}
	return append(argv, "-c", strconv.Itoa(c), s.Targets[pt.Target].URLFor(s.pointSize(pt)))
}

// WritePointError writes to w why point pt's command line (PointArgs) was
// refused, msgs being its parser's messages: gab's own one-line errors stay
// one line, ab's keep ab's text.
func (s *Settings) WritePointError(w io.Writer, pt Point, argv0, msgs string) {
	fmt.Fprintf(w, "%s sweep: target %s, c=%d", argv0, s.Targets[pt.Target].Label, s.Concurrency[pt.Concurrency])
	if size := s.pointSize(pt); size != nil {
		fmt.Fprintf(w, ", size %s", size.Text)
	}
	if msg, ok := strings.CutPrefix(msgs, "gab: "); ok && strings.Count(msg, "\n") == 1 {
		fmt.Fprintf(w, ": %s", msg)
	} else {
		fmt.Fprintf(w, ":\n%s", msgs)
	}
}

// pointSize is point pt's size (nil: the sweep has no sizes).
func (s *Settings) pointSize(pt Point) *Size {
	if pt.Size < 0 {
		return nil
	}
	return &s.Sizes[pt.Size]
}

// DemoTarget is the target of --demo's server at base: its root, or with
// sizes its /bytes/{size}.
func (s *Settings) DemoTarget(base string) string {
	if s.SizeOption != "" {
		return "demo=" + base + "/bytes/" + Placeholder
	}
	return "demo=" + base + "/"
}
