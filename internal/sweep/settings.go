package sweep

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Options are gab sweep's options as given, before they are checked
// (Settings): the lists and values as text where Settings parses them.
type Options struct {
	Concurrency                string // -c's list ("" when not given)
	Sizes, PostSizes           string
	Repeat, CI                 string
	Pause, Ramp                time.Duration
	MaxCVPercent               float64
	Order, Deviation, Baseline string
	Param, Before              string
	RequestsPerConn            int
	Seed                       uint64
	// NOrT: -n or -t was given; Demo: --demo; Targets and ServerPIDs: how
	// many targets and --server-pid options were given.
	NOrT, Demo          bool
	Targets, ServerPIDs int
}

// maxCVPercent is the largest --max-cv.
const maxCVPercent = 1000

// Settings checks the options and reads the lists into the sweep's
// settings.
func (so *Options) Settings() (*Settings, error) {
	s := &Settings{Pause: so.Pause, MaxCV: so.MaxCVPercent / 100}
	var err error
	if s.Repeat, s.Auto, err = ParseRepeat(so.Repeat); err != nil {
		return nil, err
	}
	if s.CI, err = ParseCI(so.CI); err != nil {
		return nil, err
	}
	if s.Pause > MaxPause {
		return nil, fmt.Errorf("--pause must be at most %v, not %v", MaxPause, s.Pause)
	}
	if !(so.MaxCVPercent >= 0 && so.MaxCVPercent <= maxCVPercent) { // NaN too
		return nil, fmt.Errorf("--max-cv must be a percentage from 0 to %d, not %v", maxCVPercent, so.MaxCVPercent)
	}
	if err := so.methodSettings(s); err != nil {
		return nil, err
	}
	s.Concurrency = []int{1}
	if so.Concurrency != "" {
		if s.Concurrency, err = ParseConcurrency(so.Concurrency); err != nil {
			return nil, err
		}
	}
	switch {
	case so.Sizes != "" && so.PostSizes != "":
		return nil, errors.New("--sizes and --post-sizes exclude each other (with --post-sizes, {size} in a target takes the body's size)")
	case so.Sizes != "":
		s.SizeOption = "--sizes"
		s.Sizes, err = ParseSizes("--sizes", so.Sizes)
	case so.PostSizes != "":
		s.SizeOption = "--post-sizes"
		s.Sizes, err = ParseSizes("--post-sizes", so.PostSizes)
	}
	if err != nil {
		return nil, err
	}
	if so.Demo {
		if so.Targets > 0 {
			return nil, errors.New("--demo sweeps the built-in server: no TARGET")
		}
		if so.ServerPIDs > 0 {
			return nil, errors.New("--server-pid cannot be used with --demo (the built-in server is gab itself; see cli cpu%)")
		}
	}
	return s, nil
}

// maxRequestsPerConn is the largest --requests-per-conn.
const maxRequestsPerConn = 1_000_000

// methodSettings checks the options of the experiment's method: --order,
// --requests-per-conn, --param and --before, --deviation and --baseline.
func (so *Options) methodSettings(s *Settings) error {
	switch so.Order {
	case OrderInterleaved:
	case OrderRandom:
		if s.Seed = so.Seed; s.Seed == 0 {
			s.Seed = uint64(time.Now().UnixNano()) | 1
		}
	default:
		return fmt.Errorf("--order must be interleaved or random, not %q", so.Order)
	}
	s.Order = so.Order
	if so.Seed != 0 && s.Order != OrderRandom {
		return errors.New("--seed is --order random's seed: give --order random")
	}
	switch so.Deviation {
	case DeviationPooled, DeviationMeanOfRuns:
		s.Deviation = so.Deviation
	default:
		return fmt.Errorf("--deviation must be pooled or mean-of-runs, not %q", so.Deviation)
	}
	s.Baseline = so.Baseline
	if s.Ramp = so.Ramp; s.Ramp > MaxPause {
		return fmt.Errorf("--ramp must be at most %v, not %v", MaxPause, s.Ramp)
	}
	if so.RequestsPerConn != 0 {
		if so.RequestsPerConn < 1 || so.RequestsPerConn > maxRequestsPerConn {
			return fmt.Errorf("--requests-per-conn must be from 1 to %d, not %d", maxRequestsPerConn, so.RequestsPerConn)
		}
		if so.NOrT {
			return errors.New("--requests-per-conn sets each point's -n (c × N): it cannot be used with -n or -t")
		}
		s.RequestsPerConn = so.RequestsPerConn
	}
	if so.Param != "" {
		p, err := ParseParam(so.Param)
		if err != nil {
			return err
		}
		if so.Before == "" {
			return fmt.Errorf("--param %s needs --before, the command that sets it before each run", p.Name)
		}
		if !strings.Contains(so.Before, p.Placeholder()) {
			return fmt.Errorf("--before's command holds no %s: every run would be the same", p.Placeholder())
		}
		s.Param = p
	}
	s.Before = so.Before
	return nil
}
