package report

import "io"

// Sections are the parts of gab's text output that follow ab's report. The
// command line asks for some (output.go); gab merge prints others.
type Sections struct {
	// Tables: the CGI table, the --percentiles table, rate mode's
	// corrected tables and --server-pid's lines, each only where the run
	// has its figures.
	Tables bool
	// Extended: --extended's blocks (ending with the catalog's figures),
	// APDEX and the verdicts, between the corrected tables and
	// --server-pid's lines.
	Extended bool
	// Figures: the catalog's figures alone (gab merge), after the tables,
	// and the APDEX line (without Extended, which has both).
	Figures bool
	// Warmup and Thresholds: the warm-up's line and the --fail-if verdicts,
	// last.
	Warmup, Thresholds bool
}

// WriteSections writes the sections asked for, in this order: CGI,
// --percentiles, corrected, extended (figures, APDEX, verdicts),
// --server-pid, figures (and APDEX), warm-up, --fail-if. Each writes nothing where the
// run has no such figures.
func WriteSections(w io.Writer, r *Run, s Sections) error {
	var writers []func(io.Writer, *Run) error
	if s.Tables {
		writers = append(writers, writeCGI, writePercentiles, writeCorrected)
	}
	if s.Extended {
		writers = append(writers, writeExtended, writeTargets, writeApdex, writeVerdicts)
	}
	if s.Tables {
		writers = append(writers, writeServerCPU)
	}
	if s.Figures {
		writers = append(writers, writeFigureBlock)
		if !s.Extended {
			writers = append(writers, writeApdex)
		}
	}
	if s.Warmup {
		writers = append(writers, writeWarmup)
	}
	if s.Thresholds {
		writers = append(writers, writeThresholds)
	}
	for _, write := range writers {
		if err := write(w, r); err != nil {
			return err
		}
	}
	return nil
}
