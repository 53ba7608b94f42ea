package targets

import (
	"errors"
	"fmt"
	"math"

	"github.com/spf13/pflag"
)

// Options are gab's long options that take a run's requests from a file:
//
//   - --urls FILE: one absolute URL a line (blank lines and '#' comments
//     skipped), taken in turn (--url-order sequential) or at random
//     (--url-order random, --seed N) by every request; FILE "-" is stdin;
//   - --targets FILE [--targets-format http|json]: vegeta's target files,
//     each target its own method, URL, headers and body, taken in turn (or
//     at random: --url-order, --seed); -H, -C, -A and -T apply to every
//     target, and a target's own header of the same name wins;
//   - --replay LOG [--replay-speed X]: an access log replayed at its
//     recorded pace (LoadReplay).
//
// Every file is read before the run: a bad line is refused before any
// request, in one line naming the file and the line (exit 22).
type Options struct {
	URLs  string // --urls
	Order string // --url-order: "sequential" or "random"
	Seed  uint64 // --seed

	Targets string // --targets
	Format  string // --targets-format: "http" or "json"

	Replay string  // --replay
	Speed  float64 // --replay-speed
}

// AddURLFlags registers --urls, --url-order and --seed.
func (o *Options) AddURLFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.URLs, "urls", "", "take every request's URL from `FILE` (one absolute URL a line; - for stdin), in turn")
	fs.StringVar(&o.Order, "url-order", "sequential", "the order of --urls: `sequential|random`")
	fs.Uint64Var(&o.Seed, "seed", 0, "the random order's seed `N` for --url-order random")
}

// AddTargetFlags registers --targets and --targets-format.
func (o *Options) AddTargetFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Targets, "targets", "", "take every request from vegeta's targets `FILE` (method, URL, headers, @body; - for stdin), in turn")
	fs.StringVar(&o.Format, "targets-format", "http", "the format of --targets: `http|json` (vegeta's)")
}

// AddReplayFlags registers --replay and --replay-speed.
func (o *Options) AddReplayFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Replay, "replay", "", "replay the requests of access log `LOG` (Common or Combined Log Format; - for stdin) at their recorded times, against the URL given")
	fs.Float64Var(&o.Speed, "replay-speed", 1, "replay the log `X` times as fast")
}

// Any says the requests come from a file: a URL list, targets or a log.
func (o *Options) Any() bool { return o.URLs != "" || o.Targets != "" || o.Replay != "" }

// ListOption is the option that gives the run's URL list (--urls or
// --targets).
func (o *Options) ListOption() string {
	if o.Targets != "" {
		return "--targets"
	}
	return "--urls"
}

// Check checks the options against each other and against gab's others
// (changed: whether an option was given; demo: --demo).
func (o *Options) Check(changed func(string) bool, demo bool) error {
	if err := o.checkURLs(changed, demo); err != nil {
		return err
	}
	if err := o.checkTargets(changed, demo); err != nil {
		return err
	}
	return o.checkReplay(changed, demo)
}

func (o *Options) checkURLs(changed func(string) bool, demo bool) error {
	switch o.Order {
	case "sequential", "random":
	default:
		return fmt.Errorf("--url-order must be sequential or random, not %q", o.Order)
	}
	if o.URLs == "" {
		if o.Targets == "" && (changed("url-order") || changed("seed")) {
			return errors.New("--url-order and --seed need --urls or --targets")
		}
	}
	if changed("seed") && o.Order != "random" {
		return errors.New("--seed needs --url-order random (sequential has no randomness)")
	}
	if o.URLs != "" && demo {
		return errors.New("--urls and --demo exclude each other (--demo benchmarks its own server)")
	}
	return nil
}

func (o *Options) checkTargets(changed func(string) bool, demo bool) error {
	if o.Format != "http" && o.Format != "json" {
		return fmt.Errorf("--targets-format must be http or json, not %q", o.Format)
	}
	switch {
	case o.Targets == "":
		if changed("targets-format") {
			return errors.New("--targets-format needs --targets")
		}
	case o.URLs != "":
		return errors.New("--targets and --urls exclude each other (a target file lists URLs too)")
	case demo:
		return errors.New("--targets and --demo exclude each other (--demo benchmarks its own server)")
	}
	return nil
}

func (o *Options) checkReplay(changed func(string) bool, demo bool) error {
	if changed("replay-speed") && (o.Replay == "" || !(o.Speed > 0) || math.IsInf(o.Speed, 0)) {
		if o.Replay == "" {
			return errors.New("--replay-speed needs --replay")
		}
		return fmt.Errorf("--replay-speed must be a positive number, not %v", o.Speed)
	}
	switch {
	case o.Replay == "":
	case o.URLs != "" || o.Targets != "":
		return errors.New("--replay excludes --urls and --targets (the log gives the requests)")
	case changed("rate"):
		return errors.New("--replay excludes --rate (the log's times are the schedule)")
	case changed("url-order") || changed("seed"):
		return errors.New("--replay sends the log's lines in their order: --url-order and --seed cannot be used with it")
	case changed("warmup"):
		return errors.New("--replay cannot be used with --warmup (the log's first lines are its start)")
	case demo:
		return errors.New("--replay and --demo exclude each other")
	}
	return nil
}
