//go:build !linux

package client

import "errors"

// The process handling of CGI mode (process groups, waitid, a subreaper) is
// written for Linux only.
func cgiSupported() error { return errors.New("--cgi is supported on Linux only") }

func cgiPrepareProcess() error { return cgiSupported() }

func (w *cgiWorker) do(r *run, t *tally) *outcome {
	return &outcome{Class: failAbandoned}
}
