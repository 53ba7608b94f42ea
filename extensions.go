package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"gab/client"
	"gab/internal/servercpu"
	"gab/report"
)

// This file is where gab's extensions beyond ab's report plug in (--extended,
// --percentiles, --rate's corrected tables, --format json, --json). run calls
// startExtensions and prepare before client.New, begin just before the run,
// write just after ab's report, and fatal when gab ends with an error after
// the command line was accepted. With --format json stdout carries exactly one
// JSON document, whatever the ending (notStarted covers command-line errors).

// extensions holds what the extensions need from before the run.
type extensions struct {
	o         *cliOptions
	argv      []string
	cpuBefore report.CPUUsage
	started   time.Time
	// server measures --server-pid (nil without it); serverBefore is its
	// reading at the start, serverErr a failed reading.
	server       *servercpu.Meter
	serverBefore time.Duration
	serverErr    error
}

// jsonOut reports whether stdout is the JSON document (--format json).
func (o *cliOptions) jsonOut() bool { return o.Format == "json" }

// startExtensions is called once the command line is parsed.
func startExtensions(o *cliOptions, argv []string) *extensions {
	e := &extensions{o: o, argv: argv}
	e.begin()
	return e
}

// prepare asks the engine for the figures beyond ab's when an extension will
// show them (rate mode gathers them anyway), and refuses what cannot be
// combined. It returns done with the exit status when gab must stop.
func (e *extensions) prepare(stdout, stderr io.Writer, cfg *client.Config) (status int, done bool) {
	if e.o.jsonOut() && e.o.HTML {
		const msg = "gab: -w (and -x, -y, -z) cannot be used with --format json\n"
		io.WriteString(stderr, msg)
		_ = e.writeJSON(stdout, report.JSONInput{ErrMessage: msg, ExitCode: exitError}) // a stdout error is reported by runWith
		return exitError, true
	}
	cfg.Extended = cfg.Extended || e.o.Extended || e.o.jsonOut() || e.o.JSONFile != ""
	if len(e.o.ServerPIDs) > 0 {
		m, err := servercpu.New(e.o.ServerPIDs)
		if err != nil {
			msg := "gab: " + err.Error() + "\n"
			io.WriteString(stderr, msg)
			_ = e.writeJSON(stdout, report.JSONInput{ErrMessage: msg, ExitCode: exitError}) // a stdout error is reported by runWith
			return exitError, true
		}
		e.server = m
	}
	return 0, false
}

// begin marks the start of the run, for the client and server CPU figures.
func (e *extensions) begin() {
	if e.server != nil {
		e.serverBefore, e.serverErr = e.server.Read()
	}
	e.cpuBefore = report.ProcessCPU()
	e.started = time.Now()
}

// serverCPU is --server-pid's measurement over the run (nil without it).
func (e *extensions) serverCPU(client report.CPUUsage) (*report.ServerCPU, error) {
	if e.server == nil {
		return nil, nil
	}
	if e.serverErr != nil {
		return nil, e.serverErr
	}
	after, err := e.server.Read()
	if err != nil {
		return nil, err
	}
	return &report.ServerCPU{PIDs: e.server.PIDs(), CPU: after - e.serverBefore, Resolution: servercpu.Resolution, Client: client}, nil
}

// reportOptions are ab's report options for this command line.
func reportOptions(o *cliOptions) report.Options {
	cfg := &o.Config
	return report.Options{
		Host: cfg.Target.Host, Port: cfg.Target.Port, Path: cfg.Target.Path,
		Concurrency: cfg.Concurrency, KeepAlive: cfg.KeepAlive, BodySent: cfg.Spec.HasBody,
		VariableLength: cfg.VariableLength, NoPercentiles: o.NoPercentiles, NoConfidence: o.NoConfidence,
		TLS: cfg.Target.TLS,
	}
}

// write prints the extensions' output after ab's report: in text mode the
// CGI table, the --percentiles table, rate mode's corrected tables and the
// --extended report, in that order; then the JSON document (stdout with
// --format json, the --json file).
func (e *extensions) write(stdout io.Writer, res *client.Result, sum *report.Summary) error {
	cpu := report.ProcessCPU().Sub(e.cpuBefore)
	server, serverErr := e.serverCPU(cpu)
	if !e.o.jsonOut() && !e.o.HTML {
		// CGI mode (--cgi): the "CGI times (ms)" table follows ab's text report.
		if res.CGI != nil {
			if err := report.WriteCGI(stdout, res); err != nil {
				return err
			}
		}
		if len(e.o.Percentiles) > 0 {
			if err := report.WritePercentiles(stdout, sum, e.o.Percentiles); err != nil {
				return err
			}
		}
		if err := report.WriteCorrected(stdout, sum, res, e.o.Percentiles); err != nil {
			return err
		}
		if e.o.Extended {
			if err := report.WriteExtended(stdout, sum, res, cpu); err != nil {
				return err
			}
		}
		if server != nil {
			if err := report.WriteServerCPU(stdout, sum, server); err != nil {
				return err
			}
		}
	}
	if err := e.writeJSON(stdout, report.JSONInput{Summary: sum, Result: res, CPU: cpu, ServerCPU: server}); err != nil {
		return err
	}
	return serverErr
}

// fatal handles an error that ends gab after the command line was accepted
// (res is nil when the run never started). With --format json it prints ab's
// message on stderr and, on stdout, the document with the error and whatever
// was measured, in place of ab's "Total of N requests completed" line; it
// returns done with the exit status. In text mode it only writes the --json
// file and leaves the rest to the caller.
func (e *extensions) fatal(stdout, stderr io.Writer, res *client.Result, err error) (status int, done bool) {
	fe := &client.FatalError{Message: "gab: " + err.Error() + "\n", Exit: exitError}
	errors.As(err, &fe)
	in := report.JSONInput{Result: res, ErrMessage: fe.Message, ExitCode: fe.Exit,
		CPU: report.ProcessCPU().Sub(e.cpuBefore)}
	if res != nil {
		in.Summary = report.Summarize(res, reportOptions(e.o))
	}
	if !e.o.jsonOut() {
		if werr := e.writeJSON(stdout, in); werr != nil {
			fmt.Fprintf(stderr, "gab: %v\n", werr)
		}
		return 0, false
	}
	io.WriteString(stderr, fe.Message)
	if werr := e.writeJSON(stdout, in); werr != nil {
		fmt.Fprintf(stderr, "gab: %v\n", werr)
	}
	return fe.Exit, true
}

// writeJSON completes in and writes the document where it is wanted.
func (e *extensions) writeJSON(stdout io.Writer, in report.JSONInput) error {
	if !e.o.jsonOut() && e.o.JSONFile == "" {
		return nil
	}
	in.CommandLine = redactCredentials(e.argv)
	in.Start = e.started
	in.Percentiles = e.o.Percentiles
	doc := report.NewDocument(in)
	if e.o.jsonOut() {
		if err := report.WriteJSON(stdout, doc); err != nil {
			return err
		}
	}
	if e.o.JSONFile != "" {
		return writeJSONFile(e.o.JSONFile, doc)
	}
	return nil
}

func writeJSONFile(name string, doc *report.Document) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = report.WriteJSON(bw, doc)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// jsonRequested scans argv for --format json (before the options are parsed,
// so that an error in them can still be reported as a JSON document).
func jsonRequested(argv []string) bool {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			break
		}
		if a == "--format=json" || (a == "--format" && i+1 < len(argv) && argv[i+1] == "json") {
			return true
		}
	}
	return false
}

// notStarted prints the JSON document for a command line that never ran: its
// error message (what went to stderr) and the exit status.
func notStarted(stdout io.Writer, argv []string, stderrText string, status int) {
	_ = report.WriteJSON(stdout, report.NewDocument(report.JSONInput{ // a stdout error is reported by runWith
		CommandLine: redactCredentials(argv),
		Start:       time.Now(),
		ErrMessage:  strings.TrimRight(stderrText, "\n"),
		ExitCode:    status,
	}))
}

// redactCredentials returns argv with the values of -A and -P replaced: ab
// prints credentials only in its -v 2 request dump, so the JSON command line
// must not carry them. It walks argv with ab's option grammar (clusters,
// attached or separate values, parsing stops at the first non-option).
func redactCredentials(argv []string) []string {
	const hidden = "<redacted>"
	out := append([]string(nil), argv...)
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			break
		}
		if strings.HasPrefix(a, "--") {
			continue // long options carry no credentials
		}
		for j := 1; j < len(a); j++ {
			k := strings.IndexByte(shortOptions, a[j])
			if k < 0 || k+1 >= len(shortOptions) || shortOptions[k+1] != ':' {
				continue // a flag (or an illegal letter: ab stops there; being thorough is harmless)
			}
			secret := a[j] == 'A' || a[j] == 'P'
			switch {
			case j+1 < len(a):
				if secret {
					out[i] = a[:j+1] + hidden
				}
			case i+1 < len(out):
				i++
				if secret {
					out[i] = hidden
				}
			}
			break
		}
	}
	return out
}
