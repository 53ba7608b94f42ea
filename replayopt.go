package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"gab/client"
	"gab/internal/targets"
)

// --replay LOG [--replay-speed X]: an access log (Common or Combined Log
// Format) replayed at its recorded pace: each line's method and path against
// the URL given (a line's absolute URL as it is), line k due at its time's
// offset from the first line's, divided by X. The log's one-second
// resolution is spread evenly: the m lines of one second are due j/m of it
// apart. Open model: a request's intended start is its due time, and latency
// is corrected for coordinated omission as --rate's. Lines that are not
// requests are counted and named in one warning, never sent.

// replayOptions are --replay's options.
type replayOptions struct {
	file  string  // --replay
	speed float64 // --replay-speed
}

func addReplayFlags(fs *pflag.FlagSet, r *replayOptions) {
	fs.StringVar(&r.file, "replay", "", "replay the requests of access log `LOG` (Common or Combined Log Format; - for stdin) at their recorded times, against the URL given")
	fs.Float64Var(&r.speed, "replay-speed", 1, "replay the log `X` times as fast")
}

// applyReplayLong checks --replay's options against gab's others.
func (o *cliOptions) applyReplayLong(lo *longOptions, fs *pflag.FlagSet) error {
	r := lo.replay
	if fs.Changed("replay-speed") && (r.file == "" || !(r.speed > 0) || math.IsInf(r.speed, 0)) {
		if r.file == "" {
			return errors.New("--replay-speed needs --replay")
		}
		return fmt.Errorf("--replay-speed must be a positive number, not %v", r.speed)
	}
	if r.file == "" {
		return nil
	}
	switch {
	case lo.urls.file != "" || lo.targets.file != "":
		return errors.New("--replay excludes --urls and --targets (the log gives the requests)")
	case fs.Changed("rate"):
		return errors.New("--replay excludes --rate (the log's times are the schedule)")
	case fs.Changed("url-order") || fs.Changed("seed"):
		return errors.New("--replay sends the log's lines in their order: --url-order and --seed cannot be used with it")
	case fs.Changed("warmup"):
		return errors.New("--replay cannot be used with --warmup (the log's first lines are its start)")
	case lo.demo:
		return errors.New("--replay and --demo exclude each other")
	}
	o.replay = r
	return nil
}

// maxNamedLines is how many bad lines the warning names.
const maxNamedLines = 10

// loadReplay reads the log into the run's URL list and schedule. base is the
// URL argument's target (ok false without one); requests is -n when given
// (0: the whole log). The warning for bad lines goes to warn.
func (o *cliOptions) loadReplay(stdin io.Reader, base client.Target, haveBase bool, requests int, warn io.Writer) (client.Target, error) {
	name := o.replay.file
	in := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return client.Target{}, fmt.Errorf("--replay %s: %s", quoteName(name), strerror(err))
		}
		defer f.Close()
		in = f
	}
	entries, bad, err := targets.ParseAccessLog(in)
	if err != nil {
		var pe *targets.Error
		if errors.As(err, &pe) {
			return client.Target{}, fmt.Errorf("--replay %s:%d: %s", quoteName(name), pe.Line, oneLine(pe.Msg))
		}
		return client.Target{}, fmt.Errorf("--replay %s: %v", quoteName(name), err)
	}
	if len(entries) == 0 {
		return client.Target{}, fmt.Errorf("--replay %s: no request in the log (%d lines are not requests)", quoteName(name), len(bad))
	}
	if len(bad) > 0 {
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
		fmt.Fprintf(warn, "gab: --replay %s: %d %s, not sent (%s %s%s)\n", quoteName(name), len(bad), what, which, strings.Join(named, ", "), more)
	}
	// The log's order by time (a log is written as requests end): stable,
	// so that the lines of one second keep theirs.
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Time.Before(entries[j].Time) })
	if requests > 0 && requests < len(entries) {
		entries = entries[:requests]
	}
	list := client.NewURLList(0)
	list.Replay = true
	uniform := true
	for _, e := range entries {
		uniform = uniform && e.Method == entries[0].Method
	}
	var first client.Target
	for i, e := range entries {
		at := fmt.Sprintf("--replay %s:%d", quoteName(name), e.Line)
		var u client.Target
		if strings.HasPrefix(e.Target, "/") {
			if !haveBase {
				return first, fmt.Errorf("%s: the log's requests have paths only: give the URL to replay them against", at)
			}
			u = base
			u.Path, u.Raw = e.Target, ""
		} else if u, err = client.ParseURL(e.Target); err != nil {
			return first, fmt.Errorf("%s: not a URL ab accepts: %s", at, quoteName(e.Target))
		}
		if uniform {
			err = list.Add(u, u.Path, o.serverName)
		} else {
			err = list.AddTarget(u, o.serverName, client.TargetSpec{Method: e.Method})
		}
		if err != nil {
			return first, fmt.Errorf("%s: %v", at, err)
		}
		if i == 0 {
			first = u
		}
	}
	if len(list.Origins) > 1 {
		return first, fmt.Errorf("--replay %s: the log names %d origins (absolute URLs); a replay keeps to one", quoteName(name), len(list.Origins))
	}
	if uniform {
		o.Config.Spec.Method = entries[0].Method
		o.Config.Spec.HeadMethod = entries[0].Method == "HEAD"
	}
	o.Config.URLs = list
	o.Config.Replay = replayDue(entries, o.replay.speed)
	o.Config.Requests = len(entries)
	last := o.Config.Replay[len(entries)-1]
	o.Config.Rate = float64(len(entries)) / (float64(last) + float64(time.Second)/o.replay.speed) * 1e9
	return first, nil
}

// replayDue is each entry's due time in ns: its second's offset from the
// first entry's, plus j/m of a second for the j-th of the m entries of that
// second, divided by speed.
func replayDue(entries []targets.LogEntry, speed float64) []int64 {
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

// checkReplay is check's part for --replay: the URL argument (optional),
// the options the log excludes, and the log itself.
func (o *cliOptions) checkReplay(args []string, st *shortState, stderr io.Writer) (client.Target, int, bool) {
	fail := func(format string, a ...any) (client.Target, int, bool) {
		fmt.Fprintf(stderr, "gab: "+format+"\n", a...)
		return client.Target{}, exitUsage, true
	}
	var base client.Target
	if len(args) == 1 {
		t, err := client.ParseURL(args[0])
		if err != nil {
			fmt.Fprintf(stderr, "%s: invalid URL\n", o.Argv0)
			writeUsage(stderr, o.Argv0)
			return client.Target{}, exitUsage, true
		}
		base = t
	}
	switch {
	case st.method != methodNone:
		return fail("--replay sends each line's method: -i, -p, -u and -m cannot be used with it")
	case o.Proxy:
		return fail("--replay cannot be used with -X")
	case o.Config.Protocol == client.CGI:
		return fail("--replay cannot be used with --cgi")
	}
	n := 0
	if st.requests {
		n = o.Config.Requests
	}
	first, err := o.loadReplay(os.Stdin, base, len(args) == 1, n, stderr)
	if err != nil {
		return fail("%v", err)
	}
	o.URL = first.Raw
	if len(args) == 1 {
		o.URL = args[0]
	}
	return first, exitOK, false
}
