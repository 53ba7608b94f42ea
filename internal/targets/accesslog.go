package targets

import (
	"io"
	"strings"
	"time"
)

// Access logs in the Common and Combined Log Formats (nginx's and Apache's
// defaults):
//
//	host ident user [10/Oct/2000:13:55:36 -0700] "GET /a.gif HTTP/1.0" 200 2326 ["referer" "agent"]
//
// ParseAccessLog reads each line's time and request line; a line without
// them (another format, a truncated line, a request line that is not
// "METHOD TARGET[ PROTOCOL]", such as nginx's "-" or a TLS handshake's
// bytes) is a bad line, counted and named, never a request.

// LogEntry is one request of an access log.
type LogEntry struct {
	Line   int
	Time   time.Time // the log's time, one-second resolution
	Method string
	Target string // the request target as logged: a path, or an absolute URL
}

// clfTime is the layout of the time between the brackets.
const clfTime = "02/Jan/2006:15:04:05 -0700"

// ParseAccessLog reads an access log: its requests in the log's order, and
// the numbers of its bad lines (blank lines are neither). An error is only
// a read error or a line longer than MaxLine.
func ParseAccessLog(r io.Reader) (entries []LogEntry, bad []int, err error) {
	err = lines(r, func(n int, line string) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		e, ok := parseLogLine(line)
		if !ok {
			bad = append(bad, n)
			return nil
		}
		e.Line = n
		entries = append(entries, e)
		return nil
	})
	return entries, bad, err
}

// parseLogLine reads one line's time and request line.
func parseLogLine(line string) (LogEntry, bool) {
	open := strings.IndexByte(line, '[')
	if open < 0 {
		return LogEntry{}, false
	}
	closing := strings.IndexByte(line[open:], ']')
	if closing < 0 {
		return LogEntry{}, false
	}
	tm, err := time.Parse(clfTime, line[open+1:open+closing])
	if err != nil {
		return LogEntry{}, false
	}
	rest := line[open+closing+1:]
	q := strings.IndexByte(rest, '"')
	if q < 0 {
		return LogEntry{}, false
	}
	rest = rest[q+1:]
	end := strings.IndexByte(rest, '"')
	if end < 0 {
		return LogEntry{}, false
	}
	fields := strings.Fields(rest[:end])
	if len(fields) < 2 || len(fields) > 3 || !isToken(fields[0]) {
		return LogEntry{}, false
	}
	target := fields[1]
	switch {
	case strings.HasPrefix(target, "/"):
	case strings.HasPrefix(target, "http://"), strings.HasPrefix(target, "https://"):
	default:
		return LogEntry{}, false // "*", an authority (CONNECT), or garbage
	}
	for i := 0; i < len(target); i++ {
		if c := target[i]; c <= ' ' || c == 0x7f {
			return LogEntry{}, false
		}
	}
	if len(fields) == 3 && !strings.HasPrefix(fields[2], "HTTP/") {
		return LogEntry{}, false
	}
	return LogEntry{Time: tm, Method: fields[0], Target: target}, true
}
