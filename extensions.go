package main

import (
	"io"

	"gab/client"
	"gab/report"
)

// This file is where gab's extensions beyond ab's report plug in (--extended,
// --percentiles, --format json, --json). run calls startExtensions just before
// the run starts and write just after ab's report (with --format json, ab's
// banner, progress dots and report are left out and write prints the whole
// document). It is a no-op until the extensions are implemented.

// extensions holds what the extensions need from before the run.
type extensions struct {
	o *cliOptions
}

// startExtensions is called just before the benchmark starts.
func startExtensions(o *cliOptions) *extensions { return &extensions{o: o} }

// write prints the extensions' output after ab's report.
func (e *extensions) write(stdout io.Writer, res *client.Result, sum *report.Summary) error {
	// CGI mode (--cgi): the "CGI times (ms)" table follows ab's text report.
	if res.CGI != nil && e.o.Format != "json" && !e.o.HTML {
		if err := report.WriteCGI(stdout, res); err != nil {
			return err
		}
	}
	return nil
}
