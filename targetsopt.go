package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"gab/client"
	"gab/internal/targets"
)

// --targets FILE [--targets-format http|json]: vegeta's target files, each
// target its own method, URL, headers and body, taken in turn (or at random:
// --url-order, --seed) by every request of the run. -H, -C, -A and -T apply
// to every target; a target's own header of the same name wins. The file
// and every body file are read before the run: a bad line or an unreadable
// body file is one line naming the file and the line, exit 22.

// targetOptions are --targets' options.
type targetOptions struct {
	file   string // --targets
	format string // --targets-format: "http" or "json"
}

func addTargetFlags(fs *pflag.FlagSet, t *targetOptions) {
	fs.StringVar(&t.file, "targets", "", "take every request from vegeta's targets `FILE` (method, URL, headers, @body; - for stdin), in turn")
	fs.StringVar(&t.format, "targets-format", "http", "the format of --targets: `http|json` (vegeta's)")
}

// applyTargetLong checks --targets' options.
func (o *cliOptions) applyTargetLong(lo *longOptions, changed func(string) bool) error {
	t := lo.targets
	if t.format != "http" && t.format != "json" {
		return fmt.Errorf("--targets-format must be http or json, not %q", t.format)
	}
	if t.file == "" {
		if changed("targets-format") {
			return errors.New("--targets-format needs --targets")
		}
		return nil
	}
	if lo.urls.file != "" {
		return errors.New("--targets and --urls exclude each other (a target file lists URLs too)")
	}
	if lo.demo {
		return errors.New("--targets and --demo exclude each other (--demo benchmarks its own server)")
	}
	o.targets = t
	o.urls.order, o.urls.seed = lo.urls.order, lo.urls.seed // --url-order and --seed apply to targets too
	return nil
}

// targetsConflict is why --targets cannot go with ab's options given, "".
func (o *cliOptions) targetsConflict(st *shortState) string {
	switch {
	case st.method != methodNone:
		return "--targets gives each request's method and body: -i, -p, -u and -m cannot be used with it"
	case o.Config.Protocol == client.HTTP3 && o.Config.TLS.EarlyData:
		return "--early-data cannot be used with --targets (0-RTT data is for GET and HEAD only)"
	}
	return ""
}

// loadTargets reads the target file and every body file it names into
// o.Config.URLs, and returns the first target's URL.
func (o *cliOptions) loadTargets(stdin io.Reader) (client.Target, error) {
	name := o.targets.file
	in := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return client.Target{}, fmt.Errorf("--targets %s: %s", quoteName(name), strerror(err))
		}
		defer f.Close()
		in = f
	}
	ts, err := targets.Parse(o.targets.format, in)
	if err != nil {
		var pe *targets.Error
		if errors.As(err, &pe) {
			return client.Target{}, fmt.Errorf("--targets %s:%d: %s", quoteName(name), pe.Line, oneLine(pe.Msg))
		}
		return client.Target{}, fmt.Errorf("--targets %s: %v", quoteName(name), err)
	}
	if len(ts) == 0 {
		return client.Target{}, fmt.Errorf("--targets %s: no target in the file", quoteName(name))
	}
	list := client.NewURLList(0)
	list.Random, list.Seed = o.urls.order == "random", o.urls.seed
	bodies := map[string][]byte{} // each body file read once
	var first client.Target
	for i, tg := range ts {
		at := fmt.Sprintf("--targets %s:%d", quoteName(name), tg.Line)
		u, err := client.ParseURL(tg.URL)
		if err != nil {
			return first, fmt.Errorf("%s: not a URL ab accepts (scheme://host[:port]/path): %s", at, quoteName(tg.URL))
		}
		spec := client.TargetSpec{Method: tg.Method, Body: tg.Body, HasBody: len(tg.Body) > 0}
		for _, h := range tg.Header {
			spec.Headers = append(spec.Headers, h.Name+": "+h.Value)
		}
		if tg.BodyFile != "" {
			body, ok := bodies[tg.BodyFile]
			if !ok {
				if body, err = readBodyFile(tg.BodyFile); err != nil {
					return first, fmt.Errorf("--targets %s:%d: body file %s: %v", quoteName(name), tg.BodyLine, quoteName(tg.BodyFile), err)
				}
				bodies[tg.BodyFile] = body
			}
			spec.Body, spec.HasBody = body, true
		}
		if err := list.AddTarget(u, o.serverName, spec); err != nil {
			return first, fmt.Errorf("%s: %v", at, err)
		}
		if i == 0 {
			first = u
		}
	}
	if n := len(list.Origins); n > o.Config.Concurrency {
		return first, fmt.Errorf("--targets %s names %d origins (scheme, host, port) and -c is %d: each connection keeps to one origin, so -c must be at least %d", quoteName(name), n, o.Config.Concurrency, n)
	}
	o.Config.URLs = list
	return first, nil
}

// readBodyFile reads a target's body file (at most maxPostFile bytes, as -p);
// an error is glibc's text.
func readBodyFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, errors.New(strerror(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, errors.New(strerror(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > maxPostFile {
		return nil, fmt.Errorf("larger than %d bytes", int64(maxPostFile))
	}
	body := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, body); err != nil {
		return nil, errors.New(strerror(err))
	}
	return body, nil
}

// oneLine is a message made safe for one terminal line.
func oneLine(s string) string {
	q := fmt.Sprintf("%q", s)
	return q[1 : len(q)-1]
}
