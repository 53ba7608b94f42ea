package golden

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Placeholders that stand for a masked value whose format was checked.
const (
	maskedNumber = "<n>"
	maskedRow    = "<row>"
	maskedDate   = "<date>"
)

// lineRules mask a timing value whose exact printf format is part of the
// pattern, so a wrong format (decimals, suffix, spacing) is not masked and
// shows up in the comparison.
var lineRules = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`^(Time taken for tests:   )\d+\.\d{3}( seconds)$`), "${1}" + maskedNumber + "$2"},
	{regexp.MustCompile(`^(Requests per second:    )\d+\.\d{2}( \[#/sec\] \(mean\))$`), "${1}" + maskedNumber + "$2"},
	{regexp.MustCompile(`^(Time per request:       )\d+\.\d{3}( \[ms\] \(mean(, across all concurrent requests)?\))$`), "${1}" + maskedNumber + "$2"},
	{regexp.MustCompile(`^(Transfer rate:          )\d+\.\d{2}( \[Kbytes/sec\] received)$`), "${1}" + maskedNumber + "$2"},
	{regexp.MustCompile(`^( {24})\d+\.\d{2}( kb/s (sent|total))$`), "${1}" + maskedNumber + "$2"},
	// HTML report cells.
	{regexp.MustCompile(`^(<tr [^>]*><th colspan=2 [^>]*>Time taken for tests:</th><td colspan=2 [^>]*>)\d+\.\d{3}( seconds</td></tr>)$`), "${1}" + maskedNumber + "$2"},
	{regexp.MustCompile(`^(<tr [^>]*><th colspan=2 [^>]*>Requests per second:</th><td colspan=2 [^>]*>)\d+\.\d{2}(</td></tr>)$`), "${1}" + maskedNumber + "$2"},
	{regexp.MustCompile(`^(<tr [^>]*><th colspan=2 [^>]*>Transfer rate:</th><td colspan=2 [^>]*>)\d+\.\d{2}( kb/s received</td></tr>)$`), "${1}" + maskedNumber + "$2"},
	{regexp.MustCompile(`^(<tr [^>]*><td colspan=2 [^>]*>&nbsp;</td><td colspan=2 [^>]*>)\d+\.\d{2}( kb/s (sent|total)</td></tr>)$`), "${1}" + maskedNumber + "$2"},
	// Response heads in -v dumps, and the certificate dates of -v 2 over TLS.
	{regexp.MustCompile(`^(Date|Last-Modified): [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT(\r?)$`), "$1: " + maskedDate + "$2"},
	{regexp.MustCompile(`^(ETag: ")[0-9a-f]+(-[0-9a-f]+"\r?)$`), "${1}" + maskedNumber + "$2"},
	{regexp.MustCompile(`^(    Start Time: )\d+$`), "$1" + maskedNumber},
	{regexp.MustCompile(`^(Valid from: |Valid to  : )[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4} GMT$`), "$1" + maskedDate},
}

var (
	tableRow      = regexp.MustCompile(`^(Connect|Processing|Waiting|Total):( +)(.*)$`)
	percentileRow = regexp.MustCompile(`^( {1,2})(\d+)%  ( *\d+)( \(longest request\))?$`)
	htmlTimesRow  = regexp.MustCompile(`^(<tr [^>]*><th [^>]*>(?:Connect|Processing|Total):</th>)((?:<td [^>]*>[^<]*</td>){3})(</tr>)$`)
	htmlCell      = regexp.MustCompile(`(<td [^>]*>)([^<]*)(</td>)`)
	intField      = regexp.MustCompile(`^-?\d+$`)
	sdField       = regexp.MustCompile(`^(-?\d+\.\d|-?nan|inf)$`)
)

// sanity are ab's ERROR/WARNING confidence lines (under Connection Times).
// Whether they appear depends on timing, so Mask drops them; SanityLines
// lists them for the cases that assert them.
var sanity = func() map[string]bool {
	m := map[string]bool{}
	for _, what := range []string{"the initial connection time", "the processing time", "the waiting time", "the total time"} {
		m["ERROR: The median and mean for "+what+" are more than twice the standard\n       deviation apart. These results are NOT reliable.\n"] = true
		m["WARNING: The median and mean for "+what+" are not within a normal deviation\n        These results are probably not that reliable.\n"] = true
	}
	return m
}()

// Mask returns s with every run-to-run value replaced by a placeholder,
// provided the value is printed in ab's exact format, and with the confidence
// ERROR/WARNING lines removed. Everything else is kept byte for byte.
func Mask(s string) string {
	s, _ = stripSanity(s)
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		lines[i] = maskLine(line)
	}
	return strings.Join(lines, "\n")
}

// SanityLines returns the ERROR/WARNING confidence blocks found in s, in order.
func SanityLines(s string) []string {
	_, found := stripSanity(s)
	return found
}

func stripSanity(s string) (string, []string) {
	var found []string
	var b strings.Builder
	for len(s) > 0 {
		line, rest, _ := strings.Cut(s, "\n")
		if strings.HasPrefix(line, "ERROR: ") || strings.HasPrefix(line, "WARNING: The median") {
			second, rest2, _ := strings.Cut(rest, "\n")
			block := line + "\n" + second + "\n"
			if sanity[block] {
				found = append(found, block)
				s = rest2
				continue
			}
		}
		b.WriteString(line)
		if len(rest) > 0 || strings.HasSuffix(s, "\n") {
			b.WriteString("\n")
		}
		s = rest
	}
	return b.String(), found
}

func maskLine(line string) string {
	for _, r := range lineRules {
		if r.re.MatchString(line) {
			return r.re.ReplaceAllString(line, r.repl)
		}
	}
	if m := tableRow.FindStringSubmatch(line); m != nil {
		if masked, ok := maskTableRow(m[1], line); ok {
			return masked
		}
		return line
	}
	if m := percentileRow.FindStringSubmatch(line); m != nil {
		p := m[2]
		value := strings.TrimLeft(m[3], " ")
		longest := m[4] != ""
		want := fmt.Sprintf("  %s%%  %5s", p, value)
		if longest {
			want = fmt.Sprintf(" %s%%  %5s (longest request)", p, value)
		}
		if want == line && (p == "100") == longest {
			return strings.TrimLeft(m[1]+p, " ") + "% " + maskedNumber + m[4]
		}
		return line
	}
	if m := htmlTimesRow.FindStringSubmatch(line); m != nil {
		ok := true
		cells := htmlCell.ReplaceAllStringFunc(m[2], func(cell string) string {
			c := htmlCell.FindStringSubmatch(cell)
			v := strings.TrimLeft(c[2], " ")
			if !intField.MatchString(v) || fmt.Sprintf("%5s", v) != c[2] {
				ok = false
			}
			return c[1] + maskedNumber + c[3]
		})
		if ok {
			return m[1] + cells + m[3]
		}
	}
	return line
}

// maskTableRow checks a Connection Times row against ab's two formats,
// "%-11s %5ld %4ld %5.1f %6ld %7ld" and (-S) "%-11s %5ld %5ld%5ld", and
// masks its numbers if it matches one of them.
func maskTableRow(label, line string) (string, bool) {
	head := fmt.Sprintf("%-11s", label+":")
	if !strings.HasPrefix(line, head) {
		return "", false
	}
	fields := strings.Fields(line[len(head):])
	switch len(fields) {
	case 5:
		if intField.MatchString(fields[0]) && intField.MatchString(fields[1]) && sdField.MatchString(fields[2]) &&
			intField.MatchString(fields[3]) && intField.MatchString(fields[4]) &&
			line == head+fmt.Sprintf(" %5s %4s %5s %6s %7s", fields[0], fields[1], fields[2], fields[3], fields[4]) {
			return head + " " + maskedRow, true
		}
	case 2, 3:
		// -S: "%5ld %5ld%5ld", so the last two numbers may run together.
		if !intField.MatchString(fields[0]) || !intField.MatchString(fields[1]) {
			break
		}
		var splits [][2]string
		if len(fields) == 3 {
			splits = append(splits, [2]string{fields[1], fields[2]})
		} else {
			for k := 1; k < len(fields[1]); k++ {
				splits = append(splits, [2]string{fields[1][:k], fields[1][k:]})
			}
		}
		for _, sp := range splits {
			if intField.MatchString(sp[1]) && line == head+fmt.Sprintf(" %5s %5s%5s", fields[0], sp[0], sp[1]) {
				return head + " " + maskedRow + " -S", true
			}
		}
	}
	return "", false
}

var (
	tsvRow = regexp.MustCompile(`^[A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} \d{4}\t\d+\t\d+\t-?\d+\t\d+\t\d+$`)
	csvRow = regexp.MustCompile(`^(\d+),\d+\.\d{3}$`)
)

// MaskTSV masks every data row of a -g file whose layout is ab's
// ("<ctime-style date>\t<epoch>\t<ctime>\t<dtime>\t<ttime>\t<wait>").
func MaskTSV(s string) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		if i > 0 && tsvRow.MatchString(line) {
			lines[i] = maskedRow
		}
	}
	return strings.Join(lines, "\n")
}

// MaskCSV masks the times of a -e file, keeping the percentage column.
func MaskCSV(s string) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		lines[i] = csvRow.ReplaceAllString(line, "$1,"+maskedNumber)
	}
	return strings.Join(lines, "\n")
}

// TSVSortedByTotal reports an error unless the -g rows are sorted by their
// ttime column (ab writes them in the order of its percentile sort).
func TSVSortedByTotal(s string) error {
	prev := -1
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n")[1:] {
		f := strings.Split(line, "\t")
		if len(f) != 6 {
			return fmt.Errorf("row %d: %d fields", i+1, len(f))
		}
		t, err := strconv.Atoi(f[4])
		if err != nil {
			return fmt.Errorf("row %d: ttime %q", i+1, f[4])
		}
		if t < prev {
			return fmt.Errorf("row %d: ttime %d after %d", i+1, t, prev)
		}
		prev = t
	}
	return nil
}

// CSVValues returns the 101 times of a -e file, in ms, by percentage.
func CSVValues(s string) ([]float64, error) {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) != 102 || lines[0] != "Percentage served,Time in ms" {
		return nil, fmt.Errorf("-e file: %d lines, header %q", len(lines), lines[0])
	}
	out := make([]float64, 0, 101)
	for i, line := range lines[1:] {
		p, v, ok := strings.Cut(line, ",")
		if !ok || p != strconv.Itoa(i) {
			return nil, fmt.Errorf("-e row %d: %q", i, line)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("-e row %d: %q", i, line)
		}
		out = append(out, f)
	}
	return out, nil
}

var (
	tls13Line    = regexp.MustCompile(`(?m)^(SSL/TLS Protocol:       TLSv1\.3,)TLS_[A-Z0-9_]+,(\d+),\d+$`)
	opensslQueue = regexp.MustCompile(`(?m)^[0-9A-F]{8,16}:error:`)
	digits       = regexp.MustCompile(`\d+`)
)

// MaskTLS hides what the TLS stacks choose rather than the program under
// test: the TLS 1.3 suite and its secret bits in the "SSL/TLS Protocol" line
// (Go's server prefers AES-128-GCM where nginx with OpenSSL chose
// AES-256-GCM), and the thread id that starts OpenSSL error-queue lines.
func MaskTLS(s string) string {
	s = tls13Line.ReplaceAllString(s, "${1}<suite>,$2,<bits>")
	return opensslQueue.ReplaceAllString(s, "<thread>:error:")
}

// Shape is Mask with every remaining number replaced by '#': the layout and
// labels of an output whose counts depend on timing or on server state.
func Shape(s string) string {
	return digits.ReplaceAllString(Mask(s), "#")
}
