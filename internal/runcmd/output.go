package runcmd

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"gab/client"
	"gab/gnuplot"
	"gab/internal/outfile"
	"gab/internal/samples"
	"gab/internal/servercpu"
	"gab/internal/targets"
	"gab/report"
)

// This file is gab's output after a run, chosen once from the command line
// (newOutput) and written from the run's record (report.Run): ab's report on
// stdout (text, or HTML with -w), then the tables beyond ab's (in text mode
// the CGI table, --percentiles, rate mode's corrected tables, --extended and
// --server-pid's lines; the warm-up and --fail-if lines after the HTML report
// too), ab's -e and -g files, and last the JSON document (stdout with
// --format json, the --json file), which states the files' errors. Every
// writer is a function of the record and an io.Writer; an output that needs
// a new figure finds it in the record.
//
// With --format json stdout carries exactly one JSON document, whatever the
// ending (notStarted covers command-line errors).

// output is what gab writes after the run, chosen from the command line.
type Output struct {
	o *Options
	// cmdline is the command line with -A and -P hidden, as the JSON
	// document and the charts show it.
	cmdline []string
	// jsonStdout: stdout carries the JSON document and nothing else.
	jsonStdout bool
	// sections follow ab's report (only the warm-up and --fail-if lines
	// with -w; none with --format json).
	sections report.Sections

	// meter reads the client's CPU and --server-pid's over the run
	// (measure.go); its start is the run's, or newOutput's until the run.
	Meter Meter
	// hlog is the --hlog file, created before the run.
	hlog *os.File
	// failed is the record of a run that ended in an error, as fatal wrote
	// it (nil before, or when it measured nothing): the pictures draw it.
	Failed *report.Run
}

// newOutput chooses the outputs once the command line is parsed.
func newOutput(o *Options, cmdline []string) *Output {
	out := &Output{o: o, cmdline: cmdline, jsonStdout: o.Format == "json", Meter: Meter{Label: o.ServerLabel, started: time.Now()}}
	if !out.jsonStdout && !o.HTML {
		// each prints nothing where the run has no such figures
		out.sections.Tables, out.sections.Extended = true, o.Extended
	}
	if !out.jsonStdout {
		// After the HTML report too: these lines say what the report left out
		// and how the run is judged.
		out.sections.Warmup, out.sections.Thresholds = true, true
	}
	return out
}

// wantsJSON reports whether a JSON document is written anywhere.
func (out *Output) wantsJSON() bool { return out.jsonStdout || out.o.JSONFile != "" }

// Prepare asks the engine for the figures beyond ab's when an output will
// show them (rate mode gathers them anyway) and checks gab's own output
// paths (conflicting options are refused with the command line, by
// Conflict). It returns done with the exit status when gab must stop.
func (out *Output) Prepare(stdout, stderr io.Writer, cfg *client.Config) (status int, done bool) {
	// gab's own output files are checked before the first request, so that a
	// long run does not end in an unwritable path (ab's -e and -g keep ab's
	// behaviour: opened after the run).
	if err := checkJSONFile(out.o.JSONFile); err != nil {
		msg := "gab: --json " + err.Error() + "\n"
		io.WriteString(stderr, msg)
		if out.jsonStdout {
			// A stdout error is reported by the root's runWith.
			_ = report.WriteJSON(stdout, report.NotStarted(out.commandLine(), time.Now(), msg, ExitError))
		}
		return ExitError, true
	}
	if err := CheckPictures(out.o.PlotFile, out.o.HTMLFile); err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return ExitError, true
	}
	// A --fail-if figure that needs the extended measurements (the
	// catalog's Needs) turns them on.
	cfg.Extended = cfg.Extended || out.o.Extended || out.wantsJSON() || wantsPerSecond(out.o) ||
		slices.Contains(report.ThresholdNeeds(out.o.FailIf), report.NeedsExtended)
	if cfg.Extended || out.o.HlogFile != "" {
		cfg.Interval = TimelineInterval(out.o)
	}
	if out.o.HlogFile != "" {
		// gab's own output path is checked before the first request.
		f, err := outfile.Create(out.o.HlogFile)
		if err != nil {
			fmt.Fprintf(stderr, "gab: --hlog: %v\n", err)
			return ExitError, true
		}
		out.hlog = f
	}
	if len(out.o.ServerPIDs) > 0 {
		m, err := servercpu.New(out.o.ServerPIDs)
		if err != nil {
			msg := "gab: " + err.Error() + "\n"
			io.WriteString(stderr, msg)
			// A stdout error is reported by the root's runWith.
			_ = out.writeJSON(stdout, report.NotStarted(out.commandLine(), out.Meter.started, msg, ExitError))
			return ExitError, true
		}
		out.Meter.Server = m
	}
	out.Meter.FindServer(cfg)
	// Past the exact sample store, --percentiles reads its percentiles from
	// the client's HDR histograms (3 significant digits).
	cfg.Extended = cfg.Extended || len(out.o.Percentiles) > 0 && mayOutgrowStore(cfg)
	return 0, false
}

// commandLine is the command line as the JSON document shows it.
func (out *Output) commandLine() []string { return out.cmdline }

// ReportOptions are the report options of a command line, with the client's
// CPU over the run and --server-pid's measurement (nil without it).
func ReportOptions(o *Options, cmdline []string, cpu report.CPUUsage, server *report.ServerCPU) report.Options {
	cfg := &o.Config
	return report.Options{
		Host: cfg.Target.Host, Port: cfg.Target.Port, Path: cfg.Target.Path,
		Concurrency: InFlight(cfg), Connections: H2Only(cfg, cfg.Concurrency), Streams: H2Only(cfg, cfg.Streams),
		KeepAlive: cfg.KeepAlive || cfg.Protocol == client.HTTP3, BodySent: cfg.Spec.HasBody,
		VariableLength: cfg.VariableLength, NoPercentiles: o.NoPercentiles, NoConfidence: o.NoConfidence,
		TLS:         cfg.Target.TLS,
		HTML:        report.HTMLAttrs{Table: o.TableAttrs, Row: o.RowAttrs, Cell: o.CellAttrs},
		Percentiles: o.Percentiles,
		CPU:         cpu,
		ServerCPU:   server,
		CommandLine: cmdline,
		Histogram:   o.Histogram,
		Run:         runInfo(o),
		Shard:       shardInfo(o),
		FailIf:      o.FailIf,
		Apdex:       o.Apdex,
		Environment: report.Environment(o.Version),
	}
}

// mayOutgrowStore reports whether the run may record more requests than the
// exact sample store holds.
func mayOutgrowStore(cfg *client.Config) bool {
	limit := cfg.SampleLimit
	if limit <= 0 {
		limit = samples.DefaultLimit
	}
	return cfg.Requests > limit
}

// InFlight is the number of requests in flight that ab's Concurrency Level
// and first Time per request stand for: -c, or -c connections × --streams
// with HTTP/2.
func InFlight(cfg *client.Config) int {
	if (cfg.Protocol == client.HTTP2 || cfg.Protocol == client.HTTP3) && cfg.Streams > 1 {
		return cfg.Concurrency * cfg.Streams
	}
	return cfg.Concurrency
}

// H2Only is v with HTTP/2, else 0.
func H2Only(cfg *client.Config, v int) int {
	if cfg.Protocol != client.HTTP2 && cfg.Protocol != client.HTTP3 {
		return 0
	}
	return v
}

// Write writes every output of a finished run and returns gab's exit status
// so far (ExitOK, or the status of a failed write or of a failed --server-pid
// reading, serverErr).
func (out *Output) Write(stdout, stderr *SyncWriter, sum *report.Run, serverErr error, res *client.Result, loc *time.Location) int {
	// ab's SIGINT handler always prints the text report, never the HTML one.
	html := out.o.HTML && res.Ending != client.EndInterrupted
	var err error
	switch {
	case out.jsonStdout:
	case html:
		err = report.WriteHTML(stdout, sum)
	default:
		err = report.WriteText(stdout, sum)
	}
	if stdout.ReportWriteError(stderr, err) {
		return ExitError
	}
	if err := report.WriteSections(stdout, sum, out.sections); err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return ExitError
	}
	if err := out.writeHlog(sum); err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return ExitError
	}
	// ab's -e and -g files and --server-pid's last reading come before the
	// JSON document, so that the document states their errors (and the exit
	// status they set).
	status := ExitOK
	if !html && sum.Report.CompleteRequests > 0 {
		var msg strings.Builder
		status = writeFiles(out.o, res, sum, stdout, &SyncWriter{W: io.MultiWriter(stderr, &msg), FlushFirst: stdout}, loc)
		if status != ExitOK && sum.Error == nil {
			sum.SetError(msg.String(), status)
		}
	}
	if serverErr != nil {
		msg := fmt.Sprintf("gab: %v\n", serverErr)
		io.WriteString(stderr, msg)
		if status == ExitOK {
			status = ExitError
			sum.SetError(msg, status)
		}
	}
	if err := out.writeJSON(stdout, sum); err != nil {
		fmt.Fprintf(stderr, "gab: %v\n", err)
		return ExitError
	}
	if out.jsonStdout { // stdout is the document's; the verdicts go to stderr as well
		_ = report.WriteSections(stderr, sum, report.Sections{Thresholds: true}) // stderr errors are not reported anywhere
	}
	return status
}

// Fatal handles an error that ends gab after the command line was accepted
// (ms is nil when the run never started). With --format json it prints ab's
// message on stderr and, on stdout, the document with the error and whatever
// was measured, in place of ab's "Total of N requests completed" line; it
// returns done with the exit status. In text mode it only writes the --json
// file and leaves the rest to the caller. The run's record with the error
// stays in out.Failed for the pictures (drawFailedRun).
func (out *Output) Fatal(stdout, stderr io.Writer, ms *Measured, err error) (status int, done bool) {
	fe := FatalError(err)
	var sum *report.Run
	if ms != nil && ms.Res != nil && (out.hlog != nil || out.wantsJSON() || wantsPerSecond(out.o)) {
		sum = ms.Summarize(out.o, out.cmdline)
		sum.SetError(fe.Message, fe.Exit)
		out.Failed = sum
	}
	if werr := out.writeHlog(sum); werr != nil {
		fmt.Fprintf(stderr, "gab: %v\n", werr)
	}
	if !out.wantsJSON() {
		return 0, false
	}
	if sum == nil {
		sum = report.NotStarted(out.commandLine(), out.Meter.started, fe.Message, fe.Exit)
	}
	if !out.jsonStdout {
		if werr := out.writeJSON(stdout, sum); werr != nil {
			fmt.Fprintf(stderr, "gab: %v\n", werr)
		}
		return 0, false
	}
	io.WriteString(stderr, fe.Message)
	if werr := out.writeJSON(stdout, sum); werr != nil {
		fmt.Fprintf(stderr, "gab: %v\n", werr)
	}
	return fe.Exit, true
}

// writeHlog writes and closes the --hlog file: the timeline of whatever was
// measured (sum may be nil: the log's header alone when the run never started).
func (out *Output) writeHlog(sum *report.Run) error {
	if out.hlog == nil {
		return nil
	}
	f := out.hlog
	out.hlog = nil
	return outfile.WriteClose(f, func(w io.Writer) error {
		return report.WriteHlog(w, sum, out.Meter.started, TimelineInterval(out.o))
	})
}

// writeJSON writes the summary's JSON document where it is wanted.
func (out *Output) writeJSON(stdout io.Writer, doc *report.Run) error {
	if !out.wantsJSON() {
		return nil
	}
	if out.jsonStdout {
		if err := report.WriteJSON(stdout, doc); err != nil {
			return err
		}
	}
	if out.o.JSONFile != "" {
		// stdout's text goes out first: --json /dev/stdout writes after it.
		if f, ok := stdout.(interface{ Flush() error }); ok {
			_ = f.Flush() // an error stays in the writer and is reported at the end
		}
		return writeJSONFile(out.o.JSONFile, doc)
	}
	return nil
}

// checkJSONFile checks --json's path as the file is written: through a
// temporary file renamed into its directory (writeJSONFile).
func checkJSONFile(name string) error {
	if name == "" {
		return nil
	}
	return outfile.CheckWritable(name)
}

func writeJSONFile(name string, doc *report.Run) error {
	return outfile.WriteAtomic(name, func(w io.Writer) error { return report.WriteJSON(w, doc) })
}

// writeFiles writes the -e CSV file, then the -g gnuplot file, as ab does after
// its text report. A file that cannot be created ends gab with status 1 and
// ab's perror-style message.
func writeFiles(o *Options, res *client.Result, sum *report.Run, out, errw *SyncWriter, loc *time.Location) int {
	if loc == nil {
		loc = time.Local
	}
	files := []struct {
		name, what string
		write      func(io.Writer) error
	}{
		{o.CSVFile, "CSV", func(w io.Writer) error { return report.WriteCSV(w, sum) }},
		{o.GnuplotFile, "gnuplot", func(w io.Writer) error { return gnuplot.Write(w, res, loc) }},
	}
	for _, f := range files {
		if f.name == "" {
			continue
		}
		file, err := outfile.Create(f.name)
		if err != nil {
			out.Flush() // the report comes before the complaint, as in ab
			fmt.Fprintf(errw, "Cannot open %s output file: %s\n", f.what, targets.Strerror(err))
			return ExitError
		}
		if err := outfile.WriteClose(file, f.write); err != nil {
			fmt.Fprintf(errw, "gab: %v\n", err)
			return ExitError
		}
	}
	return ExitOK
}

// runInfo is what the JSON document records about the command line (nil
// when no JSON document is written: then the report gathers no sums).
func runInfo(o *Options) *report.RunInfo {
	if o.JSONFile == "" && o.Format != "json" {
		return nil
	}
	cfg := &o.Config
	h := sha256.New()
	h.Write(cfg.Request)
	h.Write(cfg.Spec.Body)
	r := &report.RunInfo{
		URL: o.URL, Method: cfg.Spec.Method, RequestSHA256: hex.EncodeToString(h.Sum(nil)),
		Protocol: cfg.Protocol.String(), Requests: cfg.Requests, Concurrency: cfg.Concurrency,
		RatePerS: cfg.Rate, TimeLimitS: cfg.TimeLimit.Seconds(), TLS: cfg.Target.TLS,
	}
	return r
}

// shardInfo is the JSON document's shard section of a --shard command line
// (nil without --shard).
func shardInfo(o *Options) *report.Shard {
	sh := o.Shard
	if sh == nil {
		return nil
	}
	out := &report.Shard{Index: sh.Index, Count: sh.Count, RunID: sh.RunID,
		TotalRequests: sh.Requests, TotalConcurrency: sh.Concurrency, TotalRatePerS: sh.Rate}
	if !o.StartAt.IsZero() {
		out.StartAt = o.StartAt.UTC().Format(time.RFC3339Nano)
	}
	return out
}

// NotStarted prints the JSON document for a command line that never ran
// (cmdline: its words with -A and -P hidden): its error message (what went
// to stderr) and the exit status.
func NotStarted(stdout io.Writer, cmdline []string, stderrText string, status int) {
	// A stdout error is reported by the caller.
	_ = report.WriteJSON(stdout, report.NotStarted(cmdline, time.Now(), stderrText, status))
}
