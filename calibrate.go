package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"gab/internal/calibrate"
	"gab/internal/hoststat"
	"gab/internal/outfile"
)

// gab calibrate (internal/calibrate): the options, the measurements, then
// the text or JSON and the calibration file.

const calibrateUsage = `Usage: %s calibrate [options]
Measures what gab can drive on this machine and the latency it adds, prints them with the rule they give,
and writes them to the calibration file (later runs compare their rate with it: the client-bound verdict).
Options:
`

// calibrationHost reads the machine around the calibration, and
// calibrationExe is the program started as the minimal responder (tests
// replace them: a busy or a quiet machine; their own executable is the test
// binary).
var (
	calibrationHost = hoststat.Read
	calibrationExe  = os.Executable
)

func runCalibrate(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	var seconds, requests int
	var out string
	var responder, force bool
	sc, status, done := parseSubcommand(argv, "calibrate", calibrateUsage, stdout, stderr, func(fs *pflag.FlagSet) {
		fs.IntVar(&seconds, "seconds", 2, "measure each mode for `N` seconds (1 to 60)")
		fs.IntVar(&requests, "requests", 0, "measure each mode with `N` requests instead (10 to 10000000)")
		fs.StringVar(&out, "out", "", "write the calibration to `FILE` (default: the calibration file that runs read, "+calibrate.FileText()+")")
		fs.BoolVar(&force, "force", false, "write the calibration even when the machine was busy while it was taken (its ceiling is then too low)")
		fs.BoolVar(&responder, "responder", false, "")
		fs.Lookup("responder").Hidden = true
	})
	if done {
		return status
	}
	if responder {
		if calibrate.Serve(os.Stdin, stdout) != nil {
			return exitError
		}
		return exitOK
	}
	switch {
	case sc.fset.NArg() > 0:
		fmt.Fprintf(stderr, "gab calibrate: takes no arguments, not %q\n", sc.fset.Arg(0))
		return exitUsage
	case seconds < 1 || seconds > 60:
		fmt.Fprintf(stderr, "gab calibrate: --seconds must be from 1 to 60, not %d\n", seconds)
		return exitUsage
	case sc.fset.Changed("requests") && (requests < 10 || requests > 10_000_000):
		fmt.Fprintf(stderr, "gab calibrate: --requests must be from 10 to 10000000, not %d\n", requests)
		return exitUsage
	}
	if out == "" {
		var err error
		if out, err = calibrate.File(); err == nil {
			err = os.MkdirAll(filepath.Dir(out), 0o755) // the cache's own directory, made if new
		}
		if err != nil {
			fmt.Fprintf(stderr, "gab calibrate: %v\n", err)
			return exitError
		}
	}
	// The output path is checked before the measurements, not after them.
	if err := outfile.CheckWritable(out); err != nil {
		fmt.Fprintf(stderr, "gab calibrate: --out %v\n", err)
		return exitError
	}
	c, err := calibrate.Measure(ctx, calibrate.Options{Argv0: argv[0], Version: version, Seconds: seconds, Requests: requests,
		Run: run, Serve: startDemoServer, Host: calibrationHost, Exe: calibrationExe, Stderr: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "gab calibrate: %v\n", err)
		return exitError
	}
	busy := c.BusyReason()
	c.Busy = busy != ""
	write := !c.Busy || force
	if *sc.format == "json" {
		b, _ := json.MarshalIndent(c, "", "  ")
		if _, err := stdout.Write(append(b, '\n')); err != nil {
			return exitError
		}
	} else if err := calibrate.WriteText(stdout, c, out, write); err != nil {
		return exitError
	}
	if !write {
		fmt.Fprintf(stderr, "gab calibrate: not written to %s: the machine was busy (%s), so the ceilings are too low; calibrate on a quiet machine, or --force to write them anyway\n", out, busy)
		return exitError
	}
	if err := calibrate.WriteFile(out, c); err != nil {
		fmt.Fprintf(stderr, "gab calibrate: %v\n", err)
		return exitError
	}
	return exitOK
}
