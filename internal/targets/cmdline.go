package targets

import (
	"errors"
	"io"

	"gab/client"
)

// This file is the options' part of the command line's checks: a list or a
// log is refused with the options that cannot go with it, then read into
// the run's configuration. An error is the one line to print after "gab: "
// (a usage error, exit 22).

// Run is what reading a list or a log needs of the command line's other
// options.
type Run struct {
	Proxy       bool // -X
	MethodGiven bool // -i, -p, -u or -m (a method or a body of ab's)
	Config      *client.Config
	// Requests is -n when given (0: not given); a replay sends that many of
	// the log's lines at most.
	Requests int
	// ServerName is the SNI a connection to a target sends.
	ServerName func(client.Target) string
}

// LoadList refuses the options that cannot go with --urls or --targets,
// then reads the file into r.Config.URLs. It returns the list's first URL
// and the soft memory limit a big --urls file asks for (0: none).
func (o *Options) LoadList(stdin io.Reader, r Run) (first client.Target, memoryLimit int64, err error) {
	cfg := r.Config
	switch {
	case r.Proxy:
		return first, 0, errors.New(o.ListOption() + " cannot be used with -X (each URL's origin is a connection's)")
	case cfg.Protocol == client.CGI:
		return first, 0, errors.New(o.ListOption() + " cannot be used with --cgi (a CGI program has no URL)")
	case o.Targets != "" && r.MethodGiven:
		return first, 0, errors.New("--targets gives each request's method and body: -i, -p, -u and -m cannot be used with it")
	case o.Targets != "" && cfg.Protocol == client.HTTP3 && cfg.TLS.EarlyData:
		return first, 0, errors.New("--early-data cannot be used with --targets (0-RTT data is for GET and HEAD only)")
	}
	l := List{Name: o.URLs, Random: o.Order == "random", Seed: o.Seed, Format: o.Format,
		ServerName: r.ServerName, Concurrency: cfg.Concurrency, MaxBody: MaxPostFile}
	var list *client.URLList
	if o.Targets != "" {
		l.Name = o.Targets
		list, first, err = LoadTargets(stdin, l)
	} else {
		list, first, memoryLimit, err = LoadURLs(stdin, l)
	}
	if err != nil {
		return client.Target{}, 0, err
	}
	cfg.URLs = list
	return first, memoryLimit, nil
}

// LoadLog refuses the options that cannot go with --replay, then reads the
// log into r.Config: its URLs, schedule, request count and rate, and its
// method when it has one only. base is the URL argument's target (haveBase
// false without one); the warning for the log's bad lines goes to warn. It
// returns the log's first URL.
func (o *Options) LoadLog(stdin io.Reader, base client.Target, haveBase bool, r Run, warn io.Writer) (client.Target, error) {
	cfg := r.Config
	switch {
	case r.MethodGiven:
		return client.Target{}, errors.New("--replay sends each line's method: -i, -p, -u and -m cannot be used with it")
	case r.Proxy:
		return client.Target{}, errors.New("--replay cannot be used with -X")
	case cfg.Protocol == client.CGI:
		return client.Target{}, errors.New("--replay cannot be used with --cgi")
	}
	rp, err := LoadReplay(stdin, o.Replay, base, haveBase, r.Requests, o.Speed, r.ServerName, warn)
	if err != nil {
		return client.Target{}, err
	}
	if rp.Method != "" {
		cfg.Spec.Method, cfg.Spec.HeadMethod = rp.Method, rp.Method == "HEAD"
	}
	cfg.URLs, cfg.Replay, cfg.Requests, cfg.Rate = rp.List, rp.Due, len(rp.Due), rp.Rate
	return rp.First, nil
}
