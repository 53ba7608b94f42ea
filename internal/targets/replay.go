package targets

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"gab/client"
)

// --replay LOG [--replay-speed X]: an access log (Common or Combined Log
// Format) replayed at its recorded pace: each line's method and path against
// the URL given (a line's absolute URL as it is), line k due at its time's
// offset from the first line's, divided by X. The log's one-second
// resolution is spread evenly: the m lines of one second are due j/m of it
// apart. Open model: a request's intended start is its due time, and latency
// is corrected for coordinated omission as --rate's. Lines that are not
// requests are counted and named in one warning, never sent.

// Replay is a log read for --replay.
type Replay struct {
	List  *client.URLList
	First client.Target // the first request's URL
	// Method is every request's method when the log has one only ("":
	// each request's own, in List).
	Method string
	// Due is each request's due time in ns from the start; Rate the
	// requests per second over the replay.
	Due  []int64
	Rate float64
}

// maxNamedLines is how many bad lines the warning names.
const maxNamedLines = 10

// LoadReplay reads the log name ("-": stdin) into the run's URL list and
// schedule. base is the URL argument's target (haveBase false without one);
// requests is -n when given (0: the whole log); speed is --replay-speed;
// serverName the SNI a connection to a target sends. The warning for bad
// lines goes to warn.
func LoadReplay(stdin io.Reader, name string, base client.Target, haveBase bool, requests int, speed float64,
	serverName func(client.Target) string, warn io.Writer) (*Replay, error) {
	in, _, closeF, err := openFile("--replay", name, stdin)
	if err != nil {
		return nil, err
	}
	defer closeF()
	entries, bad, err := ParseAccessLog(in)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("--replay %s:%d: %s", QuoteName(name), pe.Line, oneLine(pe.Msg))
		}
		return nil, fmt.Errorf("--replay %s: %v", QuoteName(name), err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("--replay %s: no request in the log (%d lines are not requests)", QuoteName(name), len(bad))
	}
	warnBadLines(warn, name, bad)
	// The log's order by time (a log is written as requests end): stable,
	// so that the lines of one second keep theirs.
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Time.Before(entries[j].Time) })
	if requests > 0 && requests < len(entries) {
		entries = entries[:requests]
	}
	r := &Replay{List: client.NewURLList(0)}
	r.List.Replay = true
	uniform := true
	for _, e := range entries {
		uniform = uniform && e.Method == entries[0].Method
	}
	for i, e := range entries {
		at := fmt.Sprintf("--replay %s:%d", QuoteName(name), e.Line)
		var u client.Target
		if strings.HasPrefix(e.Target, "/") {
			if !haveBase {
				return nil, fmt.Errorf("%s: the log's requests have paths only: give the URL to replay them against", at)
			}
			u = base
			u.Path, u.Raw = e.Target, ""
		} else if u, err = client.ParseURL(e.Target); err != nil {
			return nil, fmt.Errorf("%s: not a URL ab accepts: %s", at, QuoteName(e.Target))
		}
		if uniform {
			err = r.List.Add(u, u.Path, serverName)
		} else {
			err = r.List.AddTarget(u, serverName, client.TargetSpec{Method: e.Method})
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", at, err)
		}
		if i == 0 {
			r.First = u
		}
	}
	if len(r.List.Origins) > 1 {
		return nil, fmt.Errorf("--replay %s: the log names %d origins (absolute URLs); a replay keeps to one", QuoteName(name), len(r.List.Origins))
	}
	if uniform {
		r.Method = entries[0].Method
	}
	r.Due = replayDue(entries, speed)
	last := r.Due[len(entries)-1]
	r.Rate = float64(len(entries)) / (float64(last) + float64(time.Second)/speed) * 1e9
	return r, nil
}

// warnBadLines names the lines of the log that are not requests (the first
// maxNamedLines of them) in one warning.
func warnBadLines(warn io.Writer, name string, bad []int) {
	if len(bad) == 0 {
		return
	}
	named := make([]string, 0, maxNamedLines)
	for _, n := range bad[:min(len(bad), maxNamedLines)] {
		named = append(named, strconv.Itoa(n))
	}
	more := ""
	if len(bad) > maxNamedLines {
		more = ", ..."
	}
	what, which := "lines are not requests", "lines"
	if len(bad) == 1 {
		what, which = "line is not a request", "line"
	}
	fmt.Fprintf(warn, "gab: --replay %s: %d %s, not sent (%s %s%s)\n", QuoteName(name), len(bad), what, which, strings.Join(named, ", "), more)
}

// replayDue is each entry's due time in ns: its second's offset from the
// first entry's, plus j/m of a second for the j-th of the m entries of that
// second, divided by speed.
func replayDue(entries []LogEntry, speed float64) []int64 {
	due := make([]int64, len(entries))
	t0 := entries[0].Time.Unix()
	for i := 0; i < len(entries); {
		j := i
		for j < len(entries) && entries[j].Time.Unix() == entries[i].Time.Unix() {
			j++
		}
		m := j - i
		sec := float64(entries[i].Time.Unix() - t0)
		for k := i; k < j; k++ {
			due[k] = int64((sec + float64(k-i)/float64(m)) * 1e9 / speed)
		}
		i = j
	}
	return due
}
